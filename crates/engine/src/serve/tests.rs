//! The tool server over rmcp's stdio and bridge transports, with an rmcp client on the other
//! end; and the pure helpers.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
};
use serde_json::{Map, Value, json};

use super::*;

fn tool(name: &str, caller: impl ToolCaller) -> ServedTool {
    ServedTool {
        name: name.into(),
        description: format!("{name} tool"),
        input_schema: object_schema(json!({"type": "object"})),
        extras: Map::new(),
        source: "native".into(),
        caller: Arc::new(caller),
    }
}

fn add(args: Map<String, Value>) -> BoxFuture<'static, CallResult> {
    let n = |k: &str| args.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    let sum = n("a") + n("b");
    async move { json!({"content": [{"type": "text", "text": sum.to_string()}]}) }.boxed()
}

fn sleepy(_: Map<String, Value>) -> BoxFuture<'static, CallResult> {
    async {
        tokio::time::sleep(Duration::from_millis(150)).await;
        Value::String("slept".into())
    }
    .boxed()
}

fn server() -> ToolServer {
    let tools = vec![
        tool("add", add),
        tool("sleepy", sleepy),
        tool("add", sleepy),
    ];
    ToolServer::new(ServerIdentity::default(), tools, None)
}

fn legacy_client() -> ClientConfig {
    ClientConfig::new(ClientCapabilities::default(), Implementation::new("t", "1"))
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
}

#[test]
fn results_are_normalised_to_call_tool_results() {
    let as_json =
        |v: Value| serde_json::to_value(crate::tool_result::call_result_from_json(v)).unwrap();
    assert_eq!(
        as_json(json!("hi")),
        json!({"content": [{"type": "text", "text": "hi"}], "isError": false, "resultType": "complete"})
    );
    assert_eq!(as_json(json!(42))["content"][0]["text"], "42");
    assert_eq!(as_json(json!({"isError": true}))["content"], json!([]));
    let bad = as_json(json!({"content": [{"type": "nonsense"}]}));
    assert_eq!(bad["isError"], true);
    assert!(
        bad["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("the tool returned a result that is not a valid MCP CallToolResult")
    );
}

#[tokio::test]
async fn stdio_serves_both_eras_and_first_name_wins() {
    for era in ["legacy", "modern"] {
        let (client_io, server_io) = tokio::io::duplex(64 * 1024);
        let (server_read, server_write) = tokio::io::split(server_io);
        let serving = tokio::spawn(stdio::serve_lines(server(), server_read, server_write));
        let (client_read, client_write) = tokio::io::split(client_io);
        let client = if era == "legacy" {
            legacy_client()
                .serve((client_read, client_write))
                .await
                .unwrap()
        } else {
            use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
            legacy_client()
                .serve_with_lifecycle(
                    (client_read, client_write),
                    ClientLifecycleMode::Discover {
                        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                    },
                )
                .await
                .unwrap()
        };
        let expected = if era == "legacy" {
            "2025-11-25"
        } else {
            "2026-07-28"
        };
        assert_eq!(
            client.peer_info().unwrap().protocol_version.as_str(),
            expected
        );
        let tools = client.list_all_tools().await.unwrap();
        assert_eq!(
            tools.iter().map(|t| t.name.as_ref()).collect::<Vec<_>>(),
            ["add", "sleepy"]
        );
        let args = json!({"a": 1, "b": 2}).as_object().unwrap().clone();
        let r = client
            .call_tool(CallToolRequestParams::new("add").with_arguments(args))
            .await
            .unwrap();
        assert_eq!(
            serde_json::to_value(&r.content).unwrap(),
            json!([{"type": "text", "text": "3"}])
        );
        client.cancel().await.unwrap();
        tokio::time::timeout(Duration::from_secs(5), serving)
            .await
            .unwrap()
            .unwrap()
            .unwrap();
    }
}

#[tokio::test]
async fn stdio_ends_at_eof_after_answering_calls_in_flight() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server_io);
    let serving = tokio::spawn(stdio::serve_lines(server(), server_read, server_write));
    let (client_read, mut client_write) = tokio::io::split(client_io);
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let lines = [
        init,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "sleepy"}}),
    ];
    for line in lines {
        client_write
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
    }
    client_write.shutdown().await.unwrap();
    let mut replies = BufReader::new(client_read).lines();
    let mut ids = Vec::new();
    while let Some(line) = replies.next_line().await.unwrap() {
        let reply: Value = serde_json::from_str(&line).unwrap();
        ids.push(reply["id"].clone());
        if reply["id"] == 1 {
            assert_eq!(reply["result"]["content"][0]["text"], "slept");
        }
    }
    assert_eq!(ids, [json!(0), json!(1)]);
    tokio::time::timeout(Duration::from_secs(5), serving)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn bridge_answers_messages_and_refuses_unreadable_ones() {
    let sent: Arc<Mutex<Vec<Value>>> = Arc::default();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let sink = sent.clone();
    let send: Arc<dyn Fn(Value) + Send + Sync> = Arc::new(move |m| {
        sink.lock().unwrap().push(m);
        let _ = tx.send(());
    });
    let mut bridge = bridge::Bridge::start(server(), send);
    bridge.push(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}));
    rx.recv().await.unwrap();
    bridge.push(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    bridge.push(json!({"jsonrpc": "2.0", "id": 7, "bogus": true}));
    rx.recv().await.unwrap();
    bridge.push(json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 2, "b": 2}}}));
    rx.recv().await.unwrap();
    let sent = sent.lock().unwrap().clone();
    assert_eq!(sent[0]["result"]["serverInfo"]["name"], "toolnexus");
    assert_eq!(
        sent[1],
        json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32600, "message": "Invalid Request"}})
    );
    assert_eq!(sent[2]["result"]["content"][0]["text"], "4");
    bridge.close();
}
