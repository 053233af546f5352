//! 2026-07-28 input-required rounds, with rmcp's modern client on the other end of a pipe: the
//! retried call resumes the same run, and parked runs are bounded in number and in time.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, ElicitationCapability, ErrorData, Implementation,
    ProtocolVersion,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, RequestContext, RoleClient, RunningService,
};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

use super::*;

/// A client that can be asked: it answers every elicitation with the name "Ada".
#[derive(Clone)]
struct Answering;

impl rmcp::ClientHandler for Answering {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = Some(ElicitationCapability::new());
        ClientConfig::new(capabilities, Implementation::new("t", "1"))
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({"name": "Ada"})))
    }
}

/// Asks twice, one round each; counts its starts and tells when a run was dropped unfinished.
struct Asker {
    started: Arc<AtomicUsize>,
    dropped: mpsc::UnboundedSender<()>,
}

struct NotifyOnDrop(mpsc::UnboundedSender<()>);

impl Drop for NotifyOnDrop {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

impl ToolCaller for Asker {
    fn call(&self, _: Map<String, Value>, ctx: CallContext) -> BoxFuture<'static, CallResult> {
        self.started.fetch_add(1, Ordering::SeqCst);
        let guard = NotifyOnDrop(self.dropped.clone());
        async move {
            let ask = json!({"message": "Name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}});
            let first = ctx.elicit(ask.clone()).await.map_err(|e| e.to_string())?;
            let second = ctx.elicit(ask).await.map_err(|e| e.to_string())?;
            std::mem::forget(guard); // finished: not a drop of an unfinished run
            let name = |v: &Value| v["content"]["name"].as_str().unwrap_or("?").to_string();
            Ok::<_, String>(Value::String(format!("{} and {}", name(&first), name(&second))))
        }
        .map(|r: Result<Value, String>| r.unwrap_or_else(|e| json!({"content": [{"type": "text", "text": e}], "isError": true})))
        .boxed()
    }
}

async fn modern(server: ToolServer) -> RunningService<RoleClient, Answering> {
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server_io);
    tokio::spawn(stdio::serve_lines(server, server_read, server_write));
    Answering
        .serve_with_lifecycle(
            tokio::io::split(client_io),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .unwrap()
}

fn asker_server(
    limits: rounds::Limits,
) -> (ToolServer, Arc<AtomicUsize>, mpsc::UnboundedReceiver<()>) {
    let started = Arc::new(AtomicUsize::new(0));
    let (drops, dropped) = mpsc::unbounded_channel();
    let caller = Asker {
        started: started.clone(),
        dropped: drops,
    };
    let tool = ServedTool {
        name: "ask".into(),
        description: "asks twice".into(),
        input_schema: super::object_schema(json!({"type": "object"})),
        extras: Map::new(),
        source: "native".into(),
        caller: Arc::new(caller),
    };
    let server = ToolServer::builder(ServerIdentity::default(), vec![tool])
        .input_limits(limits)
        .build();
    (server, started, dropped)
}

#[tokio::test]
async fn a_retried_call_resumes_the_same_run() {
    let (server, started, _) = asker_server(rounds::Limits::default());
    let client = modern(server.clone()).await;
    // rmcp's client drives the rounds: two input-required results, then the result.
    let result = client
        .call_tool(CallToolRequestParams::new("ask"))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&result.content).unwrap(),
        json!([{"type": "text", "text": "Ada and Ada"}])
    );
    assert_eq!(
        started.load(Ordering::SeqCst),
        1,
        "one run for all three requests"
    );
    assert_eq!(server.parked(), 0);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn parked_runs_are_bounded_in_number_and_in_time() {
    let limits = rounds::Limits {
        max: 1,
        timeout: Duration::from_millis(200),
    };
    let (server, _, mut dropped) = asker_server(limits);
    let client = modern(server.clone()).await;
    let first = client
        .peer()
        .call_tool_once(CallToolRequestParams::new("ask"))
        .await
        .unwrap();
    let CallToolResponse::InputRequired(first) = first else {
        panic!("expected an input-required result")
    };
    let requests = serde_json::to_value(&first.input_requests).unwrap();
    assert_eq!(requests["elicitation-1"]["method"], "elicitation/create");
    assert_eq!(server.parked(), 1);

    // One slot: a second call that would wait is refused with a reason.
    let second = client
        .peer()
        .call_tool_once(CallToolRequestParams::new("ask"))
        .await
        .unwrap();
    let CallToolResponse::Complete(second) = second else {
        panic!("expected a refusal")
    };
    assert_eq!(second.is_error, Some(true));
    assert_eq!(
        serde_json::to_value(&second.content).unwrap()[0]["text"],
        "1 calls are already waiting for their clients' input; try again later"
    );

    // The refused call's run was dropped at once.
    let bound = Duration::from_secs(10);
    tokio::time::timeout(bound, dropped.recv()).await.unwrap();
    assert_eq!(server.parked(), 1);

    // Never retried: the run is dropped when its time is up, and its state names nothing.
    tokio::time::timeout(bound, dropped.recv()).await.unwrap();
    assert_eq!(server.parked(), 0);
    let mut retry = CallToolRequestParams::new("ask");
    retry.request_state = first.request_state.clone();
    retry.input_responses = Some(
        [(
            "elicitation-1".to_string(),
            json!({"action": "accept", "content": {"name": "Ada"}}),
        )]
        .into(),
    );
    let late = client.peer().call_tool_once(retry).await.unwrap_err();
    assert!(
        late.to_string().contains(
            "requestState is not one this server issued, or its call waited too long and ended"
        ),
        "{late}"
    );
    client.cancel().await.unwrap();
}
