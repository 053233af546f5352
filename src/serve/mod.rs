//! Serving a tool set as an MCP server.
//!
//! `McpService` is a transport-agnostic JSON-RPC dispatcher for the tools subset of MCP
//! (`initialize`, `ping`, `tools/list`, `tools/call`). `http` mounts it as streamable HTTP at
//! `POST /mcp`; `stdio` runs it over newline-delimited JSON on any reader/writer pair.
//! It is hand-rolled rather than rmcp's server because the tool set is dynamic (JS callbacks and
//! gateway-forwarded MCP tools) and we only need the stateless tools surface.

pub mod http;
pub mod stdio;

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use futures::future::{BoxFuture, join_all};
use serde_json::{Map, Value, json};

/// `serverInfo` returned from `initialize`.
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

/// The result of one call as MCP's CallToolResult JSON (`{content:[...], isError?, structuredContent?}`).
pub type CallResult = Value;

/// Something that can run a tool: a JS callback, a forwarded MCP tool, a native closure.
pub trait ToolCaller: Send + Sync + 'static {
    /// Never fails: failures are a CallResult with `isError: true`.
    fn call(&self, arguments: Map<String, Value>) -> BoxFuture<'static, CallResult>;
}

/// Closures returning a boxed future are callers, which keeps tests and adapters short.
impl<F> ToolCaller for F
where
    F: Fn(Map<String, Value>) -> BoxFuture<'static, CallResult> + Send + Sync + 'static,
{
    fn call(&self, arguments: Map<String, Value>) -> BoxFuture<'static, CallResult> {
        self(arguments)
    }
}

/// One tool as exposed to MCP clients.
#[derive(Clone)]
pub struct ServedTool {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
    /// Where the tool came from (`mcp`, `native`, ...); only reported through `OnCall`.
    pub source: String,
    pub caller: Arc<dyn ToolCaller>,
}

/// What `OnCall` hears about each finished `tools/call`.
#[derive(Debug, Clone, PartialEq)]
pub struct CallRecord {
    pub name: String,
    pub source: String,
    pub ms: f64,
    pub is_error: bool,
}

pub type OnCall = Arc<dyn Fn(CallRecord) + Send + Sync>;

/// MCP protocol revisions whose `initialize` we can answer, oldest first.
pub const SUPPORTED_PROTOCOL_VERSIONS: [&str; 4] =
    ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;

/// Narrow `tools` to `names` (None ⇒ all). Tool order is kept and unknown names are ignored,
/// so a stale filter never breaks serving.
pub fn exposed(tools: &[ServedTool], names: Option<&[String]>) -> Vec<ServedTool> {
    match names {
        None => tools.to_vec(),
        Some(names) => tools
            .iter()
            .filter(|t| names.contains(&t.name))
            .cloned()
            .collect(),
    }
}

struct RpcError {
    code: i64,
    message: String,
}

impl RpcError {
    fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

/// A JSON-RPC error reply (also used by transports for parse errors).
pub fn error_reply(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// The tools surface of an MCP server. Cheap to share behind an `Arc`; every method takes `&self`
/// so any number of requests can be in flight at once.
pub struct McpService {
    identity: ServerIdentity,
    tools: Vec<ServedTool>,
    by_name: HashMap<String, usize>,
    /// `tools/list` never changes, so it is rendered once.
    listing: Value,
    on_call: Option<OnCall>,
    /// Calls in flight by (client scope, request id), so `notifications/cancelled` can stop them.
    in_flight: std::sync::Mutex<HashMap<(String, String), tokio::task::AbortHandle>>,
}

impl McpService {
    pub fn new(identity: ServerIdentity, tools: Vec<ServedTool>, on_call: Option<OnCall>) -> Self {
        let mut by_name = HashMap::with_capacity(tools.len());
        let mut listed = Vec::with_capacity(tools.len());
        for (i, tool) in tools.iter().enumerate() {
            // First definition wins so `tools/list` never shows a name twice.
            if by_name.contains_key(&tool.name) {
                continue;
            }
            by_name.insert(tool.name.clone(), i);
            listed.push(json!({
                "name": tool.name,
                "description": tool.description,
                "inputSchema": object_schema(&tool.input_schema),
            }));
        }
        let listing = json!({ "tools": listed });
        Self {
            identity,
            tools,
            by_name,
            listing,
            on_call,
            in_flight: Default::default(),
        }
    }

    pub fn identity(&self) -> &ServerIdentity {
        &self.identity
    }

    pub fn tools(&self) -> &[ServedTool] {
        &self.tools
    }

    /// One JSON-RPC message in (already parsed), the reply out (None for notifications and
    /// responses). A batch is answered with an array of the replies it produced.
    pub async fn handle(&self, message: Value) -> Option<Value> {
        self.handle_in("", message).await
    }

    /// `handle` for one client among several (`scope`: its session id), so that a
    /// `notifications/cancelled` only ever stops that client's own request.
    pub async fn handle_in(&self, scope: &str, message: Value) -> Option<Value> {
        match message {
            Value::Array(items) if items.is_empty() => Some(error_reply(
                Value::Null,
                INVALID_REQUEST,
                "Invalid Request: empty batch",
            )),
            Value::Array(items) => {
                let replies: Vec<Value> =
                    join_all(items.into_iter().map(|m| self.handle_one(scope, m)))
                        .await
                        .into_iter()
                        .flatten()
                        .collect();
                (!replies.is_empty()).then_some(Value::Array(replies))
            }
            other => self.handle_one(scope, other).await,
        }
    }

    async fn handle_one(&self, scope: &str, message: Value) -> Option<Value> {
        let Value::Object(mut message) = message else {
            return Some(error_reply(Value::Null, INVALID_REQUEST, "Invalid Request"));
        };
        let id = message.remove("id");
        let method = match message.get("method") {
            Some(Value::String(method)) => method.clone(),
            // We never send requests, so a response can only be stray: drop it silently.
            None if message.contains_key("result") || message.contains_key("error") => return None,
            _ => {
                let id = id.filter(valid_id).unwrap_or(Value::Null);
                return Some(error_reply(id, INVALID_REQUEST, "Invalid Request"));
            }
        };
        let Some(id) = id else {
            if method == "notifications/cancelled" {
                self.cancel(scope, message.get("params"));
            }
            // Other notifications (initialized, progress, ...) carry nothing we act on.
            return None;
        };
        if !valid_id(&id) {
            return Some(error_reply(
                Value::Null,
                INVALID_REQUEST,
                "Invalid Request: bad id",
            ));
        }
        let params = message.remove("params").unwrap_or(Value::Null);
        let outcome = match method.as_str() {
            "initialize" => Ok(self.initialize(&params)),
            "ping" => Ok(json!({})),
            "tools/list" => Ok(self.listing.clone()),
            "tools/call" => self.call(params, (scope.to_string(), id.to_string())).await,
            _ => Err(RpcError::new(
                METHOD_NOT_FOUND,
                format!("Method not found: {method}"),
            )),
        };
        Some(match outcome {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(e) => error_reply(id, e.code, &e.message),
        })
    }

    fn initialize(&self, params: &Value) -> Value {
        let requested = params.get("protocolVersion").and_then(Value::as_str);
        let version = requested
            .filter(|v| SUPPORTED_PROTOCOL_VERSIONS.contains(v))
            .unwrap_or(SUPPORTED_PROTOCOL_VERSIONS[SUPPORTED_PROTOCOL_VERSIONS.len() - 1]);
        json!({
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": false}},
            "serverInfo": {"name": self.identity.name, "version": self.identity.version},
        })
    }

    fn cancel(&self, scope: &str, params: Option<&Value>) {
        let Some(request) = params.and_then(|p| p.get("requestId")) else {
            return;
        };
        let key = (scope.to_string(), request.to_string());
        if let Some(call) = self
            .in_flight
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&key)
        {
            call.abort();
        }
    }

    async fn call(&self, params: Value, key: (String, String)) -> Result<Value, RpcError> {
        let Value::Object(mut params) = params else {
            return Err(RpcError::new(
                INVALID_PARAMS,
                "Invalid params: expected an object",
            ));
        };
        let name = match params.get("name") {
            Some(Value::String(name)) => name.clone(),
            _ => {
                return Err(RpcError::new(
                    INVALID_PARAMS,
                    "Invalid params: missing tool name",
                ));
            }
        };
        let tool = self
            .by_name
            .get(&name)
            .map(|&i| &self.tools[i])
            .ok_or_else(|| RpcError::new(INVALID_PARAMS, format!("Unknown tool: {name}")))?;
        let arguments = match params.remove("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(arguments)) => arguments,
            Some(_) => {
                return Err(RpcError::new(
                    INVALID_PARAMS,
                    "Invalid params: arguments must be an object",
                ));
            }
        };

        let started = Instant::now();
        // The call runs on its own task so a panicking caller (synchronously or while polled)
        // costs one result, not the connection; the guard cancels it if our caller goes away.
        let caller = tool.caller.clone();
        let mut task = AbortOnDrop(tokio::spawn(async move { caller.call(arguments).await }));
        self.in_flight
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key.clone(), task.0.abort_handle());
        let joined = (&mut task.0).await;
        self.in_flight
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&key);
        let result = match joined {
            Ok(result) => normalise_result(result),
            Err(e) if e.is_cancelled() => {
                json!({"content": [{"type": "text", "text": "cancelled by the client"}], "isError": true})
            }
            Err(_) => {
                json!({"content": [{"type": "text", "text": "tool panicked"}], "isError": true})
            }
        };
        if let Some(on_call) = &self.on_call {
            on_call(CallRecord {
                name: tool.name.clone(),
                source: tool.source.clone(),
                ms: started.elapsed().as_secs_f64() * 1000.0,
                is_error: result
                    .get("isError")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            });
        }
        Ok(result)
    }
}

struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn valid_id(id: &Value) -> bool {
    matches!(id, Value::String(_) | Value::Number(_))
}

/// MCP requires `inputSchema` to be an object schema; sources that have none get the empty one.
fn object_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(_) => schema.clone(),
        _ => json!({"type": "object"}),
    }
}

/// Callers promise a CallToolResult, but a bare value must still reach the client as content.
fn normalise_result(result: Value) -> Value {
    match result {
        Value::Object(ref o) if o.get("content").is_some_and(Value::is_array) => result,
        Value::Object(mut o) if !o.contains_key("content") => {
            o.insert("content".into(), json!([]));
            Value::Object(o)
        }
        Value::String(text) => json!({"content": [{"type": "text", "text": text}]}),
        other => json!({"content": [{"type": "text", "text": other.to_string()}]}),
    }
}
