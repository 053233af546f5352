//! The task engine with rmcp's 2026-07-28 client: a run that asks to become a task partway,
//! and ended tasks' results kept within a byte budget.

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, GetTaskParams, TaskPayload, TaskStatus,
};
use serde_json::json;

use super::tests::{Act, connect, ended, serve_job, start};
use crate::serve::tasks::Limits;

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
