//! Served calls run as tasks: a `tools/call` answered at once with a task, which the client
//! then polls (`tasks/get`), answers (`tasks/update`, 2026-07-28's in-task input), waits on
//! (`tasks/result`, 2025-11-25), lists (`tasks/list`, 2025-11-25) or cancels (`tasks/cancel`).
//!
//! The engine is generic over the run it is given (a [`Running`] of any [`super::ToolCaller`]:
//! a JavaScript tool, a gateway's relayed tool, a native closure); it knows nothing of either
//! era's wire, which `handler` (2026-07-28, rmcp's task hooks) and `task_legacy` (2025-11-25, raw
//! messages) speak over it.
//!
//! rmcp's `task_manager::TaskManager` is not used: it has no notion of whose a task is (any
//! caller who knows an id reads it), no bound on the number of tasks, no way to wait for a
//! task's end (2025-11-25's `tasks/result`) or to list tasks, keeps an ended task for a second
//! ttl, and sweeps only when called. Its wire types (`Task`, `DetailedTask`, `TaskPayload`)
//! are.
//!
//! Bounds: ids are 128 random bits; each task belongs to a [`Scope`] (a task of another is
//! "not found"); a ttl asked for is clamped to [`Limits::max_ttl`]; at most [`Limits::max_live`]
//! tasks exist at once (a new one is refused in words when full); a task whose ttl passes is
//! removed (and its run, if still going, aborted) by a timer of its own, so memory is
//! returned without any further traffic.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolResult, DetailedTask, InputRequests, InputResponses, JsonObject, Task, TaskPayload,
    TaskStatus,
};
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::rounds::Running;

pub use crate::bounds::{
    SERVE_MAX_TASKS as MAX_TASKS, SERVE_MAX_TASKS_PER_OWNER as MAX_PER_OWNER,
    SERVE_TASK_DEFAULT_TTL as DEFAULT_TTL, SERVE_TASK_MAX_TTL as MAX_TTL,
    SERVE_TASK_MIN_TTL as MIN_TTL, SERVE_TASK_POLL_INTERVAL as POLL_INTERVAL,
};

#[cfg(test)]
mod tests;

/// Whose a task is: the principal that made it (serving with auth), and, for a handshake-era
/// call, the session it was made in. Another scope is told the task does not exist.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Scope {
    pub session: Option<u64>,
    pub principal: Option<String>,
}

/// The bounds of one server's tasks (tests use small ones).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_live: usize,
    /// How many of them one scope may hold.
    pub max_per_owner: usize,
    pub default_ttl: Duration,
    pub max_ttl: Duration,
    pub poll_interval: Duration,
    /// The most bytes of results (and failures) ended tasks keep together: past it the tasks
    /// that ended first are forgotten (as if expired), the newest always kept.
    pub max_result_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_live: MAX_TASKS,
            max_per_owner: MAX_PER_OWNER,
            default_ttl: DEFAULT_TTL,
            max_ttl: MAX_TTL,
            poll_interval: POLL_INTERVAL,
            max_result_bytes: crate::bounds::SERVE_TASK_RESULT_BYTES,
        }
    }
}

/// Told each status change of a task (from `working` to `input_required` and back, and its
/// end), with the task as `tasks/get` would give it then: a front's status notifications.
pub type Watch = Arc<dyn Fn(&DetailedTask) + Send + Sync>;

/// How a task's run ended, as the engine is told by its driver.
pub enum Ended {
    /// The run's result (a tool's `isError` result included: the tool ran).
    Result(CallToolResult),
    /// The run failed rather than answered (a throw, a panic, an upstream's protocol error):
    /// a JSON-RPC error object.
    Failed(JsonObject),
    Cancelled,
}

/// Why a task method found nothing to act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// No such task for this scope (never made, of another, or expired).
    NotFound(String),
    /// `tasks/cancel` of a task that already ended (2025-11-25: -32602).
    Terminal(String),
}

impl Refusal {
    pub fn message(&self) -> &str {
        match self {
            Self::NotFound(m) | Self::Terminal(m) => m,
        }
    }
}

fn not_found(id: &str) -> Refusal {
    Refusal::NotFound(format!(
        "no task {}: it does not exist, or it expired",
        quoted(id)
    ))
}

/// A task id (or cursor) a client sent, quoted and bounded for a message.
fn quoted(id: &str) -> String {
    crate::config::quote::quote(id, 60)
}

/// One task.
struct Entry {
    scope: Scope,
    task: Task,
    /// `Working`, `InputRequired` (what the run waits on) or the terminal payload.
    payload: TaskPayload,
    expires: Instant,
    /// Fired by `tasks/cancel`: the driver drops the run (its `ctx.signal` fires).
    cancel: CancellationToken,
    /// Where `tasks/update` sends the client's answers.
    answers: mpsc::UnboundedSender<InputResponses>,
    /// Flips to true when the task ends (`tasks/result` waits on it).
    ended: watch::Sender<bool>,
    /// Told of each status change.
    watch: Option<Watch>,
    /// The handshake-era session whose task it is: when its connection or session ends, so
    /// does the task (its run is aborted, its result gone).
    session: Option<rmcp::Peer<rmcp::service::RoleServer>>,
    /// Aborts the expiry timer when the entry goes first.
    _expiry: super::abort::AbortOnDrop<()>,
    /// Once ended: when, and how many bytes its result (or failure) holds.
    kept: Option<(Instant, usize)>,
}

impl Entry {
    fn detailed(&self) -> DetailedTask {
        DetailedTask::new(self.task.clone(), self.payload.clone())
    }

    fn touch(&mut self) {
        self.task.last_updated_at = now();
    }

    /// Who to tell of the task's new status, and what (told once the lock is released).
    fn news(&self) -> Option<(Watch, DetailedTask)> {
        Some((self.watch.clone()?, self.detailed()))
    }
}

fn tell(news: Option<(Watch, DetailedTask)>) {
    if let Some((watch, task)) = news {
        watch(&task);
    }
}

/// Every task of one server.
pub struct Tasks {
    entries: Mutex<HashMap<String, Entry>>,
    limits: Limits,
}

impl Default for Tasks {
    fn default() -> Self {
        Self::new(Limits::default())
    }
}

fn now() -> String {
    rmcp::task_manager::current_timestamp()
}

impl Tasks {
    pub fn new(limits: Limits) -> Self {
        Self {
            entries: Mutex::default(),
            limits,
        }
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many tasks exist now (running or ended, not yet expired).
    pub fn count(&self) -> usize {
        let mut entries = self.lock();
        sweep(&mut entries);
        entries.len()
    }

    /// The ttl a task gets when `asked` (milliseconds) is asked for.
    pub fn ttl_for(&self, asked: Option<u64>) -> Duration {
        asked
            .map(Duration::from_millis)
            .unwrap_or(self.limits.default_ttl)
            .max(MIN_TTL)
            .min(self.limits.max_ttl)
    }

    /// Whether `scope` may make one more task now; why not, in words. (Checked before a run
    /// starts, so a refused call never runs; [`Tasks::create`] checks again.)
    pub fn room_for(&self, scope: &Scope) -> Result<(), String> {
        let mut entries = self.lock();
        sweep(&mut entries);
        self.room(&entries, scope)
    }

    fn room(&self, entries: &HashMap<String, Entry>, scope: &Scope) -> Result<(), String> {
        if entries.len() >= self.limits.max_live {
            return Err(format!(
                "{} tasks exist already, the most this server keeps; try again when some \
                 have ended or expired",
                entries.len()
            ));
        }
        let mine = entries.values().filter(|e| &e.scope == scope).count();
        if mine >= self.limits.max_per_owner {
            return Err(format!(
                "this client has {mine} tasks already, the most one client may keep; try again \
                 when some have ended or expired"
            ));
        }
        Ok(())
    }

    /// Makes `run` a task of `scope` and starts driving it; the task is readable (`get`)
    /// before this returns. `ended` is told how it ended (to report the call), `watch` each
    /// status change after the first. Refused in words when as many tasks as allowed exist.
    pub fn create(
        self: &Arc<Self>,
        scope: Scope,
        ttl: Option<u64>,
        run: Running,
        ended: impl FnOnce(&Ended) + Send + 'static,
        (watch, session): (Option<Watch>, Option<rmcp::Peer<rmcp::service::RoleServer>>),
    ) -> Result<Task, String> {
        let ttl = self.ttl_for(ttl);
        let id = super::rounds::new_state();
        let stamp = now();
        let mut task = Task::new(id.clone(), TaskStatus::Working, stamp.clone(), stamp);
        task.ttl_ms = Some(ttl.as_millis() as u64);
        task.poll_interval_ms = Some(self.limits.poll_interval.as_millis() as u64);
        let cancel = CancellationToken::new();
        let (answers, answers_rx) = mpsc::unbounded_channel();
        let weak = Arc::downgrade(self);
        let expiry = {
            let (weak, id) = (weak.clone(), id.clone());
            super::abort::AbortOnDrop(tokio::spawn(async move {
                tokio::time::sleep(ttl).await;
                if let Some(tasks) = weak.upgrade() {
                    tasks.expire(&id);
                }
            }))
        };
        {
            let mut entries = self.lock();
            sweep(&mut entries);
            self.room(&entries, &scope)?;
            let entry = Entry {
                scope,
                task: task.clone(),
                payload: TaskPayload::Working,
                expires: Instant::now() + ttl,
                cancel: cancel.clone(),
                answers,
                ended: watch::channel(false).0,
                watch,
                session,
                _expiry: expiry,
                kept: None,
            };
            entries.insert(id.clone(), entry);
        }
        tokio::spawn(drive(weak, id, run, answers_rx, cancel, ended));
        Ok(task)
    }

    /// `tasks/get`: the task as it is now.
    pub fn get(&self, id: &str, scope: &Scope) -> Result<DetailedTask, Refusal> {
        let mut entries = self.lock();
        sweep(&mut entries);
        match entries.get(id) {
            Some(entry) if &entry.scope == scope => Ok(entry.detailed()),
            _ => Err(not_found(id)),
        }
    }

    /// `tasks/update`: the client's answers to what the task waits on (partial answers are
    /// taken; keys it does not wait on are ignored).
    pub fn update(
        &self,
        id: &str,
        scope: &Scope,
        responses: InputResponses,
    ) -> Result<(), Refusal> {
        let mut entries = self.lock();
        sweep(&mut entries);
        let entry = match entries.get_mut(id) {
            Some(entry) if &entry.scope == scope => entry,
            _ => return Err(not_found(id)),
        };
        if let TaskPayload::InputRequired { input_requests } = &mut entry.payload {
            // Shown as answered at once; the driver hands them to the run.
            input_requests.retain(|key, _| !responses.contains_key(key));
            if input_requests.is_empty() {
                entry.payload = TaskPayload::Working;
            }
            entry.touch();
        }
        let _ = entry.answers.send(responses);
        Ok(())
    }

    /// `tasks/cancel`: the task ends `cancelled` at once and its run is dropped (a JavaScript
    /// tool's `ctx.signal` fires). A task that already ended is [`Refusal::Terminal`].
    pub fn cancel(&self, id: &str, scope: &Scope) -> Result<DetailedTask, Refusal> {
        let detailed = {
            let mut entries = self.lock();
            sweep(&mut entries);
            let entry = match entries.get_mut(id) {
                Some(entry) if &entry.scope == scope => entry,
                _ => return Err(not_found(id)),
            };
            if entry.task.status.is_terminal() {
                return Err(Refusal::Terminal(format!(
                    "task {id:?} has already ended ({}); it cannot be cancelled",
                    status_name(entry.task.status)
                )));
            }
            settle(entry, TaskPayload::Cancelled);
            entry.cancel.cancel();
            (entry.detailed(), entry.news())
        };
        tell(detailed.1);
        Ok(detailed.0)
    }

    /// `tasks/list`: the scope's tasks, oldest first, `page` at a time after `cursor` (a task
    /// id); the next cursor when there are more.
    pub fn list(
        &self,
        scope: &Scope,
        cursor: Option<&str>,
        page: usize,
    ) -> Result<(Vec<Task>, Option<String>), Refusal> {
        let mut entries = self.lock();
        sweep(&mut entries);
        let mut mine: Vec<&Entry> = entries.values().filter(|e| &e.scope == scope).collect();
        mine.sort_by(|a, b| {
            (a.task.created_at.as_str(), a.task.task_id.as_str())
                .cmp(&(b.task.created_at.as_str(), b.task.task_id.as_str()))
        });
        let start = match cursor {
            None => 0,
            Some(cursor) => match mine.iter().position(|e| e.task.task_id == cursor) {
                Some(at) => at + 1,
                None => {
                    return Err(Refusal::NotFound(format!(
                        "cursor {} is not one this server gave, or its task expired",
                        quoted(cursor)
                    )));
                }
            },
        };
        let rest = &mine[start.min(mine.len())..];
        let tasks: Vec<Task> = rest.iter().take(page).map(|e| e.task.clone()).collect();
        let next = (rest.len() > page)
            .then(|| tasks.last().map(|t| t.task_id.clone()))
            .flatten();
        Ok((tasks, next))
    }

    /// `tasks/result`: waits until the task ends, then the task as it ended; or until the
    /// request is cancelled (`gone`: the client cancelled it, or its session or connection
    /// ended), which answers the task as it is then.
    pub async fn wait(
        &self,
        id: &str,
        scope: &Scope,
        gone: &CancellationToken,
    ) -> Result<DetailedTask, Refusal> {
        let mut ended = {
            let mut entries = self.lock();
            sweep(&mut entries);
            match entries.get(id) {
                Some(entry) if &entry.scope == scope => entry.ended.subscribe(),
                _ => return Err(not_found(id)),
            }
        };
        // A closed channel means the task expired (or the server ended) meanwhile.
        tokio::select! {
            _ = ended.wait_for(|ended| *ended) => {}
            _ = gone.cancelled() => {}
        }
        self.get(id, scope)
    }

    /// Ends the tasks of sessions that ended (their runs are aborted).
    pub fn forget_closed(&self) {
        sweep(&mut self.lock());
    }

    /// How many `tasks/result` requests wait on task `id` now.
    #[cfg(test)]
    pub fn waiters(&self, id: &str) -> usize {
        self.lock()
            .get(id)
            .map_or(0, |entry| entry.ended.receiver_count())
    }

    /// Ends every task (the server is stopping): their runs are aborted.
    pub fn clear(&self) {
        let entries = std::mem::take(&mut *self.lock());
        for entry in entries.values() {
            entry.cancel.cancel();
        }
    }

    fn expire(&self, id: &str) {
        let gone = self.lock().remove(id);
        if let Some(entry) = gone {
            entry.cancel.cancel();
        }
    }

    /// Changes task `id` while it still runs (gone or ended: nothing), then tells its watcher
    /// what `change` says is news, outside the lock.
    fn if_running(
        &self,
        id: &str,
        change: impl FnOnce(&mut Entry) -> Option<(Watch, DetailedTask)>,
    ) {
        let news = {
            let mut entries = self.lock();
            match entries.get_mut(id) {
                Some(entry) if !entry.task.status.is_terminal() => change(entry),
                _ => None,
            }
        };
        tell(news);
    }

    /// The run's own words on how it is going (a gateway's: its upstream task's): the task's
    /// `statusMessage` while it runs, bounded; watchers hear of a change.
    pub fn status_message(&self, id: &str, message: &str) {
        let message: String = message
            .chars()
            .take(crate::bounds::TASK_MAX_MESSAGE_CHARS)
            .collect();
        self.if_running(id, |entry| {
            if entry.task.status_message.as_deref() == Some(message.as_str()) {
                return None;
            }
            entry.task.status_message = Some(message);
            entry.touch();
            entry.news()
        });
    }

    /// The driver's news: the run waits on `requests` (none: it is working).
    fn waiting(&self, id: &str, requests: InputRequests) {
        self.if_running(id, |entry| {
            let payload = if requests.is_empty() {
                TaskPayload::Working
            } else {
                TaskPayload::InputRequired {
                    input_requests: requests,
                }
            };
            if entry.payload == payload {
                return None;
            }
            let was = entry.task.status;
            entry.payload = payload;
            entry.task.status = entry.payload.status();
            entry.touch();
            if entry.task.status == was {
                return None;
            }
            entry.news()
        });
    }

    /// The driver's news: the run ended.
    fn ended(&self, id: &str, ended: &Ended) {
        self.if_running(id, |entry| {
            let payload = match ended {
                Ended::Result(result) => TaskPayload::Completed {
                    result: match serde_json::to_value(result) {
                        Ok(Value::Object(object)) => object,
                        _ => JsonObject::new(),
                    },
                },
                Ended::Failed(error) => TaskPayload::Failed {
                    error: error.clone(),
                },
                Ended::Cancelled => TaskPayload::Cancelled,
            };
            let bytes = match &payload {
                TaskPayload::Completed { result } => serde_json::to_vec(result),
                TaskPayload::Failed { error } => serde_json::to_vec(error),
                _ => Ok(Vec::new()),
            }
            .map_or(0, |v| v.len());
            settle(entry, payload);
            entry.kept = Some((Instant::now(), bytes));
            entry.news()
        });
        self.within_result_budget(id);
    }

    /// Ended tasks' results over [`Limits::max_result_bytes`] together: those that ended
    /// first are forgotten until the rest fit (`newest`, just ended, is always kept).
    fn within_result_budget(&self, newest: &str) {
        let mut entries = self.lock();
        let mut total: usize = entries
            .values()
            .filter_map(|e| e.kept)
            .map(|(_, b)| b)
            .sum();
        if total <= self.limits.max_result_bytes {
            return;
        }
        let mut ended: Vec<(Instant, usize, String)> = entries
            .iter()
            .filter(|(id, _)| id.as_str() != newest)
            .filter_map(|(id, e)| e.kept.map(|(at, bytes)| (at, bytes, id.clone())))
            .collect();
        ended.sort();
        for (_, bytes, id) in ended {
            if total <= self.limits.max_result_bytes {
                break;
            }
            entries.remove(&id);
            total -= bytes;
        }
    }
}

/// An entry's terminal state: set, stamped, and its waiters woken.
fn settle(entry: &mut Entry, payload: TaskPayload) {
    entry.payload = payload;
    entry.task.status = entry.payload.status();
    entry.touch();
    entry.ended.send_replace(true);
}

/// Removes the tasks whose ttl passed (their timers do too; this covers a timer not yet run).
/// Drops the tasks whose ttl passed or whose session ended, aborting their runs.
fn sweep(entries: &mut HashMap<String, Entry>) {
    let now = Instant::now();
    entries.retain(|_, entry| {
        let live = entry.expires > now
            && !entry
                .session
                .as_ref()
                .is_some_and(|peer| peer.is_transport_closed());
        if !live {
            entry.cancel.cancel();
        }
        live
    });
}

pub use crate::connect::execution::status_name;

/// A JSON-RPC error object (`{code, message}`), a failed task's `error`.
pub fn error_object(code: i32, message: impl Into<String>) -> JsonObject {
    match json!({ "code": code, "message": message.into() }) {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}

/// Drives a task's run to its end: what it waits on is published on the task, the client's
/// answers (`tasks/update`) are handed to it, and a cancel (or the task's expiry) drops it.
async fn drive(
    tasks: Weak<Tasks>,
    id: String,
    mut run: Running,
    mut answers: mpsc::UnboundedReceiver<InputResponses>,
    cancel: CancellationToken,
    report: impl FnOnce(&Ended) + Send + 'static,
) {
    let none = InputResponses::new();
    let ended = loop {
        run.drain_asks(&none);
        if let Some(tasks) = tasks.upgrade() {
            let mut requests = BTreeMap::new();
            for pending in &run.pending {
                if let Ok(request) = serde_json::from_value(pending.request()) {
                    requests.insert(pending.key.clone(), request);
                }
            }
            tasks.waiting(&id, requests);
        } else {
            break Ended::Cancelled;
        }
        let asks = async {
            match run.asks.as_mut() {
                Some(asks) => asks.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            joined = &mut run.task.0 => {
                break match joined {
                    Ok(value) => match run.ctx.failure() {
                        Some(message) => Ended::Failed(error_object(
                            rmcp::model::ErrorCode::INTERNAL_ERROR.0,
                            message,
                        )),
                        None => Ended::Result(crate::tool_result::call_result_from_json(value)),
                    },
                    Err(_) => Ended::Failed(error_object(
                        rmcp::model::ErrorCode::INTERNAL_ERROR.0,
                        "the tool panicked",
                    )),
                };
            }
            Some(asks) = asks => run.asked(asks, &none),
            Some(responses) = answers.recv() => run.answer(&responses),
            _ = cancel.cancelled() => break Ended::Cancelled,
        }
    };
    // The run goes first (aborted if still going, and its future gone before what it waits on
    // fails, so a JavaScript tool's ctx.signal fires before its input requests reject), then
    // the task hears how it ended.
    if !run.task.0.is_finished() {
        run.task.0.abort();
        let _ = (&mut run.task.0).await;
    }
    drop(run);
    report(&ended);
    if let Some(tasks) = tasks.upgrade() {
        tasks.ended(&id, &ended);
    }
}
