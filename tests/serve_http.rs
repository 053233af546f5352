//! `serve_http` over real loopback sockets, with reqwest (raw protocol) and rmcp (interop).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::FutureExt;
use futures::future::{BoxFuture, join_all};
use serde_json::{Map, Value, json};
use toolnexus::serve::http::{ServeHandle, serve_http};
use toolnexus::serve::{
    CallRecord, CallResult, McpService, ServedTool, ServerIdentity, ToolCaller,
};

fn tool(name: &str, caller: impl ToolCaller) -> ServedTool {
    ServedTool {
        name: name.into(),
        description: format!("{name} tool"),
        input_schema: json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}),
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

fn fails(_: Map<String, Value>) -> BoxFuture<'static, CallResult> {
    async { json!({"content": [{"type": "text", "text": "kaboom"}], "isError": true}) }.boxed()
}

type Records = Arc<Mutex<Vec<CallRecord>>>;

async fn start() -> (ServeHandle, String, Records) {
    let records: Records = Arc::default();
    let sink = records.clone();
    let tools = vec![
        tool("add", add),
        tool("sleepy", sleepy),
        tool("explode", panics),
        tool("fail", fails),
    ];
    let identity = ServerIdentity {
        name: "gateway".into(),
        version: "9.9.9".into(),
    };
    let service = McpService::new(
        identity,
        tools,
        Some(Arc::new(move |r| sink.lock().unwrap().push(r))),
    );
    let handle = serve_http("127.0.0.1:0", Arc::new(service)).await.unwrap();
    let endpoint = format!("{}/mcp", handle.url());
    (handle, endpoint, records)
}

fn rpc(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// One client for all tests: building a rustls client is slow in debug builds and would
/// dominate the timing assertions. Sharing it across test runtimes is safe because every test
/// has its own port, so no pooled connection outlives the runtime that opened it.
fn client() -> reqwest::Client {
    static CLIENT: std::sync::OnceLock<reqwest::Client> = std::sync::OnceLock::new();
    CLIENT.get_or_init(reqwest::Client::new).clone()
}

async fn post(url: &str, body: &Value) -> (u16, Value) {
    let resp = client()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(body)
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap();
    (
        status,
        if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap()
        },
    )
}

#[tokio::test]
async fn round_trip_initialize_list_call() {
    let (handle, url, records) = start().await;
    assert!(handle.url().starts_with("http://127.0.0.1:") && !handle.url().ends_with('/'));

    let init = rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    let resp = client().post(&url).json(&init).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    assert!(
        resp.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
    let session = resp.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(session.len() >= 16 && session.chars().all(|c| c.is_ascii_hexdigit()));
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(
        body["result"]["serverInfo"],
        json!({"name": "gateway", "version": "9.9.9"})
    );

    let (status, list) = post(&url, &rpc(2, "tools/list", json!({}))).await;
    assert_eq!(status, 200);
    let names: Vec<_> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(names, ["add", "sleepy", "explode", "fail"]);

    let (_, sum) = post(
        &url,
        &rpc(
            3,
            "tools/call",
            json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
        ),
    )
    .await;
    assert_eq!(sum, json!({"jsonrpc": "2.0", "id": 3, "result": text("5")}));
    let (_, failed) = post(&url, &rpc(4, "tools/call", json!({"name": "fail"}))).await;
    assert_eq!(failed["result"]["isError"], true);

    let recorded: Vec<_> = records
        .lock()
        .unwrap()
        .iter()
        .map(|r| (r.name.clone(), r.is_error))
        .collect();
    assert_eq!(
        recorded,
        [("add".to_string(), false), ("fail".to_string(), true)]
    );

    // Ending the session makes later requests on it a 404 (the spec's "re-initialize" signal).
    let client = client();
    let resp = client
        .delete(&url)
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let resp = client
        .post(&url)
        .header("mcp-session-id", &session)
        .json(&rpc(5, "ping", json!({})))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
    handle.stop().await;
}

#[tokio::test]
async fn json_rpc_errors() {
    let (handle, url, _) = start().await;
    let (status, r) = post(
        &url,
        &rpc(1, "tools/call", json!({"name": "nope", "arguments": {}})),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        r["error"],
        json!({"code": -32602, "message": "Unknown tool: nope"})
    );
    for method in ["server/discover", "bogus/method"] {
        let (_, r) = post(&url, &rpc(2, method, json!({}))).await;
        assert_eq!(
            r["error"],
            json!({"code": -32601, "message": format!("Method not found: {method}")})
        );
    }
    let resp = client().post(&url).body("{nope").send().await.unwrap();
    assert_eq!(resp.status(), 400);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(
        (body["id"].clone(), body["error"]["code"].clone()),
        (Value::Null, json!(-32700))
    );
    handle.stop().await;
}

#[tokio::test]
async fn transport_shapes() {
    let (handle, url, _) = start().await;
    let client = client();

    let resp = client
        .post(&url)
        .header("accept", "text/event-stream")
        .json(&rpc(1, "ping", json!({})))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let body = resp.text().await.unwrap();
    assert_eq!(
        body,
        "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"
    );

    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let resp = client.post(&url).json(&note).send().await.unwrap();
    assert_eq!(resp.status(), 202);
    assert!(resp.bytes().await.unwrap().is_empty());

    let batch = json!([
        rpc(1, "ping", json!({})),
        note,
        rpc(
            2,
            "tools/call",
            json!({"name": "add", "arguments": {"a": 1, "b": 1}})
        )
    ]);
    let (status, replies) = post(&url, &batch).await;
    assert_eq!(status, 200);
    assert_eq!(
        replies,
        json!([{"jsonrpc": "2.0", "id": 1, "result": {}}, {"jsonrpc": "2.0", "id": 2, "result": text("2")}])
    );

    let resp = client.get(&url).send().await.unwrap();
    assert_eq!(resp.status(), 405);
    assert_eq!(resp.headers()["allow"], "POST, DELETE");
    assert_eq!(
        client
            .post(format!("{}/other", handle.url()))
            .send()
            .await
            .unwrap()
            .status(),
        404
    );
    assert_eq!(client.get(handle.url()).send().await.unwrap().status(), 404);
    handle.stop().await;
}

/// Raw HTTP/1.1 so the Host header is exactly what we write.
async fn raw_status(addr: std::net::SocketAddr, host: &str, extra: &str) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\n{extra}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    response[9..12].parse().unwrap()
}

#[tokio::test]
async fn dns_rebinding_protection() {
    let (handle, _, _) = start().await;
    let addr = handle.local_addr();
    let port = addr.port();
    assert_eq!(
        raw_status(addr, &format!("127.0.0.1:{port}"), "").await,
        200
    );
    assert_eq!(
        raw_status(addr, &format!("localhost:{port}"), "").await,
        200
    );
    assert_eq!(raw_status(addr, &format!("[::1]:{port}"), "").await, 200);
    assert_eq!(
        raw_status(addr, &format!("evil.example:{port}"), "").await,
        403
    );
    assert_eq!(raw_status(addr, "evil.example", "").await, 403);
    let local = format!("127.0.0.1:{port}");
    assert_eq!(
        raw_status(
            addr,
            &local,
            &format!("Origin: http://localhost:{port}\r\n")
        )
        .await,
        200
    );
    assert_eq!(
        raw_status(addr, &local, "Origin: http://evil.example\r\n").await,
        403
    );
    assert_eq!(raw_status(addr, &local, "Origin: null\r\n").await, 403);
    handle.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_run_concurrently() {
    let (handle, url, _) = start().await;
    let started = Instant::now();
    let calls = (0..20).map(|i| {
        let url = url.clone();
        async move { post(&url, &rpc(i, "tools/call", json!({"name": "sleepy"}))).await }
    });
    let results = join_all(calls).await;
    let elapsed = started.elapsed();
    assert!(
        results
            .iter()
            .all(|(s, r)| *s == 200 && r["result"] == text("slept"))
    );
    assert!(
        elapsed < Duration::from_millis(1500),
        "20 × 200 ms calls took {elapsed:?}"
    );
    handle.stop().await;
}

#[tokio::test]
async fn panicking_tool_is_an_error_result_and_server_survives() {
    let (handle, url, records) = start().await;
    let (status, r) = post(&url, &rpc(1, "tools/call", json!({"name": "explode"}))).await;
    assert_eq!(status, 200);
    assert_eq!(
        r["result"],
        json!({"content": [{"type": "text", "text": "tool panicked"}], "isError": true})
    );
    let (_, r) = post(
        &url,
        &rpc(
            2,
            "tools/call",
            json!({"name": "add", "arguments": {"a": 1, "b": 2}}),
        ),
    )
    .await;
    assert_eq!(r["result"], text("3"));
    let recorded: Vec<_> = records
        .lock()
        .unwrap()
        .iter()
        .map(|r| (r.name.clone(), r.is_error))
        .collect();
    assert_eq!(
        recorded,
        [("explode".to_string(), true), ("add".to_string(), false)]
    );
    handle.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_waits_for_in_flight_then_refuses() {
    let (handle, url, _) = start().await;
    let addr = handle.local_addr();
    // Warm the client up so the slow call below is really in flight when stop() begins.
    assert_eq!(post(&url, &rpc(0, "ping", json!({}))).await.0, 200);
    let call =
        tokio::spawn(
            async move { post(&url, &rpc(1, "tools/call", json!({"name": "sleepy"}))).await },
        );
    tokio::time::sleep(Duration::from_millis(80)).await;
    let started = Instant::now();
    handle.stop().await;
    assert!(
        started.elapsed() >= Duration::from_millis(100),
        "stop returned after {:?}",
        started.elapsed()
    );
    // Answered, not cut off: connections still open when stop() returns are aborted.
    let (status, r) = call.await.unwrap();
    assert_eq!((status, r["result"].clone()), (200, text("slept")));
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
    handle.stop().await; // idempotent
}

#[tokio::test]
async fn rmcp_client_interop_with_discover_fallback() {
    use rmcp::model::{CallToolRequestParams, ProtocolVersion};
    use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
    use rmcp::transport::StreamableHttpClientTransport;

    let (handle, url, _) = start().await;
    // Auto probes `server/discover` first and must fall back to `initialize` on our -32601.
    let lifecycle = ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::LATEST],
        legacy_version: None,
    };
    let client =
        ().serve_with_lifecycle(StreamableHttpClientTransport::from_uri(url), lifecycle)
            .await
            .unwrap();
    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "gateway");
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(
        tools.iter().map(|t| t.name.to_string()).collect::<Vec<_>>(),
        ["add", "sleepy", "explode", "fail"]
    );
    let args = json!({"a": 2, "b": 3}).as_object().unwrap().clone();
    let result = client
        .call_tool(CallToolRequestParams::new("add").with_arguments(args))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&result.content).unwrap(),
        text("5")["content"]
    );
    let result = client
        .call_tool(CallToolRequestParams::new("explode"))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    client.cancel().await.unwrap();
    handle.stop().await;
}
