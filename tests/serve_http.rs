//! `serve_http` over real loopback sockets: rmcp clients of both eras (interop), and reqwest or a
//! raw TCP stream for the wire rules (paths, Host/Origin, sessions, stateless mode, limits).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::FutureExt;
use futures::future::{BoxFuture, join_all};
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolnexus::serve::http::{ServeHandle, ServeOptions, serve_http};
use toolnexus::serve::{
    CallRecord, CallResult, ServedTool, ServerIdentity, ToolCaller, ToolServer,
};

fn tool(name: &str, caller: impl ToolCaller) -> ServedTool {
    ServedTool {
        name: name.into(),
        description: format!("{name} tool"),
        input_schema: toolnexus::serve::object_schema(
            json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}),
        ),
        extras: Map::new(),
        source: "native".into(),
        caller: Arc::new(caller),
    }
}

fn text(s: &str) -> CallResult {
    json!({"content": [{"type": "text", "text": s}]})
}

fn add(args: Map<String, Value>) -> BoxFuture<'static, CallResult> {
    let n = |k: &str| args.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    let sum = n("a") + n("b");
    async move { text(&sum.to_string()) }.boxed()
}

fn sleepy(_: Map<String, Value>) -> BoxFuture<'static, CallResult> {
    async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        text("slept")
    }
    .boxed()
}

fn panics(_: Map<String, Value>) -> BoxFuture<'static, CallResult> {
    async { panic!("boom") }.boxed()
}

type Records = Arc<Mutex<Vec<CallRecord>>>;

async fn start_with(options: ServeOptions) -> (ServeHandle, String, Records) {
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

async fn start() -> (ServeHandle, String, Records) {
    start_with(ServeOptions::default()).await
}

/// One client for all tests: building a rustls client is slow in debug builds. Every test has
/// its own port, so no pooled connection outlives the runtime that opened it.
fn client() -> reqwest::Client {
    static CLIENT: std::sync::OnceLock<reqwest::Client> = std::sync::OnceLock::new();
    CLIENT.get_or_init(reqwest::Client::new).clone()
}

struct Reply {
    status: u16,
    session: Option<String>,
    /// The JSON-RPC message of a JSON or SSE body (Null when there is none).
    message: Value,
    text: String,
}

async fn post(url: &str, body: &Value, headers: &[(&str, &str)]) -> Reply {
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

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}})
}

fn modern(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

async fn rmcp_client(url: &str, lifecycle: ClientLifecycleMode) -> RunningService<RoleClient, ()> {
    ().serve_with_lifecycle(
        StreamableHttpClientTransport::from_uri(url.to_string()),
        lifecycle,
    )
    .await
    .unwrap()
}

fn auto() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::V_2025_11_25),
    }
}

async fn check_round_trip(client: &RunningService<RoleClient, ()>, records: &Records) {
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(
        tools.iter().map(|t| t.name.to_string()).collect::<Vec<_>>(),
        ["add", "sleepy", "explode"]
    );
    assert_eq!(tools[0].description.as_deref(), Some("add tool"));
    let args = json!({"a": 2, "b": 3}).as_object().unwrap().clone();
    let result = client
        .call_tool(CallToolRequestParams::new("add").with_arguments(args))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&result.content).unwrap(),
        text("5")["content"]
    );
    assert_ne!(result.is_error, Some(true));
    let unknown = client
        .call_tool(CallToolRequestParams::new("nope"))
        .await
        .unwrap_err();
    assert!(
        unknown.to_string().contains("Unknown tool: nope"),
        "{unknown}"
    );
    // A panicking tool costs one result, not the server.
    let result = client
        .call_tool(CallToolRequestParams::new("explode"))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    assert_eq!(
        serde_json::to_value(&result.content).unwrap(),
        json!([{"type": "text", "text": "tool panicked"}])
    );
    let recorded: Vec<_> = records
        .lock()
        .unwrap()
        .iter()
        .map(|r| (r.name.clone(), r.source.clone(), r.is_error))
        .collect();
    assert_eq!(
        recorded,
        [
            ("add".to_string(), "native".to_string(), false),
            ("explode".to_string(), "native".to_string(), true)
        ]
    );
}

#[tokio::test]
async fn handshake_era_client_round_trip() {
    let (handle, url, records) = start().await;
    assert!(handle.url().starts_with("http://127.0.0.1:") && !handle.url().ends_with('/'));
    let client = rmcp_client(&url, ClientLifecycleMode::Initialize).await;
    let info = client.peer_info().unwrap();
    assert_eq!(info.protocol_version, ProtocolVersion::V_2025_11_25);
    assert_eq!(info.server_info.as_ref().unwrap().name, "gateway");
    assert_eq!(info.server_info.as_ref().unwrap().version, "9.9.9");
    check_round_trip(&client, &records).await;
    client.cancel().await.unwrap();
    handle.stop().await;
}

#[tokio::test]
async fn modern_era_client_round_trip_without_initialize() {
    let (handle, url, records) = start().await;
    let client = rmcp_client(&url, auto()).await;
    let info = client.peer_info().unwrap();
    assert_eq!(info.protocol_version, ProtocolVersion::V_2026_07_28);
    assert_eq!(info.server_info.as_ref().unwrap().name, "gateway");
    check_round_trip(&client, &records).await;
    client.cancel().await.unwrap();
    handle.stop().await;
}

#[tokio::test]
async fn modern_requests_are_stateless_and_carry_result_type() {
    let (handle, url, _) = start().await;
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "add"),
    ];
    let r = post(
        &url,
        &modern(
            1,
            "tools/call",
            json!({"name": "add", "arguments": {"a": 1, "b": 2}}),
        ),
        &headers,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.session, None, "no session in the 2026-07-28 era");
    assert_eq!(r.message["result"]["resultType"], "complete");
    assert_eq!(r.message["result"]["content"], text("3")["content"]);
    let list = post(
        &url,
        &modern(2, "tools/list", json!({})),
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/list"),
        ],
    )
    .await;
    assert_eq!(
        list.message["result"]["cacheScope"], "private",
        "{}",
        list.text
    );
    assert_eq!(list.message["result"]["ttlMs"], 0);
    handle.stop().await;
}

#[tokio::test]
async fn sessions_are_enforced() {
    let (handle, url, _) = start().await;
    let init = post(&url, &initialize(), &[]).await;
    assert_eq!(init.status, 200);
    let session = init.session.expect("initialize hands out a session id");
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let with = |id: &str| {
        [
            ("mcp-session-id", id.to_string()),
            ("mcp-protocol-version", "2025-11-25".into()),
        ]
    };
    let ok = with(&session);
    let ok: Vec<(&str, &str)> = ok.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let r = post(
        &url,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        &ok,
    )
    .await;
    assert_eq!(r.status, 202);
    let r = post(&url, &list, &ok).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.message["result"]["tools"][0]["name"], "add");

    // An id we never issued is 404.
    let forged = with("00000000-0000-4000-8000-000000000000");
    let forged: Vec<(&str, &str)> = forged.iter().map(|(k, v)| (*k, v.as_str())).collect();
    assert_eq!(post(&url, &list, &forged).await.status, 404);
    // A handshake-era request with no session at all is refused.
    let bare = post(&url, &list, &[("mcp-protocol-version", "2025-11-25")]).await;
    assert_eq!(bare.status, 400, "{}", bare.text);

    // One that ended (DELETE) is 404 from then on.
    let deleted = client()
        .delete(&url)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert!(deleted.status().is_success(), "{}", deleted.status());
    assert_eq!(post(&url, &list, &ok).await.status, 404);
    handle.stop().await;
}

#[tokio::test]
async fn stateless_mode_serves_the_handshake_era_without_sessions() {
    let (handle, url, records) = start_with(ServeOptions {
        stateless: true,
        ..Default::default()
    })
    .await;
    let init = post(&url, &initialize(), &[]).await;
    assert_eq!(init.status, 200, "{}", init.text);
    assert_eq!(init.session, None, "stateless: no session id");
    assert_eq!(init.message["result"]["protocolVersion"], "2025-11-25");
    // Any request stands alone, as if it reached another replica.
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 40, "b": 2}}});
    let r = post(&url, &call, &[("mcp-protocol-version", "2025-11-25")]).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.message["result"]["content"], text("42")["content"]);
    // And rmcp's own clients of both eras work unchanged.
    let legacy = rmcp_client(&url, ClientLifecycleMode::Initialize).await;
    let modern = rmcp_client(&url, auto()).await;
    for client in [&legacy, &modern] {
        let tools = client.list_all_tools().await.unwrap();
        assert_eq!(tools.len(), 3);
    }
    assert_eq!(records.lock().unwrap().len(), 1);
    legacy.cancel().await.unwrap();
    modern.cancel().await.unwrap();
    handle.stop().await;
}

/// Sends `head` (and `body`) on a fresh connection and returns the HTTP status.
async fn raw_status(addr: std::net::SocketAddr, host: &str, extra: &str) -> u16 {
    let body = initialize().to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\n{extra}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    response[9..12].parse().unwrap()
}

#[tokio::test]
async fn dns_rebinding_protection_and_paths() {
    let (handle, url, _) = start().await;
    let addr = handle.local_addr();
    let port = addr.port();
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
    ] {
        assert_eq!(raw_status(addr, &host, "").await, 200, "{host}");
    }
    assert_eq!(
        raw_status(addr, &format!("evil.example:{port}"), "").await,
        403
    );
    assert_eq!(raw_status(addr, "evil.example", "").await, 403);
    let local = format!("127.0.0.1:{port}");
    let origin = format!("Origin: http://localhost:{port}\r\n");
    assert_eq!(raw_status(addr, &local, &origin).await, 200);
    assert_eq!(
        raw_status(addr, &local, "Origin: http://evil.example\r\n").await,
        403
    );
    assert_eq!(raw_status(addr, &local, "Origin: null\r\n").await, 403);
    for path in ["/", "/other", "/mcp/extra"] {
        let url = format!("{}{path}", handle.url());
        assert_eq!(post(&url, &initialize(), &[]).await.status, 404, "{path}");
    }
    let parse = client()
        .post(&url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body("{\"jsonrpc\": ")
        .send()
        .await
        .unwrap();
    assert_eq!(parse.status().as_u16(), 400);
    let body: Value = parse.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32700);
    handle.stop().await;
}

#[tokio::test]
async fn a_non_loopback_bind_must_name_its_hosts() {
    // Binding every interface is not allowed in tests; the rule is checked before any bind.
    let options = ServeOptions {
        auth: toolnexus::serve::http::Auth::Open,
        ..ServeOptions::default()
    };
    let err = match serve_http(
        "0.0.0.0:0",
        ToolServer::new(ServerIdentity::default(), vec![], None),
        options,
    )
    .await
    {
        Ok(_) => panic!("served a non-loopback bind without allowedHosts"),
        Err(e) => e,
    };
    assert!(err.contains("needs allowedHosts"), "{err}");
}

#[tokio::test]
async fn a_non_loopback_bind_needs_auth_or_says_none() {
    let options = ServeOptions {
        allowed_hosts: Some(vec!["*".into()]),
        ..ServeOptions::default()
    };
    let err = match serve_http(
        "0.0.0.0:0",
        ToolServer::new(ServerIdentity::default(), vec![], None),
        options,
    )
    .await
    {
        Ok(_) => panic!("served a non-loopback bind without auth"),
        Err(e) => e,
    };
    assert!(err.starts_with("serving on 0.0.0.0:"), "{err}");
    assert!(
        err.ends_with(
            "(not a loopback address) needs auth: { tokens } or { oauth }, or auth: \"none\" to \
             let anyone who can reach it use every tool (--no-auth on the CLI)"
        ),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_run_concurrently() {
    let (handle, url, _) = start().await;
    let client = Arc::new(rmcp_client(&url, auto()).await);
    let started = Instant::now();
    let calls = (0..20).map(|_| {
        let client = client.clone();
        async move {
            client
                .call_tool(CallToolRequestParams::new("sleepy"))
                .await
                .unwrap()
        }
    });
    let results = join_all(calls).await;
    let elapsed = started.elapsed();
    for r in &results {
        assert_eq!(
            serde_json::to_value(&r.content).unwrap(),
            text("slept")["content"]
        );
    }
    assert!(
        elapsed < Duration::from_millis(3000),
        "20 × 200 ms calls took {elapsed:?}"
    );
    handle.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_sent_requests_never_lock_a_client_out() {
    let (handle, url, _) = start().await;
    let addr = handle.local_addr();
    // Far more stalled connections than the server keeps: each sends half a request line and
    // stops. The idlest are evicted to make room, so a real client still gets through.
    let mut stalled = Vec::new();
    for _ in 0..300 {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.")
            .await
            .unwrap();
        stalled.push(s);
    }
    let client = rmcp_client(&url, auto()).await;
    let args = json!({"a": 1, "b": 1}).as_object().unwrap().clone();
    let r = client
        .call_tool(CallToolRequestParams::new("add").with_arguments(args))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&r.content).unwrap(),
        text("2")["content"]
    );
    client.cancel().await.unwrap();
    drop(stalled);
    handle.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_waits_for_in_flight_then_refuses() {
    let (handle, url, _) = start().await;
    let addr = handle.local_addr();
    let client = rmcp_client(&url, auto()).await;
    let call = tokio::spawn(async move {
        let r = client.call_tool(CallToolRequestParams::new("sleepy")).await;
        (r, client)
    });
    tokio::time::sleep(Duration::from_millis(80)).await;
    let started = Instant::now();
    handle.stop().await;
    assert!(
        started.elapsed() >= Duration::from_millis(50),
        "stop returned after {:?}",
        started.elapsed()
    );
    // Answered, not cut off.
    let (result, client) = call.await.unwrap();
    assert_eq!(
        serde_json::to_value(&result.unwrap().content).unwrap(),
        text("slept")["content"]
    );
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
    handle.stop().await; // idempotent
    drop(client);
}
