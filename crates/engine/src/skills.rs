//! Agent Skills over MCP (the skills extension, SEP-2640): what a host checks of a skill it
//! loads ([`host`]), and the skills a server serves ([`catalog`], [`served`]).

mod catalog;
mod host;
mod relay;
mod served;
#[cfg(test)]
mod tests;

pub(crate) use catalog::Catalog;
pub use catalog::SkillSource;
pub use host::described;
pub(crate) use host::{
    MAX_SKILL_BYTES, contents_bytes, entry, file_uri, frontmatter, listed_file, loaded,
    same_frontmatter, verify,
};
pub(crate) use relay::{rerooted_entry, rerooted_list, rerooted_resource, unrooted};
pub use served::ServedSkills;
