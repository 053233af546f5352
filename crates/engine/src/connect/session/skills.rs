//! A live server's skills (SEP-2640), loaded as a host loads them: nothing is read before a
//! skill is loaded; each file read is one the skill's entry lists, its size and then its digest
//! checked against the entry; the frontmatter of its `SKILL.md` compared with the entry's, field
//! by field. A skill not listed is found with `skills/get`. Bytes that fail a check are never
//! handed on: the request rejects with what differed.

use base64::Engine as _;
use rmcp::model::{
    ClientRequest, GetSkillRequest, GetSkillRequestParams, ReadResourceDirectoryRequest,
    ReadResourceDirectoryRequestParams, ServerResult, Skill,
};
use serde_json::{Value, json};

use super::LiveServer;
use super::surface::{Req, to_json};
use crate::skills;
use crate::surface::{Kind, SurfaceError};

const GET: &str = "skills/get";
const DIRECTORY: &str = "resources/directory/read";

fn refused(uri: &str, why: impl std::fmt::Display) -> SurfaceError {
    SurfaceError::words(format!("loading skill {uri} failed: {why}"))
}

impl LiveServer {
    /// `skills/get` of `uri` as the server answers it (its GetSkillResult JSON), for a gateway
    /// that relays it.
    pub(crate) async fn get_skill_json(
        &self,
        uri: &str,
        r: Req<'_>,
    ) -> Result<Value, SurfaceError> {
        let request =
            ClientRequest::GetSkillRequest(GetSkillRequest::new(GetSkillRequestParams::new(uri)));
        match self.surface_request(GET, request, &r).await? {
            ServerResult::GetSkillResult(got) => to_json(GET, &got),
            _ => Err(SurfaceError::words(format!(
                "{GET} failed: the server's answer is not a {GET} result"
            ))),
        }
    }

    /// `resources/directory/read` of `uri` as the server answers it (its result JSON).
    pub(crate) async fn read_directory_json(
        &self,
        uri: &str,
        r: Req<'_>,
    ) -> Result<Value, SurfaceError> {
        let request = ClientRequest::ReadResourceDirectoryRequest(
            ReadResourceDirectoryRequest::new(ReadResourceDirectoryRequestParams::new(uri)),
        );
        match self.surface_request(DIRECTORY, request, &r).await? {
            ServerResult::ListResourcesResult(children) => to_json(DIRECTORY, &children),
            _ => Err(SurfaceError::words(format!(
                "{DIRECTORY} failed: the server's answer is not a directory listing"
            ))),
        }
    }

    /// The entry of the skill whose `SKILL.md` is `uri`: as last listed, else `skills/get`.
    async fn skill_entry(&self, uri: &str, r: &Req<'_>) -> Result<Skill, SurfaceError> {
        let listing = self.surface();
        let listed = listing
            .get(Kind::Skills)
            .items
            .iter()
            .find(|item| item.get("uri").and_then(Value::as_str) == Some(uri));
        if let Some(item) = listed {
            return skills::entry(item).map_err(|why| refused(uri, why));
        }
        if !self
            .capabilities()
            .is_some_and(|caps| caps.supports_skills())
        {
            return Err(refused(
                uri,
                "the server does not offer skills (it did not declare the skills extension)",
            ));
        }
        let request =
            ClientRequest::GetSkillRequest(GetSkillRequest::new(GetSkillRequestParams::new(uri)));
        match self.surface_request(GET, request, r).await? {
            ServerResult::GetSkillResult(got) if got.skill.uri == uri => {
                got.skill.validate().map_err(|why| refused(uri, why))?;
                Ok(got.skill)
            }
            ServerResult::GetSkillResult(got) => Err(refused(
                uri,
                format!("the server answered with another skill ({})", got.skill.uri),
            )),
            _ => Err(refused(
                uri,
                "the server's answer is not a skills/get result",
            )),
        }
    }

    /// The bytes of the skill's file at `uri` (and its MIME type), read and checked.
    async fn skill_file(
        &self,
        skill: &Skill,
        uri: &str,
        r: Req<'_>,
    ) -> Result<(Vec<u8>, Option<String>), SurfaceError> {
        let file = skills::listed_file(skill, uri).map_err(|why| refused(&skill.uri, why))?;
        if let Some(file) = file
            && file.size > skills::MAX_SKILL_BYTES
        {
            return Err(refused(
                &skill.uri,
                format!(
                    "{uri} is {} bytes by its entry, over the {} MiB a skill may have",
                    file.size,
                    skills::MAX_SKILL_BYTES >> 20
                ),
            ));
        }
        let result = self.read_resource(uri, r).await?;
        let (bytes, mime) =
            skills::contents_bytes(&result, uri).map_err(|why| refused(&skill.uri, why))?;
        skills::verify(file, uri, &bytes).map_err(|why| refused(&skill.uri, why))?;
        Ok((bytes, mime))
    }

    /// Loads the skill whose `SKILL.md` is `uri`: `{ uri, name, description, frontmatter, text,
    /// body, files }`, its `SKILL.md` read and checked (size, digest, frontmatter).
    pub(crate) async fn load_skill(&self, uri: &str, r: Req<'_>) -> Result<Value, SurfaceError> {
        let skill = self.skill_entry(uri, &r).await?;
        let (bytes, _) = self.skill_file(&skill, &skill.uri, r).await?;
        let text = String::from_utf8(bytes)
            .map_err(|_| refused(uri, "refused: its SKILL.md is not UTF-8 text"))?;
        let (frontmatter, body) = skills::frontmatter(&text).map_err(|why| refused(uri, why))?;
        let listed = serde_json::to_value(&skill.frontmatter).unwrap_or(Value::Null);
        skills::same_frontmatter(&listed, &frontmatter).map_err(|why| refused(uri, why))?;
        Ok(skills::loaded(&skill, &frontmatter, &text, body))
    }

    /// Reads the file at `path` (within the skill's folder) of the skill whose `SKILL.md` is
    /// `uri`: `{ path, uri, size, mimeType?, text | blob }`, checked against the skill's entry.
    pub(crate) async fn read_skill_file(
        &self,
        uri: &str,
        path: &str,
        r: Req<'_>,
    ) -> Result<Value, SurfaceError> {
        let skill = self.skill_entry(uri, &r).await?;
        let file_uri = skills::file_uri(&skill.uri, path).map_err(|why| refused(uri, why))?;
        let (bytes, mime) = self.skill_file(&skill, &file_uri, r).await?;
        let mut read = json!({ "path": path, "uri": file_uri, "size": bytes.len() });
        if let Some(mime) = mime {
            read["mimeType"] = Value::String(mime);
        }
        match String::from_utf8(bytes) {
            Ok(text) => read["text"] = Value::String(text),
            Err(e) => {
                let blob = base64::engine::general_purpose::STANDARD.encode(e.into_bytes());
                read["blob"] = Value::String(blob);
            }
        }
        Ok(read)
    }
}
