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

/// How many input-required rounds one call may take (rmcp's own client default).
const MAX_INPUT_ROUNDS: usize = rmcp::model::DEFAULT_MRTR_MAX_ROUNDS;

mod direct_call;
mod follow;
pub use direct_call::{DirectCall, Done};
pub use follow::ToolsHook;

/// One connected server of a session.
pub struct LiveServer {
    pub name: String,
    peer: Peer<RoleClient>,
    /// Its direct requests (a stdio server in the handshake era), which calls take.
    direct: Option<crate::connect::stdio::direct::Direct>,
    /// How the server's questions are answered (its relays, the caller's elicitor).
    client: super::client::ClientSide,
    timeout: Duration,
    connection: Mutex<Option<Connection>>,
    /// Its tools as last listed (after its config's `tools` filter).
    listing: std::sync::Mutex<Vec<Value>>,
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
    pub tools: Vec<Value>,
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
                Some(Arc::new(LiveServer {
                    name: joined.name,
                    peer,
                    direct: conn.direct(),
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
                for direct in self.servers.iter().filter_map(|s| s.direct.as_ref()) {
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
    /// Its tools as last listed.
    pub fn listing(&self) -> Vec<Value> {
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
        if let Some(direct) = &self.direct {
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
            Some(conn) => conn.exit_description(Duration::from_millis(500)).await,
            None => None,
        };
        match exit {
            Some(exit) => format!("server {:?} {exit}", self.name),
            None => format!("server {:?} closed the connection", self.name),
        }
    }
}

/// SPEC §4: an error's non-blank text parts joined by a blank line; else structuredContent as
/// JSON; else the text parts joined by newlines.
fn map_result(result: ServerResult, started: Instant) -> CallOutcome {
    let raw = match serde_json::to_value(&result) {
        Ok(raw) => raw,
        Err(e) => {
            return CallOutcome::failure(
                format!("MCP tool call returned an unreadable result: {e}"),
                started,
            );
        }
    };
    let (output, is_error) = output_of(&raw);
    CallOutcome {
        output,
        is_error,
        raw: Some(raw),
        elapsed: started.elapsed(),
    }
}

/// A `CallToolResult` (as JSON) in words: its `output` and whether it is an error.
pub fn output_of(raw: &Value) -> (String, bool) {
    let texts: Vec<&str> = raw
        .get("content")
        .and_then(Value::as_array)
        .map(|parts| {
            parts
                .iter()
                .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    let is_error = raw.get("isError").and_then(Value::as_bool).unwrap_or(false);
    let output = if is_error {
        let parts: Vec<&str> = texts
            .iter()
            .copied()
            .filter(|t| !t.trim().is_empty())
            .collect();
        if parts.is_empty() {
            "MCP tool returned an error".to_string()
        } else {
            parts.join("\n\n")
        }
    } else if let Some(structured) = raw.get("structuredContent") {
        structured.to_string()
    } else if texts.is_empty() {
        describe_content(raw.get("content"))
    } else {
        texts.join("\n")
    };
    (output, is_error)
}

/// What came when a result has no text: `[image image/png, 1.2 kB]`, one bracket per part, so
/// an agent reading `output` still learns what the `content` parts hold. Text parts are their
/// text (the CLI shows whole results this way).
pub fn describe_content(content: Option<&Value>) -> String {
    let parts = content
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    parts
        .iter()
        .map(|part| {
            let kind = part
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("content");
            let mime = |v: &Value| {
                v.get("mimeType")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            };
            match kind {
                "text" if part.get("text").is_some_and(Value::is_string) => {
                    part["text"].as_str().unwrap_or_default().to_string()
                }
                "image" | "audio" => {
                    let data = part.get("data").and_then(Value::as_str).unwrap_or("");
                    let mime = mime(part).unwrap_or_else(|| "unknown type".into());
                    format!("[{kind} {mime}, {}]", human_size(base64_len(data)))
                }
                "resource" => {
                    let resource = part.get("resource").unwrap_or(&Value::Null);
                    let uri = resource.get("uri").and_then(Value::as_str).unwrap_or("?");
                    match resource.get("text").and_then(Value::as_str) {
                        Some(text) => format!("[resource {uri}]\n{text}"),
                        None => format!("[resource {uri}]"),
                    }
                }
                "resource_link" => {
                    let uri = part.get("uri").and_then(Value::as_str).unwrap_or("?");
                    match part.get("name").and_then(Value::as_str) {
                        Some(name) => format!("[resource link {name}: {uri}]"),
                        None => format!("[resource link {uri}]"),
                    }
                }
                other => format!("[{other}]"),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// How many bytes a base64 text decodes to.
fn base64_len(data: &str) -> usize {
    let data = data.trim_end();
    let padding = data.bytes().rev().take_while(|&b| b == b'=').count().min(2);
    (data.len() / 4 * 3).saturating_sub(padding)
}

fn human_size(bytes: usize) -> String {
    if bytes < 1000 {
        format!("{bytes} B")
    } else if bytes < 1_000_000 {
        format!("{:.1} kB", bytes as f64 / 1000.0)
    } else {
        format!("{:.1} MB", bytes as f64 / 1_000_000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn results_without_text_describe_what_came() {
        let content = json!([
            {"type": "image", "data": "A".repeat(1600), "mimeType": "image/png"},
            {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "hello"}},
            {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAAA"}},
            {"type": "resource_link", "uri": "file:///c", "name": "c"},
            {"type": "text", "text": "last"},
        ]);
        assert_eq!(
            describe_content(Some(&content)),
            "[image image/png, 1.2 kB]\n[audio audio/wav, 3 B]\n[resource file:///a.txt]\nhello\n[resource file:///b.bin]\n[resource link c: file:///c]\nlast"
        );
        assert_eq!(describe_content(Some(&json!([]))), "");
    }
}
