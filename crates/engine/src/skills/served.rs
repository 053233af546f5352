//! A server's own skills as it serves them: a [`Catalog`] built once from files given in
//! memory, or from a folder, built again when the folder's files change (looked at, at most
//! once a second, when a client asks for skills; a folder that no longer builds keeps the last
//! catalog, and says why once).

use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime};

use super::catalog::{Catalog, SkillSource, read_folder};

/// How often a folder's files are looked at, at most.
const RECHECK: Duration = Duration::from_secs(1);

/// What a folder's files were when its catalog was built: each file's path, size and time.
type Stamp = Vec<(PathBuf, u64, Option<SystemTime>)>;

/// The skills a server serves.
#[derive(Debug)]
pub struct ServedSkills {
    folder: Option<PathBuf>,
    current: RwLock<Arc<Catalog>>,
    /// When the folder was last looked at, and what it was.
    checked: Mutex<(Instant, Stamp)>,
}

/// What a folder holds now, file by file (hidden entries and what cannot be read left out:
/// building the catalog says why).
fn stamp(root: &std::path::Path) -> Stamp {
    let mut out = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                pending.push(entry.path());
            } else {
                out.push((entry.path(), meta.len(), meta.modified().ok()));
            }
        }
    }
    out.sort();
    out
}

impl ServedSkills {
    /// The skills given in memory, checked.
    pub fn of(sources: Vec<SkillSource>) -> Result<ServedSkills, String> {
        Ok(ServedSkills {
            folder: None,
            current: RwLock::new(Arc::new(Catalog::build(sources)?)),
            checked: Mutex::new((Instant::now(), Vec::new())),
        })
    }

    /// The skills of the folder `root`, checked.
    pub fn folder(root: PathBuf) -> Result<ServedSkills, String> {
        let before = stamp(&root);
        let catalog = Catalog::build(read_folder(&root)?)?;
        Ok(ServedSkills {
            folder: Some(root),
            current: RwLock::new(Arc::new(catalog)),
            checked: Mutex::new((Instant::now(), before)),
        })
    }

    /// The skills now, as toolnexus shows a listed skill (see [`super::described`]).
    pub fn listed(&self) -> Vec<serde_json::Value> {
        self.catalog()
            .skills()
            .iter()
            .filter_map(|skill| match serde_json::to_value(skill) {
                Ok(serde_json::Value::Object(entry)) => Some(super::host::described(&entry)),
                _ => None,
            })
            .collect()
    }

    /// The skill whose `SKILL.md` is `uri`, loaded as a host loads one (`{ uri, name,
    /// description, frontmatter, text, body, files }`); None when it serves none there.
    pub fn load(&self, uri: &str) -> Option<serde_json::Value> {
        let catalog = self.catalog();
        let skill = catalog.skill(uri)?;
        let text = catalog.text(uri)?;
        let (frontmatter, body) = super::host::frontmatter(&text).ok()?;
        Some(super::host::loaded(skill, &frontmatter, &text, body))
    }

    /// The catalog now: a folder's is built again first when its files changed.
    pub(crate) fn catalog(&self) -> Arc<Catalog> {
        if let Some(root) = &self.folder {
            self.refresh(root);
        }
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn refresh(&self, root: &std::path::Path) {
        let mut checked = self.checked.lock().unwrap_or_else(|e| e.into_inner());
        if checked.0.elapsed() < RECHECK {
            return;
        }
        checked.0 = Instant::now();
        let now = stamp(root);
        if now == checked.1 {
            return;
        }
        checked.1 = now;
        match read_folder(root).and_then(Catalog::build) {
            Ok(catalog) => {
                *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(catalog);
            }
            Err(why) => eprintln!(
                "toolnexus: the skills of {} changed and are not served as they are now ({why}); \
                 the skills as they were are",
                root.display()
            ),
        }
    }
}
