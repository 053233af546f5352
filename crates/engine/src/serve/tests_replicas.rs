//! 2026-07-28 rounds across replicas: two endpoints sharing a state key continue each other's
//! calls (a retry that reaches the replica without the parked run runs it again with the
//! answers so far), and a state changed, sealed with another key, or of other arguments is
//! refused with -32602.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Map, Value, json};

use super::http::{ServeHandle, ServeOptions, serve_http};
use super::seal::StateKey;
use super::*;

/// Asks for two names, one round each, and counts its starts.
struct TwoNames(Arc<AtomicUsize>);

impl ToolCaller for TwoNames {
    fn call(&self, args: Map<String, Value>, ctx: CallContext) -> BoxFuture<'static, CallResult> {
        self.0.fetch_add(1, Ordering::SeqCst);
        async move {
            let ask = json!({"message": "Name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}});
            let name = |v: &Value| v["content"]["name"].as_str().unwrap_or("?").to_string();
            let first = ctx.elicit(ask.clone()).await.map_err(|e| e.to_string());
            let second = ctx.elicit(ask).await.map_err(|e| e.to_string());
            let text = match (first, second) {
                (Ok(a), Ok(b)) => format!("{} and {} ({})", name(&a), name(&b), args["n"]),
                (Err(e), _) | (_, Err(e)) => e,
            };
            json!({"content": [{"type": "text", "text": text}]})
        }
        .boxed()
    }
}

async fn replica(key: &str) -> (ServeHandle, Arc<AtomicUsize>) {
    replica_with(key, rounds::Limits::default()).await
}

async fn replica_with(key: &str, limits: rounds::Limits) -> (ServeHandle, Arc<AtomicUsize>) {
    replica_in(key, limits, None).await
}

async fn replica_in(
    key: &str,
    limits: rounds::Limits,
    store: Option<Arc<dyn super::store::StateStore>>,
) -> (ServeHandle, Arc<AtomicUsize>) {
    let started = Arc::new(AtomicUsize::new(0));
    let tool = ServedTool {
        name: "names".into(),
        description: "asks twice".into(),
        input_schema: object_schema(json!({"type": "object"})),
        extras: Map::new(),
        source: "native".into(),
        caller: Arc::new(TwoNames(started.clone())),
    };
    let server = ToolServer::builder(ServerIdentity::default(), vec![tool])
        .input_limits(limits)
        .build();
    let options = ServeOptions {
        state_key: Some(Arc::new(StateKey::new(&[key.as_bytes().to_vec()]).unwrap())),
        state_store: store,
        ..Default::default()
    };
    (
        serve_http("127.0.0.1:0", server, options).await.unwrap(),
        started,
    )
}

/// One 2026-07-28 `tools/call` of `names` (with `extra` params), answered as JSON-RPC.
async fn call(handle: &ServeHandle, extra: Value) -> Value {
    let mut params = json!({
        "name": "names",
        "arguments": {"n": 7},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        },
    });
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let text = reqwest::Client::new()
        .post(format!("{}/mcp", handle.url()))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "names")
        .body(body.to_string())
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let last = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .rfind(|l| !l.trim().is_empty())
        .map(str::to_string);
    serde_json::from_str(&last.unwrap_or(text)).unwrap()
}

fn answer(key: &str, name: &str) -> Value {
    json!({key: {"action": "accept", "content": {"name": name}}})
}

#[tokio::test]
async fn a_round_continues_on_whichever_replica_its_retry_reaches() {
    const KEY: &str = "a shared key of thirty-two bytes";
    let ((a, started_a), (b, started_b)) = (replica(KEY).await, replica(KEY).await);
    let first = call(&a, json!({})).await["result"].clone();
    assert_eq!(first["resultType"], "input_required");
    assert!(
        first["inputRequests"]["elicitation-1"].is_object(),
        "{first}"
    );
    let state = first["requestState"].as_str().unwrap().to_string();
    // B has no parked run: it runs the call again, answers the first question from the retry,
    // and asks the second.
    let second = call(
        &b,
        json!({"requestState": state, "inputResponses": answer("elicitation-1", "Ada")}),
    )
    .await["result"]
        .clone();
    assert_eq!(second["resultType"], "input_required", "{second}");
    assert!(
        second["inputRequests"]["elicitation-2"].is_object(),
        "{second}"
    );
    assert!(second["inputRequests"].get("elicitation-1").is_none());
    let state2 = second["requestState"].as_str().unwrap().to_string();
    // Back on A, which holds only the first round's run: the sealed state carries Ada.
    let done = call(
        &a,
        json!({"requestState": state2, "inputResponses": answer("elicitation-2", "Bob")}),
    )
    .await["result"]
        .clone();
    assert_eq!(
        done["content"],
        json!([{"type": "text", "text": "Ada and Bob (7)"}]),
        "{done}"
    );
    assert_eq!(started_a.load(Ordering::SeqCst), 2);
    assert_eq!(started_b.load(Ordering::SeqCst), 1);

    // The parked run on the same replica is still used when it is there.
    let first = call(&b, json!({})).await["result"].clone();
    let state = first["requestState"].as_str().unwrap().to_string();
    let before = started_b.load(Ordering::SeqCst);
    let second = call(
        &b,
        json!({"requestState": state, "inputResponses": answer("elicitation-1", "Cy")}),
    )
    .await["result"]
        .clone();
    assert_eq!(second["resultType"], "input_required");
    assert_eq!(
        started_b.load(Ordering::SeqCst),
        before,
        "resumed, not run again"
    );
    a.stop().await;
    b.stop().await;
}

#[tokio::test]
async fn a_changed_foreign_or_misdirected_state_is_refused() {
    let (a, _) = replica("a shared key of thirty-two bytes").await;
    let (other, _) = replica("some other key, also long enough").await;
    let first = call(&a, json!({})).await["result"].clone();
    let state = first["requestState"].as_str().unwrap().to_string();
    let not_issued =
        "requestState is not one this server issued, or its call waited too long and ended";
    let mut flipped = state.clone().into_bytes();
    let i = flipped.len() / 2;
    flipped[i] = if flipped[i] == b'A' { b'B' } else { b'A' };
    let flipped = String::from_utf8(flipped).unwrap();
    let responses = answer("elicitation-1", "Ada");
    for (to, state) in [(&a, flipped.as_str()), (&other, state.as_str())] {
        let refused = call(
            to,
            json!({"requestState": state, "inputResponses": responses}),
        )
        .await;
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
        assert_eq!(refused["error"]["message"], not_issued);
    }
    let mut params = json!({"requestState": state, "inputResponses": responses});
    params["arguments"] = json!({"n": 8});
    let refused = call(&a, params).await;
    assert_eq!(refused["error"]["code"], -32602);
    assert_eq!(
        refused["error"]["message"],
        "requestState belongs to a call with other arguments: a retry must repeat the call's arguments"
    );
    // Unchanged, it is taken.
    let next = call(
        &a,
        json!({"requestState": state, "inputResponses": responses}),
    )
    .await;
    assert_eq!(next["result"]["resultType"], "input_required", "{next}");
    a.stop().await;
    other.stop().await;
}

#[tokio::test]
async fn an_expired_state_is_refused() {
    const KEY: &str = "a shared key of thirty-two bytes";
    let limits = rounds::Limits {
        max: 8,
        timeout: std::time::Duration::from_millis(300),
    };
    let (a, _) = replica_with(KEY, limits).await;
    let (b, started_b) = replica_with(KEY, limits).await;
    let first = call(&a, json!({})).await["result"].clone();
    let state = first["requestState"].as_str().unwrap().to_string();
    // Past its expiry (the state says when; the clock is what is waited on).
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    let responses = answer("elicitation-1", "Ada");
    for to in [&a, &b] {
        let refused = call(
            to,
            json!({"requestState": state, "inputResponses": responses}),
        )
        .await;
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
        assert_eq!(
            refused["error"]["message"],
            "requestState has expired: make the call again"
        );
    }
    assert_eq!(started_b.load(Ordering::SeqCst), 0, "nothing ran again");
    a.stop().await;
    b.stop().await;
}

#[tokio::test]
async fn a_replayed_retry_runs_at_most_once_per_replica() {
    const KEY: &str = "a shared key of thirty-two bytes";
    let ((a, started_a), (b, started_b)) = (replica(KEY).await, replica(KEY).await);
    let first = call(&a, json!({})).await["result"].clone();
    let state = first["requestState"].as_str().unwrap().to_string();
    let second = call(
        &a,
        json!({"requestState": state, "inputResponses": answer("elicitation-1", "Ada")}),
    )
    .await["result"]
        .clone();
    let state2 = second["requestState"].as_str().unwrap().to_string();
    let last = json!({"requestState": state2, "inputResponses": answer("elicitation-2", "Bob")});
    let done = call(&a, last.clone()).await["result"].clone();
    assert_eq!(
        done["content"],
        json!([{"type": "text", "text": "Ada and Bob (7)"}])
    );
    assert_eq!(started_a.load(Ordering::SeqCst), 1);
    // The last retry sent again, and an earlier round's: refused, the run not started again.
    let replayed = json!({"requestState": state, "inputResponses": answer("elicitation-1", "Ada")});
    for again in [last.clone(), replayed] {
        let refused = call(&a, again).await;
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
        assert_eq!(
            refused["error"]["message"],
            "requestState was already retried: its call went on from there (each state is \
             answered once); make the call again"
        );
    }
    assert_eq!(started_a.load(Ordering::SeqCst), 1, "a replay never runs");
    // Once per replica: another replica sharing the key has no record of it (the fleet's
    // shared store is what makes it once per fleet), and runs it once, then refuses it too.
    let elsewhere = call(&b, last.clone()).await["result"].clone();
    assert_eq!(
        elsewhere["content"],
        json!([{"type": "text", "text": "Ada and Bob (7)"}])
    );
    assert_eq!(call(&b, last).await["error"]["code"], -32602);
    assert_eq!(started_b.load(Ordering::SeqCst), 1);
    a.stop().await;
    b.stop().await;
}

/// Runs the call's rounds on `a`, its last retry then sent to each replica: it runs once across
/// the fleet. Returns the last retry.
async fn once_per_fleet(replicas: &[(ServeHandle, Arc<AtomicUsize>)]) -> Value {
    let a = &replicas[0].0;
    let first = call(a, json!({})).await["result"].clone();
    let state = first["requestState"].as_str().unwrap().to_string();
    let second = call(
        a,
        json!({"requestState": state, "inputResponses": answer("elicitation-1", "Ada")}),
    )
    .await["result"]
        .clone();
    let state2 = second["requestState"].as_str().unwrap().to_string();
    let last = json!({"requestState": state2, "inputResponses": answer("elicitation-2", "Bob")});
    // The last retry lands first on the replica without the run: it runs the call again there.
    let done = call(&replicas[1].0, last.clone()).await["result"].clone();
    assert_eq!(
        done["content"],
        json!([{"type": "text", "text": "Ada and Bob (7)"}])
    );
    for (replica, _) in replicas {
        let refused = call(replica, last.clone()).await;
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
    }
    let runs: usize = replicas.iter().map(|(_, n)| n.load(Ordering::SeqCst)).sum();
    assert_eq!(
        runs, 2,
        "the first run, and the last retry's once across the fleet"
    );
    last
}

#[tokio::test]
async fn a_replayed_retry_runs_once_per_fleet_with_a_shared_store() {
    const KEY: &str = "a shared key of thirty-two bytes";
    let store: Arc<dyn super::store::StateStore> = Arc::new(super::store::MemoryStore::default());
    let limits = rounds::Limits::default();
    let replicas = vec![
        replica_in(KEY, limits, Some(store.clone())).await,
        replica_in(KEY, limits, Some(store.clone())).await,
        replica_in(KEY, limits, Some(store)).await,
    ];
    once_per_fleet(&replicas).await;
    for (replica, _) in replicas {
        replica.stop().await;
    }
}

/// Against a real Redis when `TOOLNEXUS_TEST_REDIS_URL` names one (skipped otherwise); then
/// against one that is not there: the retry fails in words, and is not spent.
#[tokio::test]
async fn a_replayed_retry_runs_once_per_fleet_over_redis() {
    const KEY: &str = "a shared key of thirty-two bytes";
    let limits = rounds::Limits::default();
    if let Ok(url) = std::env::var("TOOLNEXUS_TEST_REDIS_URL") {
        let key = Arc::new(StateKey::new(&[KEY.as_bytes().to_vec()]).unwrap());
        let mut replicas = Vec::new();
        for _ in 0..3 {
            let store = super::store_redis::connect(&url, key.clone()).unwrap();
            replicas.push(replica_in(KEY, limits, Some(store)).await);
        }
        once_per_fleet(&replicas).await;
        for (replica, _) in replicas {
            replica.stop().await;
        }
    }
    // No Redis: a port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let key = Arc::new(StateKey::new(&[KEY.as_bytes().to_vec()]).unwrap());
    let down = super::store_redis::connect(&format!("redis://127.0.0.1:{port}"), key).unwrap();
    let (a, started) = replica_in(KEY, limits, None).await;
    let (b, started_b) = replica_in(KEY, limits, Some(down)).await;
    let first = call(&a, json!({})).await["result"].clone();
    let state = first["requestState"].as_str().unwrap().to_string();
    let retry = json!({"requestState": state, "inputResponses": answer("elicitation-1", "Ada")});
    for _ in 0..2 {
        let failed = call(&b, retry.clone()).await;
        assert_eq!(failed["error"]["code"], -32603, "{failed}");
        let words = failed["error"]["message"].as_str().unwrap();
        assert!(
            words.starts_with(&format!(
                "requestState could not be checked against the state store (redis://127.0.0.1:{port}: "
            )) && words.ends_with("); retry with the same requestState"),
            "{words}"
        );
    }
    assert_eq!(started_b.load(Ordering::SeqCst), 0, "nothing ran");
    // Not spent by the failures: the replica without the store still takes it.
    let second = call(&a, retry).await["result"].clone();
    assert!(second["requestState"].is_string(), "{second}");
    assert_eq!(started.load(Ordering::SeqCst), 1);
    a.stop().await;
    b.stop().await;
}
