//! 2026-07-28 task following (the `io.modelcontextprotocol/tasks` extension; see
//! [`super::task_call`]): the server answers a call with rmcp's `CreateTaskResult` when it
//! chooses; `tasks/get` inlines the result, and an `input_required` task's `inputRequests` are
//! answered with `tasks/update`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{
    CancelTaskParams, CancelTaskRequest, ClientRequest, CreateTaskResult, GetTaskParams,
    GetTaskRequest, ServerResult, TaskPayload, UpdateTaskParams, UpdateTaskRequest,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::failure::NoResult;
use super::task_common::{Backoff, TaskFront, bounded_poll, remaining, report, whole};
use super::{CallOutcome, LiveServer};
use crate::bounds::{
    TASK_CANCEL_BOUND, TASK_MAX_ID_CHARS, TASK_MAX_MESSAGE_CHARS, TASK_POLL_DEFAULT,
};
use crate::connect::execution::status_name;
use crate::connect::relay::Front;
use crate::connect::relay::TaskUpdate;

impl LiveServer {
    /// Follows a 2026-07-28 task (the `io.modelcontextprotocol/tasks` extension) the server
    /// created for a call: `tasks/get` at its poll interval, its input requests answered with
    /// `tasks/update`, until it ends.
    pub(super) async fn follow_extension(
        &self,
        created: CreateTaskResult,
        (timeout, token): (Duration, Option<rmcp::model::ProgressToken>),
        (cancel, closed): (&CancellationToken, &CancellationToken),
        front: Option<Arc<dyn Front>>,
        started: Instant,
    ) -> Result<CallOutcome, NoResult> {
        // The call's timeout bounds it all: the request that made the task, and the task; the
        // task's progress (under the token of the request that made it, which outlives that
        // request) restarts it and reaches the front, as for a 2025-11-25 task.
        let heard = Arc::new(TaskFront {
            front: front.clone(),
            progressed: tokio::sync::Notify::new(),
        });
        let _relayed = token.map(|token| self.client.relays.register(token, heard.clone()));
        let deadline = tokio::time::Instant::now() + timeout.saturating_sub(started.elapsed());
        let task_id = created.task.task_id.clone();
        if task_id.is_empty() || task_id.chars().count() > TASK_MAX_ID_CHARS {
            return Err(NoResult::Failed(
                "the server's task has no valid taskId".into(),
            ));
        }
        let followed = self
            .follow_extension_task(
                created,
                (deadline, timeout, &heard.progressed),
                (cancel, closed),
                &front,
            )
            .await;
        match followed {
            Ok(result) => Ok(super::result::map_value(result, started)),
            Err(why) => {
                if matches!(why, NoResult::Aborted | NoResult::TimedOut(_)) {
                    let never = CancellationToken::new();
                    let request = ClientRequest::CancelTaskRequest(CancelTaskRequest::new(
                        CancelTaskParams::new(task_id),
                    ));
                    let _ = self
                        .request_once(request, TASK_CANCEL_BOUND, (&never, closed), None)
                        .await;
                }
                Err(why)
            }
        }
    }

    async fn follow_extension_task(
        &self,
        created: CreateTaskResult,
        (mut deadline, timeout, progressed): (tokio::time::Instant, Duration, &tokio::sync::Notify),
        (cancel, closed): (&CancellationToken, &CancellationToken),
        front: &Option<Arc<dyn Front>>,
    ) -> Result<Value, NoResult> {
        let task_id = created.task.task_id.clone();
        let update_of = |task: &rmcp::model::Task| TaskUpdate {
            task_id: task_id.clone(),
            status: status_name(task.status),
            status_message: task
                .status_message
                .as_ref()
                .map(|m| m.chars().take(TASK_MAX_MESSAGE_CHARS).collect()),
        };
        let poll_of = |task: &rmcp::model::Task, poll: Duration| {
            task.poll_interval_ms
                .map_or(poll, |ms| bounded_poll(ms as f64))
        };
        let mut last = None;
        report(front.as_ref(), &mut last, &update_of(&created.task));
        let mut poll = poll_of(&created.task, TASK_POLL_DEFAULT);
        let mut backoff = Backoff::default();
        // The input requests already answered (an update is acknowledged before the task
        // moves on: the same request is not asked twice).
        let mut answered = std::collections::BTreeSet::new();
        let mut first = true;
        // The deadline passed with nothing heard: one last `tasks/get` says whether the task
        // ended meanwhile (it is polled, so an end between polls is heard only by asking).
        let mut last_look = false;
        loop {
            if !std::mem::take(&mut first) {
                let next_poll = tokio::time::sleep(backoff.interval(poll));
                tokio::pin!(next_poll);
                loop {
                    tokio::select! {
                        biased;
                        _ = cancel.cancelled() => return Err(NoResult::Aborted),
                        _ = closed.cancelled() => return Err(NoResult::SourceClosed),
                        _ = tokio::time::sleep_until(deadline) => {
                            last_look = true;
                            break;
                        }
                        _ = progressed.notified() => deadline = tokio::time::Instant::now() + timeout,
                        _ = &mut next_poll => break,
                    }
                }
            }
            // Each poll has the call's timeout of its own: the deadline is the task's (progress
            // restarts it), and is kept between polls.
            let request =
                ClientRequest::GetTaskRequest(GetTaskRequest::new(GetTaskParams::new(&task_id)));
            let got = self
                .request_once(request, timeout, (cancel, closed), front.clone())
                .await
                .map_err(|why| whole(why, timeout))?;
            let ServerResult::GetTaskResult(got) = got else {
                return Err(NoResult::Failed(format!(
                    "the server answered tasks/get for task {task_id:?} with something else than the task"
                )));
            };
            let detailed = got.task;
            if detailed.task.task_id != task_id {
                return Err(NoResult::Failed(format!(
                    "the server answered tasks/get for task {task_id:?} about another task"
                )));
            }
            let update = update_of(&detailed.task);
            backoff.heard(last.as_ref() != Some(&update));
            report(front.as_ref(), &mut last, &update);
            poll = poll_of(&detailed.task, poll);
            // A progress heard while the last poll was out restarts the deadline after all.
            if futures::FutureExt::now_or_never(progressed.notified()).is_some() {
                deadline = tokio::time::Instant::now() + timeout;
                last_look = false;
            }
            let ended = matches!(
                detailed.payload,
                TaskPayload::Completed { .. } | TaskPayload::Failed { .. } | TaskPayload::Cancelled
            );
            if last_look && !ended {
                return Err(NoResult::TimedOut(timeout));
            }
            match detailed.payload {
                TaskPayload::Completed { result } => return Ok(Value::Object(result)),
                TaskPayload::Failed { error } => {
                    let message = error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("no reason given");
                    return Err(NoResult::Failed(format!(
                        "task {task_id:?} failed: {message}"
                    )));
                }
                TaskPayload::Cancelled => {
                    return Err(NoResult::Failed(format!(
                        "the server cancelled task {task_id:?}"
                    )));
                }
                TaskPayload::InputRequired { input_requests } => {
                    let fresh: rmcp::model::InputRequests = input_requests
                        .into_iter()
                        .filter(|(key, _)| !answered.contains(key))
                        .collect();
                    if fresh.is_empty() {
                        continue;
                    }
                    if answered.len() + fresh.len() > 4 * super::service_call::MAX_INPUT_ROUNDS {
                        return Err(NoResult::Failed(format!(
                            "the server still asked for input after {} requests",
                            answered.len()
                        )));
                    }
                    answered.extend(fresh.keys().cloned());
                    let responses = self
                        .client
                        .answer_input(fresh, front.as_deref())
                        .await
                        .map_err(NoResult::Failed)?;
                    let left = remaining(deadline, timeout)?;
                    let request = ClientRequest::UpdateTaskRequest(UpdateTaskRequest::new(
                        UpdateTaskParams::new(&task_id, responses),
                    ));
                    self.request_once(request, left, (cancel, closed), None)
                        .await
                        .map_err(|why| whole(why, timeout))?;
                    first = true;
                }
                _ => {}
            }
        }
    }
}
