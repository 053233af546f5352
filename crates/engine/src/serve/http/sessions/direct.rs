//! The direct road: a handshake-era `tools/call` of a session answered on the request's own
//! task, as `application/json`, instead of through rmcp's session worker.
//!
//! rmcp 3.11 answers every session request with an SSE stream through the session's worker
//! task: the request is pushed to the worker, handed to the session's service loop, run on a
//! task of its own, and its answer travels back through the loop and the worker into a
//! per-request channel. Here the same handler (`ServerHandler::handle_request`) runs with the
//! same context, and its answer is serialised straight into the request's [`JsonAnswer`].
//!
//! Everything before that stays rmcp's: it checks Host/Origin, Accept, Content-Type, the body
//! limit, the JSON, the session (unknown or deleted: 404), `MCP-Protocol-Version` and the
//! standard headers, and only then hands the request to the session manager, which chooses
//! the road (`super::Road`). So a request that fails any check fails exactly as before.
//!
//! What a call may send still goes where rmcp sends it. Its logs and its input requests go to
//! the session's stream (rmcp routes a notification other than progress there, and a request
//! whose originating call it cannot see: a tool runs on a task of its own, so none is seen),
//! through the session's own peer, so the answers to those requests come back as before.

use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::model::{ClientRequest, GetExtensions, GetMeta, JsonRpcRequest, RequestId};
use rmcp::service::{RequestContext, RoleServer, Service};
use rmcp::transport::streamable_http_server::session::SessionId;
use tokio_util::sync::CancellationToken;

pub(crate) use super::link::Link;
use super::table::Ledger;
use crate::serve::{SessionHooks, SessionLogLevel, ToolServer};

/// Where a call answered on the direct road leaves its answer for the HTTP layer (which puts
/// one in every request's extensions): the JSON-RPC message, serialised.
#[derive(Clone, Default)]
pub(crate) struct JsonAnswer(Arc<OnceLock<Bytes>>);

impl JsonAnswer {
    pub(crate) fn take(&self) -> Option<Bytes> {
        self.0.get().cloned()
    }

    fn set(&self, answer: Bytes) {
        let _ = self.0.set(answer);
    }
}

/// Which session an `initialize` request opens (the session manager knows; the handler not).
#[derive(Clone)]
pub(crate) struct SessionTag(pub SessionId);

/// A session's side of its link, held by the session's `ToolServer`: it links the session in
/// the table while answering its `initialize`, and unlinks it (ending its calls) when rmcp
/// drops the session's service.
pub(crate) struct SessionLinker {
    ledger: Arc<Ledger>,
    /// The session's number, for the calls answered here (see [`Link::session`]).
    session: u64,
    linked: OnceLock<(SessionId, Arc<Link>)>,
    ended: CancellationToken,
}

impl SessionLinker {
    pub(crate) fn new(ledger: Arc<Ledger>, session: u64) -> Self {
        Self {
            ledger,
            session,
            linked: OnceLock::new(),
            ended: CancellationToken::new(),
        }
    }
}

impl SessionHooks for SessionLinker {
    /// The session's `initialize` (tagged with its id by the session manager) is being answered.
    fn initialized(&self, context: &RequestContext<RoleServer>, log_level: SessionLogLevel) {
        let Some(SessionTag(id)) = context.extensions.get::<SessionTag>() else {
            return;
        };
        if self.linked.get().is_some() || self.ended.is_cancelled() {
            return;
        }
        let link = Arc::new(Link {
            peer: context.peer.clone(),
            log_level,
            ended: self.ended.clone(),
            calls: Mutex::default(),
            session: self.session,
        });
        if self.linked.set((id.clone(), link.clone())).is_ok() {
            self.ledger.link(id, link);
        }
    }

    /// `notifications/cancelled` for a call answered here (rmcp cancels its own calls itself).
    fn cancelled(&self, request: &RequestId) {
        let Some((_, link)) = self.linked.get() else {
            return;
        };
        if let Some(call) = link.calls().remove(request) {
            call.cancel();
        }
    }
}

impl Drop for SessionLinker {
    fn drop(&mut self) {
        self.ended.cancel();
        if let Some((id, _)) = self.linked.get() {
            self.ledger.unlink(id);
        }
    }
}

/// The request's answer slot, when `message` is a call the direct road can answer: a
/// `tools/call` whose client prefers JSON (its `Accept` names `application/json` before
/// `text/event-stream`, or with a higher `q`, as the TypeScript SDK's and Python's clients
/// do), that sends nothing on its own stream (no `progressToken`: progress goes there) and is
/// not of the 2026-07-28 era. A client that puts the stream first gets rmcp's stream, with
/// its priming event and resumable event ids (SEP-1699).
pub(crate) fn answerable(message: &ClientJsonRpcMessage) -> Option<JsonAnswer> {
    let ClientJsonRpcMessage::Request(request) = message else {
        return None;
    };
    let ClientRequest::CallToolRequest(call) = &request.request else {
        return None;
    };
    let parts = call.extensions.get::<http::request::Parts>()?;
    let answer = parts.extensions.get::<JsonAnswer>()?;
    let meta = request.request.get_meta();
    let modern = meta.protocol_version().is_some()
        || call.params.request_state.is_some()
        || call.params.input_responses.is_some();
    if modern
        || meta.get_progress_token().is_some()
        || !super::super::accept::prefers_json(&parts.headers)
    {
        return None;
    }
    Some(answer.clone())
}

/// Runs the call as rmcp's session loop would (the same handler, context and answer), but
/// on a task of its own that outlives a client gone away, as a call in rmcp's loop does, and
/// leaves the answer in `slot`. Nothing when the client cancelled it (rmcp drops the answer
/// to a cancelled request, and its stream ends without one) or the session ended meanwhile.
pub(crate) async fn answer(
    server: &ToolServer,
    mut request: JsonRpcRequest<ClientRequest>,
    link: Arc<Link>,
    slot: JsonAnswer,
) {
    let id = request.id.clone();
    let key = id.clone();
    let ct = link.ended.child_token();
    link.calls().insert(key.clone(), ct.clone());
    let mut context = RequestContext::new(id.clone(), link.peer.clone());
    context.ct = ct;
    context.meta = std::mem::take(request.request.get_meta_mut());
    context.extensions = std::mem::take(request.request.extensions_mut());
    // The session's own handler state: its log level, and its number (whose tasks these are).
    let server = ToolServer {
        session: link.session,
        ..server.in_session(link.log_level.clone())
    };
    let call = tokio::spawn(async move {
        let result = server.handle_request(request.request, context).await;
        // A created handshake-era task goes out as `{task}` (see `serve::task_legacy`).
        let result = result.map(ToolServer::legacy_created);
        let message = match result {
            Ok(result) => ServerJsonRpcMessage::response(result, id),
            Err(error) => ServerJsonRpcMessage::error(error, Some(id)),
        };
        serde_json::to_vec(&message).map(Bytes::from)
    });
    let done = call.await;
    let cancelled = link.calls().remove(&key).is_none();
    if cancelled || link.ended.is_cancelled() {
        return;
    }
    slot.set(match done {
        Ok(Ok(bytes)) => bytes,
        // Serialising rmcp's own message does not fail, and a panic is caught inside the
        // handler; both are still answered.
        _ => Bytes::from_static(
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}"#,
        ),
    });
}
