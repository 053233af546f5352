//! The skills a server serves (SEP-2640): each a folder of files whose `SKILL.md` names it, at
//! `skill://<path>/<file>`, given as files in memory or read from a folder. Everything is
//! checked when the catalog is built, and a skill that breaks a rule is refused in words (not
//! skipped): a `SKILL.md` without a frontmatter `name` and `description`, a name that breaks
//! the naming rules or is not its folder's name, a symbolic link, more than 512 files or
//! 16 MiB. Digests are computed once, when the catalog is built (a folder's catalog is built
//! again when its files change, see [`super::served`]).
//!
//! rmcp's `SkillCatalog` (feature `skills-fs`) serves a folder too, but it skips a skill it
//! cannot serve with a `tracing` event, and it has no skills given in memory; its types and
//! checks are the ones used here (`Skill`, `SkillResource`, `Skill::validate`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;

use base64::Engine as _;
use rmcp::model::{
    DIRECTORY_MIME_TYPE, ReadResourceResult, Resource, ResourceContents, SKILL_MD, Skill,
    SkillFrontmatter, SkillResource, SkillResources,
};

/// The most files a skill may have (the extension's limit).
pub(crate) const MAX_SKILL_FILES: usize = 512;

/// One skill as given: its path under `skill://` (its folder, `/`-separated; the last segment
/// is its name; None: its name) and its files, each a path within the folder and its bytes.
#[derive(Clone, Debug)]
pub struct SkillSource {
    pub path: Option<String>,
    pub files: Vec<(String, Vec<u8>)>,
}

/// A served file: its bytes and MIME type.
#[derive(Debug)]
struct Served {
    bytes: Arc<[u8]>,
    mime: &'static str,
}

/// The skills of a server, built and checked.
#[derive(Debug, Default)]
pub(crate) struct Catalog {
    skills: Vec<Skill>,
    /// Each skill's `SKILL.md` as a resource (`text/markdown`, named and described as its
    /// frontmatter), for `resources/list`.
    listed: Vec<Resource>,
    files: HashMap<String, Served>,
    /// The children of every folder within a skill (its own folder included), by URI.
    directories: HashMap<String, Vec<Resource>>,
}

const SCHEME: &str = "skill://";

fn mime_of(path: &str, bytes: &[u8]) -> &'static str {
    let ext = path.rsplit_once('.').map_or("", |(_, ext)| ext);
    match ext.to_ascii_lowercase().as_str() {
        "md" | "markdown" => "text/markdown",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "py" => "text/x-python",
        "js" | "mjs" => "text/javascript",
        "sh" => "text/x-shellscript",
        "html" => "text/html",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "pdf" => "application/pdf",
        _ if std::str::from_utf8(bytes).is_ok() => "text/plain",
        _ => "application/octet-stream",
    }
}

/// Checks a path within a skill (or a skill's own path): relative, `/`-separated, no empty,
/// `.`, `..` or hidden part.
fn check_path(path: &str, what: &str) -> Result<(), String> {
    if path.is_empty() || path.starts_with('/') || path.contains('\\') {
        return Err(format!("{what} {path:?} is not a relative path (a/b)"));
    }
    if path.contains(['?', '#']) || path.chars().any(char::is_control) {
        return Err(format!(
            "{what} {path:?} has a character a skill's URI cannot carry"
        ));
    }
    if path
        .split('/')
        .any(|s| matches!(s, "" | "." | "..") || s.starts_with('.'))
    {
        return Err(format!(
            "{what} {path:?} climbs out of its folder, or has an empty or hidden part"
        ));
    }
    Ok(())
}

impl Catalog {
    /// The catalog of `sources`; the first skill that breaks a rule refuses them all, named.
    pub(crate) fn build(sources: Vec<SkillSource>) -> Result<Catalog, String> {
        let mut catalog = Catalog::default();
        let mut folders: BTreeMap<String, BTreeSet<(String, bool)>> = BTreeMap::new();
        for source in sources {
            let skill = catalog.add(source, &mut folders)?;
            if catalog.skills.iter().any(|s| s.uri == skill.uri) {
                return Err(format!("the skill {} is given twice", skill.uri));
            }
            catalog.skills.push(skill);
        }
        catalog.skills.sort_by(|a, b| a.uri.cmp(&b.uri));
        catalog.listed.sort_by(|a, b| a.uri.cmp(&b.uri));
        for (folder, children) in folders {
            let listing = children
                .into_iter()
                .map(|(child, is_dir)| {
                    let uri = format!("{folder}/{child}");
                    let resource = Resource::new(&uri, &child);
                    if is_dir {
                        resource.with_mime_type(DIRECTORY_MIME_TYPE)
                    } else {
                        let served = &catalog.files[&uri];
                        resource
                            .with_mime_type(served.mime)
                            .with_size(served.bytes.len() as u64)
                    }
                })
                .collect();
            catalog.directories.insert(folder, listing);
        }
        Ok(catalog)
    }

    fn add(
        &mut self,
        source: SkillSource,
        folders: &mut BTreeMap<String, BTreeSet<(String, bool)>>,
    ) -> Result<Skill, String> {
        let SkillSource { path, files } = source;
        let path = match path {
            Some(path) => path,
            None => named(&files)?,
        };
        check_path(&path, "the skill's path")?;
        let refuse = |why: String| format!("the skill at {SCHEME}{path}: {why}");
        if files.len() > MAX_SKILL_FILES {
            return Err(refuse(format!(
                "it has {} files, over the {MAX_SKILL_FILES} a skill may have",
                files.len()
            )));
        }
        let total: u64 = files.iter().map(|(_, bytes)| bytes.len() as u64).sum();
        if total > super::host::MAX_SKILL_BYTES {
            return Err(refuse(format!(
                "it has {total} bytes, over the {} MiB a skill may have",
                super::host::MAX_SKILL_BYTES >> 20
            )));
        }
        let manifest = files
            .iter()
            .find(|(file, _)| file == SKILL_MD)
            .ok_or_else(|| refuse("it has no SKILL.md".into()))?;
        let text = std::str::from_utf8(&manifest.1)
            .map_err(|_| refuse("its SKILL.md is not UTF-8 text".into()))?;
        let (frontmatter, _) = super::host::frontmatter(text).map_err(&refuse)?;
        let field = |key: &str| match frontmatter.get(key) {
            Some(serde_json::Value::String(value)) if !value.trim().is_empty() => Ok(value.clone()),
            _ => Err(refuse(format!(
                "its SKILL.md frontmatter has no {key:?} (a non-empty string)"
            ))),
        };
        let (name, description) = (field("name")?, field("description")?);
        let mut parsed = SkillFrontmatter::new(name.clone(), description.clone());
        parsed.extra = frontmatter
            .into_iter()
            .filter(|(k, _)| k != "name" && k != "description")
            .collect();
        let base = format!("{SCHEME}{path}");
        let mut resources = Vec::new();
        let mut seen = BTreeSet::new();
        for (file, bytes) in files {
            check_path(&file, "the file").map_err(&refuse)?;
            if !seen.insert(file.clone()) {
                return Err(refuse(format!("the file {file:?} is given twice")));
            }
            let uri = format!("{base}/{file}");
            resources.push(SkillResource::from_bytes(&uri, &bytes));
            // Every folder on the way holds the next part.
            let mut folder = base.clone();
            let parts: Vec<&str> = file.split('/').collect();
            for (i, part) in parts.iter().enumerate() {
                let last = i + 1 == parts.len();
                folders
                    .entry(folder.clone())
                    .or_default()
                    .insert((part.to_string(), !last));
                folder = format!("{folder}/{part}");
            }
            let mime = mime_of(&file, &bytes);
            // A skill nested in another's folder shares its files: the same bytes, or refused.
            if self.files.get(&uri).is_some_and(|old| *old.bytes != *bytes) {
                return Err(refuse(format!(
                    "{uri} is also a file of another skill, with other bytes"
                )));
            }
            self.files.insert(
                uri,
                Served {
                    bytes: bytes.into(),
                    mime,
                },
            );
        }
        resources.sort_by(|a, b| a.uri.cmp(&b.uri));
        let uri = format!("{base}/{SKILL_MD}");
        let skill = Skill::new(&uri, parsed, SkillResources::Files(resources));
        skill.validate().map_err(|e| refuse(e.to_string()))?;
        let size = self.files[&uri].bytes.len() as u64;
        self.listed.push(
            Resource::new(&uri, &name)
                .with_description(&description)
                .with_mime_type("text/markdown")
                .with_size(size),
        );
        Ok(skill)
    }

    /// Every skill, by URI.
    pub(crate) fn skills(&self) -> &[Skill] {
        &self.skills
    }

    /// The skill whose `SKILL.md` is `uri`.
    pub(crate) fn skill(&self, uri: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.uri == uri)
    }

    /// Each skill's `SKILL.md`, as `resources/list` lists it.
    pub(crate) fn resources(&self) -> &[Resource] {
        &self.listed
    }

    /// `resources/read` of a skill's file: text when it is UTF-8, else a blob.
    pub(crate) fn read(&self, uri: &str) -> Option<ReadResourceResult> {
        let served = self.files.get(uri)?;
        let contents = match std::str::from_utf8(&served.bytes) {
            Ok(text) => ResourceContents::text(text, uri),
            Err(_) => ResourceContents::blob(
                base64::engine::general_purpose::STANDARD.encode(&served.bytes),
                uri,
            ),
        };
        Some(ReadResourceResult::new(vec![
            contents.with_mime_type(served.mime),
        ]))
    }

    /// A file of a skill as text, when it is UTF-8.
    pub(crate) fn text(&self, uri: &str) -> Option<String> {
        let served = self.files.get(uri)?;
        String::from_utf8(served.bytes.to_vec()).ok()
    }

    /// Whether `uri` is one of its skills' files or folders.
    pub(crate) fn serves(&self, uri: &str) -> bool {
        self.files.contains_key(uri) || self.directories.contains_key(uri)
    }

    /// `resources/directory/read`: the children of a folder within a skill.
    pub(crate) fn directory(&self, uri: &str) -> Option<&[Resource]> {
        self.directories.get(uri).map(Vec::as_slice)
    }
}

/// The path of a skill given without one: the `name` of its `SKILL.md`'s frontmatter.
fn named(files: &[(String, Vec<u8>)]) -> Result<String, String> {
    let manifest = files
        .iter()
        .find(|(file, _)| file == SKILL_MD)
        .ok_or_else(|| "a skill given without a path has no SKILL.md".to_string())?;
    let text = std::str::from_utf8(&manifest.1)
        .map_err(|_| "a skill given without a path: its SKILL.md is not UTF-8 text".to_string())?;
    let (frontmatter, _) = super::host::frontmatter(text)
        .map_err(|why| format!("a skill given without a path: {why}"))?;
    match frontmatter.get("name") {
        Some(serde_json::Value::String(name)) => Ok(name.clone()),
        _ => Err("a skill given without a path has no frontmatter \"name\" in its SKILL.md".into()),
    }
}

/// The skills of the folder `root`: each folder below it that holds a `SKILL.md` is one, at its
/// path from `root`, with every file below it (hidden entries left out, as Agent Skills tools
/// do). A symbolic link anywhere below `root` is refused, as is a `SKILL.md` at `root` itself.
pub(crate) fn read_folder(root: &Path) -> Result<Vec<SkillSource>, String> {
    let shown = root.display();
    let meta = std::fs::symlink_metadata(root)
        .map_err(|e| format!("the skills folder {shown} cannot be read: {e}"))?;
    if !meta.is_dir() {
        return Err(format!("the skills folder {shown} is not a folder"));
    }
    // Every regular file below the root, by its `/`-separated path.
    let mut found: Vec<(String, std::path::PathBuf)> = Vec::new();
    let mut pending = vec![(String::new(), root.to_path_buf())];
    while let Some((rel, dir)) = pending.pop() {
        let entries = std::fs::read_dir(&dir)
            .map_err(|e| format!("the skills folder {} cannot be read: {e}", dir.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else {
                return Err(format!(
                    "{} has a name that is not UTF-8",
                    entry.path().display()
                ));
            };
            if name.starts_with('.') {
                continue;
            }
            let path = if rel.is_empty() {
                name.to_string()
            } else {
                format!("{rel}/{name}")
            };
            let kind = entry
                .file_type()
                .map_err(|e| format!("{}: {e}", entry.path().display()))?;
            if kind.is_symlink() {
                return Err(format!(
                    "{} is a symbolic link: skills are served from the folder's own files only",
                    entry.path().display()
                ));
            } else if kind.is_dir() {
                pending.push((path, entry.path()));
            } else if kind.is_file() {
                found.push((path, entry.path()));
            } else {
                return Err(format!(
                    "{} is not a regular file or folder",
                    entry.path().display()
                ));
            }
        }
    }
    found.sort();
    if found.iter().any(|(path, _)| path == SKILL_MD) {
        return Err(format!(
            "{shown} has a SKILL.md of its own: each skill is a folder within it"
        ));
    }
    let folders: Vec<&str> = found
        .iter()
        .filter_map(|(path, _)| path.strip_suffix(&format!("/{SKILL_MD}")))
        .collect();
    let mut sources = Vec::new();
    for folder in &folders {
        let prefix = format!("{folder}/");
        let mut files = Vec::new();
        let mut total = 0u64;
        for (path, full) in found.iter().filter(|(p, _)| p.starts_with(&prefix)) {
            if files.len() >= MAX_SKILL_FILES {
                return Err(format!(
                    "the skill at {SCHEME}{folder}: it has more than the {MAX_SKILL_FILES} files a skill may have"
                ));
            }
            // The size first: a huge file is refused before it is read.
            let size = std::fs::symlink_metadata(full)
                .map_err(|e| format!("{} cannot be read: {e}", full.display()))?
                .len();
            total += size;
            if total > super::host::MAX_SKILL_BYTES {
                return Err(format!(
                    "the skill at {SCHEME}{folder}: it has more than the {} MiB a skill may have",
                    super::host::MAX_SKILL_BYTES >> 20
                ));
            }
            let bytes = std::fs::read(full)
                .map_err(|e| format!("{} cannot be read: {e}", full.display()))?;
            files.push((path[prefix.len()..].to_string(), bytes));
        }
        sources.push(SkillSource {
            path: Some(folder.to_string()),
            files,
        });
    }
    Ok(sources)
}
