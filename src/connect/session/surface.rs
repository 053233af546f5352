//! A live server's surface beside tools: its resources, resource templates and prompts as last
//! listed, and the requests on them (`resources/read`, `prompts/get`, `completion/complete`,
//! resource subscriptions). Every one goes through rmcp's typed service, whatever the road of
//! its listings and calls.

use std::sync::{Arc, Weak};
use std::time::Duration;

use rmcp::model::ServerCapabilities;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::{LiveServer, Session};
use crate::connect::relay::Front;
use crate::connect::updates::UpdateListener;
use crate::surface::{Hints, Kind, SurfaceError, SurfaceListing};

/// How one request on a server's surface runs.
pub struct Req<'a> {
    /// Overrides the server's timeout; each progress notification restarts it.
    pub timeout: Option<Duration>,
    /// Aborts the request (the server is told with `notifications/cancelled`).
    pub cancel: &'a CancellationToken,
    /// The session's closing.
    pub closed: &'a CancellationToken,
    /// When the request is forwarded for another client: it gets the server's progress, log
    /// messages and questions while the request runs.
    pub front: Option<Arc<dyn Front>>,
}

/// One listener of one resource of one server; dropped, the listener is removed, and the last
/// one of its URI unsubscribes the server (in the background, bounded by its timeout).
pub struct UpstreamSub {
    pub(super) server: Weak<LiveServer>,
    pub(super) uri: String,
    pub(super) id: u64,
}

impl UpstreamSub {
    /// The URI it follows.
    pub fn uri(&self) -> &str {
        &self.uri
    }
}

impl Drop for UpstreamSub {
    fn drop(&mut self) {
        if let Some(server) = self.server.upgrade() {
            server.updates.remove(&self.uri, self.id);
        }
    }
}

impl LiveServer {
    /// Its resources, resource templates and prompts as last listed (items shared, not copied).
    pub fn surface(&self) -> SurfaceListing {
        self.surface
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The caching hints of its last tool listing.
    pub fn tool_hints(&self) -> Hints {
        *self.tool_hints.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What it declared at the handshake (or discovery).
    pub fn capabilities(&self) -> Option<&ServerCapabilities> {
        self.caps.as_ref()
    }

    /// `resources/read`: the server's `ReadResourceResult` JSON, as it came.
    pub async fn read_resource(&self, uri: &str, r: Req<'_>) -> Result<Value, SurfaceError> {
        let _ = (uri, r);
        Err(SurfaceError::words("not yet"))
    }

    /// `prompts/get`: the server's `GetPromptResult` JSON, as it came.
    pub async fn get_prompt(
        &self,
        name: &str,
        args: Map<String, Value>,
        r: Req<'_>,
    ) -> Result<Value, SurfaceError> {
        let _ = (name, args, r);
        Err(SurfaceError::words("not yet"))
    }

    /// `completion/complete` with `reference` (`{type: "ref/prompt", name}` or
    /// `{type: "ref/resource", uri}`), `argument` (`{name, value}`) and `context`
    /// (`{arguments}`): the server's `CompleteResult` JSON. A malformed one is -32602.
    pub async fn complete(
        &self,
        reference: Value,
        argument: Value,
        context: Option<Value>,
        r: Req<'_>,
    ) -> Result<Value, SurfaceError> {
        let _ = (reference, argument, context, r);
        Err(SurfaceError::words("not yet"))
    }

    /// Follows `uri`: `listener` is told of each update until the returned handle is dropped.
    /// The first listener of a URI subscribes the server (`resources/subscribe` in the
    /// handshake era, a `subscriptions/listen` stream in 2026-07-28).
    pub async fn subscribe(
        self: &Arc<Self>,
        uri: &str,
        listener: UpdateListener,
    ) -> Result<UpstreamSub, SurfaceError> {
        let _ = (uri, listener);
        Err(SurfaceError::words("not yet"))
    }

    /// When the listing of `kind` (`None`: its tools) has outlived its TTL, re-lists it in the
    /// background (one re-list per kind at a time), as a `list_changed` would.
    pub fn refresh_if_stale(self: &Arc<Self>, kind: Option<Kind>) {
        let _ = kind;
    }
}

impl Session {
    /// How many changes of its servers' resources, templates or prompts it has seen.
    pub fn surface_generation(&self) -> u64 {
        self.surface_generation
            .load(std::sync::atomic::Ordering::Acquire)
    }

    /// Its connected server of this name.
    pub fn server(&self, name: &str) -> Option<&Arc<LiveServer>> {
        self.servers.iter().find(|s| s.name == name)
    }
}
