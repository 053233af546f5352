//! A gateway over the real server-everything (a child over stdio, through `connect`): what
//! rmcp clients of both eras see of its resources, templates and prompts equals what the
//! live server listed (prompts renamed `everything_*`); reads, prompts and completions answer
//! as the server does; and subscription updates arrive through the gateway in both eras.
#![allow(deprecated)] // resources/subscribe is the handshake era's, and served.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::{
    ClientCapabilities, ClientConfig, GetPromptRequestParams, Implementation, ProtocolVersion,
    ReadResourceRequestParams, ResourceUpdatedNotificationParam, SubscribeRequestParams,
    SubscriptionFilter,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, NotificationContext, RoleClient};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::upstream::Live;
use crate::connect::client::ClientSide;
use crate::connect::inventory;
use crate::connect::session::Session;
use crate::serve::surface::Hints;
use crate::serve::{ServerIdentity, ToolServer, stdio};
use crate::surface::Kind;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
const BOUND: Duration = Duration::from_secs(10);

async fn everything() -> Arc<Session> {
    let entry =
        format!("{ROOT}/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let config = json!({"mcpServers": {"everything": {"command": "node", "args": [entry, "stdio"], "timeout": 20000}}});
    let config = crate::config::load(crate::config::ConfigInput::Value(config)).unwrap();
    let loaded = inventory::load_all(&config, &CancellationToken::new(), None, |_| {
        ClientSide::default()
    })
    .await
    .unwrap_or_else(|_| panic!("interrupted"));
    assert_eq!(loaded.servers[0].error, None);
    Arc::new(loaded.session)
}

#[derive(Clone)]
struct Updates(mpsc::UnboundedSender<String>);

impl rmcp::ClientHandler for Updates {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(ClientCapabilities::default(), Implementation::new("t", "1"))
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.0.send(params.uri);
    }
}

/// An rmcp client of `server` over an in-process pipe, in the 2026-07-28 era when `modern`
/// (else the handshake era), and the resource updates it hears.
async fn connect(
    server: &ToolServer,
    modern: bool,
) -> (
    rmcp::service::RunningService<RoleClient, Updates>,
    mpsc::UnboundedReceiver<String>,
) {
    let (client_io, server_io) = tokio::io::duplex(256 * 1024);
    let (server_read, server_write) = tokio::io::split(server_io);
    tokio::spawn(stdio::serve_lines(
        server.clone(),
        server_read,
        server_write,
    ));
    let (tx, updates) = mpsc::unbounded_channel();
    let client = if modern {
        Updates(tx)
            .serve_with_lifecycle(
                tokio::io::split(client_io),
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
            )
            .await
    } else {
        Updates(tx).serve(tokio::io::split(client_io)).await
    }
    .unwrap();
    (client, updates)
}

fn uris(items: &[Map<String, Value>], field: &str) -> BTreeSet<String> {
    items
        .iter()
        .map(|i| i[field].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_relays_server_everythings_surface_in_both_eras() {
    let session = everything().await;
    let live = session.server("everything").unwrap().clone();
    let direct = live.surface();
    let server = ToolServer::new(ServerIdentity::default(), Vec::new(), None);
    let warnings = server.set_surface(Vec::new(), Live::all(&session), Hints::default());
    assert!(warnings.is_empty(), "{warnings:?}");
    let (cancel, closed) = (CancellationToken::new(), CancellationToken::new());
    let uri = "demo://resource/static/document/features.md";

    for modern in [false, true] {
        let (client, mut updates) = connect(&server, modern).await;

        let resources = client.list_all_resources().await.unwrap();
        let served: Vec<_> = resources
            .iter()
            .map(|r| {
                serde_json::to_value(r)
                    .unwrap()
                    .as_object()
                    .cloned()
                    .unwrap()
            })
            .collect();
        assert_eq!(
            uris(&served, "uri"),
            uris(&direct.get(Kind::Resources).items, "uri")
        );
        assert_eq!(served.len(), 7);
        let templates = client.list_all_resource_templates().await.unwrap();
        assert_eq!(templates.len(), 2);
        let prompts = client.list_all_prompts().await.unwrap();
        let names: BTreeSet<_> = prompts.iter().map(|p| p.name.clone()).collect();
        let expected: BTreeSet<_> = direct
            .get(Kind::Prompts)
            .items
            .iter()
            .map(|p| format!("everything_{}", p["name"].as_str().unwrap()))
            .collect();
        assert_eq!(names, expected);

        let read = client
            .read_resource(ReadResourceRequestParams::new(uri))
            .await
            .unwrap();
        let straight = live
            .read_resource(
                uri,
                crate::connect::session::surface::Req {
                    timeout: None,
                    cancel: &cancel,
                    closed: &closed,
                    front: None,
                    meta: None,
                },
            )
            .await
            .unwrap();
        assert_eq!(
            serde_json::to_value(&read.contents).unwrap(),
            straight["contents"]
        );

        let args = Map::from_iter([("city".to_string(), json!("Paris"))]);
        let got = client
            .get_prompt(GetPromptRequestParams::new("everything_args-prompt").with_arguments(args))
            .await
            .unwrap();
        assert_eq!(
            serde_json::to_value(&got.messages).unwrap()[0]["content"]["text"],
            "What's weather in Paris?"
        );
        let done = client
            .complete_prompt_argument("everything_completable-prompt", "department", "E", None)
            .await
            .unwrap();
        assert_eq!(done.values, ["Engineering"]);

        // Subscribed before the toggle: server-everything sends one update at once, and it
        // reaches the gateway's client.
        let mut listening = None;
        if modern {
            let filter = SubscriptionFilter::builder()
                .resource_subscription(uri)
                .build();
            listening = Some(client.peer().listen(filter).await.unwrap());
        } else {
            client
                .subscribe(SubscribeRequestParams::new(uri))
                .await
                .unwrap();
        }
        let toggled = live
            .call(
                "toggle-subscriber-updates",
                Map::new(),
                None,
                &cancel,
                &closed,
                None,
            )
            .await;
        assert!(!toggled.is_error, "{}", toggled.output);
        if let Some(listening) = listening.as_mut() {
            let note = tokio::time::timeout(BOUND, listening.next())
                .await
                .unwrap()
                .unwrap();
            assert!(format!("{note:?}").contains(uri), "{note:?}");
        } else {
            let got = tokio::time::timeout(BOUND, updates.recv()).await.unwrap();
            assert_eq!(got.as_deref(), Some(uri));
        }
        // Off again, for the next era's toggle.
        live.call(
            "toggle-subscriber-updates",
            Map::new(),
            None,
            &cancel,
            &closed,
            None,
        )
        .await;
        drop(listening);
        client.cancel().await.unwrap();
    }
    session.close().await;
}

/// Each of server-everything's tools relayed by the gateway (as a toolkit over an mcp.json
/// serves them): listed as the server listed it, under the served name, and called straight
/// down its connection, with the server's own result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_relays_server_everythings_tools_in_both_eras() {
    use super::tool::{LoadedTool, relayed};
    let session = everything().await;
    let live = session.server("everything").unwrap().clone();
    let listing = live.listing();
    let tools = listing
        .iter()
        .map(|info| {
            let loaded = Arc::new(LoadedTool {
                session: session.clone(),
                server: live.clone(),
                tool: info.name().to_string(),
                listing: info.clone(),
                task_required: false,
                task_optional: false,
            });
            let name = (format!("everything_{}", info.name()), String::new());
            relayed(loaded, name, "everything".into()).unwrap()
        })
        .collect();
    let server = ToolServer::new(ServerIdentity::default(), tools, None);
    let (cancel, closed) = (CancellationToken::new(), CancellationToken::new());
    let arguments = json!({"a": 2, "b": 3}).as_object().cloned().unwrap();
    let straight = live
        .call("get-sum", arguments.clone(), None, &cancel, &closed, None)
        .await;
    assert!(!straight.is_error, "{}", straight.output);

    for modern in [false, true] {
        let (client, _updates) = connect(&server, modern).await;

        let served = client.list_all_tools().await.unwrap();
        assert_eq!(served.len(), listing.len());
        for (tool, info) in served.iter().zip(&listing) {
            assert_eq!(tool.name, format!("everything_{}", info.name()));
            let listed = info.to_value();
            assert_eq!(
                Value::Object((*tool.input_schema).clone()),
                listed["inputSchema"]
            );
            assert_eq!(tool.description.as_deref(), listed["description"].as_str());
        }
        let relayed = tokio::time::timeout(
            BOUND,
            client.call_tool(
                rmcp::model::CallToolRequestParams::new("everything_get-sum")
                    .with_arguments(arguments.clone()),
            ),
        )
        .await
        .unwrap()
        .unwrap();
        assert_eq!(
            serde_json::to_value(&relayed).unwrap()["content"],
            straight.raw.as_ref().unwrap()["content"]
        );
        client.cancel().await.unwrap();
    }
    session.close().await;
}
