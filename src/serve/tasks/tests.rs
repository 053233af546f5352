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
struct TaskClient;

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
enum Act {
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

fn serve_job(act: Act, limits: Limits) -> (ToolServer, mpsc::UnboundedReceiver<()>) {
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

async fn connect(server: ToolServer) -> RunningService<RoleClient, TaskClient> {
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

async fn start(client: &RunningService<RoleClient, TaskClient>) -> String {
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
async fn ended(
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

/// A 2025-11-25 client on raw lines over a pipe: `ask` sends one request and reads its answer.
struct Lines {
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    read: tokio::io::BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>,
    next: u64,
}

impl Lines {
    async fn open(server: &ToolServer) -> Self {
        let (client_io, server_io) = tokio::io::duplex(64 * 1024);
        let (server_read, server_write) = tokio::io::split(server_io);
        tokio::spawn(crate::serve::stdio::serve_lines(
            server.clone(),
            server_read,
            server_write,
        ));
        let (read, write) = tokio::io::split(client_io);
        let mut lines = Self {
            write,
            read: tokio::io::BufReader::new(read),
            next: 0,
        };
        let init = lines
            .ask(
                "initialize",
                json!({"protocolVersion": "2025-11-25", "capabilities": {"tasks": {}},
                       "clientInfo": {"name": "lines", "version": "1"}}),
            )
            .await;
        assert_eq!(
            init["result"]["capabilities"]["tasks"],
            json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}})
        );
        lines
            .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        lines
    }

    async fn send(&mut self, message: Value) {
        use tokio::io::AsyncWriteExt;
        let mut line = message.to_string();
        line.push('\n');
        self.write.write_all(line.as_bytes()).await.unwrap();
    }

    async fn ask(&mut self, method: &str, params: Value) -> Value {
        use tokio::io::AsyncBufReadExt;
        self.next += 1;
        let id = self.next;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                let mut line = String::new();
                assert!(
                    self.read.read_line(&mut line).await.unwrap() > 0,
                    "answered"
                );
                let message: Value = serde_json::from_str(&line).unwrap();
                if message["id"] == json!(id) {
                    return message;
                }
            }
        })
        .await
        .expect("an answer")
    }
}

#[tokio::test]
async fn a_handshake_era_task_belongs_to_its_session() {
    let (server, mut dropped) = serve_job(Act::Hang, Limits::default());
    let mut mine = Lines::open(&server).await;
    let mut other = Lines::open(&server).await;
    let created = mine
        .ask(
            "tools/call",
            json!({"name": "job", "arguments": {}, "task": {"ttl": 5000}}),
        )
        .await;
    let task = &created["result"]["task"];
    assert_eq!(task["status"], "working");
    assert_eq!(task["ttl"], 5000);
    let id = task["taskId"].as_str().unwrap().to_string();
    let seen = mine.ask("tasks/get", json!({"taskId": id})).await;
    assert_eq!(seen["result"]["status"], "working");
    // Another session: not found, not listed, not cancellable.
    let unseen = other.ask("tasks/get", json!({"taskId": id})).await;
    assert_eq!(unseen["error"]["code"], -32602);
    assert_eq!(
        unseen["error"]["message"],
        format!("no task \"{id}\": it does not exist, or it expired")
    );
    let listed = other.ask("tasks/list", json!({})).await;
    assert_eq!(listed["result"], json!({"tasks": []}));
    let refused = other.ask("tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(refused["error"]["code"], -32602);
    // Its own session cancels it: the task is cancelled before the answer, and its run dropped.
    let cancelled = mine.ask("tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(cancelled["result"]["status"], "cancelled");
    tokio::time::timeout(Duration::from_secs(10), dropped.recv())
        .await
        .expect("the run was dropped");
    let listed = mine.ask("tasks/list", json!({})).await;
    assert_eq!(listed["result"]["tasks"][0]["status"], "cancelled");
    // A required task tool called without a task: -32601.
    let plain = mine
        .ask("tools/call", json!({"name": "job", "arguments": {}}))
        .await;
    assert_eq!(plain["error"]["code"], -32601);
}

#[tokio::test]
async fn a_run_that_asks_to_become_a_task_is_adopted_by_one_still_running() {
    let (server, mut dropped) = serve_job(Act::Defer, Limits::default());
    let client = connect(server.clone()).await;
    // The call starts as an ordinary one; the run's ask makes it a task, which drives the
    // same run on (a second ask changes nothing).
    let id = start(&client).await;
    let done = ended(&client, &id).await;
    let TaskPayload::Completed { result } = done.payload else {
        panic!("completed")
    };
    assert_eq!(
        result["content"],
        json!([{"type": "text", "text": "became a task: true; again: false"}])
    );
    // One run, started once, ended once.
    tokio::time::timeout(Duration::from_secs(10), dropped.recv())
        .await
        .expect("the run ended");
    assert!(dropped.try_recv().is_err(), "one run only");
    assert_eq!(server.task_count(), 1);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_run_that_asks_to_become_a_task_when_none_can_be_made_is_answered_why() {
    let limits = Limits {
        max_live: 0,
        ..Limits::default()
    };
    let (server, mut dropped) = serve_job(Act::Defer, limits);
    let client = connect(server.clone()).await;
    let answer = client
        .peer()
        .call_tool_once(CallToolRequestParams::new("job"))
        .await
        .unwrap();
    let CallToolResponse::Complete(result) = answer else {
        panic!("expected a result, got {answer:?}")
    };
    assert_eq!(result.is_error, Some(true));
    assert_eq!(
        serde_json::to_value(&result.content).unwrap(),
        json!([{"type": "text", "text": "0 tasks exist already, the most this server keeps; try again when some have ended or expired"}])
    );
    tokio::time::timeout(Duration::from_secs(10), dropped.recv())
        .await
        .expect("the run was dropped");
    assert_eq!(server.task_count(), 0);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn one_session_cannot_take_every_slot_and_a_refused_call_never_runs() {
    let limits = Limits {
        max_per_owner: 2,
        ..Limits::default()
    };
    let (server, mut dropped) = serve_job(Act::Hang, limits);
    let mut greedy = Lines::open(&server).await;
    let mut other = Lines::open(&server).await;
    let call = json!({"name": "job", "arguments": {}, "task": {"ttl": 0}});
    for _ in 0..2 {
        let created = greedy.ask("tools/call", call.clone()).await;
        assert_eq!(created["result"]["task"]["status"], "working");
        // A ttl of 0 is raised to the shortest one kept.
        assert_eq!(created["result"]["task"]["ttl"], 1000);
    }
    let refused = greedy.ask("tools/call", call.clone()).await;
    assert_eq!(refused["result"]["isError"], true);
    assert_eq!(
        refused["result"]["content"][0]["text"],
        "this client has 2 tasks already, the most one client may keep; try again when some \
         have ended or expired"
    );
    // The refused call's run never started (so nothing of it was dropped either).
    assert!(dropped.try_recv().is_err());
    // Another session still has room.
    let created = other.ask("tools/call", call).await;
    assert_eq!(created["result"]["task"]["status"], "working");
    assert_eq!(server.task_count(), 3);
}

#[tokio::test]
async fn a_cancelled_tasks_result_stops_waiting() {
    let (server, _dropped) = serve_job(Act::Hang, Limits::default());
    let mut lines = Lines::open(&server).await;
    let created = lines
        .ask(
            "tools/call",
            json!({"name": "job", "arguments": {}, "task": {}}),
        )
        .await;
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    // tasks/result waits on a task that never ends; cancelling the request ends the wait.
    let waiters = |n: usize| {
        let server = server.clone();
        let id = id.clone();
        async move {
            tokio::time::timeout(Duration::from_secs(10), async {
                while server.task_waiters(&id) != n {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            })
            .await
            .unwrap_or_else(|_| panic!("{n} waiters"))
        }
    };
    lines
        .send(json!({"jsonrpc": "2.0", "id": 900, "method": "tasks/result", "params": {"taskId": id}}))
        .await;
    waiters(1).await;
    lines
        .send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 900}}))
        .await;
    waiters(0).await;
    let seen = lines.ask("tasks/get", json!({"taskId": id})).await;
    assert_eq!(seen["result"]["status"], "working");
    assert_eq!(server.task_count(), 1);
}

#[tokio::test]
async fn a_handshake_era_sessions_tasks_end_with_its_connection() {
    let (server, mut dropped) = serve_job(Act::Hang, Limits::default());
    let mut lines = Lines::open(&server).await;
    let mut stays = Lines::open(&server).await;
    for session in [&mut lines, &mut stays] {
        let created = session
            .ask(
                "tools/call",
                json!({"name": "job", "arguments": {}, "task": {}}),
            )
            .await;
        assert_eq!(created["result"]["task"]["status"], "working");
    }
    assert_eq!(server.task_count(), 2);
    // The client goes away: its task's run is dropped and the task is gone, long before its
    // ttl (10 minutes); the other session's task runs on.
    drop(lines);
    tokio::time::timeout(Duration::from_secs(10), dropped.recv())
        .await
        .expect("the closed session's run was dropped");
    assert_eq!(server.task_count(), 1);
    let listed = stays.ask("tasks/list", json!({})).await;
    assert_eq!(listed["result"]["tasks"][0]["status"], "working");
}

#[tokio::test]
async fn ended_results_are_kept_within_a_byte_budget_the_oldest_forgotten_first() {
    // Room for two results, not three: one result's size as a task keeps it.
    let one = {
        let (server, _) = serve_job(Act::Answer, Limits::default());
        let client = connect(server).await;
        let id = start(&client).await;
        let TaskPayload::Completed { result } = ended(&client, &id).await.payload else {
            panic!("completed")
        };
        client.cancel().await.unwrap();
        serde_json::to_vec(&result).unwrap().len()
    };
    let limits = Limits {
        max_result_bytes: 2 * one + one / 2,
        ..Limits::default()
    };
    let (server, _) = serve_job(Act::Answer, limits);
    let client = connect(server.clone()).await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        let id = start(&client).await;
        assert_eq!(ended(&client, &id).await.status(), TaskStatus::Completed);
        ids.push(id);
    }
    let first = client.peer().get_task(GetTaskParams::new(&ids[0])).await;
    let first = first
        .expect_err("the first result was forgotten")
        .to_string();
    assert!(
        first.contains("it does not exist, or it expired"),
        "{first}"
    );
    for id in &ids[1..] {
        let kept = client
            .peer()
            .get_task(GetTaskParams::new(id))
            .await
            .unwrap();
        assert_eq!(kept.task.status(), TaskStatus::Completed, "{id} is kept");
    }
    assert_eq!(server.task_count(), 2);
    client.cancel().await.unwrap();
}
