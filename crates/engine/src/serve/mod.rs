//! Serving a tool set as an MCP server, on rmcp's server side.
//!
//! [`ToolServer`] is an rmcp `ServerHandler` over a tool set (JS callbacks and gateway-forwarded
//! MCP tools) that `set_tools` can replace, telling connected clients with `list_changed`. rmcp owns the protocol: both eras (the
//! `initialize` handshake and 2026-07-28's `server/discover` with per-request `_meta`), version
//! negotiation, cancellation scoped to its session, unknown methods. `http` mounts it as
//! streamable HTTP on hyper, `stdio` runs it over any reader/writer pair, and `bridge` over
//! messages handed in one at a time (an SDK `Transport` in JavaScript).

mod abort;
pub mod auth;
pub mod bridge;
mod builder;
pub(crate) mod caller;
mod changes;
pub mod context;
pub mod curate;
pub mod cut;
mod handler;
pub mod hooks;
pub mod http;
mod input;
pub mod rate;
pub(crate) mod rounds;
pub mod seal;
pub mod search;
mod serving;
mod skills;
pub mod stdio;
pub mod store;
pub mod store_redis;
pub(crate) mod store_tasks;
pub(crate) mod subscriptions;
pub mod surface;
mod task_calls;
pub(crate) mod task_legacy;
pub(crate) mod tasks;
pub(crate) mod tool;
mod toolset;
mod validate;
pub(crate) mod wire;

pub use validate::schema_problems;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_replicas;
#[cfg(test)]
mod tests_rounds;
#[cfg(test)]
mod tests_surface;

use std::sync::Arc;

use rmcp::service::{RequestContext, RoleServer};

/// `serverInfo` announced to clients.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerIdentity {
    pub name: String,
    pub version: String,
}

impl Default for ServerIdentity {
    fn default() -> Self {
        Self {
            name: "toolnexus".into(),
            version: "0.1.0".into(),
        }
    }
}

pub use context::CallContext;
pub use context::SessionLogLevel;
pub use tool::{
    CallRecord, CallResult, LISTING_EXTRAS, OnCall, ServedTool, ToolCaller, object_schema,
};
use toolset::ToolSet;

/// What a session's transport hears of the session: its handshake being answered, and
/// `notifications/cancelled` (for calls the transport runs itself).
pub(crate) trait SessionHooks: Send + Sync + 'static {
    fn initialized(&self, context: &RequestContext<RoleServer>, log_level: SessionLogLevel);
    fn cancelled(&self, request: &rmcp::model::RequestId);
}

/// The tools surface of an MCP server. Cloning is cheap (one `Arc`): rmcp's HTTP service makes
/// one handler per session and per stateless request, all sharing this state.
#[derive(Clone)]
pub struct ToolServer {
    shared: Arc<Inner>,
    /// Per session: what `logging/setLevel` asked for.
    log_level: SessionLogLevel,
    /// Per session: what its transport wants to hear of it (an HTTP session links its calls
    /// to the direct road, see `http::sessions`).
    hooks: Option<Arc<dyn SessionHooks>>,
    /// Per session: names its resource subscriptions.
    session: u64,
}

/// Numbers sessions, to tell whose resource subscription is whose.
static NEXT_SESSION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn next_session() -> u64 {
    NEXT_SESSION.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// What a surface rebuild keeps: stable prompt names, and the warnings already given.
#[derive(Default)]
struct Composing {
    namer: crate::connect::naming::Namer,
    warned: std::collections::HashSet<String>,
}

struct Inner {
    identity: ServerIdentity,
    /// Replaced whole by `set_tools`; a call in flight keeps the set it started with.
    tools: std::sync::RwLock<Arc<ToolSet>>,
    /// Replaced whole by `set_surface`, like the tools.
    surface: std::sync::RwLock<Arc<surface::Surface>>,
    composing: std::sync::Mutex<Composing>,
    /// Resource subscriptions of every session.
    subs: Arc<subscriptions::Subs>,
    /// Who to tell when the tools change.
    changes: changes::ToolChanges,
    on_call: Option<OnCall>,
    /// The application's policy hooks, when it set some.
    call_hooks: Option<Arc<dyn hooks::CallHooks>>,
    /// How large a tool's result may be (`resultLimits`), when limited.
    result_limits: Option<cut::ResultLimits>,
    /// 2026-07-28 runs waiting for the retry that brings their input.
    parking: Arc<rounds::Parking>,
    /// Searched instead of listed (`toolSearch`), when set.
    search: Option<search::SearchMode>,
    /// Calls run as tasks.
    tasks: Arc<tasks::Tasks>,
    /// The server's own skills (SEP-2640), when it serves some.
    skills: Option<Arc<crate::skills::ServedSkills>>,
}

impl ToolServer {
    fn current(&self) -> Arc<ToolSet> {
        self.shared
            .tools
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Serves `tools` from now on, and sends `notifications/tools/list_changed` to every
    /// connected client (a client that went away is forgotten). Must run inside the runtime.
    pub fn set_tools(&self, tools: Vec<ServedTool>) {
        self.replace_tools(tools, true);
    }

    /// Serves `tools` from now on; connected clients are told (`list_changed`) only when
    /// `announce` (a listing that did not change, served by new callers after a restart, is
    /// not news to them).
    pub fn replace_tools(&self, tools: Vec<ServedTool>, announce: bool) {
        let set = Arc::new(ToolSet::new(tools));
        *self.shared.tools.write().unwrap_or_else(|e| e.into_inner()) = set;
        if announce {
            self.shared.changes.announce(changes::Change::Tools);
        }
    }

    fn surface(&self) -> Arc<surface::Surface> {
        self.shared
            .surface
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Serves `own` resources, templates and prompts plus those of `upstreams` (config
    /// order) from now on, with `cache` hints where given, and tells every connected client
    /// of the listings that changed. The warnings are those not given before (a URI listed
    /// twice, a renamed prompt, an item that is not valid MCP). Must run inside the runtime.
    pub fn set_surface(
        &self,
        own: Vec<surface::OwnItem>,
        upstreams: Vec<Arc<dyn surface::Upstream>>,
        cache: surface::Hints,
    ) -> Vec<String> {
        let (next, warnings) = {
            let mut composing = self
                .shared
                .composing
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            let Composing { namer, warned } = &mut *composing;
            surface::Surface::build(own, upstreams, namer, cache, warned)
        };
        let next = Arc::new(next);
        let before = std::mem::replace(
            &mut *self
                .shared
                .surface
                .write()
                .unwrap_or_else(|e| e.into_inner()),
            next.clone(),
        );
        let listed = |s: &surface::Surface| {
            let resources: Vec<_> = s.resources.iter().map(|(r, _)| r).collect();
            let templates: Vec<_> = s.templates.iter().map(|(t, _)| t).collect();
            let prompts: Vec<_> = s.prompts.iter().map(|(p, _, _)| p).collect();
            (
                serde_json::to_value((resources, templates)).unwrap_or_default(),
                serde_json::to_value(prompts).unwrap_or_default(),
            )
        };
        let surface = next.clone();
        self.shared
            .subs
            .rehome(move |uri| match surface.resolve(uri) {
                Some((surface::Owner::Up(up), _)) => Some(up),
                _ => None,
            });
        let (resources_before, prompts_before) = listed(&before);
        let (resources_now, prompts_now) = listed(&next);
        if resources_before != resources_now {
            self.shared.changes.announce(changes::Change::Resources);
        }
        if prompts_before != prompts_now {
            self.shared.changes.announce(changes::Change::Prompts);
        }
        warnings
    }

    /// `uri` changed: its subscribers hear `notifications/resources/updated`. Must run inside
    /// the runtime.
    pub fn resource_updated(&self, uri: &str) {
        self.shared.subs.updated(uri);
    }

    /// The same tools for a new session (its own log level).
    pub(crate) fn for_session(&self) -> Self {
        Self {
            shared: self.shared.clone(),
            log_level: SessionLogLevel::default(),
            hooks: None,
            session: next_session(),
        }
    }

    /// The same tools for a new session whose transport hears of it through the hooks `hooks`
    /// makes for the session's number (dropped with the session's handler).
    pub(crate) fn for_session_with(
        &self,
        hooks: impl FnOnce(u64) -> Arc<dyn SessionHooks>,
    ) -> Self {
        let mut server = self.for_session();
        server.hooks = Some(hooks(server.session));
        server
    }

    /// A handler for one call of an existing session (its log level), holding no link.
    fn in_session(&self, log_level: SessionLogLevel) -> Self {
        Self {
            shared: self.shared.clone(),
            log_level,
            hooks: None,
            session: self.session,
        }
    }

    /// Ends the tasks of the handshake-era sessions that ended.
    pub(crate) fn forget_closed_tasks(&self) {
        self.shared.tasks.forget_closed();
    }

    /// How many `tasks/result` requests wait on task `id` now.
    #[cfg(test)]
    pub(crate) fn task_waiters(&self, id: &str) -> usize {
        self.shared.tasks.waiters(id)
    }

    /// How many tasks exist now (running or ended, not yet expired).
    #[cfg(test)]
    pub(crate) fn task_count(&self) -> usize {
        self.shared.tasks.count()
    }

    fn search_mode(&self) -> Option<&search::SearchMode> {
        self.shared.search.as_ref()
    }

    /// How many runs wait for a 2026-07-28 retry now.
    #[cfg(test)]
    pub(crate) fn parked(&self) -> usize {
        self.shared.parking.count()
    }

    /// Forgets the handshake-era clients whose sessions ended (after many ended at once).
    pub(crate) fn forget_closed_peers(&self) {
        self.shared.changes.forget_closed();
        self.shared.subs.forget_closed();
        self.shared.tasks.forget_closed();
    }

    /// Forgets the resource followers whose sessions ended, releasing what they held upstream
    /// (cheap: bounded by the subscription cap).
    pub(crate) fn forget_closed_followers(&self) {
        self.shared.subs.forget_closed();
        // And the tasks of the sessions that ended.
        self.shared.tasks.forget_closed();
    }

    /// Ends the `subscriptions/listen` streams in progress (an endpoint is stopping).
    pub(crate) fn end_listeners(&self) {
        self.shared.changes.end_listeners();
        // And the handshake-era followers, with the upstream subscriptions they held.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let subs = self.shared.subs.clone();
            runtime.spawn(async move { subs.clear().await });
        }
    }

    /// Ends the runs waiting for a 2026-07-28 retry (an endpoint is stopping, so none can come).
    pub fn end_parked(&self) {
        self.shared.parking.clear();
        self.shared.tasks.clear();
    }

    /// Once [`ToolServer::end_parked`] dropped its tasks: waits, at most `bound`, until those in
    /// a shared store have their ends written there.
    pub(crate) async fn tasks_written(&self, bound: std::time::Duration) {
        self.shared.tasks.links_written(bound).await;
    }
}
