//! What every test of the crate shares: a served gateway with three tools (add, sleepy,
//! explode) and its call records, a reqwest POST, raw JSON-RPC messages, rmcp clients.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Map, Value, json};
use toolnexus_engine::serve::http::{ServeHandle, ServeOptions, serve_http};
use toolnexus_engine::serve::{
    CallRecord, CallResult, ServedTool, ServerIdentity, ToolCaller, ToolServer,
};

pub fn tool(name: &str, caller: impl ToolCaller) -> ServedTool {
    ServedTool {
        name: name.into(),
        description: format!("{name} tool"),
        input_schema: toolnexus_engine::serve::object_schema(
            json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}),
        ),
        extras: Map::new(),
        source: "native".into(),
        caller: Arc::new(caller),
    }
}

pub fn text(s: &str) -> CallResult {
    json!({"content": [{"type": "text", "text": s}]})
}

pub fn add(args: Map<String, Value>) -> BoxFuture<'static, CallResult> {
    let n = |k: &str| args.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    let sum = n("a") + n("b");
    async move { text(&sum.to_string()) }.boxed()
}

pub fn sleepy(_: Map<String, Value>) -> BoxFuture<'static, CallResult> {
    async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        text("slept")
    }
    .boxed()
}

pub fn panics(_: Map<String, Value>) -> BoxFuture<'static, CallResult> {
    async { panic!("boom") }.boxed()
}

pub type Records = Arc<Mutex<Vec<CallRecord>>>;

pub async fn start_with(options: ServeOptions) -> (ServeHandle, String, Records) {
    let records: Records = Arc::default();
    let sink = records.clone();
    let tools = vec![
        tool("add", add),
        tool("sleepy", sleepy),
        tool("explode", panics),
    ];
    let identity = ServerIdentity {
        name: "gateway".into(),
        version: "9.9.9".into(),
    };
    let server = ToolServer::new(
        identity,
        tools,
        Some(Arc::new(move |r| sink.lock().unwrap().push(r))),
    );
    let handle = serve_http("127.0.0.1:0", server, options).await.unwrap();
    let endpoint = format!("{}/mcp", handle.url());
    (handle, endpoint, records)
}

pub async fn start() -> (ServeHandle, String, Records) {
    start_with(ServeOptions::default()).await
}

/// One client for all tests: building a rustls client is slow in debug builds. Every test has
/// its own port, so no pooled connection outlives the runtime that opened it.
pub fn client() -> reqwest::Client {
    static CLIENT: std::sync::OnceLock<reqwest::Client> = std::sync::OnceLock::new();
    CLIENT.get_or_init(reqwest::Client::new).clone()
}

pub struct Reply {
    pub status: u16,
    pub session: Option<String>,
    /// The JSON-RPC message of a JSON or SSE body (Null when there is none).
    pub message: Value,
    pub text: String,
}

pub async fn post(url: &str, body: &Value, headers: &[(&str, &str)]) -> Reply {
    let mut request = client()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(body);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let resp = request.send().await.unwrap();
    let status = resp.status().as_u16();
    let session = resp
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_string());
    let text = resp.text().await.unwrap();
    let message = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .chain(std::iter::once(text.as_str()))
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or(Value::Null);
    Reply {
        status,
        session,
        message,
        text,
    }
}

pub fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}})
}

pub fn modern(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

pub async fn rmcp_client(
    url: &str,
    lifecycle: ClientLifecycleMode,
) -> RunningService<RoleClient, ()> {
    ().serve_with_lifecycle(
        StreamableHttpClientTransport::from_uri(url.to_string()),
        lifecycle,
    )
    .await
    .unwrap()
}

pub fn auto() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::V_2025_11_25),
    }
}
