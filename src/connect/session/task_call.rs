//! Tool calls run as tasks, in both eras the client speaks.
//!
//! - 2025-11-25 (the revision's `tasks`): a task-augmented `tools/call` (`params.task`) is
//!   answered `{task}`; its status is followed by `tasks/get` at the server's `pollInterval`
//!   and by `notifications/tasks/status`; once it needs input or has ended, `tasks/result`
//!   (which may block until the end, and carries the server's elicitations meanwhile) gives the
//!   `CallToolResult`. rmcp 3.11 has no types for these, so they are sent as JSON on either road
//!   ([`LiveServer::raw_request`]): the stdio transport's direct requests, or rmcp's
//!   `CustomRequest`.
//! - 2026-07-28 (the `io.modelcontextprotocol/tasks` extension): the server answers a call with
//!   rmcp's `CreateTaskResult` when it chooses; `tasks/get` inlines the result, and an
//!   `input_required` task's `inputRequests` are answered with `tasks/update`.
//!
//! Either way the call's timeout bounds the whole task, an abort or a timeout sends
//! `tasks/cancel`, and each change of status reaches the call's front ([`Front::status`]).

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{
    CancelTaskParams, CancelTaskRequest, ClientRequest, CreateTaskResult, CustomRequest,
    GetTaskParams, GetTaskRequest, NumberOrString, ProgressToken, ServerResult, TaskPayload,
    UpdateTaskParams, UpdateTaskRequest,
};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::failure::NoResult;
use super::{CallOutcome, LiveServer};
use crate::bounds::{
    TASK_CANCEL_BOUND, TASK_MAX_ID_CHARS, TASK_MAX_MESSAGE_CHARS, TASK_POLL_CAP, TASK_POLL_DEFAULT,
    TASK_POLL_FLOOR, TASK_POLL_GRACE,
};
use crate::connect::relay::Front;
use crate::connect::relay::TaskUpdate;
use crate::connect::road::Road;
use crate::connect::stdio::direct::Failure;

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

/// How long to wait before the next `tasks/get`: the server's `pollInterval` while the task
/// changes and for [`TASK_POLL_GRACE`] after its last change, then doubled after each poll that
/// heard nothing new (up to [`TASK_POLL_CAP`]). A short status is still heard at the server's
/// pace, and a server suggesting 0 ms cannot make a call poll it a hundred times a second for
/// its whole life.
struct Backoff {
    quiet_since: tokio::time::Instant,
    doublings: u32,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            quiet_since: tokio::time::Instant::now(),
            doublings: 0,
        }
    }
}

impl Backoff {
    fn interval(&self, suggested: Duration) -> Duration {
        let doubled = suggested.saturating_mul(1 << self.doublings.min(16));
        doubled.min(TASK_POLL_CAP.max(suggested))
    }

    /// A poll heard the task as it was (`changed` false) or not.
    fn heard(&mut self, changed: bool) {
        if changed {
            self.quiet_since = tokio::time::Instant::now();
            self.doublings = 0;
        } else if self.quiet_since.elapsed() >= TASK_POLL_GRACE {
            self.doublings = self.doublings.saturating_add(1);
        }
    }
}

/// A suggested poll interval (ms) within [`TASK_POLL_FLOOR`] and [`TASK_POLL_CAP`].
fn bounded_poll(ms: f64) -> Duration {
    let ms = ms.clamp(0.0, TASK_POLL_CAP.as_millis() as f64);
    Duration::from_millis(ms.round() as u64).clamp(TASK_POLL_FLOOR, TASK_POLL_CAP)
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

/// Tells the front about a change of status (not the same status twice).
fn report(front: Option<&Arc<dyn Front>>, last: &mut Option<TaskUpdate>, update: &TaskUpdate) {
    if last.as_ref() == Some(update) {
        return;
    }
    *last = Some(update.clone());
    if let Some(front) = front {
        front.status(update);
    }
}

fn task_params(task_id: &str) -> Map<String, Value> {
    let mut params = Map::new();
    params.insert("taskId".into(), Value::String(task_id.to_string()));
    params
}

/// What remains of a task call's time, or that it is up.
fn remaining(deadline: tokio::time::Instant, timeout: Duration) -> Result<Duration, NoResult> {
    let left = deadline.saturating_duration_since(tokio::time::Instant::now());
    if left.is_zero() {
        Err(NoResult::TimedOut(timeout))
    } else {
        Ok(left)
    }
}

impl LiveServer {
    /// The `execution.taskSupport` its listing gives `tool` (`"required"`, `"optional"`).
    pub fn task_support(&self, tool: &str) -> Option<String> {
        let listing = self.listing.lock().unwrap_or_else(|e| e.into_inner());
        let info = listing.iter().find(|info| info.name() == tool)?;
        // Most tools have none: a scan of the text, no parse.
        if !info.json().get().contains("\"execution\"") {
            return None;
        }
        let fields = info.fields();
        let execution = fields.iter().find(|(k, _)| k == "execution")?.1;
        let execution: Value = serde_json::from_str(execution.get()).ok()?;
        execution
            .get("taskSupport")
            .and_then(Value::as_str)
            .map(str::to_string)
    }

    /// One request of a method rmcp has no type for, as JSON, on the connection's road; its
    /// answer's `result` as JSON.
    pub(super) async fn raw_request(
        &self,
        method: &str,
        params: Map<String, Value>,
        timeout: Duration,
        (cancel, closed): (&CancellationToken, &CancellationToken),
    ) -> Result<Value, NoResult> {
        self.raw_request_heard(method, params, timeout, (cancel, closed), &mut None)
            .await
    }

    /// [`LiveServer::raw_request`], telling `token` the progress token the request carried.
    async fn raw_request_heard(
        &self,
        method: &str,
        params: Map<String, Value>,
        timeout: Duration,
        (cancel, closed): (&CancellationToken, &CancellationToken),
        token: &mut Option<ProgressToken>,
    ) -> Result<Value, NoResult> {
        match self.road() {
            Road::Direct(direct) => {
                let id = direct.new_id();
                *token = Some(ProgressToken(NumberOrString::Number(id as i64)));
                let (answered, answer) = tokio::sync::oneshot::channel();
                direct.send(
                    id,
                    method,
                    params,
                    timeout,
                    Box::new(move |answer| {
                        let _ = answered
                            .send(answer.map(|raw| serde_json::from_str::<Value>(raw.get())));
                    }),
                );
                let _forget = direct.forget_on_drop(id);
                let answer = tokio::select! {
                    biased;
                    _ = cancel.cancelled() => {
                        direct.abort(id, "aborted by the caller");
                        return Err(NoResult::Aborted);
                    }
                    _ = closed.cancelled() => return Err(NoResult::SourceClosed),
                    answer = answer => answer.unwrap_or(Err(Failure::Closed)),
                };
                answer?.map_err(|e| {
                    NoResult::Failed(format!(
                        "the server's answer to {method} is unreadable: {e}"
                    ))
                })
            }
            Road::Rmcp(_) => {
                let request = ClientRequest::CustomRequest(CustomRequest::new(
                    method,
                    Some(Value::Object(params)),
                ));
                let result = self
                    .request_once_heard(request, timeout, (cancel, closed), None, token)
                    .await?;
                serde_json::to_value(&result).map_err(|e| {
                    NoResult::Failed(format!(
                        "the server's answer to {method} is unreadable: {e}"
                    ))
                })
            }
        }
    }

    /// [`LiveServer::call`] as a 2025-11-25 task (see the module's docs).
    pub(super) async fn call_as_task(
        &self,
        (tool, arguments): (&str, Map<String, Value>),
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
        if let Some(meta) = front.as_ref().and_then(|f| f.meta()) {
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

/// A task call's own front for its progress token: the call's front (when it has one) hears
/// what it would hear of a call, and each progress restarts the task's timeout.
struct TaskFront {
    front: Option<Arc<dyn Front>>,
    progressed: tokio::sync::Notify,
}

#[allow(deprecated)] // the Front trait names logging and sampling (SEP-2577).
impl Front for TaskFront {
    fn progress(&self, param: rmcp::model::ProgressNotificationParam) {
        self.progressed.notify_one();
        if let Some(front) = &self.front {
            front.progress(param);
        }
    }

    fn log(&self, param: rmcp::model::LoggingMessageNotificationParam) {
        if let Some(front) = &self.front {
            front.log(param);
        }
    }

    fn elicit(
        &self,
        params: rmcp::model::ElicitRequestParams,
    ) -> futures::future::BoxFuture<'static, Option<rmcp::model::ElicitResult>> {
        match &self.front {
            Some(front) => front.elicit(params),
            None => Box::pin(async { None }),
        }
    }

    fn sample(
        &self,
        params: rmcp::model::CreateMessageRequestParams,
    ) -> futures::future::BoxFuture<'static, Option<rmcp::model::CreateMessageResult>> {
        match &self.front {
            Some(front) => front.sample(params),
            None => Box::pin(async { None }),
        }
    }
}

use crate::connect::execution::status_name;

/// A request of the task that timed out timed out the whole task (its words name the call's
/// timeout, not what was left of it).
fn whole(why: NoResult, timeout: Duration) -> NoResult {
    match why {
        NoResult::TimedOut(_) => NoResult::TimedOut(timeout),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn polling_backs_off_while_nothing_changes() {
        let mut backoff = Backoff::default();
        let ten = Duration::from_millis(10);
        // Within the grace after a change: the server's pace.
        backoff.heard(false);
        assert_eq!(backoff.interval(ten), ten);
        // Quiet for longer: doubled after each poll that heard nothing new, up to the cap.
        backoff.quiet_since -= TASK_POLL_GRACE;
        let mut waits = Vec::new();
        for _ in 0..12 {
            backoff.heard(false);
            waits.push(backoff.interval(ten).as_millis());
        }
        assert_eq!(
            waits,
            [
                20, 40, 80, 160, 320, 640, 1280, 2560, 5000, 5000, 5000, 5000
            ]
        );
        backoff.heard(true);
        assert_eq!(
            backoff.interval(ten),
            ten,
            "a change: back to the server's interval"
        );
        // A suggestion over the cap (the server's, capped already) is never shortened.
        assert_eq!(backoff.interval(TASK_POLL_CAP), TASK_POLL_CAP);
    }

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
