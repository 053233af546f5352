use serde_json::json;

use super::catalog::{Catalog, SkillSource};
use super::host::{file_uri, frontmatter, same_frontmatter};

const MD: &str =
    "---\nname: pdf-processing\ndescription: Fill forms\nmetadata:\n  version: 2\n---\n# Body\n";

#[test]
fn the_frontmatter_is_read_as_json_and_the_body_follows_it() {
    let (fm, body) = frontmatter(MD).unwrap();
    assert_eq!(
        serde_json::Value::Object(fm),
        json!({"name": "pdf-processing", "description": "Fill forms", "metadata": {"version": 2}})
    );
    assert_eq!(body, "# Body\n");
    assert_eq!(
        frontmatter("# no frontmatter").unwrap_err(),
        "its SKILL.md does not start with a --- frontmatter block"
    );
    assert_eq!(
        frontmatter("---\nname: x\n").unwrap_err(),
        "its SKILL.md frontmatter has no closing ---"
    );
    assert_eq!(
        frontmatter("---\n- a\n---\n").unwrap_err(),
        "its SKILL.md frontmatter is not a mapping"
    );
}

#[test]
fn frontmatter_is_compared_field_by_field_and_the_first_difference_named() {
    let (read, _) = frontmatter(MD).unwrap();
    let listed =
        json!({"name": "pdf-processing", "description": "Fill forms", "metadata": {"version": 2}});
    assert!(same_frontmatter(&listed, &read).is_ok());
    let other =
        json!({"name": "pdf-processing", "description": "Other", "metadata": {"version": 2}});
    assert_eq!(
        same_frontmatter(&other, &read).unwrap_err(),
        "refused: the frontmatter's \"description\" is \"Fill forms\" in SKILL.md but \"Other\" in the server's entry"
    );
    let fewer = json!({"name": "pdf-processing", "description": "Fill forms"});
    assert_eq!(
        same_frontmatter(&fewer, &read).unwrap_err(),
        "refused: the frontmatter's \"metadata\" is {\"version\":2} in SKILL.md but absent in the server's entry"
    );
}

#[test]
fn a_file_path_stays_in_the_skill_folder() {
    let skill = "skill://a/pdf-processing/SKILL.md";
    assert_eq!(
        file_uri(skill, "references/FORMS.md").unwrap(),
        "skill://a/pdf-processing/references/FORMS.md"
    );
    for (path, why) in [
        ("", "is empty"),
        ("/etc/passwd", "is not relative"),
        ("a\\b", "is not relative"),
        ("../x", "climbs out"),
        ("a//b", "climbs out"),
        ("a/./b", "climbs out"),
        ("x?y", "is not a file path"),
    ] {
        let err = file_uri(skill, path).unwrap_err();
        assert!(err.contains(why), "{path:?}: {err}");
    }
    assert!(file_uri("skill://a/README.md", "x").is_err());
}

#[test]
fn a_catalog_lists_each_folder_of_a_skill_with_its_subfolders() {
    let catalog = Catalog::build(vec![SkillSource {
        path: Some("tools/pdf-processing".into()),
        files: vec![
            ("SKILL.md".into(), MD.as_bytes().to_vec()),
            ("references/FORMS.md".into(), b"# Forms\n".to_vec()),
            ("references/deep/x.bin".into(), vec![0xff, 0]),
        ],
    }])
    .unwrap();
    let names = |uri: &str| -> Vec<(String, Option<String>)> {
        catalog
            .directory(uri)
            .unwrap()
            .iter()
            .map(|r| (r.name.clone(), r.mime_type.clone()))
            .collect()
    };
    assert_eq!(
        names("skill://tools/pdf-processing"),
        vec![
            ("SKILL.md".into(), Some("text/markdown".into())),
            ("references".into(), Some("inode/directory".into())),
        ]
    );
    assert_eq!(
        names("skill://tools/pdf-processing/references/deep"),
        vec![("x.bin".into(), Some("application/octet-stream".into()))]
    );
    assert!(catalog.directory("skill://tools").is_none());
    let skill = catalog
        .skill("skill://tools/pdf-processing/SKILL.md")
        .unwrap();
    assert_eq!(skill.name(), "pdf-processing");
    assert_eq!(catalog.resources().len(), 1);
    assert!(
        catalog
            .read("skill://tools/pdf-processing/references/deep/x.bin")
            .is_some()
    );

    let twice = Catalog::build(vec![
        SkillSource {
            path: None,
            files: vec![("SKILL.md".into(), MD.as_bytes().to_vec())],
        },
        SkillSource {
            path: None,
            files: vec![("SKILL.md".into(), MD.as_bytes().to_vec())],
        },
    ]);
    assert_eq!(
        twice.unwrap_err(),
        "the skill skill://pdf-processing/SKILL.md is given twice"
    );
}

#[test]
fn a_server_name_is_one_segment_and_a_dot_segment_is_never_relayed() {
    use super::relay::{rerooted, unrooted};
    assert_eq!(
        rerooted("docs", "skill://pdf/SKILL.md").unwrap(),
        "skill://docs/pdf/SKILL.md"
    );
    let odd = rerooted("a/b c%", "skill://pdf/SKILL.md").unwrap();
    assert_eq!(odd, "skill://a%2Fb%20c%25/pdf/SKILL.md");
    assert_eq!(
        unrooted(&odd).unwrap(),
        ("a/b c%".to_string(), "skill://pdf/SKILL.md".to_string())
    );
    assert!(rerooted("docs", "file:///etc/passwd").is_none());
    for climbing in [
        "skill://docs/pdf/../../x",
        "skill://docs/pdf/%2e%2E/x",
        "skill://docs/pdf//x",
        "skill://docs/./x",
        "skill:///pdf/SKILL.md",
    ] {
        assert!(unrooted(climbing).is_none(), "{climbing}");
    }
}

#[test]
fn numbers_in_a_frontmatter_compare_by_value() {
    let (read, _) = frontmatter("---\nname: x\ndescription: d\nversion: 1.0\n---\n").unwrap();
    let listed = json!({"name": "x", "description": "d", "version": 1});
    assert!(same_frontmatter(&listed, &read).is_ok());
}
