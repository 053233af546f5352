//! Two replicas sharing a state key, driven over HTTP as a handshake-era client would: a session
//! opened on one goes on on the other, ids that do not open are unknown sessions, and a
//! client's answer to an elicitation that reaches the other replica is forwarded.

use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Map, Value, json};

use crate::serve::http::{ServeHandle, ServeOptions, serve_http};
use crate::serve::seal::StateKey;
use crate::serve::{CallContext, CallResult, ServedTool, ServerIdentity, ToolCaller, ToolServer};

pub(super) const KEY: &str = "0123456789abcdef0123456789abcdef";
pub(super) const VERSION: &str = "2025-06-18";

struct Asker;

impl ToolCaller for Asker {
    fn call(&self, _: Map<String, Value>, ctx: CallContext) -> BoxFuture<'static, CallResult> {
        async move {
            let ask = json!({"message": "Name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}});
            let text = match ctx.elicit(ask).await {
                Ok(answer) => answer["content"]["name"].as_str().unwrap_or("?").to_string(),
                Err(e) => format!("failed: {e}"),
            };
            json!({"content": [{"type": "text", "text": text}]})
        }
        .boxed()
    }
}

fn tools() -> Vec<ServedTool> {
    let tool = |name: &str, caller: Arc<dyn ToolCaller>| ServedTool {
        name: name.into(),
        description: name.into(),
        input_schema: crate::serve::object_schema(json!({"type": "object"})),
        extras: Map::new(),
        source: "native".into(),
        caller,
    };
    let hello = |_: Map<String, Value>| -> BoxFuture<'static, CallResult> {
        async { json!({"content": [{"type": "text", "text": "hello"}]}) }.boxed()
    };
    vec![tool("ask", Arc::new(Asker)), tool("hello", Arc::new(hello))]
}

async fn replica(key: &str) -> ServeHandle {
    let server = ToolServer::new(ServerIdentity::default(), tools(), None);
    let options = ServeOptions {
        state_key: Some(Arc::new(StateKey::new(&[key.as_bytes().to_vec()]).unwrap())),
        ..Default::default()
    };
    serve_http("127.0.0.1:0", server, options).await.unwrap()
}

fn post(
    replica: &ServeHandle,
    session: Option<&str>,
    body: &Value,
    accept: &str,
) -> reqwest::RequestBuilder {
    let mut request = reqwest::Client::new()
        .post(format!("{}/mcp", replica.url()))
        .header("content-type", "application/json")
        .header("accept", accept)
        .body(body.to_string());
    if let Some(session) = session {
        request = request
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", VERSION);
    }
    request
}

const JSON_FIRST: &str = "application/json, text/event-stream";

/// Opens a session on `replica` as a client with `capabilities`: its sealed id.
async fn open(replica: &ServeHandle, capabilities: Value) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": capabilities,
        "clientInfo": {"name": "t", "version": "1"}}});
    let reply = post(replica, None, &init, JSON_FIRST).send().await.unwrap();
    assert_eq!(reply.status(), 200);
    let id = reply.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    let _ = reply.text().await.unwrap();
    id
}

async fn initialized(replica: &ServeHandle, session: &str) -> u16 {
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    post(replica, Some(session), &note, JSON_FIRST)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// The JSON-RPC messages of an SSE or JSON body.
fn messages(body: &str) -> Vec<Value> {
    if let Ok(value) = serde_json::from_str::<Value>(body) {
        return vec![value];
    }
    body.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str(data.trim()).ok())
        .collect()
}

/// The next JSON-RPC message of an SSE response being read.
async fn next_message(reply: &mut reqwest::Response, buffer: &mut String) -> Value {
    loop {
        if let Some(end) = buffer.find("\n\n") {
            let event: String = buffer.drain(..end + 2).collect();
            if let Some(message) = messages(&event).pop() {
                return message;
            }
            continue;
        }
        let chunk = tokio::time::timeout(std::time::Duration::from_secs(10), reply.chunk())
            .await
            .expect("a message in time")
            .unwrap()
            .expect("the stream goes on");
        buffer.push_str(&String::from_utf8_lossy(&chunk));
    }
}

#[tokio::test]
async fn a_session_opened_on_one_replica_goes_on_on_another() {
    let (a, b) = (replica(KEY).await, replica(KEY).await);
    let session = open(&a, json!({})).await;
    assert!(session.len() > 60, "sealed, not a local id: {session}");
    assert_eq!(initialized(&b, &session).await, 202);
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let reply = post(&b, Some(&session), &list, JSON_FIRST)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);
    let listed = messages(&reply.text().await.unwrap());
    let names: Vec<&str> = listed[0]["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["ask", "hello"]);
    // A plain call still takes the direct road (JSON) on either replica.
    for replica in [&a, &b] {
        let call =
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "hello"}});
        let reply = post(replica, Some(&session), &call, JSON_FIRST)
            .send()
            .await
            .unwrap();
        assert_eq!(reply.status(), 200);
        assert_eq!(
            reply.headers()["content-type"],
            "application/json",
            "the direct road"
        );
        let answer = messages(&reply.text().await.unwrap());
        assert_eq!(answer[0]["result"]["content"][0]["text"], "hello");
    }
    // DELETE ends it here; the other replica still accepts the id (documented).
    let deleted = reqwest::Client::new()
        .delete(format!("{}/mcp", a.url()))
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", VERSION)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 200);
    let reply = post(&a, Some(&session), &list, JSON_FIRST)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 404);
    let reply = post(&b, Some(&session), &list, JSON_FIRST)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);
    a.stop().await;
    b.stop().await;
}

#[tokio::test]
async fn ids_that_do_not_open_are_unknown_sessions() {
    let (a, other) = (
        replica(KEY).await,
        replica("another key of thirty-two bytes!").await,
    );
    let session = open(&a, json!({})).await;
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let mut tampered = session.clone().into_bytes();
    let at = tampered.len() / 2;
    tampered[at] = if tampered[at] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    let foreign = open(&other, json!({})).await;
    for id in [tampered.as_str(), foreign.as_str(), "not-a-sealed-id"] {
        let reply = post(&a, Some(id), &list, JSON_FIRST).send().await.unwrap();
        assert_eq!(reply.status(), 404, "{id}");
    }
    let reply = post(&a, Some(&session), &list, JSON_FIRST)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);
    a.stop().await;
    other.stop().await;
}

#[tokio::test]
async fn an_expired_id_is_an_unknown_session() {
    let key = Arc::new(StateKey::new(&[KEY.as_bytes().to_vec()]).unwrap());
    let portable = super::Portable::new(key.clone(), "http://127.0.0.1:1");
    let old = super::SealedSession {
        local: "x".into(),
        params: serde_json::from_value(json!({"protocolVersion": VERSION, "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}))
        .unwrap(),
        owner: None,
        issued: crate::serve::seal::now_secs() - 2,
    };
    let sealed = key.seal_json(crate::serve::seal::Purpose::Session, &old);
    let mut headers = http::HeaderMap::new();
    headers.insert("mcp-session-id", sealed.parse().unwrap());
    let expiring = portable.with_lifetime(std::time::Duration::from_secs(1));
    assert!(matches!(
        expiring.inbound(&mut headers.clone(), None),
        super::Inbound::Refused(reply) if reply.status() == 404
    ));
    let portable = super::Portable::new(key.clone(), "http://127.0.0.1:1");
    assert!(matches!(
        portable.inbound(&mut headers, None),
        super::Inbound::Local { local, renewed: None } if local == "x"
    ));
    assert_eq!(headers["mcp-session-id"], "x");
    // Owned by a principal: another is refused (403), as the gate refuses a session's owner.
    let owned = super::SealedSession {
        owner: Some("issuer alice".into()),
        issued: crate::serve::seal::now_secs(),
        ..old
    };
    let mut headers = http::HeaderMap::new();
    let sealed = key.seal_json(crate::serve::seal::Purpose::Session, &owned);
    headers.insert("mcp-session-id", sealed.parse().unwrap());
    assert!(matches!(
        portable.inbound(&mut headers.clone(), Some("issuer bob")),
        super::Inbound::Refused(reply) if reply.status() == 403
    ));
    assert!(matches!(
        portable.inbound(&mut headers, Some("issuer alice")),
        super::Inbound::Local { .. }
    ));
}

#[tokio::test]
async fn an_answer_that_reaches_another_replica_is_forwarded() {
    let (a, b) = (replica(KEY).await, replica(KEY).await);
    let session = open(&a, json!({"elicitation": {}})).await;
    assert_eq!(initialized(&b, &session).await, 202);
    let call =
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "ask"}});
    // The call goes to b (which restores the session), the answer to a, which forwards it.
    let mut reply = post(&b, Some(&session), &call, JSON_FIRST)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);
    let mut buffer = String::new();
    let ask = next_message(&mut reply, &mut buffer).await;
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    let id = ask["id"].as_str().expect("a sealed string id").to_string();
    assert!(id.len() > 40, "{id}");
    let answer = json!({"jsonrpc": "2.0", "id": id, "result": {"action": "accept", "content": {"name": "Ada"}}});
    let sent = post(&a, Some(&session), &answer, JSON_FIRST)
        .send()
        .await
        .unwrap();
    assert_eq!(sent.status(), 202);
    let result = next_message(&mut reply, &mut buffer).await;
    assert_eq!(result["id"], 7);
    assert_eq!(result["result"]["content"][0]["text"], "Ada", "{result}");
    // An answer whose id does not open is dropped (accepted, as an unknown one is).
    let stray = json!({"jsonrpc": "2.0", "id": "nonsense", "result": {}});
    let sent = post(&a, Some(&session), &stray, JSON_FIRST)
        .send()
        .await
        .unwrap();
    assert_eq!(sent.status(), 202);
    a.stop().await;
    b.stop().await;
}
