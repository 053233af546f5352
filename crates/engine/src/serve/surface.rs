//! The served resources, resource templates and prompts besides the tools: the server's own
//! (JavaScript definitions, through [`ToolCaller`]s) and those of the upstream servers a gateway
//! relays (through [`Upstream`]), composed once per change into one [`Surface`].
//!
//! Upstream items come first, in config order, then the server's own (the tools' order).
//! Prompts are named `<server>_<prompt>` as tools are (a `Namer` keeps the names stable across
//! rebuilds); resource URIs and template `uriTemplate`s are never renamed, since results and
//! resource links refer to them, so when two owners list the same one the first wins and a
//! warning names the other.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use rmcp::model::{CacheScope, Prompt, Resource, ResourceTemplate};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::tool::ToolCaller;
use crate::connect::naming::Namer;
pub use crate::surface::Hints;
use crate::surface::uri_template;

/// What one of the server's own items is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwnKind {
    Resource,
    Template,
    Prompt,
}

/// One of the server's own resources, templates or prompts.
pub struct OwnItem {
    pub kind: OwnKind,
    /// Its listing, as served (MCP's `Resource`, `ResourceTemplate` or `Prompt`).
    pub listing: Map<String, Value>,
    /// Reads it (arguments `{uri, vars}`) or gets it (the prompt's arguments); resolves an
    /// envelope, `{result}` or `{error: {code?, message, data?}}`.
    pub caller: Arc<dyn ToolCaller>,
    /// Completes one of its arguments (`{argument: {name, value}, context?}`), resolving an
    /// envelope whose result is `{values, total?, hasMore?}`.
    pub completer: Option<Arc<dyn ToolCaller>>,
    /// The arguments `completer` completes.
    pub completes: Vec<String>,
}

pub use crate::gateway::upstream::{ListKind, Upstream, UpstreamListing};

/// Who answers for an item.
#[derive(Clone)]
pub(crate) enum Owner {
    Own(Arc<OwnItem>),
    Up(Arc<dyn Upstream>),
}

impl Owner {
    fn describe(&self) -> String {
        match self {
            Owner::Own(_) => "the server's own definitions".to_string(),
            Owner::Up(up) => format!("server {:?}", up.name()),
        }
    }
}

/// What the surface makes the server announce.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Caps {
    pub(crate) resources: bool,
    pub(crate) prompts: bool,
    pub(crate) completions: bool,
    /// An upstream offers skills (SEP-2640), which the server relays.
    pub(crate) skills: bool,
}

/// One version of the served resources, templates and prompts.
#[derive(Default)]
pub(crate) struct Surface {
    pub(crate) resources: Vec<(Resource, Owner)>,
    pub(crate) templates: Vec<(ResourceTemplate, Owner)>,
    /// With the name its owner knows it by.
    pub(crate) prompts: Vec<(Prompt, Owner, String)>,
    by_uri: HashMap<String, usize>,
    by_template: HashMap<String, usize>,
    by_prompt: HashMap<String, usize>,
    pub(crate) upstreams: Vec<Arc<dyn Upstream>>,
    /// The upstreams that declare resources, in config order: asked in turn for a URI no
    /// listing names (a resource link a tool returned before its re-list finished).
    pub(crate) readers: Vec<Arc<dyn Upstream>>,
    /// By [`ListKind`]: the upstreams whose items are served in that listing (all, for tools).
    contributors: [Vec<usize>; 4],
    configured: Hints,
    pub(crate) caps: Caps,
}

/// Reads one listed item as its rmcp type, or says why it is left out.
fn item<T: DeserializeOwned>(listing: &Map<String, Value>) -> Result<T, String> {
    serde_json::from_value(Value::Object(listing.clone())).map_err(|e| e.to_string())
}

fn id_of(listing: &Map<String, Value>, field: &str) -> String {
    listing
        .get(field)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// Collects warnings, each distinct one once per service.
struct Warnings<'a> {
    warned: &'a mut HashSet<String>,
    out: Vec<String>,
}

impl Warnings<'_> {
    fn push(&mut self, warning: String) {
        if self.warned.insert(warning.clone()) {
            self.out.push(warning);
        }
    }
}

impl Surface {
    /// Composes `upstreams` (config order) and `own`; the warnings are those not yet in
    /// `warned` (which keeps them, so a rebuild does not repeat them).
    pub(crate) fn build(
        own: Vec<OwnItem>,
        upstreams: Vec<Arc<dyn Upstream>>,
        namer: &mut Namer,
        configured: Hints,
        warned: &mut HashSet<String>,
    ) -> (Surface, Vec<String>) {
        let mut warnings = Warnings {
            warned,
            out: Vec::new(),
        };
        let mut surface = Surface {
            configured,
            ..Surface::default()
        };
        let listings: Vec<UpstreamListing> = upstreams.iter().map(|u| u.listing()).collect();
        surface.contributors[ListKind::Tools as usize] = (0..upstreams.len()).collect();
        // Upstream prompts are renamed first, all at once, so the names stay stable.
        let mut pairs = Vec::new();
        for (up, listing) in upstreams.iter().zip(&listings) {
            for prompt in &listing.prompts {
                pairs.push((up.name().to_string(), id_of(prompt, "name")));
            }
        }
        let borrowed: Vec<(&str, &str)> = pairs
            .iter()
            .map(|(s, p)| (s.as_str(), p.as_str()))
            .collect();
        let (names, renamed) = namer.assign(&borrowed);
        for warning in renamed {
            let warning = warning
                .replace(": tool name ", ": prompt name ")
                .replace(": tool ", ": prompt ")
                .replace("another tool named", "another prompt named");
            warnings.push(warning);
        }
        let mut names = names.into_iter();
        for (i, (up, listing)) in upstreams.iter().zip(&listings).enumerate() {
            let owner = Owner::Up(up.clone());
            if listing.declares_resources {
                surface.readers.push(up.clone());
                surface.caps.resources = true;
            }
            if listing.declares_prompts {
                surface.caps.prompts = true;
            }
            if listing.declares_completions {
                surface.caps.completions = true;
            }
            if listing.declares_skills {
                surface.caps.skills = true;
            }
            for resource in &listing.resources {
                // A skill's file is served under its server's name (see `crate::skills`).
                let rerooted = listing
                    .declares_skills
                    .then(|| crate::skills::rerooted_resource(up.name(), resource))
                    .flatten();
                if surface.add_resource(
                    rerooted.as_ref().unwrap_or(resource),
                    &owner,
                    &mut warnings,
                ) {
                    surface.contributed(ListKind::Resources, i);
                }
            }
            for template in &listing.templates {
                if surface.add_template(template, &owner, &mut warnings) {
                    surface.contributed(ListKind::Templates, i);
                }
            }
            for prompt in &listing.prompts {
                let served = names.next().unwrap_or_default();
                if surface.add_prompt(prompt, &owner, served, &mut warnings) {
                    surface.contributed(ListKind::Prompts, i);
                }
            }
        }
        for own in own {
            let own = Arc::new(own);
            let owner = Owner::Own(own.clone());
            if own.completer.is_some() {
                surface.caps.completions = true;
            }
            match own.kind {
                OwnKind::Resource => {
                    surface.add_resource(&own.listing, &owner, &mut warnings);
                }
                OwnKind::Template => {
                    surface.add_template(&own.listing, &owner, &mut warnings);
                }
                OwnKind::Prompt => {
                    let name = id_of(&own.listing, "name");
                    surface.add_prompt(&own.listing, &owner, name, &mut warnings);
                }
            }
        }
        surface.caps.resources |= !surface.resources.is_empty() || !surface.templates.is_empty();
        surface.caps.prompts |= !surface.prompts.is_empty();
        surface.upstreams = upstreams;
        (surface, warnings.out)
    }

    fn contributed(&mut self, kind: ListKind, upstream: usize) {
        let list = &mut self.contributors[kind as usize];
        if list.last() != Some(&upstream) {
            list.push(upstream);
        }
    }

    fn add_resource(
        &mut self,
        listing: &Map<String, Value>,
        owner: &Owner,
        w: &mut Warnings,
    ) -> bool {
        let uri = id_of(listing, "uri");
        if let Some(&first) = self.by_uri.get(&uri) {
            let first = self.resources[first].1.describe();
            w.push(format!(
                "toolnexus: resource {uri:?} of {} is left out: {first} lists the same URI",
                owner.describe()
            ));
            return false;
        }
        match item::<Resource>(listing) {
            Ok(resource) => {
                self.by_uri.insert(uri, self.resources.len());
                self.resources.push((resource, owner.clone()));
                true
            }
            Err(why) => {
                w.push(format!(
                    "toolnexus: resource {uri:?} of {} is left out: {why}",
                    owner.describe()
                ));
                false
            }
        }
    }

    fn add_template(
        &mut self,
        listing: &Map<String, Value>,
        owner: &Owner,
        w: &mut Warnings,
    ) -> bool {
        let template = id_of(listing, "uriTemplate");
        if let Some(&first) = self.by_template.get(&template) {
            let first = self.templates[first].1.describe();
            w.push(format!(
                "toolnexus: resource template {template:?} of {} is left out: {first} lists the same uriTemplate",
                owner.describe()
            ));
            return false;
        }
        match item::<ResourceTemplate>(listing) {
            Ok(listed) => {
                self.by_template.insert(template, self.templates.len());
                self.templates.push((listed, owner.clone()));
                true
            }
            Err(why) => {
                w.push(format!(
                    "toolnexus: resource template {template:?} of {} is left out: {why}",
                    owner.describe()
                ));
                false
            }
        }
    }

    fn add_prompt(
        &mut self,
        listing: &Map<String, Value>,
        owner: &Owner,
        served: String,
        w: &mut Warnings,
    ) -> bool {
        let original = id_of(listing, "name");
        if let Some(&first) = self.by_prompt.get(&served) {
            let first = self.prompts[first].1.describe();
            w.push(format!(
                "toolnexus: prompt {served:?} of {} is left out: {first} serves a prompt of that name",
                owner.describe()
            ));
            return false;
        }
        match item::<Prompt>(listing) {
            Ok(mut prompt) => {
                prompt.name = served.clone();
                self.by_prompt.insert(served, self.prompts.len());
                self.prompts.push((prompt, owner.clone(), original));
                true
            }
            Err(why) => {
                w.push(format!(
                    "toolnexus: prompt {original:?} of {} is left out: {why}",
                    owner.describe()
                ));
                false
            }
        }
    }

    /// The hints `kind`'s listing is served with. An upstream whose listing expired is asked
    /// to re-list, and meanwhile the answer is not to be cached (0 ms).
    pub(crate) fn hints(&self, kind: ListKind) -> (u64, CacheScope) {
        let mut merged: Option<Hints> = None;
        let mut stale = false;
        for &i in &self.contributors[kind as usize] {
            let up = &self.upstreams[i];
            if up.expired(kind) {
                up.refresh_if_stale(kind);
                stale = true;
            }
            let hints = up.hints(kind);
            merged = Some(merged.map_or(hints, |m| m.merge(hints)));
        }
        let (ttl, scope) = merged.unwrap_or_default().served(self.configured);
        (if stale { 0 } else { ttl }, scope)
    }

    /// The hints of a read answered by the server itself.
    pub(crate) fn read_hints(&self) -> (u64, CacheScope) {
        Hints::default().served(self.configured)
    }

    /// Who answers a read of `uri`, and the template variables when a template matched: an
    /// exact URI of a listed resource first, then the first template that matches.
    pub(crate) fn resolve(&self, uri: &str) -> Option<(Owner, Option<Map<String, Value>>)> {
        if let Some(&i) = self.by_uri.get(uri) {
            return Some((self.resources[i].1.clone(), None));
        }
        self.templates.iter().find_map(|(template, owner)| {
            uri_template::matches(&template.uri_template, uri)
                .map(|vars| (owner.clone(), Some(vars)))
        })
    }

    /// The prompt served as `name`.
    pub(crate) fn prompt(&self, name: &str) -> Option<&(Prompt, Owner, String)> {
        self.prompts.get(*self.by_prompt.get(name)?)
    }

    /// The template listed with exactly this `uriTemplate`.
    pub(crate) fn template(&self, uri_template: &str) -> Option<&(ResourceTemplate, Owner)> {
        self.templates.get(*self.by_template.get(uri_template)?)
    }
}
