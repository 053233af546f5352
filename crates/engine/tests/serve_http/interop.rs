//! Interop: rmcp clients of both eras round-trip through the served tools, and 2026-07-28
//! requests are stateless and carry their result type.

use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, RoleClient, RunningService};
use serde_json::json;

use super::common::*;

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
