//! The served surface, continued: a prompt parked for its input and resumed (and a retry of
//! the wrong kind refused), list changes announced by kind, MCP's completion limit, template
//! matching, and `execution` kept in tools/list on the wire.
#![allow(deprecated)] // resources/subscribe is the handshake era's, and served.

use super::*;

#[tokio::test]
async fn a_prompt_waiting_on_input_parks_and_resumes_at_2026() {
    let server = served(Hints::default());
    let (client, _) = connect(&server, true).await;
    // rmcp's client drives the rounds: input-required, then the result.
    let got = client
        .get_prompt(GetPromptRequestParams::new("ask"))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&got.messages).unwrap()[0]["content"]["text"],
        "Context: sunny"
    );
    assert_eq!(server.parked(), 0);

    // A retry that names another kind of request learns whose run the state is.
    let GetPromptResponse::InputRequired(first) = client
        .peer()
        .get_prompt_once(GetPromptRequestParams::new("ask"))
        .await
        .unwrap()
    else {
        panic!("expected an input-required result")
    };
    let requests = serde_json::to_value(&first.input_requests).unwrap();
    assert_eq!(requests["elicitation-1"]["method"], "elicitation/create");
    let mut read = ReadResourceRequestParams::new("test://static-text");
    read.request_state = first.request_state.clone();
    let wrong = client.peer().read_resource_once(read).await.unwrap_err();
    assert_eq!(
        code(wrong).1,
        "requestState belongs to a get of prompt \"ask\""
    );
    assert_eq!(server.parked(), 1);
    let mut retry = GetPromptRequestParams::new("ask");
    retry.request_state = first.request_state.clone();
    retry.input_responses = Some(
        [(
            "elicitation-1".to_string(),
            json!({"action": "accept", "content": {"context": "rainy"}}),
        )]
        .into(),
    );
    let GetPromptResponse::Complete(done) = client.peer().get_prompt_once(retry).await.unwrap()
    else {
        panic!("expected the prompt")
    };
    assert_eq!(
        serde_json::to_value(&done.messages).unwrap()[0]["content"]["text"],
        "Context: rainy"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_changed_surface_is_announced_by_kind() {
    let server = served(Hints::default());
    let (client, mut heard) = connect(&server, false).await;
    // A request answered after `notifications/initialized`: the session is registered.
    client.list_prompts(None).await.unwrap();
    // Only the prompts change: only they are announced.
    let mut items = own_items();
    items.pop();
    server.set_surface(items, Vec::new(), Hints::default());
    let got = tokio::time::timeout(BOUND, heard.recv()).await.unwrap();
    assert_eq!(got.as_deref(), Some("prompts changed"));
    let mut items = own_items();
    items.remove(0);
    server.set_surface(items, Vec::new(), Hints::default());
    let mut got = vec![];
    for _ in 0..2 {
        got.push(
            tokio::time::timeout(BOUND, heard.recv())
                .await
                .unwrap()
                .unwrap(),
        );
    }
    got.sort();
    assert_eq!(got, ["prompts changed", "resources changed"]);
    // The same surface again: nothing to tell (a resource update comes first).
    server.set_surface(
        own_items().into_iter().skip(1).collect(),
        Vec::new(),
        Hints::default(),
    );
    client
        .subscribe(SubscribeRequestParams::new("test://template/1/data"))
        .await
        .unwrap();
    server.resource_updated("test://template/1/data");
    let got = tokio::time::timeout(BOUND, heard.recv()).await.unwrap();
    assert_eq!(got.as_deref(), Some("test://template/1/data"));
    client.cancel().await.unwrap();
}

#[test]
fn completion_is_cut_to_mcps_limit() {
    let values: Vec<String> = (0..101).map(|i| i.to_string()).collect();
    let info = completion(values, None, None);
    assert_eq!(
        (info.values.len(), info.total, info.has_more),
        (100, Some(101), Some(true))
    );
    let info = completion(vec!["a".into()], Some(7), Some(true));
    assert_eq!(
        (info.values, info.total, info.has_more),
        (vec!["a".to_string()], Some(7), Some(true))
    );
}

#[test]
fn template_variables_match_levels_one_and_two() {
    let vars = crate::surface::uri_template::matches(
        "test://template/{id}/data",
        "test://template/123/data",
    )
    .unwrap();
    assert_eq!(Value::Object(vars), json!({"id": "123"}));
    assert!(
        crate::surface::uri_template::matches(
            "test://template/{id}/data",
            "test://template/1/2/data"
        )
        .is_none()
    );
    let vars =
        crate::surface::uri_template::matches("file:///{+path}", "file:///a/b/c.txt").unwrap();
    assert_eq!(Value::Object(vars), json!({"path": "a/b/c.txt"}));
    let vars = crate::surface::uri_template::matches(
        "demo://resource/dynamic/text/{resourceId}",
        "demo://resource/dynamic/text/5",
    )
    .unwrap();
    assert_eq!(Value::Object(vars), json!({"resourceId": "5"}));
    assert!(crate::surface::uri_template::matches("demo://x/{id}", "other://x/1").is_none());
}

#[tokio::test]
async fn tools_list_keeps_execution_over_the_bridge_and_stdio_in_both_eras() {
    let mut extras = Map::new();
    extras.insert("execution".into(), json!({"taskSupport": "required"}));
    let tool = |name: &str, extras: Map<String, Value>| ServedTool {
        name: name.into(),
        description: "d".into(),
        input_schema: object_schema(json!({"type": "object"})),
        extras,
        source: "native".into(),
        caller: answering(|_| json!(null)),
    };
    let server = ToolServer::new(
        ServerIdentity::default(),
        vec![tool("slow", extras), tool("plain", Map::new())],
        None,
    );
    let (tx, mut rx) = mpsc::unbounded_channel::<Value>();
    let send: Arc<dyn Fn(Value) + Send + Sync> = Arc::new(move |m| {
        let _ = tx.send(m);
    });
    let mut bridge = bridge::Bridge::start(server.clone(), send);
    bridge.push(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}));
    tokio::time::timeout(BOUND, rx.recv()).await.unwrap();
    bridge.push(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    bridge.push(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    let listed = tokio::time::timeout(BOUND, rx.recv())
        .await
        .unwrap()
        .unwrap();
    let tools = &listed["result"]["tools"];
    assert_eq!(tools[0]["execution"], json!({"taskSupport": "required"}));
    assert_eq!(tools[1].get("execution"), None);
    assert_eq!(listed["result"]["ttlMs"], 0);
    assert_eq!(
        listed["result"].get("resultType"),
        None,
        "legacy: no resultType"
    );
    bridge.close();

    // stdio at 2026-07-28, the raw lines.
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server_io);
    tokio::spawn(stdio::serve_lines(server, server_read, server_write));
    let (client_read, mut client_write) = tokio::io::split(client_io);
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}});
    let line =
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}});
    client_write
        .write_all(format!("{line}\n").as_bytes())
        .await
        .unwrap();
    let mut lines = tokio::io::BufReader::new(client_read).lines();
    let answer = tokio::time::timeout(BOUND, lines.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(
        answer["result"]["tools"][0]["execution"],
        json!({"taskSupport": "required"}),
        "{answer}"
    );
    assert_eq!(answer["result"]["resultType"], "complete");
}
