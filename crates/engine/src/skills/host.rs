//! What a host checks of a skill it loads (SEP-2640), on the bytes a server sent: the file is
//! one the skill's entry lists, its size and then its digest are the entry's, and the
//! frontmatter of its `SKILL.md` is the entry's, field by field. A skill whose entry says
//! `"dynamic"` has no digests: its files are read within the skill's folder and bounds.

use base64::Engine as _;
use rmcp::model::{SKILL_MD, Skill, SkillResource, SkillResources};
use serde_json::{Map, Value};

/// The most bytes a skill may have (the extension's limit), and so any one of its files.
pub(crate) const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;

/// A skill's entry from its wire JSON (`skills/list` or `skills/get`), checked as the
/// extension requires (its URI names a `SKILL.md` in a folder named as the skill, its files
/// are within that folder, each with a `sha256:` digest).
pub(crate) fn entry(item: &Map<String, Value>) -> Result<Skill, String> {
    let skill: Skill = serde_json::from_value(Value::Object(item.clone())).map_err(|_| {
        "the skill entry is malformed (it needs a uri, a frontmatter with a name and a \
         description, and its resources: each a uri, a sha256 digest and a size, or \"dynamic\")"
            .to_string()
    })?;
    skill.validate().map_err(|e| e.to_string())?;
    Ok(skill)
}

/// A listed skill as toolnexus shows it: its `uri`, `name` and `description` (from its
/// frontmatter), the whole `frontmatter`, and `files` (each `path` within the skill's folder,
/// `uri`, `digest`, `size`), or `"dynamic"`; its `_meta` as the server sent it.
pub fn described(item: &Map<String, Value>) -> Value {
    let uri = item.get("uri").and_then(Value::as_str).unwrap_or_default();
    let base = uri.strip_suffix(SKILL_MD).unwrap_or(uri);
    let frontmatter = item.get("frontmatter").cloned().unwrap_or(Value::Null);
    let field = |key: &str| frontmatter.get(key).cloned().unwrap_or(Value::Null);
    let files = match item.get("resources") {
        Some(Value::Array(files)) => Value::Array(
            files
                .iter()
                .map(|file| {
                    let mut shown = Map::new();
                    let file_uri = file.get("uri").and_then(Value::as_str).unwrap_or_default();
                    let path = file_uri.strip_prefix(base).unwrap_or(file_uri);
                    shown.insert("path".into(), Value::String(path.to_string()));
                    for key in ["uri", "digest", "size"] {
                        shown.insert(key.into(), file.get(key).cloned().unwrap_or(Value::Null));
                    }
                    Value::Object(shown)
                })
                .collect(),
        ),
        other => other.cloned().unwrap_or(Value::Null),
    };
    let mut shown = Map::new();
    shown.insert("uri".into(), Value::String(uri.to_string()));
    shown.insert("name".into(), field("name"));
    shown.insert("description".into(), field("description"));
    shown.insert("frontmatter".into(), frontmatter);
    shown.insert("files".into(), files);
    if let Some(meta) = item.get("_meta") {
        shown.insert("_meta".into(), meta.clone());
    }
    Value::Object(shown)
}

/// A skill loaded, as a host hands it on: `{ uri, name, description, frontmatter, text,
/// body, files }` (`frontmatter` as its `SKILL.md` has it, `text` the whole `SKILL.md`).
pub(crate) fn loaded(
    skill: &Skill,
    frontmatter: &Map<String, Value>,
    text: &str,
    body: &str,
) -> Value {
    let files = match serde_json::to_value(skill) {
        Ok(Value::Object(entry)) => described(&entry)["files"].clone(),
        _ => Value::Null,
    };
    serde_json::json!({
        "uri": skill.uri,
        "name": skill.frontmatter.name,
        "description": skill.frontmatter.description,
        "frontmatter": frontmatter,
        "text": text,
        "body": body,
        "files": files,
    })
}

/// The URI of the file at `path` (relative to the skill's folder, `/`-separated) of the skill
/// whose `SKILL.md` is at `skill_uri`. A path that is empty, absolute, or climbs out is refused.
pub(crate) fn file_uri(skill_uri: &str, path: &str) -> Result<String, String> {
    let base = skill_uri
        .strip_suffix(SKILL_MD)
        .ok_or_else(|| format!("{skill_uri:?} is not a skill's SKILL.md"))?;
    let refused = |why: &str| Err(format!("the path {path:?} {why}"));
    if path.is_empty() {
        return refused("is empty");
    }
    if path.starts_with('/') || path.contains('\\') {
        return refused("is not relative to the skill's folder (use a/b, not /a/b)");
    }
    if path.contains(['?', '#']) || path.chars().any(char::is_control) {
        return refused("is not a file path");
    }
    if path.split('/').any(|s| matches!(s, "" | "." | "..")) {
        return refused("climbs out of the skill's folder or has an empty part");
    }
    Ok(format!("{base}{path}"))
}

/// The entry's file at `uri`: `Some` when it lists its files, `None` for a dynamic skill.
/// A file the entry does not list is refused.
pub(crate) fn listed_file<'a>(
    skill: &'a Skill,
    uri: &str,
) -> Result<Option<&'a SkillResource>, String> {
    match &skill.resources {
        SkillResources::Dynamic => Ok(None),
        SkillResources::Files(files) => match files.iter().find(|f| f.uri == uri) {
            Some(file) => Ok(Some(file)),
            None => Err(format!(
                "{uri} is not a file of the skill {:?}: its entry does not list it",
                skill.name()
            )),
        },
        _ => Err(format!(
            "the skill {:?} lists its files in a form toolnexus does not know",
            skill.name()
        )),
    }
}

/// The bytes of `uri` in a `resources/read` result (text as UTF-8, a blob decoded).
pub(crate) fn contents_bytes(
    result: &Value,
    uri: &str,
) -> Result<(Vec<u8>, Option<String>), String> {
    let contents = result
        .get("contents")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("the server's answer for {uri} has no contents"))?;
    let content = contents
        .iter()
        .find(|c| c.get("uri").and_then(Value::as_str) == Some(uri))
        .or_else(|| (contents.len() == 1).then(|| &contents[0]))
        .ok_or_else(|| format!("the server's answer has no contents for {uri}"))?;
    let mime = content
        .get("mimeType")
        .and_then(Value::as_str)
        .map(str::to_string);
    if let Some(text) = content.get("text").and_then(Value::as_str) {
        return Ok((text.as_bytes().to_vec(), mime));
    }
    if let Some(blob) = content.get("blob").and_then(Value::as_str) {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(blob)
            .map_err(|_| format!("the server sent {uri} as a blob that is not base64"))?;
        return Ok((bytes, mime));
    }
    Err(format!(
        "the server's contents for {uri} have neither text nor a blob"
    ))
}

/// Checks `bytes` against the entry's `file` (size, then digest); a dynamic skill's file only
/// against the skill's bound.
pub(crate) fn verify(file: Option<&SkillResource>, uri: &str, bytes: &[u8]) -> Result<(), String> {
    match file {
        Some(file) => file.verify(bytes).map_err(|e| format!("refused: {e}")),
        None if bytes.len() as u64 > MAX_SKILL_BYTES => Err(format!(
            "refused: {uri} is {} bytes, over the {} MiB a skill may have",
            bytes.len(),
            MAX_SKILL_BYTES >> 20
        )),
        None => Ok(()),
    }
}

/// The YAML frontmatter of a `SKILL.md` as JSON, and the text after it.
pub(crate) fn frontmatter(text: &str) -> Result<(Map<String, Value>, &str), String> {
    let mut lines = text.split_inclusive('\n');
    if lines.next().map(str::trim_end) != Some("---") {
        return Err("its SKILL.md does not start with a --- frontmatter block".into());
    }
    let start = text.find('\n').map_or(text.len(), |at| at + 1);
    let mut end = start;
    for line in lines {
        if line.trim_end() == "---" {
            let yaml = &text[start..end];
            let body = &text[end + line.len()..];
            let value: Value = yaml_serde::from_str(yaml)
                .map_err(|e| format!("its SKILL.md frontmatter is not valid YAML ({e})"))?;
            return match value {
                Value::Object(map) => Ok((map, body)),
                _ => Err("its SKILL.md frontmatter is not a mapping".into()),
            };
        }
        end += line.len();
    }
    Err("its SKILL.md frontmatter has no closing ---".into())
}

/// Checks that the frontmatter read from `SKILL.md` is the entry's, field by field; says the
/// first field that differs.
pub(crate) fn same_frontmatter(listed: &Value, read: &Map<String, Value>) -> Result<(), String> {
    let empty = Map::new();
    let listed = listed.as_object().unwrap_or(&empty);
    let mut keys: Vec<&String> = listed.keys().chain(read.keys()).collect();
    keys.sort();
    keys.dedup();
    for key in keys {
        let (a, b) = (listed.get(key), read.get(key));
        if !same_value(a, b) {
            let show = |v: Option<&Value>| match v {
                None => "absent".to_string(),
                Some(v) => shown(&v.to_string()),
            };
            return Err(format!(
                "refused: the frontmatter's {key:?} is {} in SKILL.md but {} in the server's entry",
                show(b),
                show(a)
            ));
        }
    }
    Ok(())
}

/// Whether two frontmatter values are the same, numbers by their value (a server written in
/// JavaScript sends the YAML `1.0` as `1`).
fn same_value(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (Some(Value::Number(a)), Some(Value::Number(b))) => a.as_f64() == b.as_f64(),
        (Some(Value::Array(a)), Some(Value::Array(b))) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same_value(Some(a), Some(b)))
        }
        (Some(Value::Object(a)), Some(Value::Object(b))) => {
            a.len() == b.len() && a.iter().all(|(k, v)| same_value(Some(v), b.get(k)))
        }
        (a, b) => a == b,
    }
}

/// A value in words, cut to 200 characters.
fn shown(text: &str) -> String {
    let mut cut: String = text.chars().take(200).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    cut
}
