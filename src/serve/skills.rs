//! The skills a served toolkit or `buildMcpServer` offers (the skills extension, SEP-2640),
//! prepared once (lib/skills.js): a folder, or skills given in memory (`defineSkill`). A skill
//! that breaks a rule refuses them all, with the reason in words.

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use engine::skills::{ServedSkills, SkillSource};

/// One file of a skill given in memory (internal): its path within the skill's folder, and
/// its `text` or its `bytes`.
#[napi(object)]
pub struct NativeSkillFile {
    pub path: String,
    pub text: Option<String>,
    pub bytes: Option<Uint8Array>,
}

/// One skill given in memory (internal): its path under `skill://` (else its name) and files.
#[napi(object)]
pub struct NativeSkillSource {
    pub path: Option<String>,
    pub files: Vec<NativeSkillFile>,
}

/// What lib/skills.js prepares: a folder, or skills given in memory.
#[napi(object)]
pub struct NativeSkillsSpec {
    pub folder: Option<String>,
    pub skills: Option<Vec<NativeSkillSource>>,
}

/// Skills ready to serve (internal; opaque), shared by every endpoint that serves them.
#[napi]
pub struct NativeSkills {
    pub(super) skills: Arc<ServedSkills>,
}

#[napi]
impl NativeSkills {
    /// The skills now, as a source lists a skill (lib/skills.js's `load_skill` tool).
    #[napi(ts_return_type = "SkillInfo[]")]
    pub fn listed(&self) -> Vec<serde_json::Value> {
        self.skills.listed()
    }

    /// The skill whose `SKILL.md` is `uri`, loaded; null when none is served there.
    #[napi(ts_return_type = "Omit<LoadedSkill, \"read\"> | null")]
    pub fn load(&self, uri: String) -> Option<serde_json::Value> {
        self.skills.load(&uri)
    }
}

/// Checks and prepares skills to serve; a refusal is an `Error` naming the skill and the rule.
#[napi]
pub fn prepare_skills(spec: NativeSkillsSpec) -> Result<NativeSkills> {
    let served = match (spec.folder, spec.skills) {
        (Some(folder), _) => ServedSkills::folder(folder.into()),
        (None, Some(skills)) => ServedSkills::of(
            skills
                .into_iter()
                .map(|skill| SkillSource {
                    path: skill.path,
                    files: skill
                        .files
                        .into_iter()
                        .map(|file| {
                            let bytes = match (file.text, file.bytes) {
                                (Some(text), _) => text.into_bytes(),
                                (None, Some(bytes)) => bytes.to_vec(),
                                (None, None) => Vec::new(),
                            };
                            (file.path, bytes)
                        })
                        .collect(),
                })
                .collect(),
        ),
        (None, None) => ServedSkills::of(Vec::new()),
    };
    served
        .map(|skills| NativeSkills {
            skills: Arc::new(skills),
        })
        .map_err(|why| Error::from_reason(format!("toolnexus: skills: {why}")))
}
