//! A shorter road for the commonest request: a handshake-era `tools/call` inside a session.
//!
//! rmcp 3.11 answers every session request with an SSE stream through the session's worker
//! task: the request is pushed to the worker, handed to the session's service loop, run on a
//! task of its own, and its answer travels back through the loop and the worker into a
//! per-request channel. [`FastSessions`] is rmcp's `LocalSessionManager` with one change: a call
//! that can send nothing on its own stream is run here, on the request's task, and answered as
//! `application/json` (which the client accepted: rmcp refuses a POST that does not accept it).
//!
//! Everything before that stays rmcp's: it checks Host/Origin, Accept, Content-Type, the body
//! limit, the JSON, the session (unknown or deleted: 404), `MCP-Protocol-Version` and the
//! standard headers, and only then hands the request to the session manager, which is where
//! this module takes over. So a request that fails any check fails exactly as before.
//!
//! Only a client that prefers JSON takes this road: its `Accept` names `application/json`
//! before `text/event-stream` (or with a higher `q`), as the TypeScript SDK's and Python's
//! clients do. A client that puts the stream first gets rmcp's stream, with its priming event
//! and resumable event ids (SEP-1699).
//!
//! What a call may send still goes where rmcp sends it. Its logs and its input requests go to
//! the session's stream (rmcp routes a notification other than progress there, and a request
//! whose originating call it cannot see: a tool runs on a task of its own, so none is seen),
//! through the session's own peer, so the answers to those requests come back as before.
//! Progress goes on the call's own stream, so a call with a `progressToken` takes rmcp's
//! road; so does a 2026-07-28 call.
//!
//! When a session ends is decided here too, not by rmcp's worker (whose idle timer is off: it
//! sees none of the calls answered here): `sessions::Ledger` counts every request of every
//! session, a session idle past the timeout is answered 404 and ended, and one opened beyond
//! the cap ends the idlest.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use futures::{Stream, StreamExt};
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, GetExtensions, GetMeta, JsonRpcRequest, RequestId,
    ServerJsonRpcMessage,
};
use rmcp::service::{Peer, RequestContext, RoleServer, Service};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, SessionConfig,
};
use rmcp::transport::streamable_http_server::session::{
    RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};
use tokio_util::sync::CancellationToken;

use super::sessions::{Ledger, SessionLimits, SweepState};
use crate::serve::ToolServer;
use crate::serve::context::SessionLogLevel;

/// Where a call answered here leaves its answer for the HTTP layer (which puts one in the
/// request's extensions): the JSON-RPC message, serialised.
#[derive(Clone, Default)]
pub struct JsonAnswer(Arc<OnceLock<Bytes>>);

impl JsonAnswer {
    pub fn take(&self) -> Option<Bytes> {
        self.0.get().cloned()
    }
}

/// The sessions that finished their handshake, by id.
#[derive(Default)]
pub struct Links(Mutex<HashMap<SessionId, Arc<Link>>>);

impl Links {
    fn get(&self, id: &SessionId) -> Option<Arc<Link>> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .cloned()
    }
}

/// What a call needs of its session: the peer (rmcp's way to the session's stream), the log
/// level the session asked for, and the calls in flight here (for `notifications/cancelled`).
struct Link {
    peer: Peer<RoleServer>,
    log_level: SessionLogLevel,
    /// Cancelled when the session ends, like rmcp's session loop token its calls descend from.
    ended: CancellationToken,
    calls: Mutex<HashMap<RequestId, CancellationToken>>,
}

/// Which session an `initialize` request opens (rmcp's session manager knows; its handler not).
#[derive(Clone)]
struct SessionTag(SessionId);

/// A session's side of its link, held by the session's `ToolServer`: it links the session while
/// answering its `initialize`, and unlinks it (ending its calls) when rmcp drops the session's
/// service.
pub struct SessionLinker {
    links: Arc<Links>,
    id: OnceLock<SessionId>,
    ended: CancellationToken,
}

impl SessionLinker {
    pub fn new(links: Arc<Links>) -> Self {
        Self {
            links,
            id: OnceLock::new(),
            ended: CancellationToken::new(),
        }
    }

    /// The session's `initialize` (tagged with its id by `FastSessions`) is being answered.
    pub fn link(&self, context: &RequestContext<RoleServer>, log_level: SessionLogLevel) {
        let Some(SessionTag(id)) = context.extensions.get::<SessionTag>() else {
            return;
        };
        if self.id.set(id.clone()).is_err() || self.ended.is_cancelled() {
            return;
        }
        let link = Arc::new(Link {
            peer: context.peer.clone(),
            log_level,
            ended: self.ended.clone(),
            calls: Mutex::default(),
        });
        let mut links = self.links.0.lock().unwrap_or_else(|e| e.into_inner());
        links.insert(id.clone(), link);
    }

    /// `notifications/cancelled` for a call answered here (rmcp cancels its own calls itself).
    pub fn cancel(&self, request: &RequestId) {
        let Some(link) = self.id.get().and_then(|id| self.links.get(id)) else {
            return;
        };
        let call = link
            .calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(request);
        if let Some(call) = call {
            call.cancel();
        }
    }
}

impl Drop for SessionLinker {
    fn drop(&mut self) {
        self.ended.cancel();
        if let Some(id) = self.id.get() {
            let mut links = self.links.0.lock().unwrap_or_else(|e| e.into_inner());
            links.remove(id);
        }
    }
}

/// rmcp's in-memory session manager, answering the calls it can on the request's own task, and
/// ending sessions idle past the timeout or beyond the cap.
pub struct FastSessions {
    inner: LocalSessionManager,
    links: Arc<Links>,
    server: ToolServer,
    ledger: Arc<Ledger>,
    /// Sessions ended (expired or evicted) since the last sweep.
    ended: AtomicUsize,
}

impl FastSessions {
    pub fn new(server: ToolServer, links: Arc<Links>, limits: SessionLimits) -> Self {
        let mut inner = LocalSessionManager::default();
        let mut config = SessionConfig::default();
        // The ledger decides when a session is idle: rmcp's worker sees none of the calls
        // answered on the short road.
        config.keep_alive = None;
        inner.session_config = config;
        Self {
            inner,
            links,
            server,
            ledger: Arc::new(Ledger::new(limits)),
            ended: AtomicUsize::new(0),
        }
    }

    /// How often `sweep` should run.
    pub fn sweep_period(&self) -> Duration {
        self.ledger.limits().sweep_period()
    }

    /// Ends the sessions idle past the timeout. After many ended (here or by the cap), forgets
    /// their peers and hands the freed memory back to the system: the sessions' tasks have
    /// finished by the next sweep, so that sweep does it (at most once a second: a trim walks
    /// every arena, and a flood of sessions would otherwise trim at every sweep).
    pub async fn sweep(&self, state: &mut SweepState) {
        if state.trim_due() {
            self.server.forget_closed_peers();
            super::limits::release_memory();
        }
        for id in self.ledger.take_all_expired() {
            self.end(&id).await;
        }
        state.ended(self.ended.swap(0, Ordering::Relaxed));
    }

    /// Ends a session the ledger already forgot (expired or evicted), as DELETE would.
    async fn end(&self, id: &SessionId) {
        let _ = self.inner.close_session(id).await;
        self.ended.fetch_add(1, Ordering::Relaxed);
    }

    /// The session's link and where to leave the answer, if the call in `message` can be
    /// answered here.
    fn short_road(
        &self,
        id: &SessionId,
        message: &ClientJsonRpcMessage,
    ) -> Option<(Arc<Link>, JsonAnswer)> {
        let ClientJsonRpcMessage::Request(request) = message else {
            return None;
        };
        let ClientRequest::CallToolRequest(call) = &request.request else {
            return None;
        };
        let answer = call
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<JsonAnswer>())?
            .clone();
        let meta = request.request.get_meta();
        let sends_on_its_stream = meta.get_progress_token().is_some();
        let modern = meta.protocol_version().is_some()
            || call.params.request_state.is_some()
            || call.params.input_responses.is_some();
        if sends_on_its_stream || modern {
            return None;
        }
        let link = self.links.get(id)?;
        let handshake_era = link
            .peer
            .peer_info()
            .is_some_and(|info| info.protocol_version.as_str() < "2026-07-28");
        if !handshake_era || link.ended.is_cancelled() {
            return None;
        }
        Some((link, answer))
    }

    /// Runs the call as rmcp's session loop would (the same handler, context and answer), but
    /// on a task of its own that outlives a client gone away, as a call in rmcp's loop does.
    /// None when the client cancelled it: rmcp drops the answer to a cancelled request, and
    /// its stream ends without one.
    async fn answer(
        &self,
        mut request: JsonRpcRequest<ClientRequest>,
        link: Arc<Link>,
    ) -> Option<Bytes> {
        let id = request.id.clone();
        let key = id.clone();
        let ct = link.ended.child_token();
        link.calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key.clone(), ct.clone());
        let mut context = RequestContext::new(id.clone(), link.peer.clone());
        context.ct = ct;
        context.meta = std::mem::take(request.request.get_meta_mut());
        context.extensions = std::mem::take(request.request.extensions_mut());
        let server = self.server.in_session(link.log_level.clone());
        let call = tokio::spawn(async move {
            let result = server.handle_request(request.request, context).await;
            let message = match result {
                Ok(result) => ServerJsonRpcMessage::response(result, id),
                Err(error) => ServerJsonRpcMessage::error(error, Some(id)),
            };
            serde_json::to_vec(&message).map(Bytes::from)
        });
        let done = call.await;
        let cancelled = link
            .calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&key)
            .is_none();
        if cancelled {
            return None;
        }
        Some(match done {
            Ok(Ok(bytes)) => bytes,
            // Serialising rmcp's own message does not fail, and a panic is caught inside the
            // handler; both are still answered.
            _ => Bytes::from_static(
                br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}"#,
            ),
        })
    }
}

impl SessionManager for FastSessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, transport) = self.inner.create_session().await?;
        for idlest in self.ledger.open(&id) {
            self.end(&idlest).await;
        }
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        mut message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        if let ClientJsonRpcMessage::Request(request) = &mut message {
            request
                .request
                .extensions_mut()
                .insert(SessionTag(id.clone()));
        }
        let _busy = self.ledger.begin(id);
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        if self.ledger.take_expired(id) {
            self.end(id).await;
            return Ok(false);
        }
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.ledger.close(id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        match (self.short_road(id, &message), message) {
            (Some((link, answer)), ClientJsonRpcMessage::Request(request)) => {
                let _busy = self.ledger.begin(id);
                let bytes = self.answer(request, link.clone()).await;
                // A session that ended meanwhile gets what rmcp gives then: a stream that
                // ends without an answer.
                if let (Some(bytes), false) = (bytes, link.ended.is_cancelled()) {
                    let _ = answer.0.set(bytes);
                }
                Ok(futures::stream::empty().left_stream())
            }
            (_, message) => {
                let stream = self.inner.create_stream(id, message).await?;
                Ok(self.ledger.hold(id, stream).right_stream())
            }
        }
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.ledger.touch(id);
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let stream = self.inner.create_standalone_stream(id).await?;
        Ok(self.ledger.hold(id, stream))
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let stream = self.inner.resume(id, last_event_id).await?;
        Ok(self.ledger.hold(id, stream))
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        self.inner.restore_session(id).await
    }
}
