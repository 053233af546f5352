//! 2025-11-25 task following (the revision's `tasks`; see [`super::task_call`]): a
//! task-augmented `tools/call` answered `{task}`, followed by `tasks/get` and
//! `notifications/tasks/status`, its result from `tasks/result`, `tasks/cancel` on an abort or a
//! timeout.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::failure::NoResult;
use super::task_common::{Backoff, TaskFront, bounded_poll, remaining, report, whole};
use super::{CallOutcome, LiveServer};
use crate::bounds::{
    TASK_CANCEL_BOUND, TASK_MAX_ID_CHARS, TASK_MAX_MESSAGE_CHARS, TASK_POLL_DEFAULT,
};
use crate::connect::relay::Front;
use crate::connect::relay::TaskUpdate;

const STATUSES: [&str; 5] = [
    "working",
    "input_required",
    "completed",
    "failed",
    "cancelled",
];

/// A 2025-11-25 task as the server last described it.
#[derive(Clone, Debug, PartialEq)]
struct Legacy {
    update: TaskUpdate,
    poll: Duration,
}

impl Legacy {
    /// A `Task` object read strictly (its id, its status), its `pollInterval` bounded.
    fn read(task: &Value, poll: Duration) -> Result<Self, NoResult> {
        let failed = |why: String| NoResult::Failed(why);
        let Some(task) = task.as_object() else {
            return Err(failed(
                "the server's task is not an object with a taskId and a status".into(),
            ));
        };
        let task_id = match task.get("taskId") {
            Some(Value::String(id))
                if !id.is_empty() && id.chars().count() <= TASK_MAX_ID_CHARS =>
            {
                id.clone()
            }
            Some(Value::String(id)) if !id.is_empty() => {
                return Err(failed(format!(
                    "the server's task id is longer than {TASK_MAX_ID_CHARS} characters"
                )));
            }
            Some(other) => {
                return Err(failed(format!(
                    "the server's task id is {}, not a non-empty string",
                    quote(other)
                )));
            }
            None => return Err(failed("the server's task has no taskId".into())),
        };
        let status = match task.get("status") {
            Some(Value::String(status)) => match STATUSES.iter().find(|s| **s == status) {
                Some(status) => *status,
                None => {
                    return Err(failed(format!(
                        "the server gave task {task_id:?} the status {}, which is not a task status",
                        quote(&Value::String(status.clone()))
                    )));
                }
            },
            Some(other) => {
                return Err(failed(format!(
                    "the server gave task {task_id:?} the status {}, which is not a task status",
                    quote(other)
                )));
            }
            None => {
                return Err(failed(format!(
                    "the server's task {task_id:?} has no status"
                )));
            }
        };
        let status_message = task
            .get("statusMessage")
            .and_then(Value::as_str)
            .map(|m| m.chars().take(TASK_MAX_MESSAGE_CHARS).collect());
        let poll = match task.get("pollInterval") {
            None | Some(Value::Null) => poll,
            Some(Value::Number(n)) if n.as_f64().is_some_and(|ms| ms >= 0.0) => {
                bounded_poll(n.as_f64().unwrap_or_default())
            }
            Some(other) => {
                return Err(failed(format!(
                    "the server gave task {task_id:?} a pollInterval of {}, not a number of milliseconds",
                    quote(other)
                )));
            }
        };
        Ok(Self {
            update: TaskUpdate {
                task_id,
                status,
                status_message,
            },
            poll,
        })
    }

    fn status(&self) -> &'static str {
        self.update.status
    }
}

/// A value a server sent, quoted briefly for a reason.
fn quote(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 60 {
        text
    } else {
        format!("{}…", text.chars().take(60).collect::<String>())
    }
}

fn task_params(task_id: &str) -> Map<String, Value> {
    let mut params = Map::new();
    params.insert("taskId".into(), Value::String(task_id.to_string()));
    params
}

impl LiveServer {
    /// [`LiveServer::call`] as a 2025-11-25 task (see the module's docs).
    pub(super) async fn call_as_task(
        &self,
        (tool, arguments, meta): super::Call<'_>,
        timeout: Duration,
        (cancel, closed): (&CancellationToken, &CancellationToken),
        front: Option<Arc<dyn Front>>,
        started: Instant,
    ) -> Result<CallOutcome, NoResult> {
        let deadline = tokio::time::Instant::now() + timeout;
        // Subscribed before the call, so no status sent right after it is missed.
        let statuses = self.client.task_status.subscribe();
        let mut params = Map::new();
        params.insert("name".into(), Value::String(tool.to_string()));
        params.insert("arguments".into(), Value::Object(arguments));
        params.insert("task".into(), Value::Object(Map::new()));
        if let Some(meta) = meta {
            params.insert("_meta".into(), Value::Object(meta));
        }
        let mut token = None;
        let created = self
            .raw_request_heard("tools/call", params, timeout, (cancel, closed), &mut token)
            .await
            .map_err(|why| whole(why, timeout))?;
        // A server may run it at once and answer with its result.
        let Some(task) = created.get("task") else {
            return Ok(super::result::map_value(created, started));
        };
        let task = Legacy::read(task, TASK_POLL_DEFAULT)?;
        let task_id = task.update.task_id.clone();
        // The task's progress (under the call's progress token, which outlives the call's
        // request) restarts the timeout and reaches the front, as do the server's elicitations
        // and sampling during the task.
        let heard = Arc::new(TaskFront {
            front: front.clone(),
            progressed: tokio::sync::Notify::new(),
        });
        let _relayed = token.map(|token| self.client.relays.register(token, heard.clone()));
        let followed = self
            .follow_legacy(
                task,
                statuses,
                (deadline, timeout, &heard.progressed),
                (cancel, closed),
                &front,
            )
            .await;
        match followed {
            Ok((result, status)) => {
                let mut outcome = super::result::map_value(result, started);
                // A failed task is an error even when its result does not say so.
                if status == "failed" {
                    outcome.is_error = true;
                    outcome.task_failed = true;
                }
                Ok(outcome)
            }
            Err(why) => {
                if matches!(why, NoResult::Aborted | NoResult::TimedOut(_)) {
                    self.cancel_legacy(&task_id, closed).await;
                }
                Err(why)
            }
        }
    }

    /// Follows a 2025-11-25 task to its result: the result's JSON and the status it ended in.
    async fn follow_legacy(
        &self,
        mut task: Legacy,
        mut statuses: tokio::sync::broadcast::Receiver<Value>,
        (mut deadline, timeout, progressed): (tokio::time::Instant, Duration, &tokio::sync::Notify),
        (cancel, closed): (&CancellationToken, &CancellationToken),
        front: &Option<Arc<dyn Front>>,
    ) -> Result<(Value, &'static str), NoResult> {
        let task_id = task.update.task_id.clone();
        let mut last = None;
        report(front.as_ref(), &mut last, &task.update);
        let mut result: Option<futures::future::BoxFuture<'_, Result<Value, NoResult>>> = None;
        let mut notes_open = true;
        let mut backoff = Backoff::default();
        loop {
            match task.status() {
                "cancelled" => {
                    return Err(NoResult::Failed(format!(
                        "the server cancelled task {task_id:?}"
                    )));
                }
                "working" => {}
                // It needs input (delivered through tasks/result) or has ended.
                // (Its time is the task's, kept below: a progress restarts it.)
                _ if result.is_none() => {
                    let params = task_params(&task_id);
                    // No timeout of its own: the task's deadline below bounds it, and progress
                    // restarts that one (a request timeout would not hear the progress).
                    result = Some(Box::pin(async move {
                        self.raw_request("tasks/result", params, Duration::MAX, (cancel, closed))
                            .await
                    }));
                }
                _ => {}
            }
            let terminal = matches!(task.status(), "completed" | "failed");
            let poll = backoff.interval(task.poll);
            tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(NoResult::Aborted),
                _ = closed.cancelled() => return Err(NoResult::SourceClosed),
                _ = tokio::time::sleep_until(deadline) => return Err(NoResult::TimedOut(timeout)),
                _ = progressed.notified() => deadline = tokio::time::Instant::now() + timeout,
                answer = async { result.as_mut().expect("a result request").await }, if result.is_some() => {
                    let value = answer.map_err(|why| whole(why, timeout))?;
                    // What tasks/result answers is the result; the status it ended in is the
                    // last one heard (a result asked for early ended the task).
                    let status = if task.status() == "failed" { "failed" } else { "completed" };
                    return Ok((value, status));
                }
                note = statuses.recv(), if notes_open => match note {
                    // rmcp hands each notification to a task of its own, so they may come out
                    // of order: an ended task stays ended.
                    Ok(note) if note.get("taskId").and_then(Value::as_str) == Some(&task_id) && !terminal => {
                        task = Legacy::read(&note, task.poll)?;
                        report(front.as_ref(), &mut last, &task.update);
                    }
                    Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => notes_open = false,
                },
                _ = tokio::time::sleep(poll), if !terminal => {
                    let left = remaining(deadline, timeout)?;
                    let got = self
                        .raw_request("tasks/get", task_params(&task_id), left, (cancel, closed))
                        .await
                        .map_err(|why| whole(why, timeout))?;
                    let got = Legacy::read(&got, task.poll)?;
                    if got.update.task_id != task_id {
                        return Err(NoResult::Failed(format!(
                            "the server answered tasks/get for task {task_id:?} about another task"
                        )));
                    }
                    backoff.heard(got.update != task.update);
                    task = got;
                    report(front.as_ref(), &mut last, &task.update);
                }
            }
        }
    }

    /// `tasks/cancel` of an aborted or timed-out 2025-11-25 task, bounded; its answer does not
    /// matter.
    async fn cancel_legacy(&self, task_id: &str, closed: &CancellationToken) {
        let never = CancellationToken::new();
        let _ = self
            .raw_request(
                "tasks/cancel",
                task_params(task_id),
                TASK_CANCEL_BOUND,
                (&never, closed),
            )
            .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bounds::{TASK_POLL_CAP, TASK_POLL_FLOOR};
    use rmcp::model::ServerResult;
    use serde_json::json;

    #[test]
    fn a_task_is_read_strictly_and_its_interval_bounded() {
        let read = |v: Value| Legacy::read(&v, TASK_POLL_DEFAULT);
        let words = |v: Value| match read(v) {
            Err(NoResult::Failed(why)) => why,
            other => panic!("{other:?}"),
        };
        let task =
            read(json!({"taskId": "t1", "status": "working", "pollInterval": 100000})).unwrap();
        assert_eq!(task.poll, TASK_POLL_CAP);
        assert_eq!(
            read(json!({"taskId": "t1", "status": "working", "pollInterval": 0}))
                .unwrap()
                .poll,
            TASK_POLL_FLOOR
        );
        assert_eq!(
            read(json!({"taskId": "t1", "status": "working", "pollInterval": 12.6}))
                .unwrap()
                .poll,
            Duration::from_millis(13)
        );
        assert_eq!(
            words(json!({"taskId": "t1", "status": "working", "pollInterval": "soon"})),
            "the server gave task \"t1\" a pollInterval of \"soon\", not a number of milliseconds"
        );
        assert_eq!(
            words(json!({"taskId": 7, "status": "working"})),
            "the server's task id is 7, not a non-empty string"
        );
        assert_eq!(
            words(json!({"taskId": "t1", "status": "sleeping"})),
            "the server gave task \"t1\" the status \"sleeping\", which is not a task status"
        );
        assert_eq!(
            words(json!("x")),
            "the server's task is not an object with a taskId and a status"
        );
    }

    #[test]
    fn a_legacy_task_answer_reaches_us_whole_through_rmcp() {
        // rmcp's untagged ServerResult must not read a 2025-11-25 answer as one of its own
        // kinds and drop its fields.
        let created = json!({"task": {"taskId": "t1", "status": "working", "createdAt": "x",
            "lastUpdatedAt": "x", "ttl": 1000, "pollInterval": 50}});
        let result: ServerResult = serde_json::from_value(created.clone()).unwrap();
        assert_eq!(serde_json::to_value(&result).unwrap(), created);
        let failed = json!({"taskId": "t1", "status": "failed", "createdAt": "x",
            "lastUpdatedAt": "x", "ttl": 1000, "pollInterval": 50, "statusMessage": "boom"});
        let result: ServerResult = serde_json::from_value(failed.clone()).unwrap();
        assert_eq!(serde_json::to_value(&result).unwrap(), failed);
    }
}
