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

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{DetailedTask, InputResponses, Task, TaskPayload};
use tokio_util::sync::CancellationToken;

use super::{Refusal, Scope, Tasks, not_found, now, quoted};
use crate::bounds::{SERVE_TASK_LEASE as LEASE, SERVE_TASK_STORE_POLL as POLL};
use crate::connect::execution::status_name;
use crate::serve::store::{Sent, StateStore, StoreError};

mod link;
mod record;
pub(crate) use link::link;
use record::{Summary, Written, decode, failed};

/// Why a task whose runner stopped renewing its lease failed.
pub(crate) const LEASE_LAPSED: &str = "the replica running this task stopped renewing its lease \
     (it stopped, or lost the state store): the task's run is lost";
/// How long `tasks/result` keeps waiting through a failing store before it says so.
const WAIT_THROUGH: Duration = Duration::from_secs(10);

/// Whose a task of the shared store is, the same on every replica: in the handshake era its
/// session's (the session's id as every replica opens it), and its principal's (its key).
pub(crate) fn shared_scope(session: Option<&str>, owner: Option<&str>) -> String {
    serde_json::json!([session, owner]).to_string()
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
    let written = Written::of(
        scope,
        &DetailedTask::new(task.clone(), TaskPayload::Working),
    );
    store
        .task_create(&task.task_id, scope, written.write(), ttl, LEASE)
        .await
}

/// Ends a recorded task that will not run after all (`why`).
pub(crate) async fn refuse(store: &dyn StateStore, scope: &str, task: &Task, why: &str) {
    let working = DetailedTask::new(task.clone(), TaskPayload::Working);
    let written = Written::of(scope, &failed(&working, why));
    let _ = store.task_end(&task.task_id, written.write()).await;
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
        let (store, scope) = match self {
            Self::Here(tasks, scope) => return tasks.update(id, scope, responses),
            Self::Shared(store, scope) => (&**store, scope),
        };
        let task = shared_get(store, scope, id).await?;
        if task.task.status.is_terminal() {
            return Ok(());
        }
        let message = serde_json::to_vec(&responses).unwrap_or_default();
        match store.task_send(id, &message).await {
            Ok(Sent::Queued | Sent::Ended) => Ok(()),
            Ok(Sent::Full) => Err(Refusal::Store(format!(
                "task {} has {} answers waiting for its run already; send again once it has \
                 taken them",
                quoted(id),
                crate::bounds::SERVE_STORE_TASK_INBOX
            ))),
            Err(e) => Err(Refusal::Store(format!(
                "the answers to task {} could not be sent to its run: the state store failed \
                 ({e}); send them again",
                quoted(id)
            ))),
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
        let written = Written::of(scope, &cancelled(task.task));
        match store.task_end(id, written.write()).await {
            Ok(true) => Ok(written.task),
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
        let mut mine = scope_tasks(store, scope).await.map_err(|e| {
            Refusal::Store(format!(
                "the tasks could not be read from the state store ({e}); ask again"
            ))
        })?;
        mine.sort_by(|a, b| {
            (a.created_at.as_str(), a.task_id.as_str())
                .cmp(&(b.created_at.as_str(), b.task_id.as_str()))
        });
        super::page_of(mine, cursor, page)
    }

    /// `tasks/result`: waits until the task ends (the store is asked every [`POLL`], and
    /// through its failures for up to [`WAIT_THROUGH`]), or until the request is cancelled
    /// (`gone`).
    pub(crate) async fn wait(
        &self,
        id: &str,
        gone: &CancellationToken,
    ) -> Result<DetailedTask, Refusal> {
        let (store, scope) = match self {
            Self::Here(tasks, scope) => return tasks.wait(id, scope, gone).await,
            Self::Shared(store, scope) => (&**store, scope),
        };
        let mut failing: Option<Instant> = None;
        loop {
            match shared_get(store, scope, id).await {
                Ok(task) if task.task.status.is_terminal() => return Ok(task),
                Ok(_) => failing = None,
                Err(Refusal::Store(why)) => {
                    if failing.get_or_insert_with(Instant::now).elapsed() >= WAIT_THROUGH {
                        return Err(Refusal::Store(why));
                    }
                }
                Err(refusal) => return Err(refusal),
            }
            tokio::select! {
                _ = tokio::time::sleep(POLL) => {}
                _ = gone.cancelled() => return shared_get(store, scope, id).await,
            }
        }
    }
}

/// `task` ended `cancelled`.
fn cancelled(mut task: Task) -> DetailedTask {
    task.last_updated_at = now();
    DetailedTask::new(task, TaskPayload::Cancelled)
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
        let lost = Written::of(scope, &failed(&record.task, LEASE_LAPSED));
        match store.task_end(id, lost.write()).await {
            Ok(true) => return Ok(lost.task),
            // Ended meanwhile (by its runner, or another reader): read again.
            Ok(false) => continue,
            Err(e) => return Err(unread(id, &e)),
        }
    }
    Err(not_found(id))
}

/// The tasks of `scope` the store has, as they are: one whose runner's lease lapsed is ended
/// `failed` on the way (as [`shared_get`] does).
async fn scope_tasks(store: &dyn StateStore, scope: &str) -> Result<Vec<Task>, StoreError> {
    let mut tasks = Vec::new();
    for (bytes, leased) in store.task_list(scope).await? {
        let Some(summary) = serde_json::from_slice::<Summary>(&bytes)
            .ok()
            .filter(|s| s.scope == scope)
        else {
            continue;
        };
        let task = summary.task;
        if leased || task.status.is_terminal() {
            tasks.push(task);
            continue;
        }
        // Its runner's lease lapsed: ended `failed` here (from the summary: no read of the
        // record), unless another ended it first (then as that one did).
        let lost = Written::of(
            scope,
            &failed(
                &DetailedTask::new(task.clone(), TaskPayload::Working),
                LEASE_LAPSED,
            ),
        );
        match store.task_end(&task.task_id, lost.write()).await {
            Ok(true) => tasks.push(lost.task.task),
            _ => match shared_get(store, scope, &task.task_id).await {
                Ok(now) => tasks.push(now.task),
                Err(Refusal::NotFound(_)) => {}
                Err(_) => tasks.push(task),
            },
        }
    }
    Ok(tasks)
}

/// Ends the running tasks of `scope` cancelled (their session was ended by DELETE): their
/// runners, wherever they are, drop their runs. What the store fails to do is left to the
/// tasks' ttl.
pub(crate) async fn cancel_all(store: Arc<dyn StateStore>, scope: String) {
    let Ok(tasks) = scope_tasks(&*store, &scope).await else {
        return;
    };
    let ends = tasks
        .into_iter()
        .filter(|t| !t.status.is_terminal())
        .map(|task| {
            let store = store.clone();
            let written = Written::of(&scope, &cancelled(task));
            async move {
                let _ = store
                    .task_end(&written.task.task.task_id, written.write())
                    .await;
            }
        });
    futures::future::join_all(ends).await;
}

/// How often a session's stream on one replica asks the store how the session's tasks on other
/// replicas are going (see [`news`]).
const NEWS_POLL: Duration = Duration::from_secs(1);

/// The status changes of `scope`'s tasks that run on other replicas (`here` says which run on
/// this one: their news goes out from here already), for a handshake-era session's stream on
/// this replica: the store is asked every [`NEWS_POLL`] while the stream is open. A task is news
/// once it is past `working`, and then at each change. A task already past `working` when the
/// stream opens is told at once: the client may have been away (a stream that dropped and came
/// back, here or on another replica) while it ended or came to need input, and a status told
/// twice is harmless where one never told is lost.
pub(crate) fn news(
    store: Arc<dyn StateStore>,
    scope: String,
    here: impl Fn(&str) -> bool + Send + 'static,
) -> futures::channel::mpsc::Receiver<Task> {
    type Seen = (rmcp::model::TaskStatus, Option<String>);
    let (mut tx, rx) = futures::channel::mpsc::channel(64);
    tokio::spawn(async move {
        let mut seen: std::collections::HashMap<String, Seen> = Default::default();
        while !tx.is_closed() {
            if let Ok(tasks) = scope_tasks(&*store, &scope).await {
                let mut now_seen = std::collections::HashMap::with_capacity(tasks.len());
                for task in tasks {
                    let state = (task.status, task.status_message.clone());
                    let was = seen.remove(&task.task_id);
                    let news = match &was {
                        Some(was) => was != &state,
                        None => task.status != rmcp::model::TaskStatus::Working,
                    };
                    let id = task.task_id.clone();
                    if !news || here(&id) || tx.try_send(task).is_ok() {
                        now_seen.insert(id, state);
                    } else if tx.is_closed() {
                        return;
                    } else if let Some(was) = was {
                        // Full: told on the next round.
                        now_seen.insert(id, was);
                    }
                }
                seen = now_seen;
            }
            tokio::time::sleep(NEWS_POLL).await;
        }
    });
    rx
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bounds::SERVE_STORE_TASK_BYTES as MAX_RECORD;
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
        let record = decode(&Written::of(&scope, &working).record).unwrap();
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
        let record =
            decode(&Written::of("s", &task(TaskPayload::Completed { result })).record).unwrap();
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
