//! loadMcp: live connections whose tools can be called until the session is closed.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rmcp::Peer;
use rmcp::model::ServerCapabilities;
use rmcp::service::RoleClient;
use serde_json::{Map, Value};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use super::connection::Connection;
use super::road::Road;
use super::tool_info::ToolInfo;
use crate::surface::{Hints, SurfaceListing};

mod call;
pub mod direct_call;
mod failure;
pub mod follow;
pub mod result;
mod service_call;
mod skills;
mod subscribe;
pub mod surface;
mod task_call;
mod task_common;
mod task_extension_call;
mod task_legacy_call;
#[cfg(test)]
mod tests_surface;
#[cfg(test)]
mod tests_tasks;

/// How a call is made ([`LiveServer::call_with`]).
#[derive(Clone, Debug, Default)]
pub struct CallOpts {
    /// Overrides the server's timeout (for a task: the whole task's).
    pub timeout: Option<Duration>,
    /// Run as a task a tool whose listing says it may be (`taskSupport: "optional"`); one that
    /// must be (`"required"`) always is, and one that cannot be is called as usual.
    pub task: bool,
    /// The request's `_meta` (e.g. the caller's trace context: `traceparent`, `tracestate`,
    /// `baggage`); a forwarded call's front adds its own over it.
    pub meta: Option<Map<String, Value>>,
}

/// A tool call as the roads send it: the tool's original name, its arguments, and the
/// request's `_meta`.
type Call<'a> = (&'a str, Map<String, Value>, Option<Map<String, Value>>);

/// A call's `_meta`: the caller's own, with a forwarded call's front's entries over it.
fn call_meta(
    own: Option<Map<String, Value>>,
    front: Option<&Arc<dyn super::relay::Front>>,
) -> Option<Map<String, Value>> {
    match (own, front.and_then(|f| f.meta())) {
        (Some(mut own), Some(theirs)) => {
            own.extend(theirs);
            Some(own)
        }
        (own, theirs) => theirs.or(own),
    }
}

/// One URI a server is subscribed to.
enum Subscribed {
    /// `resources/subscribe` was answered.
    Legacy,
    /// A `subscriptions/listen` stream (the id tells streams apart) delivers its updates until
    /// the token is cancelled.
    Listen(CancellationToken, u64),
}

/// One connected server of a session.
pub struct LiveServer {
    pub name: String,
    peer: Peer<RoleClient>,
    /// The one handle to its stdio transport's fast path (a stdio server in the handshake era):
    /// the direct requests its calls and listings take, and (on Unix) its stdout, to be read
    /// elsewhere once the session is handed over (see [`crate::connect::stdio::handoff`]).
    fast: Option<crate::connect::stdio::Fast>,
    /// How the server's questions are answered (its relays, the caller's elicitor).
    client: super::client::ClientSide,
    timeout: Duration,
    connection: Mutex<Option<Connection>>,
    /// Its tools as last listed (after its config's `tools` filter).
    listing: std::sync::Mutex<Vec<ToolInfo>>,
    /// Its config's `tools` filter, applied again to every re-listing.
    filter: Option<Vec<(String, bool)>>,
    /// Its `notifications/tools/list_changed`, until `follow_changes` takes it.
    changes: std::sync::Mutex<Option<tokio::sync::watch::Receiver<u64>>>,
    /// Its resources, resource templates and prompts as last listed.
    surface: std::sync::Mutex<SurfaceListing>,
    /// The caching hints of its last tool listing, and when it was made.
    tool_hints: std::sync::Mutex<(Hints, Instant)>,
    /// What it declared at the handshake.
    caps: Option<ServerCapabilities>,
    /// The listeners of its resources' updates (shared with its client handler).
    updates: Arc<super::updates::ResourceUpdates>,
    /// What it is subscribed to upstream, by URI.
    subs: Mutex<std::collections::HashMap<String, Subscribed>>,
    /// The revision it speaks.
    protocol: Option<rmcp::model::ProtocolVersion>,
    /// Its `notifications/{prompts,resources}/list_changed`, until `follow_changes` takes them.
    surface_changes: std::sync::Mutex<Option<[tokio::sync::watch::Receiver<u64>; 2]>>,
    /// A remote server's URL; None for a stdio server.
    url: Option<String>,
}

/// A server that came up, as loadMcp hands it to a session.
pub(crate) struct Joined {
    pub(crate) name: String,
    pub(crate) connection: Connection,
    pub(crate) timeout: Duration,
    /// Its tools, already filtered by `filter`.
    pub(crate) tools: Vec<ToolInfo>,
    pub(crate) filter: Option<Vec<(String, bool)>>,
    /// The caching hints of its tool listing.
    pub(crate) tool_hints: Hints,
    /// Its resources, resource templates and prompts.
    pub(crate) surface: SurfaceListing,
}

pub struct Session {
    pub servers: Vec<Arc<LiveServer>>,
    closed: CancellationToken,
    /// The one teardown every `close()` call waits for.
    closing: tokio::sync::OnceCell<()>,
    /// Bumped each time a server's listing changes, so readers know to rebuild.
    generation: AtomicU64,
    /// Bumped each time a server's resources, templates or prompts change.
    surface_generation: AtomicU64,
    /// When its servers were connected, for `mcp.client.session.duration`.
    opened: Instant,
}

/// What a tool call produced, mapped as docs/loading.md describes, plus the raw MCP result for gateways.
pub struct CallOutcome {
    pub output: String,
    pub is_error: bool,
    /// The server's `CallToolResult` JSON, when there was one.
    pub raw: Option<Value>,
    pub elapsed: Duration,
    /// It ran as a task that ended `failed` (its result, when it has one, is an error).
    pub task_failed: bool,
    /// Why there is no result, as telemetry's `error.type` says it (`timeout`, `cancelled`,
    /// `closed`, the JSON-RPC error code, else `_OTHER`); None when the server answered.
    pub error_type: Option<String>,
}

impl CallOutcome {
    fn failure(message: impl Into<String>, started: Instant) -> Self {
        Self {
            output: message.into(),
            is_error: true,
            raw: None,
            elapsed: started.elapsed(),
            task_failed: false,
            error_type: Some(OTHER_ERROR.to_string()),
        }
    }

    /// This failure, with why there is no result as telemetry says it.
    fn typed(mut self, error_type: String) -> Self {
        self.error_type = Some(error_type);
        self
    }
}

/// `error.type` of a failure with no better name (the OpenTelemetry convention's fallback).
pub const OTHER_ERROR: &str = "_OTHER";

impl Session {
    pub(crate) fn new(connections: Vec<Joined>) -> Self {
        let servers = connections
            .into_iter()
            .filter_map(|joined| {
                let conn = joined.connection;
                let peer = conn.peer()?.clone();
                let client = conn.client_side()?;
                let changes = conn.tools_changes();
                let fast = conn.fast();
                let info = peer.peer_info();
                let caps = info.as_ref().map(|info| info.capabilities.clone());
                let protocol = info.as_ref().map(|info| info.protocol_version.clone());
                let updates = client.updates.clone();
                let url = conn.url().map(str::to_string);
                let surface_changes = [
                    client.prompts_changed.watch(),
                    client.resources_changed.watch(),
                ];
                Some(Arc::new(LiveServer {
                    name: joined.name,
                    peer,
                    fast,
                    client,
                    timeout: joined.timeout,
                    connection: Mutex::new(Some(conn)),
                    listing: std::sync::Mutex::new(joined.tools),
                    filter: joined.filter,
                    changes: std::sync::Mutex::new(changes),
                    surface: std::sync::Mutex::new(joined.surface),
                    tool_hints: std::sync::Mutex::new((joined.tool_hints, Instant::now())),
                    caps,
                    updates,
                    subs: Mutex::new(Default::default()),
                    protocol,
                    surface_changes: std::sync::Mutex::new(Some(surface_changes)),
                    url,
                }))
            })
            .collect();
        Self {
            servers,
            closed: CancellationToken::new(),
            closing: tokio::sync::OnceCell::new(),
            generation: AtomicU64::new(0),
            surface_generation: AtomicU64::new(0),
            opened: Instant::now(),
        }
    }

    /// How many listing changes this session has seen.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    pub fn closed_token(&self) -> &CancellationToken {
        &self.closed
    }

    /// Closes every connection; every call (concurrent ones too) returns when every child has
    /// exited.
    pub async fn close(&self) {
        self.closing
            .get_or_init(|| async {
                self.closed.cancel();
                // Direct calls in flight settle now, as those on rmcp's path do.
                for direct in self.servers.iter().filter_map(|s| s.direct()) {
                    direct.close_all();
                }
                let closing = self.servers.iter().map(|server| async move {
                    let conn = server.connection.lock().await.take();
                    if let Some(conn) = conn {
                        conn.shutdown(true).await;
                        crate::telemetry::session_ended(
                            false,
                            self.opened.elapsed().as_secs_f64(),
                            server.peer_attributes().transport,
                        );
                    }
                });
                futures::future::join_all(closing).await;
            })
            .await;
    }
}

impl LiveServer {
    /// Where it is and what it speaks (for telemetry).
    pub fn peer_attributes(&self) -> crate::telemetry::PeerAttributes {
        crate::telemetry::PeerAttributes::of(self.url.as_deref(), self.protocol.as_ref())
    }

    /// Its direct requests, when calls take them.
    pub(crate) fn direct(&self) -> Option<&crate::connect::stdio::direct::Direct> {
        self.fast.as_ref().map(|fast| &fast.direct)
    }

    /// Asking for its stdout, to read it elsewhere (a stdio server whose calls are direct).
    #[cfg(unix)]
    pub fn stdout(&self) -> Option<&crate::connect::stdio::handoff::Handoff> {
        self.fast.as_ref().map(|fast| &*fast.stdout)
    }

    /// The road its listings and calls take: its direct requests when it has them, else rmcp.
    fn road(&self) -> Road<'_> {
        Road::of(&self.peer, self.direct())
    }

    /// Its tools as last listed (shared, not copied).
    pub fn listing(&self) -> Vec<ToolInfo> {
        self.listing
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}
