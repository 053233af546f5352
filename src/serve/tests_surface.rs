//! The served surface besides tools, with rmcp clients of both eras on the other end of a
//! pipe: listings and their caching hints, reads in dispatch order with each era's codes,
//! prompts (renamed, checked, parked and resumed), completion, and subscriptions relayed to
//! an upstream (a fake one, counted), each held upstream once however many follow it.
#![allow(deprecated)] // resources/subscribe is the handshake era's, and served.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use rmcp::model::{
    CacheScope, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationCapability, ErrorCode, ErrorData, GetPromptRequestParams,
    GetPromptResponse, Implementation, ProtocolVersion, ReadResourceRequestParams,
    ResourceUpdatedNotificationParam, SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, NotificationContext, RequestContext, RoleClient,
    RunningService,
};
use rmcp::{ServiceError, ServiceExt};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

use super::surface::*;
use super::*;
use crate::surface::completion;

const BOUND: Duration = Duration::from_secs(10);

/// A client that answers elicitations with `{context: "sunny"}` and passes on updates.
#[derive(Clone)]
struct Client(mpsc::UnboundedSender<String>);

impl rmcp::ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = Some(ElicitationCapability::new());
        ClientConfig::new(capabilities, Implementation::new("t", "1"))
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({"context": "sunny"})))
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.0.send(params.uri);
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.0.send("resources changed".into());
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.0.send("prompts changed".into());
    }
}

async fn connect(
    server: &ToolServer,
    modern: bool,
) -> (
    RunningService<RoleClient, Client>,
    mpsc::UnboundedReceiver<String>,
) {
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server_io);
    tokio::spawn(stdio::serve_lines(
        server.clone(),
        server_read,
        server_write,
    ));
    let (tx, rx) = mpsc::unbounded_channel();
    let client = if modern {
        Client(tx)
            .serve_with_lifecycle(
                tokio::io::split(client_io),
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
            )
            .await
    } else {
        Client(tx).serve(tokio::io::split(client_io)).await
    };
    (client.unwrap(), rx)
}

fn obj(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap()
}

/// A read or get that answers `{result: f(arguments)}`.
fn answering(f: fn(Map<String, Value>) -> Value) -> Arc<dyn ToolCaller> {
    Arc::new(
        move |args: Map<String, Value>| -> BoxFuture<'static, CallResult> {
            let result = f(args);
            async move { json!({ "result": result }) }.boxed()
        },
    )
}

/// A prompt that asks its client for context first (input-required rounds at 2026-07-28).
struct Asking;

impl ToolCaller for Asking {
    fn call(&self, _: Map<String, Value>, ctx: CallContext) -> BoxFuture<'static, CallResult> {
        async move {
            let ask = json!({"message": "What context should the prompt use?", "requestedSchema": {"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]}});
            match ctx.elicit(ask).await {
                Ok(answer) => {
                    let text = format!("Context: {}", answer["content"]["context"].as_str().unwrap_or("?"));
                    json!({"result": {"messages": [{"role": "user", "content": {"type": "text", "text": text}}]}})
                }
                Err(e) => json!({"error": {"message": e}}),
            }
        }
        .boxed()
    }
}

fn own(kind: OwnKind, listing: Value, caller: Arc<dyn ToolCaller>) -> OwnItem {
    OwnItem {
        kind,
        listing: obj(listing),
        caller,
        completer: None,
        completes: Vec::new(),
    }
}

fn own_items() -> Vec<OwnItem> {
    let mut prompt = own(
        OwnKind::Prompt,
        json!({"name": "greet", "description": "Greets", "arguments": [{"name": "who", "required": true}]}),
        answering(
            |a| json!({"messages": [{"role": "user", "content": {"type": "text", "text": format!("Hello {}", a["who"].as_str().unwrap_or("?"))}}]}),
        ),
    );
    prompt.completer = Some(answering(|call| {
        let prefix = call["argument"]["value"].as_str().unwrap_or("").to_string();
        let names: Vec<String> = (0..150).map(|i| format!("{prefix}{i}")).collect();
        json!(names)
    }));
    prompt.completes = vec!["who".into()];
    vec![
        own(
            OwnKind::Resource,
            json!({"uri": "test://static-text", "name": "static", "mimeType": "text/plain"}),
            answering(|a| json!({"contents": [{"uri": a["uri"], "text": "hello"}]})),
        ),
        own(
            OwnKind::Template,
            json!({"uriTemplate": "test://template/{id}/data", "name": "tpl"}),
            answering(
                |a| json!({"contents": [{"uri": a["uri"], "text": format!("id {}", a["vars"]["id"].as_str().unwrap_or("?"))}]}),
            ),
        ),
        prompt,
        own(
            OwnKind::Prompt,
            json!({"name": "ask", "description": "Asks"}),
            Arc::new(Asking),
        ),
    ]
}

fn served(cache: Hints) -> ToolServer {
    let server = ToolServer::new(ServerIdentity::default(), Vec::new(), None);
    let warnings = server.set_surface(own_items(), Vec::new(), cache);
    assert!(warnings.is_empty(), "{warnings:?}");
    server
}

fn code(e: ServiceError) -> (i32, String, Option<Value>) {
    match e {
        ServiceError::McpError(e) => (e.code.0, e.message.to_string(), e.data),
        other => panic!("not a JSON-RPC error: {other}"),
    }
}

#[tokio::test]
async fn own_items_are_listed_read_and_got_in_both_eras() {
    let server = served(Hints::default());
    for modern in [false, true] {
        let (client, _) = connect(&server, modern).await;
        let caps = client.peer_info().unwrap().capabilities.clone();
        assert_eq!(caps.resources.unwrap().subscribe, Some(true));
        assert!(caps.prompts.is_some() && caps.completions.is_some());

        // Every listing carries its hints, in both eras: nothing upstream, none configured.
        let page = client.list_resources(None).await.unwrap();
        assert_eq!(
            (page.ttl_ms, page.cache_scope),
            (Some(0), Some(CacheScope::Private))
        );
        assert_eq!(page.resources[0].uri, "test://static-text");
        let page = client.list_resource_templates(None).await.unwrap();
        assert_eq!(
            page.resource_templates[0].uri_template,
            "test://template/{id}/data"
        );
        assert_eq!(page.ttl_ms, Some(0));
        let page = client.list_prompts(None).await.unwrap();
        let names: Vec<_> = page.prompts.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["greet", "ask"]);
        assert_eq!(page.ttl_ms, Some(0));
        let tools = client.list_tools(None).await.unwrap();
        assert_eq!(
            (tools.ttl_ms, tools.cache_scope),
            (Some(0), Some(CacheScope::Private))
        );

        // Reads: an exact URI, then a template with its variables.
        let read = client
            .read_resource(ReadResourceRequestParams::new("test://static-text"))
            .await
            .unwrap();
        let read = serde_json::to_value(&read).unwrap();
        assert_eq!(
            read["contents"],
            json!([{"uri": "test://static-text", "text": "hello"}])
        );
        assert_eq!(
            (read["ttlMs"].clone(), read["cacheScope"].clone()),
            (json!(0), json!("private"))
        );
        let read = client
            .read_resource(ReadResourceRequestParams::new("test://template/123/data"))
            .await
            .unwrap();
        assert_eq!(
            serde_json::to_value(&read.contents).unwrap()[0]["text"],
            "id 123"
        );

        // An unknown URI: -32002 with the URI in the handshake era, -32602 in 2026-07-28.
        let missing = client
            .read_resource(ReadResourceRequestParams::new("test://nope"))
            .await
            .unwrap_err();
        let (c, message, data) = code(missing);
        assert_eq!(c, if modern { -32602 } else { -32002 });
        assert_eq!(message, "Resource not found: test://nope");
        assert_eq!(data, Some(json!({"uri": "test://nope"})));

        // Prompts: a missing required argument is named; given, the prompt answers.
        let missing = client
            .get_prompt(GetPromptRequestParams::new("greet"))
            .await
            .unwrap_err();
        assert_eq!(
            code(missing),
            (
                -32602,
                "Missing required argument(s) for prompt \"greet\": who".into(),
                None
            )
        );
        let got = client
            .get_prompt(
                GetPromptRequestParams::new("greet").with_arguments(obj(json!({"who": "Ada"}))),
            )
            .await
            .unwrap();
        assert_eq!(
            serde_json::to_value(&got.messages).unwrap()[0]["content"]["text"],
            "Hello Ada"
        );
        let unknown = client
            .get_prompt(GetPromptRequestParams::new("nope"))
            .await
            .unwrap_err();
        assert_eq!(code(unknown).0, -32602);

        // Completion: 150 values are cut to 100, with the total.
        let info = client
            .complete_prompt_argument("greet", "who", "A", None)
            .await
            .unwrap();
        assert_eq!(info.values.len(), 100);
        assert_eq!((info.total, info.has_more), (Some(150), Some(true)));
        assert_eq!(info.values[0], "A0");
        let none = client
            .complete_prompt_argument("ask", "x", "", None)
            .await
            .unwrap();
        assert!(none.values.is_empty());
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn configured_hints_are_served() {
    let cache = Hints {
        ttl_ms: Some(5000),
        scope: Some(CacheScope::Public),
    };
    let server = served(cache);
    for modern in [false, true] {
        let (client, _) = connect(&server, modern).await;
        let page = client.list_prompts(None).await.unwrap();
        assert_eq!(
            (page.ttl_ms, page.cache_scope),
            (Some(5000), Some(CacheScope::Public))
        );
        let read = client
            .read_resource(ReadResourceRequestParams::new("test://static-text"))
            .await
            .unwrap();
        assert_eq!(
            (read.ttl_ms, read.cache_scope),
            (Some(5000), Some(CacheScope::Public))
        );
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn a_tool_server_without_a_surface_announces_and_serves_none() {
    let server = ToolServer::new(ServerIdentity::default(), Vec::new(), None);
    let (client, _) = connect(&server, false).await;
    let caps = client.peer_info().unwrap().capabilities.clone();
    assert!(caps.resources.is_none() && caps.prompts.is_none() && caps.completions.is_none());
    let refused = client.list_resources(None).await.unwrap_err();
    assert_eq!(code(refused).0, ErrorCode::METHOD_NOT_FOUND.0);
    client.cancel().await.unwrap();
}

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

#[path = "tests_surface_upstream.rs"]
mod upstream;

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
