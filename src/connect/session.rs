//! loadMcp: live connections whose tools can be called until the session is closed.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest, ServerResult};
use rmcp::service::{PeerRequestOptions, RoleClient, ServiceError};
use rmcp::{Peer, model::CancelledNotificationParam};
use serde_json::{Map, Value};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use super::Connection;
use super::tool_info::ToolInfo;

/// How many input-required rounds one call may take (rmcp's own client default).
const MAX_INPUT_ROUNDS: usize = rmcp::model::DEFAULT_MRTR_MAX_ROUNDS;

mod direct_call;
mod follow;
mod result;
pub use direct_call::{DirectCall, Done};
pub use follow::ToolsHook;
use result::map_result;
pub use result::{describe_content, output_of};

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
    /// Its `notifications/tools/list_changed`, until `follow_tool_changes` takes it.
    changes: std::sync::Mutex<Option<tokio::sync::watch::Receiver<u64>>>,
}

/// A server that came up, as loadMcp hands it to a session.
pub struct Joined {
    pub name: String,
    pub connection: Connection,
    pub timeout: Duration,
    /// Its tools, already filtered by `filter`.
    pub tools: Vec<ToolInfo>,
    pub filter: Option<Vec<(String, bool)>>,
}

pub struct Session {
    pub servers: Vec<Arc<LiveServer>>,
    closed: CancellationToken,
    /// The one teardown every `close()` call waits for.
    closing: tokio::sync::OnceCell<()>,
    /// Bumped each time a server's listing changes, so readers know to rebuild.
    generation: AtomicU64,
}

/// What a tool call produced, mapped as SPEC §4 says, plus the raw MCP result for gateways.
pub struct CallOutcome {
    pub output: String,
    pub is_error: bool,
    /// The server's `CallToolResult` JSON, when there was one.
    pub raw: Option<Value>,
    pub elapsed: Duration,
}

impl CallOutcome {
    fn failure(message: impl Into<String>, started: Instant) -> Self {
        Self {
            output: message.into(),
            is_error: true,
            raw: None,
            elapsed: started.elapsed(),
        }
    }
}

impl Session {
    pub fn new(connections: Vec<Joined>) -> Self {
        let servers = connections
            .into_iter()
            .filter_map(|joined| {
                let conn = joined.connection;
                let peer = conn.peer()?.clone();
                let client = conn.client_side()?;
                let changes = conn.tools_changes();
                let fast = conn.fast();
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
                }))
            })
            .collect();
        Self {
            servers,
            closed: CancellationToken::new(),
            closing: tokio::sync::OnceCell::new(),
            generation: AtomicU64::new(0),
        }
    }

    /// How many listing changes this session has seen.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    pub fn is_closed(&self) -> bool {
        self.closed.is_cancelled()
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
                    }
                });
                futures::future::join_all(closing).await;
            })
            .await;
    }
}

impl LiveServer {
    /// Its direct requests, when calls take them.
    pub fn direct(&self) -> Option<&crate::connect::stdio::direct::Direct> {
        self.fast.as_ref().map(|fast| &fast.direct)
    }

    /// Asking for its stdout, to read it elsewhere (a stdio server whose calls are direct).
    #[cfg(unix)]
    pub fn stdout(&self) -> Option<&crate::connect::stdio::handoff::Handoff> {
        self.fast.as_ref().map(|fast| &*fast.stdout)
    }

    /// Where its listings come from: its direct requests when it has them, else rmcp.
    fn lister(&self) -> crate::connect::listing::Lister<'_> {
        crate::connect::listing::Lister::of(&self.peer, self.direct())
    }

    /// Its tools as last listed (shared, not copied).
    pub fn listing(&self) -> Vec<ToolInfo> {
        self.listing
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Calls `tool` (its original name). Never fails: failures are `is_error` outcomes with a
    /// short human message. `timeout` overrides the server's; each progress notification
    /// restarts it. `cancel` aborts the call and tells the server with `notifications/cancelled`.
    /// `front`, when the call is forwarded for another client, gets the server's progress, log
    /// messages and elicitations while the call runs.
    pub async fn call(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
        timeout: Option<Duration>,
        cancel: &CancellationToken,
        closed: &CancellationToken,
        front: Option<Arc<dyn super::relay::Front>>,
    ) -> CallOutcome {
        let started = Instant::now();
        if closed.is_cancelled() {
            return CallOutcome::failure("not connected (source closed)", started);
        }
        let timeout = timeout.unwrap_or(self.timeout);
        if let Some(direct) = self.direct() {
            let call = (tool, arguments);
            return self
                .call_direct(direct, call, timeout, cancel, closed, front)
                .await;
        }
        let mut params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        // A 2026-07-28 server may answer input-required: answered, the call is sent again.
        for _ in 0..=MAX_INPUT_ROUNDS {
            let result = match self
                .call_once(params.clone(), timeout, cancel, closed, front.clone())
                .await
            {
                Ok(result) => result,
                Err(failure) => return CallOutcome::failure(failure, started),
            };
            let ServerResult::InputRequiredResult(input_required) = result else {
                return map_result(result, started);
            };
            let requests = input_required.input_requests.unwrap_or_default();
            let responses = match self.client.answer_input(requests, front.as_deref()).await {
                Ok(responses) => responses,
                Err(why) => {
                    return CallOutcome::failure(format!("MCP tool call failed: {why}"), started);
                }
            };
            params.input_responses = Some(responses);
            params.request_state = input_required.request_state;
        }
        CallOutcome::failure(
            format!(
                "MCP tool call failed: the server still asked for input after {MAX_INPUT_ROUNDS} rounds"
            ),
            started,
        )
    }

    /// One `tools/call` request and its answer, or why there was none.
    async fn call_once(
        &self,
        params: CallToolRequestParams,
        timeout: Duration,
        cancel: &CancellationToken,
        closed: &CancellationToken,
        front: Option<Arc<dyn super::relay::Front>>,
    ) -> Result<ServerResult, String> {
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let options = PeerRequestOptions::with_timeout(timeout).reset_timeout_on_progress();
        let handle = match self.peer.send_cancellable_request(request, options).await {
            Ok(handle) => handle,
            Err(e) => return Err(self.describe(e, closed).await),
        };
        let id = handle.id.clone();
        let _relayed = front.map(|front| {
            self.client
                .relays
                .register(handle.progress_token.clone(), front)
        });
        let result = tokio::select! {
            result = handle.await_response() => result,
            _ = cancel.cancelled() => {
                self.send_cancelled(id, "aborted by the caller").await;
                return Err("MCP tool call aborted".into());
            }
            _ = closed.cancelled() => {
                return Err("not connected (source closed)".into());
            }
        };
        // rmcp hands each notification to its own task, queued before the answer that followed
        // it: one yield lets the last progress notifications reach the front while it is still
        // registered.
        tokio::task::yield_now().await;
        match result {
            Ok(result) => Ok(result),
            Err(e) => Err(self.describe(e, closed).await),
        }
    }

    async fn send_cancelled(&self, id: rmcp::model::RequestId, reason: &str) {
        let params = CancelledNotificationParam::new(Some(id), Some(reason.to_string()));
        let notification = rmcp::model::CancelledNotification::new(params);
        let _ = self.peer.send_notification(notification.into()).await;
    }

    async fn describe(&self, error: ServiceError, closed: &CancellationToken) -> String {
        if closed.is_cancelled() {
            return "not connected (source closed)".to_string();
        }
        match error {
            ServiceError::Timeout { timeout } => {
                format!("MCP tool call timed out after {} ms", timeout.as_millis())
            }
            ServiceError::McpError(e) => e.message.to_string(),
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                self.describe_closed(closed).await
            }
            other => format!(
                "MCP tool call failed: {}",
                super::reason::service_error(&other)
            ),
        }
    }

    /// Why the connection ended mid-call: the framing the server broke, its exit, or a close.
    async fn describe_closed(&self, closed: &CancellationToken) -> String {
        if closed.is_cancelled() {
            return "not connected (source closed)".to_string();
        }
        let mut guard = self.connection.lock().await;
        if let Some(violation) = guard.as_ref().and_then(|c| c.protocol_violation()) {
            return format!("server {:?} {violation}", self.name);
        }
        let exit = match guard.as_mut() {
            Some(conn) => {
                conn.exit_description(crate::bounds::EXIT_WAIT_MID_CALL)
                    .await
            }
            None => None,
        };
        match exit {
            Some(exit) => format!("server {:?} {exit}", self.name),
            None => format!("server {:?} closed the connection", self.name),
        }
    }
}
