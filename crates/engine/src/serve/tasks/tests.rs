//! The task engine behind a served tool, with rmcp's 2026-07-28 client (declaring the tasks
//! extension) on the other end of a pipe.

use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig,
    GetTaskParams, Implementation, ProtocolVersion, TaskPayload, TaskStatus,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

use crate::serve::tasks::Limits;
use crate::serve::{CallContext, CallResult, ServedTool, ServerIdentity, ToolCaller, ToolServer};

#[derive(Clone)]
pub(super) struct TaskClient;

impl rmcp::ClientHandler for TaskClient {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_tasks().build(),
            Implementation::new("t", "1"),
        )
    }
}

/// What a test tool does: answer at once, wait until dropped, report an error, or fail.
#[derive(Clone, Copy)]
pub(super) enum Act {
    Answer,
    Hang,
    ToolError,
    Throw,
    /// Asks to become a task partway (`ctx.startTask()`), twice, then answers what it heard.
    Defer,
}

struct Tool {
    act: Act,
    dropped: mpsc::UnboundedSender<()>,
}

struct NotifyOnDrop(mpsc::UnboundedSender<()>);

impl Drop for NotifyOnDrop {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

fn text(text: &str, is_error: bool) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": is_error})
}

impl ToolCaller for Tool {
    fn defers_task(&self) -> bool {
        matches!(self.act, Act::Defer)
    }

    fn call(&self, _: Map<String, Value>, ctx: CallContext) -> BoxFuture<'static, CallResult> {
        let (act, guard) = (self.act, NotifyOnDrop(self.dropped.clone()));
        async move {
            let _guard = guard;
            match act {
                Act::Answer => text("done", false),
                Act::Hang => std::future::pending().await,
                Act::ToolError => text("the tool said no", true),
                Act::Throw => {
                    ctx.fail("it broke");
                    text("it broke", true)
                }
                Act::Defer => {
                    let became = ctx.start_task().await;
                    let again = ctx.start_task().await;
                    text(&format!("became a task: {became}; again: {again}"), false)
                }
            }
        }
        .boxed()
    }
}

pub(super) fn serve_job(act: Act, limits: Limits) -> (ToolServer, mpsc::UnboundedReceiver<()>) {
    let (drops, dropped) = mpsc::unbounded_channel();
    let mut extras = Map::new();
    extras.insert("execution".into(), json!({"taskSupport": "required"}));
    let tool = ServedTool {
        name: "job".into(),
        description: "a job".into(),
        input_schema: crate::serve::object_schema(json!({"type": "object"})),
        extras,
        source: "native".into(),
        caller: Arc::new(Tool {
            act,
            dropped: drops,
        }),
    };
    let server = ToolServer::builder(ServerIdentity::default(), vec![tool])
        .task_limits(limits)
        .build();
    (server, dropped)
}

pub(super) async fn connect(server: ToolServer) -> RunningService<RoleClient, TaskClient> {
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server_io);
    tokio::spawn(crate::serve::stdio::serve_lines(
        server,
        server_read,
        server_write,
    ));
    TaskClient
        .serve_with_lifecycle(
            tokio::io::split(client_io),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .unwrap()
}

pub(super) async fn start(client: &RunningService<RoleClient, TaskClient>) -> String {
    match client
        .peer()
        .call_tool_once(CallToolRequestParams::new("job"))
        .await
        .unwrap()
    {
        CallToolResponse::Task(created) => created.task.task_id,
        other => panic!("expected a task, got {other:?}"),
    }
}

/// Polls the task until it ended (bounded).
pub(super) async fn ended(
    client: &RunningService<RoleClient, TaskClient>,
    id: &str,
) -> rmcp::model::DetailedTask {
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let got = client
                .peer()
                .get_task(GetTaskParams::new(id))
                .await
                .unwrap();
            if got.task.status().is_terminal() {
                return got.task;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the task ended")
}

#[tokio::test]
async fn a_task_completes_and_tasks_get_inlines_its_result() {
    let (server, _) = serve_job(Act::Answer, Limits::default());
    let client = connect(server.clone()).await;
    let id = start(&client).await;
    assert_eq!(id.len(), 32, "128 random bits, hex");
    let done = ended(&client, &id).await;
    assert_eq!(done.status(), TaskStatus::Completed);
    let TaskPayload::Completed { result } = done.payload else {
        panic!("completed")
    };
    assert_eq!(result["content"], json!([{"type": "text", "text": "done"}]));
    assert_eq!(done.task.ttl_ms, Some(600_000));
    assert_eq!(done.task.poll_interval_ms, Some(500));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_error_result_completes_a_task_and_a_failure_fails_it() {
    let (server, _) = serve_job(Act::ToolError, Limits::default());
    let client = connect(server).await;
    let id = start(&client).await;
    let done = ended(&client, &id).await;
    let TaskPayload::Completed { result } = done.payload else {
        panic!("completed")
    };
    assert_eq!(result["isError"], true);
    client.cancel().await.unwrap();

    let (server, _) = serve_job(Act::Throw, Limits::default());
    let client = connect(server).await;
    let id = start(&client).await;
    let done = ended(&client, &id).await;
    let TaskPayload::Failed { error } = done.payload else {
        panic!("failed")
    };
    assert_eq!(
        Value::Object(error),
        json!({"code": -32603, "message": "it broke"})
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_cancel_ends_the_task_and_drops_its_run() {
    let (server, mut dropped) = serve_job(Act::Hang, Limits::default());
    let client = connect(server.clone()).await;
    let id = start(&client).await;
    let working = client
        .peer()
        .get_task(GetTaskParams::new(&id))
        .await
        .unwrap();
    assert_eq!(working.task.status(), TaskStatus::Working);
    client
        .peer()
        .cancel_task(CancelTaskParams::new(&id))
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(10), dropped.recv())
        .await
        .expect("the run was dropped");
    let done = client
        .peer()
        .get_task(GetTaskParams::new(&id))
        .await
        .unwrap();
    assert_eq!(done.task.status(), TaskStatus::Cancelled);
    // Cancelling again is acknowledged (2026-07-28), and an unknown id is -32602.
    client
        .peer()
        .cancel_task(CancelTaskParams::new(&id))
        .await
        .unwrap();
    let unknown = client
        .peer()
        .get_task(GetTaskParams::new("nope"))
        .await
        .unwrap_err();
    assert!(
        unknown
            .to_string()
            .contains("no task \"nope\": it does not exist, or it expired"),
        "{unknown}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_full_table_refuses_and_an_expired_task_is_gone_with_its_run() {
    let limits = Limits {
        max_live: 1,
        default_ttl: Duration::from_millis(1500),
        ..Limits::default()
    };
    let (server, mut dropped) = serve_job(Act::Hang, limits);
    let client = connect(server.clone()).await;
    let id = start(&client).await;
    assert_eq!(server.task_count(), 1);
    let refused = client
        .peer()
        .call_tool_once(CallToolRequestParams::new("job"))
        .await
        .unwrap();
    let CallToolResponse::Complete(refused) = refused else {
        panic!("expected a refusal")
    };
    assert_eq!(refused.is_error, Some(true));
    assert_eq!(
        serde_json::to_value(&refused.content).unwrap()[0]["text"],
        "1 tasks exist already, the most this server keeps; try again when some have ended or \
         expired"
    );
    // The refused call's run went at once (aborted before it began); the task's goes when its
    // ttl passes.
    assert_eq!(server.task_count(), 1);
    tokio::time::timeout(Duration::from_secs(10), dropped.recv())
        .await
        .expect("the expired task's run was dropped");
    assert_eq!(server.task_count(), 0);
    let gone = client
        .peer()
        .get_task(GetTaskParams::new(&id))
        .await
        .unwrap_err();
    assert!(
        gone.to_string()
            .contains("it does not exist, or it expired"),
        "{gone}"
    );
    client.cancel().await.unwrap();
}
