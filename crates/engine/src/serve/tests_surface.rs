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
                Err(e) => json!({"error": {"message": e.to_string()}}),
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

#[path = "tests_surface_upstream.rs"]
mod upstream;

#[path = "tests_surface_rounds.rs"]
mod rounds_and_wire;
