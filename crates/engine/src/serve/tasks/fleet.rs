//! Tasks in a state store replicas share (`stateStore`): any replica answers a client's task
//! methods from the task's record in the store, and the replica running the task keeps that
//! record up to date (see [`super::super::store_tasks`] for what the store keeps).
//!
//! - Made: the record is written before the run starts; a task whose record cannot be written
//!   is refused, never started.
//! - Run: the runner's [`link`] writes each change of the task (its status, what it waits on,
//!   its status message, its end), renews its lease, and takes what other replicas sent it: a
//!   client's answers (`tasks/update`), or its end claimed elsewhere (`tasks/cancel`, a lapsed
//!   lease), which drops the run (its `ctx.signal` fires).
//! - Read: `tasks/get`, `tasks/list`, `tasks/result` (a poll of the record) and `tasks/cancel`
//!   (a claim of the task's end) read the store, on every replica alike. A running task whose
//!   lease lapsed lost its runner: the reader ends it `failed`, in words.

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use rmcp::model::{DetailedTask, InputResponses, Task, TaskPayload};
use serde::{Deserialize, Serialize};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::{Refusal, Scope, Tasks, Watch, error_object, not_found, now, quoted};
use crate::bounds::{
    SERVE_STORE_TASK_BYTES as MAX_RECORD, SERVE_TASK_LEASE as LEASE,
    SERVE_TASK_LEASE_RENEW as RENEW, SERVE_TASK_STORE_POLL as POLL,
};
use crate::connect::execution::status_name;
use crate::serve::store::{StateStore, StoreError};

/// Why a task whose runner stopped renewing its lease failed.
pub(crate) const LEASE_LAPSED: &str = "the replica running this task stopped renewing its lease \
     (it stopped, or lost the state store): the task's run is lost";
/// Why a task whose runner stopped (its server stopping) failed.
const RUNNER_STOPPED: &str = "the replica running this task stopped: the task's run is lost";

/// Whose a task of the shared store is, the same on every replica: in the handshake era its
/// session's (the session's id as every replica opens it), and its principal's (its key).
pub(crate) fn shared_scope(session: Option<&str>, owner: Option<&str>) -> String {
    serde_json::json!([session, owner]).to_string()
}

/// What the store keeps of a task: whose it is, and the task as `tasks/get` answers it.
#[derive(Serialize, Deserialize)]
struct Record {
    #[serde(rename = "s")]
    scope: String,
    #[serde(rename = "t")]
    task: DetailedTask,
}

/// `task` of `scope` as the store keeps it: one larger than the store keeps ends `failed`,
/// saying so.
fn encode(scope: &str, task: &DetailedTask) -> Vec<u8> {
    let record = |task: DetailedTask| {
        serde_json::to_vec(&Record {
            scope: scope.to_string(),
            task,
        })
        .unwrap_or_default()
    };
    let bytes = record(task.clone());
    if bytes.len() <= MAX_RECORD {
        return bytes;
    }
    let why = format!(
        "the task's {} ({} bytes) is larger than the state store keeps of a task (at most {} \
         bytes)",
        match task.payload {
            TaskPayload::Completed { .. } => "result",
            TaskPayload::Failed { .. } => "failure",
            _ => "input requests",
        },
        bytes.len(),
        MAX_RECORD
    );
    record(failed(task, &why))
}

fn decode(bytes: &[u8]) -> Option<Record> {
    serde_json::from_slice(bytes).ok()
}

/// `task` ended `failed` for `why` (its status message too).
fn failed(task: &DetailedTask, why: &str) -> DetailedTask {
    let mut ended = task.task.clone();
    ended.status_message = Some(why.to_string());
    ended.last_updated_at = now();
    DetailedTask::new(
        ended,
        TaskPayload::Failed {
            error: error_object(rmcp::model::ErrorCode::INTERNAL_ERROR.0, why),
        },
    )
}

fn unread(id: &str, e: &StoreError) -> Refusal {
    Refusal::Store(format!(
        "task {} could not be read from the state store ({e}); ask again",
        quoted(id)
    ))
}

/// Records the new task `task` of `scope` (working, its runner's lease taken).
pub(crate) async fn record_new(
    store: &dyn StateStore,
    scope: &str,
    task: &Task,
) -> Result<(), StoreError> {
    let ttl = Duration::from_millis(task.ttl_ms.unwrap_or(1));
    let record = encode(
        scope,
        &DetailedTask::new(task.clone(), TaskPayload::Working),
    );
    store
        .task_create(&task.task_id, scope, &record, ttl, LEASE)
        .await
}

/// Ends a recorded task that will not run after all (`why`).
pub(crate) async fn refuse(store: &dyn StateStore, scope: &str, task: &Task, why: &str) {
    let working = DetailedTask::new(task.clone(), TaskPayload::Working);
    let _ = store
        .task_end(&task.task_id, &encode(scope, &failed(&working, why)))
        .await;
}

/// Where a server's task methods find tasks: its own table, or the store its replicas share.
pub(crate) enum Book<'a> {
    Here(&'a Tasks, Scope),
    Shared(Arc<dyn StateStore>, String),
}

impl Book<'_> {
    /// `tasks/get`.
    pub(crate) async fn get(&self, id: &str) -> Result<DetailedTask, Refusal> {
        match self {
            Self::Here(tasks, scope) => tasks.get(id, scope),
            Self::Shared(store, scope) => shared_get(&**store, scope, id).await,
        }
    }

    /// `tasks/update`: the answers go to the task's runner.
    pub(crate) async fn update(&self, id: &str, responses: InputResponses) -> Result<(), Refusal> {
        match self {
            Self::Here(tasks, scope) => tasks.update(id, scope, responses),
            Self::Shared(store, scope) => {
                let task = shared_get(&**store, scope, id).await?;
                if task.task.status.is_terminal() {
                    return Ok(());
                }
                let message = serde_json::to_vec(&responses).unwrap_or_default();
                store
                    .task_send(id, &message)
                    .await
                    .map(|_| ())
                    .map_err(|e| unread(id, &e))
            }
        }
    }

    /// `tasks/cancel`: the task ends `cancelled` (its runner, wherever it is, drops the run).
    pub(crate) async fn cancel(&self, id: &str) -> Result<DetailedTask, Refusal> {
        let (store, scope) = match self {
            Self::Here(tasks, scope) => return tasks.cancel(id, scope),
            Self::Shared(store, scope) => (&**store, scope),
        };
        let task = shared_get(store, scope, id).await?;
        if task.task.status.is_terminal() {
            return Err(super::already_ended(id, status_name(task.task.status)));
        }
        let mut cancelled = task.task.clone();
        cancelled.last_updated_at = now();
        let cancelled = DetailedTask::new(cancelled, TaskPayload::Cancelled);
        match store.task_end(id, &encode(scope, &cancelled)).await {
            Ok(true) => Ok(cancelled),
            // It ended meanwhile: as it ended.
            Ok(false) => {
                let task = shared_get(store, scope, id).await?;
                Err(super::already_ended(id, status_name(task.task.status)))
            }
            Err(e) => Err(Refusal::Store(format!(
                "task {} could not be cancelled: the state store failed ({e}); ask again",
                quoted(id)
            ))),
        }
    }

    /// `tasks/list`: the scope's tasks, oldest first, `page` at a time after `cursor`.
    pub(crate) async fn list(
        &self,
        cursor: Option<&str>,
        page: usize,
    ) -> Result<(Vec<Task>, Option<String>), Refusal> {
        let (store, scope) = match self {
            Self::Here(tasks, scope) => return tasks.list(scope, cursor, page),
            Self::Shared(store, scope) => (&**store, scope),
        };
        let records = store.task_list(scope).await.map_err(|e| {
            Refusal::Store(format!(
                "the tasks could not be read from the state store ({e}); ask again"
            ))
        })?;
        let mut mine: Vec<Task> = records
            .iter()
            .filter_map(|r| decode(r))
            .filter(|r| &r.scope == scope)
            .map(|r| r.task.task)
            .collect();
        mine.sort_by(|a, b| {
            (a.created_at.as_str(), a.task_id.as_str())
                .cmp(&(b.created_at.as_str(), b.task_id.as_str()))
        });
        super::page_of(mine, cursor, page)
    }

    /// `tasks/result`: waits until the task ends (the store is asked every [`POLL`]), or until
    /// the request is cancelled (`gone`).
    pub(crate) async fn wait(
        &self,
        id: &str,
        gone: &CancellationToken,
    ) -> Result<DetailedTask, Refusal> {
        let (store, scope) = match self {
            Self::Here(tasks, scope) => return tasks.wait(id, scope, gone).await,
            Self::Shared(store, scope) => (&**store, scope),
        };
        loop {
            let task = shared_get(store, scope, id).await?;
            if task.task.status.is_terminal() {
                return Ok(task);
            }
            tokio::select! {
                _ = tokio::time::sleep(POLL) => {}
                _ = gone.cancelled() => return Ok(task),
            }
        }
    }
}

/// Task `id` of `scope` as the store has it; a running one whose lease lapsed is ended
/// `failed` (by this reader, unless another ended it first).
async fn shared_get(
    store: &dyn StateStore,
    scope: &str,
    id: &str,
) -> Result<DetailedTask, Refusal> {
    for _ in 0..2 {
        let Some((bytes, leased)) = store.task_read(id).await.map_err(|e| unread(id, &e))? else {
            return Err(not_found(id));
        };
        let record = decode(&bytes)
            .filter(|r| r.scope == scope)
            .ok_or_else(|| not_found(id))?;
        if leased || record.task.task.status.is_terminal() {
            return Ok(record.task);
        }
        let lost = failed(&record.task, LEASE_LAPSED);
        match store.task_end(id, &encode(scope, &lost)).await {
            Ok(true) => return Ok(lost),
            // Ended meanwhile (by its runner, or another reader): read again.
            Ok(false) => continue,
            Err(e) => return Err(unread(id, &e)),
        }
    }
    Err(not_found(id))
}

/// The runner's side of task `id` of `scope`: what the task's entry tells of each change (the
/// returned [`Watch`]) is written to `store` by a loop of its own, which also renews the
/// runner's lease and hands the run what other replicas sent it, until the task ends (or its
/// `ttl` passes).
pub(crate) fn link(
    store: Arc<dyn StateStore>,
    tasks: Weak<Tasks>,
    task: &Task,
    scope: String,
) -> Watch {
    let (changes, seen) = watch::channel::<Option<DetailedTask>>(None);
    let ttl = Duration::from_millis(task.ttl_ms.unwrap_or(1));
    let link = Link {
        store,
        tasks,
        id: task.task_id.clone(),
        scope,
        until: Instant::now() + ttl,
    };
    tokio::spawn(link.run(seen));
    Arc::new(move |task: &DetailedTask| {
        changes.send_if_modified(|last| {
            let news = last.as_ref() != Some(task);
            if news {
                *last = Some(task.clone());
            }
            news
        });
    })
}

struct Link {
    store: Arc<dyn StateStore>,
    tasks: Weak<Tasks>,
    id: String,
    scope: String,
    until: Instant,
}

impl Link {
    async fn run(self, mut seen: watch::Receiver<Option<DetailedTask>>) {
        let mut poll = tokio::time::interval(POLL);
        poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut renewed = Instant::now();
        // A change not yet written (the store failed): written on the next tick.
        let mut unwritten: Option<DetailedTask> = None;
        let mut last: Option<DetailedTask> = None;
        loop {
            if Instant::now() >= self.until {
                return;
            }
            tokio::select! {
                changed = seen.changed() => match changed {
                    Ok(()) => unwritten = seen.borrow_and_update().clone(),
                    // The task is gone here (the server stopped, or it expired): unless it
                    // ended, it is lost, and said so at once rather than when the lease lapses.
                    Err(_) => {
                        // (Not one whose ttl passes now: the store forgets it by itself.)
                        let expiring = Instant::now() + POLL >= self.until;
                        if let Some(task) = last.filter(|t| !t.task.status.is_terminal() && !expiring) {
                            let lost = failed(&task, RUNNER_STOPPED);
                            let _ = self.store.task_end(&self.id, &encode(&self.scope, &lost)).await;
                        }
                        return;
                    }
                },
                _ = poll.tick() => {
                    let renew = (renewed.elapsed() >= RENEW).then_some(LEASE);
                    match self.store.task_tick(&self.id, renew).await {
                        Ok(Some(messages)) => {
                            if renew.is_some() {
                                renewed = Instant::now();
                            }
                            self.hand_over(messages);
                        }
                        // Ended elsewhere (cancelled, or its lease lapsed): the run goes.
                        Ok(None) => {
                            if let Some(tasks) = self.tasks.upgrade() {
                                tasks.ended_elsewhere(&self.id);
                            }
                            return;
                        }
                        Err(_) => {}
                    }
                }
            }
            let Some(task) = unwritten.take() else {
                continue;
            };
            let record = encode(&self.scope, &task);
            let written = if task.task.status.is_terminal() {
                self.store.task_end(&self.id, &record).await
            } else {
                self.store.task_update(&self.id, &record).await
            };
            match written {
                Ok(true) if task.task.status.is_terminal() => return,
                Ok(true) => last = Some(task),
                // Ended elsewhere: the next tick says so.
                Ok(false) => last = Some(task),
                Err(_) => unwritten = Some(task),
            }
        }
    }

    /// Messages other replicas sent the task: a client's answers, handed to the run.
    fn hand_over(&self, messages: Vec<Vec<u8>>) {
        let Some(tasks) = self.tasks.upgrade() else {
            return;
        };
        for message in messages {
            if let Ok(responses) = serde_json::from_slice::<InputResponses>(&message) {
                tasks.answer(&self.id, responses);
            }
        }
    }
}

/// The tasks of `scope` the store has.
async fn scope_tasks(store: &dyn StateStore, scope: &str) -> Result<Vec<Task>, StoreError> {
    Ok(store
        .task_list(scope)
        .await?
        .iter()
        .filter_map(|r| decode(r))
        .filter(|r| r.scope == scope)
        .map(|r| r.task.task)
        .collect())
}

/// Ends the running tasks of `scope` cancelled (their session was ended by DELETE): their
/// runners, wherever they are, drop their runs. What the store fails to do is left to the
/// tasks' ttl.
pub(crate) async fn cancel_all(store: &dyn StateStore, scope: &str) {
    let Ok(tasks) = scope_tasks(store, scope).await else {
        return;
    };
    for mut task in tasks.into_iter().filter(|t| !t.status.is_terminal()) {
        task.last_updated_at = now();
        let cancelled = DetailedTask::new(task, TaskPayload::Cancelled);
        let _ = store
            .task_end(&cancelled.task.task_id, &encode(scope, &cancelled))
            .await;
    }
}

/// How often a session's stream on one replica asks the store how the session's tasks on other
/// replicas are going (see [`news`]).
const NEWS_POLL: Duration = Duration::from_secs(1);

/// The status changes of `scope`'s tasks that run on other replicas (`here` says which run on
/// this one: their news goes out from here already), for a handshake-era session's stream on
/// this replica: the store is asked every [`NEWS_POLL`] while the stream is open. What exists
/// when it opens is not news; a new task is news once it is past `working`.
pub(crate) fn news(
    store: Arc<dyn StateStore>,
    scope: String,
    here: impl Fn(&str) -> bool + Send + 'static,
) -> futures::channel::mpsc::Receiver<Task> {
    let (mut tx, rx) = futures::channel::mpsc::channel(64);
    tokio::spawn(async move {
        let mut seen: std::collections::HashMap<String, (rmcp::model::TaskStatus, Option<String>)> =
            Default::default();
        let mut first = true;
        while !tx.is_closed() {
            if let Ok(tasks) = scope_tasks(&*store, &scope).await {
                let mut now_seen = std::collections::HashMap::with_capacity(tasks.len());
                for task in tasks {
                    let state = (task.status, task.status_message.clone());
                    let was = seen.get(&task.task_id);
                    let news = match was {
                        Some(was) => was != &state,
                        None => !first && task.status != rmcp::model::TaskStatus::Working,
                    };
                    now_seen.insert(task.task_id.clone(), state);
                    if news && !here(&task.task_id) && tx.try_send(task).is_err() && tx.is_closed()
                    {
                        return;
                    }
                }
                seen = now_seen;
                first = false;
            }
            tokio::time::sleep(NEWS_POLL).await;
        }
    });
    rx
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn task(payload: TaskPayload) -> DetailedTask {
        let stamp = now();
        let mut task = Task::new("t1", rmcp::model::TaskStatus::Working, stamp.clone(), stamp);
        task.ttl_ms = Some(60_000);
        DetailedTask::new(task, payload)
    }

    #[test]
    fn a_record_keeps_whose_the_task_is_and_the_task() {
        let working = task(TaskPayload::Working);
        let scope = shared_scope(Some("session"), Some("alice"));
        assert_eq!(scope, r#"["session","alice"]"#);
        let record = decode(&encode(&scope, &working)).unwrap();
        assert_eq!(record.scope, scope);
        assert_eq!(record.task, working);
    }

    #[test]
    fn a_result_larger_than_the_store_keeps_ends_the_task_failed_in_words() {
        let text = "x".repeat(MAX_RECORD + 1);
        let result = serde_json::json!({ "content": [{ "type": "text", "text": text }] });
        let Value::Object(result) = result else {
            unreachable!()
        };
        let record = decode(&encode("s", &task(TaskPayload::Completed { result }))).unwrap();
        assert_eq!(record.task.task.status, rmcp::model::TaskStatus::Failed);
        let why = record.task.task.status_message.unwrap();
        assert!(
            why.starts_with("the task's result (")
                && why.ends_with(&format!(
                    " bytes) is larger than the state store keeps of a task (at most {MAX_RECORD} bytes)"
                )),
            "{why}"
        );
        let TaskPayload::Failed { error } = record.task.payload else {
            panic!("failed")
        };
        assert_eq!(error["code"], -32603);
        assert_eq!(error["message"], why.as_str());
    }
}
