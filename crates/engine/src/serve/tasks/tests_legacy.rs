//! The task engine with a 2025-11-25 client on raw lines over a pipe: a handshake-era task
//! belongs to its session, a session's share of the slots, a cancelled task's `tasks/result`,
//! and a session's tasks ending with its connection.

use std::time::Duration;

use serde_json::{Value, json};

use super::tests::{Act, serve_job};
use crate::serve::ToolServer;
use crate::serve::tasks::Limits;

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
