//! The skills a server serves (the skills extension, SEP-2640): its own, and a gateway's
//! upstream servers' re-rooted under each server's name (`skill://<server>/…`, see
//! `crate::skills`): `skills/list`, `skills/get`, `resources/directory/read`, and their files
//! for `resources/list` and `resources/read`. An upstream's skill is asked of that upstream
//! with its own URI. A skill outside the caller's scopes is answered as one nobody serves, as a
//! resource is.

use std::collections::HashSet;
use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{
    GetSkillResult, ListSkillsResult, ReadResourceDirectoryResult, ReadResourceResult, Resource,
    Skill,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Map, Value};

use super::ToolServer;
use super::auth::Kind;
use super::caller::Sight;
use super::context::CallContext;
use super::surface::Upstream;

fn unknown_skill(uri: &str) -> ErrorData {
    ErrorData::invalid_params(format!("unknown skill {uri}"), None)
}

fn not_a_directory(uri: &str) -> ErrorData {
    ErrorData::invalid_params(format!("not a directory of a skill: {uri}"), None)
}

fn parsed<T: serde::de::DeserializeOwned>(what: &str, value: Value) -> Result<T, ErrorData> {
    serde_json::from_value(value).map_err(|e| {
        ErrorData::internal_error(format!("the upstream's {what} is malformed ({e})"), None)
    })
}

impl ToolServer {
    /// The catalog now, when the server has skills of its own.
    fn skills_now(&self) -> Option<Arc<crate::skills::Catalog>> {
        self.shared.skills.as_ref().map(|skills| skills.catalog())
    }

    /// Whether the server offers skills: its own, or an upstream's it relays.
    pub(super) fn offers_skills(&self) -> bool {
        self.shared.skills.is_some() || self.surface_now().caps.skills
    }

    /// The upstream a re-rooted URI names (one that offers skills), and its own URI there;
    /// None for a URI the server's own skills answer (they come first).
    pub(super) fn relayed_skill_file(&self, uri: &str) -> Option<(Arc<dyn Upstream>, String)> {
        if self.skills_now().is_some_and(|own| own.serves(uri)) {
            return None;
        }
        let (server, original) = crate::skills::unrooted(uri)?;
        let surface = self.surface_now();
        let up = surface
            .upstreams
            .iter()
            .find(|up| up.name() == server && up.offers_skills())?;
        Some((up.clone(), original))
    }

    pub(super) fn skills_listing(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        if !self.offers_skills() {
            return Err(ErrorData::method_not_found::<
                rmcp::model::ListSkillsRequestMethod,
            >());
        }
        let sight = Sight::of(context);
        let mut seen = HashSet::new();
        // The server's own first (they win a clash, here as for every other request), then
        // the upstreams', in config order.
        let mut skills: Vec<Skill> = match self.skills_now() {
            Some(catalog) => catalog.skills().to_vec(),
            None => Vec::new(),
        };
        for up in &self.surface_now().upstreams {
            for entry in up.skills() {
                let Some(rerooted) = crate::skills::rerooted_entry(up.name(), &entry) else {
                    continue;
                };
                if let Ok(skill) = serde_json::from_value::<Skill>(Value::Object(rerooted)) {
                    skills.push(skill);
                }
            }
        }
        skills.retain(|skill| {
            sight.sees(Kind::Resource, &skill.uri) && seen.insert(skill.uri.clone())
        });
        Ok(ListSkillsResult::with_all_items(skills))
    }

    pub(super) async fn skill_entry(
        &self,
        uri: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        if !self.offers_skills() {
            return Err(ErrorData::method_not_found::<
                rmcp::model::GetSkillRequestMethod,
            >());
        }
        if !Sight::of(context).sees(Kind::Resource, uri) {
            return Err(unknown_skill(uri));
        }
        if let Some(skill) = self.skills_now().and_then(|c| c.skill(uri).cloned()) {
            return Ok(GetSkillResult::new(skill));
        }
        let Some((up, original)) = self.relayed_skill_file(uri) else {
            return Err(unknown_skill(uri));
        };
        let (ctx, _) = CallContext::new(context.clone(), self.log_level.clone());
        let mut got = up.get_skill(original, ctx).await?;
        let Some(Value::Object(entry)) = got.get("skill") else {
            return Err(unknown_skill(uri));
        };
        let Some(rerooted) = crate::skills::rerooted_entry(up.name(), entry) else {
            return Err(unknown_skill(uri));
        };
        got["skill"] = Value::Object(rerooted);
        parsed("skills/get result", got)
    }

    pub(super) async fn skill_directory(
        &self,
        uri: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        if !self.offers_skills() {
            return Err(ErrorData::method_not_found::<
                rmcp::model::ReadResourceDirectoryRequestMethod,
            >());
        }
        if !Sight::of(context).sees(Kind::Resource, uri) {
            return Err(not_a_directory(uri));
        }
        if let Some(children) = self
            .skills_now()
            .and_then(|c| c.directory(uri).map(<[Resource]>::to_vec))
        {
            return Ok(ReadResourceDirectoryResult::with_all_items(children));
        }
        let Some((up, original)) = self.relayed_skill_file(uri) else {
            return Err(not_a_directory(uri));
        };
        let (ctx, _) = CallContext::new(context.clone(), self.log_level.clone());
        let children = up.read_directory(original, ctx).await?;
        let children = crate::skills::rerooted_list(up.name(), children, "resources");
        parsed("directory listing", children)
    }

    /// `resources/read` of one of the server's own skills' files, when it is one (and the
    /// caller sees it).
    pub(super) fn skill_file(
        &self,
        uri: &str,
        context: &RequestContext<RoleServer>,
    ) -> Option<ReadResourceResult> {
        let read = self.skills_now()?.read(uri)?;
        Sight::of(context).sees(Kind::Resource, uri).then_some(read)
    }

    /// Each of its own skills' `SKILL.md` the caller sees, for `resources/list` (the upstreams'
    /// come with their resources); None without skills of its own.
    pub(super) fn skills_resources(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Option<Vec<Resource>> {
        let catalog = self.skills_now()?;
        let sight = Sight::of(context);
        Some(
            catalog
                .resources()
                .iter()
                .filter(|r| sight.sees(Kind::Resource, &r.uri))
                .cloned()
                .collect(),
        )
    }
}

/// The contents of an upstream's skill file, read with its own URI and answered re-rooted.
pub(super) fn rerooted_read(server: &str, result: Value) -> Map<String, Value> {
    match crate::skills::rerooted_list(server, result, "contents") {
        Value::Object(result) => result,
        _ => Map::new(),
    }
}
