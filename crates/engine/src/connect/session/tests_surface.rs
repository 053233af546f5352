//! A live server's surface against server-everything over stdio (a real child, real pipes):
//! its listing, reads, prompts, completions, errors and subscriptions.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::Session;
use super::surface::Req;
use crate::connect::client::ClientSide;
use crate::connect::inventory;
use crate::surface::Kind;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

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
    let server = &loaded.servers[0];
    assert_eq!(server.error, None);
    Arc::new(loaded.session)
}

fn req<'a>(cancel: &'a CancellationToken, closed: &'a CancellationToken) -> Req<'a> {
    Req {
        timeout: None,
        cancel,
        closed,
        front: None,
        meta: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_reads_prompts_completes_and_subscribes() {
    let session = everything().await;
    let live = session.server("everything").unwrap().clone();
    assert!(session.server("nope").is_none());
    let surface = live.surface();
    assert_eq!(surface.get(Kind::Resources).items.len(), 7);
    assert_eq!(surface.get(Kind::ResourceTemplates).items.len(), 2);
    assert_eq!(surface.get(Kind::Prompts).items.len(), 4);
    let (cancel, closed) = (CancellationToken::new(), CancellationToken::new());

    let uri = "demo://resource/static/document/features.md";
    let read = live
        .read_resource(uri, req(&cancel, &closed))
        .await
        .unwrap();
    let file = std::fs::read_to_string(format!(
        "{ROOT}/node_modules/@modelcontextprotocol/server-everything/dist/docs/features.md"
    ))
    .unwrap();
    assert_eq!(read["contents"][0]["text"], Value::String(file));
    assert_eq!(read["contents"][0]["uri"], uri);

    let args = Map::from_iter([("city".to_string(), json!("Paris"))]);
    let prompt = live
        .get_prompt("args-prompt", args, req(&cancel, &closed))
        .await
        .unwrap();
    assert_eq!(
        prompt["messages"][0]["content"]["text"],
        "What's weather in Paris?"
    );
    let err = live
        .get_prompt("nope", Map::new(), req(&cancel, &closed))
        .await
        .unwrap_err();
    assert_eq!(err.code, Some(-32602), "{err:?}");

    let done = live
        .complete(
            json!({"type": "ref/prompt", "name": "completable-prompt"}),
            json!({"name": "department", "value": "E"}),
            None,
            req(&cancel, &closed),
        )
        .await
        .unwrap();
    assert_eq!(done["completion"]["values"], json!(["Engineering"]));
    let bad = live
        .complete(
            json!({"type": "ref/nothing"}),
            json!({}),
            None,
            req(&cancel, &closed),
        )
        .await
        .unwrap_err();
    assert_eq!(bad.code, Some(-32602));
    assert!(
        bad.message.starts_with("invalid completion reference: "),
        "{}",
        bad.message
    );

    let aborted = CancellationToken::new();
    aborted.cancel();
    let err = live
        .read_resource(uri, req(&aborted, &closed))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        crate::surface::SurfaceError::words("resources/read aborted")
    );

    // Subscribed before the toggle: the server sends one update at once.
    let (heard, mut hear) = tokio::sync::mpsc::unbounded_channel::<String>();
    let listener: crate::connect::updates::UpdateListener = Arc::new(move |uri: &str| {
        let _ = heard.send(uri.to_string());
    });
    let sub = live.subscribe(uri, listener.clone()).await.unwrap();
    let again = live.subscribe(uri, listener).await.unwrap();
    assert_eq!(live.updates.count(), 1);
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
    let got = tokio::time::timeout(Duration::from_secs(5), hear.recv()).await;
    assert_eq!(got.unwrap().as_deref(), Some(uri));
    drop(sub);
    assert!(live.updates.has(uri), "one listener left");
    drop(again);
    assert!(!live.updates.has(uri));

    session.close().await;
    let err = live
        .read_resource(uri, req(&cancel, session.closed_token()))
        .await
        .unwrap_err();
    assert_eq!(err.message, "not connected (source closed)");
}

async fn py_era(protocol: &str, log: &std::path::Path) -> Arc<Session> {
    let python = format!("{ROOT}/.venv/bin/python");
    let script = format!("{ROOT}/__test__/fixtures/py-era-server.py");
    let log = log.to_string_lossy().into_owned();
    let config = json!({"mcpServers": {"py": {
        "command": python, "args": [script, "stdio", "--surface", "--log", log],
        "protocol": protocol, "timeout": 20000
    }}});
    let config = crate::config::load(crate::config::ConfigInput::Value(config)).unwrap();
    let loaded = inventory::load_all(&config, &CancellationToken::new(), None, |_| {
        ClientSide::default()
    })
    .await
    .unwrap_or_else(|_| panic!("interrupted"));
    assert_eq!(loaded.servers[0].error, None);
    Arc::new(loaded.session)
}

/// In both eras: a subscription's first listener subscribes the server the era's way, an
/// update reaches it, and the last one gone unsubscribes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriptions_take_each_eras_road() {
    for (protocol, subscribe, unsubscribe) in [
        (
            "2025-11-25",
            "resources/subscribe",
            Some("resources/unsubscribe"),
        ),
        ("2026-07-28", "subscriptions/listen", None),
    ] {
        let log = std::env::temp_dir().join(format!(
            "toolnexus-surface-{}-{protocol}.log",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&log);
        let session = py_era(protocol, &log).await;
        let live = session.server("py").unwrap().clone();
        let (cancel, closed) = (CancellationToken::new(), CancellationToken::new());
        let listed = live.surface();
        assert_eq!(listed.get(Kind::Resources).items[0]["uri"], "era://note");
        let read = live
            .read_resource("era://items/7", req(&cancel, &closed))
            .await
            .unwrap();
        assert_eq!(read["contents"][0]["text"], "item 7", "{protocol}");
        assert_eq!(read.get("resultType"), None, "{protocol}");
        let args = Map::from_iter([("name".to_string(), json!("Ada"))]);
        let got = live
            .get_prompt("greet", args, req(&cancel, &closed))
            .await
            .unwrap();
        assert_eq!(got["messages"][0]["content"]["text"], "Hello, Ada!");
        let done = live
            .complete(
                json!({"type": "ref/prompt", "name": "greet"}),
                json!({"name": "name", "value": "A"}),
                None,
                req(&cancel, &closed),
            )
            .await
            .unwrap();
        assert_eq!(done["completion"]["values"], json!(["Ada", "Alan"]));

        let (heard, mut hear) = tokio::sync::mpsc::unbounded_channel::<String>();
        let listener: crate::connect::updates::UpdateListener = Arc::new(move |uri: &str| {
            let _ = heard.send(uri.to_string());
        });
        let sub = live.subscribe("era://note", listener).await.unwrap();
        let args = Map::from_iter([("uri".to_string(), json!("era://note"))]);
        let touched = live.call("touch", args, None, &cancel, &closed, None).await;
        assert!(!touched.is_error, "{}", touched.output);
        let got = tokio::time::timeout(Duration::from_secs(5), hear.recv()).await;
        assert_eq!(got.unwrap().as_deref(), Some("era://note"), "{protocol}");
        drop(sub);
        // The unsubscribe runs in the background; closing waits for nothing it sends.
        let methods = || -> Vec<String> {
            std::fs::read_to_string(&log)
                .unwrap_or_default()
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .filter_map(|m| m["method"].as_str().map(str::to_string))
                .collect()
        };
        if let Some(unsubscribe) = unsubscribe {
            let deadline = std::time::Instant::now() + Duration::from_secs(5);
            while !methods().iter().any(|m| m == unsubscribe) {
                assert!(std::time::Instant::now() < deadline, "{:?}", methods());
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
        let seen = methods();
        assert!(seen.iter().any(|m| m == subscribe), "{protocol}: {seen:?}");
        let other = if subscribe == "resources/subscribe" {
            "subscriptions/listen"
        } else {
            "resources/subscribe"
        };
        assert!(!seen.iter().any(|m| m == other), "{protocol}: {seen:?}");
        session.close().await;
        let _ = std::fs::remove_file(&log);
    }
}

/// `notifications/resources/list_changed` re-lists the server's resources (and templates):
/// the hook hears the new list, the surface generation moves on, and the tools are left alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resource_list_change_is_followed() {
    let session = everything().await;
    let live = session.server("everything").unwrap().clone();
    let (heard, mut hear) = tokio::sync::mpsc::unbounded_channel::<(String, Kind, usize)>();
    let hook: super::follow::SurfaceHook = Arc::new(
        move |server: &str, kind: Kind, listed: &crate::surface::Listed| {
            let _ = heard.send((server.to_string(), kind, listed.items.len()));
        },
    );
    let tools_heard = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = tools_heard.clone();
    let tools: super::follow::ToolsHook =
        Arc::new(move |_: &str, _: &[crate::connect::tool_info::ToolInfo]| {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        });
    session.follow_changes(Some(tools), Some(hook));
    assert_eq!(session.surface_generation(), 0);
    let (cancel, closed) = (CancellationToken::new(), CancellationToken::new());
    let args = Map::from_iter([
        ("name".to_string(), json!("hi.gz")),
        ("data".to_string(), json!("data:text/plain;base64,aGk=")),
    ]);
    let zipped = live
        .call("gzip-file-as-resource", args, None, &cancel, &closed, None)
        .await;
    assert!(!zipped.is_error, "{}", zipped.output);
    let got = tokio::time::timeout(Duration::from_secs(5), hear.recv()).await;
    assert_eq!(
        got.unwrap(),
        Some(("everything".to_string(), Kind::Resources, 8))
    );
    assert_eq!(session.surface_generation(), 1);
    let resources = live.surface().resources;
    assert!(resources.items.iter().any(|r| r["name"] == "hi.gz"));
    assert_eq!(
        live.surface().templates.items.len(),
        2,
        "templates unchanged"
    );
    assert_eq!(tools_heard.load(std::sync::atomic::Ordering::SeqCst), 0);
    session.close().await;
}

/// Listings keep their caching hints; one whose TTL ran out is re-listed when asked to be.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_listing_is_refreshed() {
    let script = format!("{ROOT}/__test__/fixtures/surface-server.mjs");
    let config =
        json!({"mcpServers": {"s": {"command": "node", "args": [script, "--ttl", "200"]}}});
    let config = crate::config::load(crate::config::ConfigInput::Value(config)).unwrap();
    let loaded = inventory::load_all(&config, &CancellationToken::new(), None, |_| {
        ClientSide::default()
    })
    .await
    .unwrap_or_else(|_| panic!("interrupted"));
    let session = Arc::new(loaded.session);
    let live = session.server("s").unwrap().clone();
    let public = crate::surface::Hints {
        ttl_ms: Some(200),
        scope: Some(rmcp::model::CacheScope::Public),
    };
    assert_eq!(live.tool_hints(), public);
    let listed = live.surface();
    // The kinds it lists (no skills: it does not offer the extension).
    for kind in [Kind::Resources, Kind::ResourceTemplates, Kind::Prompts] {
        assert_eq!(listed.get(kind).hints, public, "{kind:?}");
    }
    session.follow_changes(None, None);
    // Fresh: nothing to do.
    live.refresh_if_stale(Some(Kind::Resources));
    let first = live.surface().resources.at.unwrap();
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert!(live.surface().resources.expired());
    live.refresh_if_stale(Some(Kind::Resources));
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while live.surface().resources.expired() {
        assert!(std::time::Instant::now() < deadline, "never re-listed");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(live.surface().resources.at.unwrap() > first);
    assert_eq!(
        session.surface_generation(),
        0,
        "the same list is no change"
    );
    let refused = live
        .subscribe("surface://r0/0", Arc::new(|_: &str| {}))
        .await
        .err();
    assert_eq!(
        refused.unwrap().message,
        "server \"s\" does not support resource subscriptions"
    );
    session.close().await;
}

/// A server that sends an update right after answering `resources/subscribe`: the listener
/// hears it (it listens before the subscribe is sent).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_right_after_the_subscribe_answer_is_heard() {
    let script = format!("{ROOT}/__test__/fixtures/eager-update-server.mjs");
    let config =
        json!({"mcpServers": {"eager": {"command": "node", "args": [script], "timeout": 20000}}});
    let config = crate::config::load(crate::config::ConfigInput::Value(config)).unwrap();
    let loaded = inventory::load_all(&config, &CancellationToken::new(), None, |_| {
        ClientSide::default()
    })
    .await
    .unwrap_or_else(|_| panic!("interrupted"));
    assert_eq!(loaded.servers[0].error, None);
    let session = Arc::new(loaded.session);
    let live = session.server("eager").unwrap().clone();
    let (heard, mut hear) = tokio::sync::mpsc::unbounded_channel::<String>();
    let listener: crate::connect::updates::UpdateListener = Arc::new(move |uri: &str| {
        let _ = heard.send(uri.to_string());
    });
    let sub = live.subscribe("eager://note", listener).await.unwrap();
    let got = tokio::time::timeout(Duration::from_secs(5), hear.recv()).await;
    assert_eq!(got.unwrap().as_deref(), Some("eager://note"));
    drop(sub);
    session.close().await;
}
