//! The server's own skills (the skills extension, SEP-2640): `skills/list`, `skills/get`,
//! `resources/directory/read`, and their files for `resources/list` and `resources/read`. A
//! skill outside the caller's scopes is answered as one nobody serves, as a resource is.

use rmcp::ErrorData;
use rmcp::model::{
    GetSkillResult, ListSkillsResult, ReadResourceDirectoryResult, ReadResourceResult, Resource,
};
use rmcp::service::{RequestContext, RoleServer};

use super::ToolServer;
use super::auth::Kind;
use super::caller::Sight;

impl ToolServer {
    /// The catalog now, when the server has skills.
    fn skills_now(&self) -> Option<std::sync::Arc<crate::skills::Catalog>> {
        self.shared.skills.as_ref().map(|skills| skills.catalog())
    }

    pub(super) fn skills_listing(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let Some(catalog) = self.skills_now() else {
            return Err(ErrorData::method_not_found::<
                rmcp::model::ListSkillsRequestMethod,
            >());
        };
        let sight = Sight::of(context);
        let skills = catalog
            .skills()
            .iter()
            .filter(|skill| sight.sees(Kind::Resource, &skill.uri))
            .cloned()
            .collect();
        Ok(ListSkillsResult::with_all_items(skills))
    }

    pub(super) fn skill_entry(
        &self,
        uri: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        let Some(catalog) = self.skills_now() else {
            return Err(ErrorData::method_not_found::<
                rmcp::model::GetSkillRequestMethod,
            >());
        };
        match catalog.skill(uri) {
            Some(skill) if Sight::of(context).sees(Kind::Resource, uri) => {
                Ok(GetSkillResult::new(skill.clone()))
            }
            _ => Err(ErrorData::invalid_params(
                format!("unknown skill {uri}"),
                None,
            )),
        }
    }

    pub(super) fn skill_directory(
        &self,
        uri: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        let Some(catalog) = self.skills_now() else {
            return Err(ErrorData::method_not_found::<
                rmcp::model::ReadResourceDirectoryRequestMethod,
            >());
        };
        match catalog.directory(uri) {
            Some(children) if Sight::of(context).sees(Kind::Resource, uri) => Ok(
                ReadResourceDirectoryResult::with_all_items(children.to_vec()),
            ),
            _ => Err(ErrorData::invalid_params(
                format!("not a directory of a skill: {uri}"),
                None,
            )),
        }
    }

    /// `resources/read` of one of the skills' files, when it is one (and the caller sees it).
    pub(super) fn skill_file(
        &self,
        uri: &str,
        context: &RequestContext<RoleServer>,
    ) -> Option<ReadResourceResult> {
        let read = self.skills_now()?.read(uri)?;
        Sight::of(context).sees(Kind::Resource, uri).then_some(read)
    }

    /// Each skill's `SKILL.md` the caller sees, for `resources/list`; None without skills.
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
