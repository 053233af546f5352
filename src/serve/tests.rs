use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::FutureExt;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::*;

fn tool(name: &str, caller: impl ToolCaller) -> ServedTool {
    ServedTool {
        name: name.into(),
        description: format!("{name} tool"),
        input_schema: json!({"type": "object"}),
        source: "native".into(),
        caller: Arc::new(caller),
    }
}

fn add(args: Map<String, Value>) -> BoxFuture<'static, CallResult> {
    let sum = args.get("a").and_then(Value::as_f64).unwrap_or(0.0)
        + args.get("b").and_then(Value::as_f64).unwrap_or(0.0);
    async move { json!({"content": [{"type": "text", "text": sum.to_string()}]}) }.boxed()
}

fn sleepy(_: Map<String, Value>) -> BoxFuture<'static, CallResult> {
    async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        json!({"content": [{"type": "text", "text": "slept"}]})
    }
    .boxed()
}

fn panics(_: Map<String, Value>) -> BoxFuture<'static, CallResult> {
    panic!("boom")
}

fn service_with(on_call: Option<OnCall>) -> McpService {
    let tools = vec![
        tool("add", add),
        tool("sleepy", sleepy),
        tool("explode", panics),
        tool("bare", |_: Map<String, Value>| {
            async { json!("plain text") }.boxed()
        }),
    ];
    McpService::new(ServerIdentity::default(), tools, on_call)
}

fn request(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[test]
fn exposed_keeps_tool_order_and_ignores_unknown_names() {
    let tools = vec![tool("a", add), tool("b", add), tool("c", add)];
    let names = |v: Vec<ServedTool>| v.into_iter().map(|t| t.name).collect::<Vec<_>>();
    assert_eq!(names(exposed(&tools, None)), ["a", "b", "c"]);
    let filter = vec!["c".to_string(), "nope".to_string(), "a".to_string()];
    assert_eq!(names(exposed(&tools, Some(&filter))), ["a", "c"]);
    assert!(exposed(&tools, Some(&["zzz".to_string()])).is_empty());
}

#[tokio::test]
async fn initialize_negotiates_protocol_version() {
    let svc = McpService::new(
        ServerIdentity {
            name: "gw".into(),
            version: "9.9.9".into(),
        },
        vec![],
        None,
    );
    let reply = svc
        .handle(request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-03-26"}),
        ))
        .await
        .unwrap();
    assert_eq!(
        reply["result"],
        json!({
            "protocolVersion": "2025-03-26",
            "capabilities": {"tools": {"listChanged": false}},
            "serverInfo": {"name": "gw", "version": "9.9.9"},
        })
    );
    let reply = svc
        .handle(request(
            2,
            "initialize",
            json!({"protocolVersion": "2099-01-01"}),
        ))
        .await
        .unwrap();
    assert_eq!(reply["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(reply["id"], 2);
}

#[tokio::test]
async fn ping_list_and_notifications() {
    let svc = service_with(None);
    assert_eq!(
        svc.handle(request(1, "ping", Value::Null)).await.unwrap()["result"],
        json!({})
    );
    let list = svc
        .handle(request(2, "tools/list", json!({"cursor": "x"})))
        .await
        .unwrap();
    let tools = list["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 4);
    assert_eq!(
        tools[0],
        json!({"name": "add", "description": "add tool", "inputSchema": {"type": "object"}})
    );
    assert!(list["result"].get("nextCursor").is_none());
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(svc.handle(note).await, None);
    let stray_response = json!({"jsonrpc": "2.0", "id": 5, "result": {}});
    assert_eq!(svc.handle(stray_response).await, None);
}

#[tokio::test]
async fn errors_have_the_right_codes() {
    let svc = service_with(None);
    let r = svc
        .handle(request(1, "tools/call", json!({"name": "nope"})))
        .await
        .unwrap();
    assert_eq!(
        r["error"],
        json!({"code": -32602, "message": "Unknown tool: nope"})
    );
    for method in ["server/discover", "resources/list"] {
        let r = svc.handle(request(2, method, json!({}))).await.unwrap();
        assert_eq!(
            r["error"],
            json!({"code": -32601, "message": format!("Method not found: {method}")})
        );
    }
    let r = svc
        .handle(json!({"jsonrpc": "2.0", "id": 3}))
        .await
        .unwrap();
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (json!(3), json!(-32600))
    );
    let r = svc.handle(json!(42)).await.unwrap();
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (Value::Null, json!(-32600))
    );
    let r = svc.handle(json!([])).await.unwrap();
    assert_eq!(r["error"]["code"], -32600);
    let r = svc
        .handle(request(
            4,
            "tools/call",
            json!({"name": "add", "arguments": [1]}),
        ))
        .await
        .unwrap();
    assert_eq!(r["error"]["code"], -32602);
}

#[tokio::test]
async fn call_records_and_survives_panics() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let svc = service_with(Some(Arc::new(move |r: CallRecord| {
        sink.lock().unwrap().push(r)
    })));
    let r = svc
        .handle(request(
            1,
            "tools/call",
            json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
        ))
        .await
        .unwrap();
    assert_eq!(
        r["result"],
        json!({"content": [{"type": "text", "text": "5"}]})
    );
    let r = svc
        .handle(request(2, "tools/call", json!({"name": "explode"})))
        .await
        .unwrap();
    assert_eq!(
        r["result"],
        json!({"content": [{"type": "text", "text": "tool panicked"}], "isError": true})
    );
    let r = svc
        .handle(request(3, "tools/call", json!({"name": "bare"})))
        .await
        .unwrap();
    assert_eq!(
        r["result"],
        json!({"content": [{"type": "text", "text": "plain text"}]})
    );
    let seen = seen.lock().unwrap();
    let summary: Vec<_> = seen
        .iter()
        .map(|r| (r.name.as_str(), r.source.as_str(), r.is_error))
        .collect();
    assert_eq!(
        summary,
        [
            ("add", "native", false),
            ("explode", "native", true),
            ("bare", "native", false)
        ]
    );
    assert!(seen.iter().all(|r| r.ms >= 0.0));
}

#[tokio::test]
async fn batch_runs_concurrently_and_skips_notifications() {
    let svc = service_with(None);
    let mut batch: Vec<Value> = (0..10)
        .map(|i| request(i, "tools/call", json!({"name": "sleepy"})))
        .collect();
    batch.push(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let started = Instant::now();
    let replies = svc.handle(Value::Array(batch)).await.unwrap();
    assert!(
        started.elapsed() < Duration::from_millis(1000),
        "{:?}",
        started.elapsed()
    );
    let ids: Vec<_> = replies
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, (0..10).collect::<Vec<_>>());
    let only_notes = json!([{"jsonrpc": "2.0", "method": "notifications/cancelled"}]);
    assert_eq!(svc.handle(only_notes).await, None);
}

#[tokio::test]
async fn stdio_lines_concurrent_in_completion_order() {
    let svc = Arc::new(service_with(None));
    let (client, server) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server);
    let serving = tokio::spawn(serve_lines_for_test(svc, server_read, server_write));
    let (client_read, mut client_write) = tokio::io::split(client);
    let mut input = String::new();
    input.push_str(&format!(
        "{}\n",
        request(1, "tools/call", json!({"name": "sleepy"}))
    ));
    input.push_str(&format!(
        "{}\n",
        request(2, "tools/call", json!({"name": "sleepy"}))
    ));
    input.push_str("\n{not json\n");
    input.push_str("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    input.push_str(&format!("{}\n", request(3, "ping", Value::Null)));
    let started = Instant::now();
    client_write.write_all(input.as_bytes()).await.unwrap();
    // EOF on the server's input while the sleepy calls are still running.
    client_write.shutdown().await.unwrap();
    drop(client_write);
    let mut lines = BufReader::new(client_read).lines();
    let mut replies = Vec::new();
    while let Some(line) = lines.next_line().await.unwrap() {
        replies.push(serde_json::from_str::<Value>(&line).unwrap());
    }
    serving.await.unwrap().unwrap();
    assert!(
        started.elapsed() < Duration::from_millis(390),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(replies.len(), 4);
    // Fast replies overtake the slow calls.
    assert_eq!(replies[0]["error"]["code"], -32700);
    assert_eq!(replies[1]["id"], 3);
    let mut slow: Vec<_> = replies[2..]
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    slow.sort();
    assert_eq!(slow, [1, 2]);
}

async fn serve_lines_for_test(
    svc: Arc<McpService>,
    read: tokio::io::ReadHalf<tokio::io::DuplexStream>,
    mut write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
) -> std::io::Result<()> {
    stdio::serve_lines(svc, BufReader::new(read), &mut write).await?;
    // Closing our half is what lets the client see EOF after the last reply.
    write.shutdown().await
}
