//! Served calls run as tasks: a `tools/call` answered at once with a task, which the client
//! then polls (`tasks/get`), answers (`tasks/update`, 2026-07-28's in-task input), waits on
//! (`tasks/result`, 2025-11-25), lists (`tasks/list`, 2025-11-25) or cancels (`tasks/cancel`).
//!
//! The engine is generic over the run it is given (a [`Running`](super::rounds::Running) of
//! any [`super::ToolCaller`]: a JavaScript tool, a gateway's relayed tool, a native closure);
//! it knows nothing of either
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

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolResult, DetailedTask, InputResponses, JsonObject, Task, TaskPayload};
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

pub(crate) use crate::bounds::{
    SERVE_MAX_TASKS as MAX_TASKS, SERVE_MAX_TASKS_PER_OWNER as MAX_PER_OWNER,
    SERVE_TASK_DEFAULT_TTL as DEFAULT_TTL, SERVE_TASK_MAX_TTL as MAX_TTL,
    SERVE_TASK_MIN_TTL as MIN_TTL, SERVE_TASK_POLL_INTERVAL as POLL_INTERVAL,
};

pub(crate) mod fleet;
mod requests;
pub(crate) mod run;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_legacy;
#[cfg(test)]
mod tests_runs;

/// Whose a task is: the principal that made it (serving with auth), and, for a handshake-era
/// call, the session it was made in. Another scope is told the task does not exist.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Scope {
    pub(crate) session: Option<u64>,
    pub(crate) principal: Option<String>,
}

/// The bounds of one server's tasks (tests use small ones).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) max_live: usize,
    /// How many of them one scope may hold.
    pub(crate) max_per_owner: usize,
    pub(crate) default_ttl: Duration,
    pub(crate) max_ttl: Duration,
    pub(crate) poll_interval: Duration,
    /// The most bytes of results (and failures) ended tasks keep together: past it the tasks
    /// that ended first are forgotten (as if expired), the newest always kept.
    pub(crate) max_result_bytes: usize,
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
pub(crate) type Watch = Arc<dyn Fn(&DetailedTask) + Send + Sync>;

/// How a task's run ended, as the engine is told by its driver.
pub(crate) enum Ended {
    /// The run's result (a tool's `isError` result included: the tool ran).
    Result(CallToolResult),
    /// The run failed rather than answered (a throw, a panic, an upstream's protocol error):
    /// a JSON-RPC error object.
    Failed(JsonObject),
    Cancelled,
}

/// Why a task method found nothing to act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// No such task for this scope (never made, of another, or expired).
    NotFound(String),
    /// `tasks/cancel` of a task that already ended (2025-11-25: -32602).
    Terminal(String),
    /// The shared state store failed (-32603): the client may ask again.
    Store(String),
}

impl Refusal {
    pub(crate) fn message(&self) -> &str {
        match self {
            Self::NotFound(m) | Self::Terminal(m) | Self::Store(m) => m,
        }
    }

    /// The JSON-RPC error a client gets: the store's failure is the server's, the rest the
    /// request's.
    pub(crate) fn error(&self) -> rmcp::ErrorData {
        match self {
            Self::Store(m) => rmcp::ErrorData::internal_error(m.clone(), None),
            other => rmcp::ErrorData::invalid_params(other.message().to_string(), None),
        }
    }
}

fn already_ended(id: &str, status: &str) -> Refusal {
    Refusal::Terminal(format!(
        "task {} has already ended ({status}); it cannot be cancelled",
        quoted(id)
    ))
}

/// `tasks/list`'s page of `tasks` (oldest first): `page` of them after `cursor` (a task id),
/// and the next cursor when there are more.
fn page_of(
    tasks: Vec<Task>,
    cursor: Option<&str>,
    page: usize,
) -> Result<(Vec<Task>, Option<String>), Refusal> {
    let start = match cursor {
        None => 0,
        Some(cursor) => match tasks.iter().position(|t| t.task_id == cursor) {
            Some(at) => at + 1,
            None => {
                return Err(Refusal::NotFound(format!(
                    "cursor {} is not one this server gave, or its task expired",
                    quoted(cursor)
                )));
            }
        },
    };
    let rest = &tasks[start.min(tasks.len())..];
    let listed: Vec<Task> = rest.iter().take(page).cloned().collect();
    let next = (rest.len() > page)
        .then(|| listed.last().map(|t| t.task_id.clone()))
        .flatten();
    Ok((listed, next))
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
    /// Told of every change (the shared store's record of it; see [`fleet`]).
    mirror: Option<Watch>,
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

    /// The shared store's record of the task, and what it is now (told outside the lock).
    fn mirrored(&self) -> Option<(Watch, DetailedTask)> {
        Some((self.mirror.clone()?, self.detailed()))
    }
}

fn tell(news: Option<(Watch, DetailedTask)>) {
    if let Some((watch, task)) = news {
        watch(&task);
    }
}

/// Every task of one server.
pub(crate) struct Tasks {
    entries: Mutex<HashMap<String, Entry>>,
    limits: Limits,
    /// The loops writing its tasks to a shared store (`fleet::link`), waited for on stop.
    links: tokio_util::task::TaskTracker,
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
    pub(crate) fn new(limits: Limits) -> Self {
        Self {
            entries: Mutex::default(),
            limits,
            links: tokio_util::task::TaskTracker::new(),
        }
    }

    /// Runs `link`, a task's loop writing it to a shared store, as one of those
    /// [`Tasks::links_written`] waits for.
    pub(crate) fn track_link(&self, link: impl Future<Output = ()> + Send + 'static) {
        self.links.spawn(link);
    }

    /// Waits, at most `bound`, until every loop writing a task to a shared store has ended:
    /// once the tasks were dropped ([`Tasks::clear`]), each writes its task's end first (a
    /// run that was going is lost, and said so at once rather than when its lease lapses).
    pub(crate) async fn links_written(&self, bound: Duration) {
        self.links.close();
        let _ = tokio::time::timeout(bound, self.links.wait()).await;
        self.links.reopen();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many tasks exist now (running or ended, not yet expired).
    #[cfg(test)]
    pub(crate) fn count(&self) -> usize {
        let mut entries = self.lock();
        sweep(&mut entries);
        entries.len()
    }

    /// The ttl a task gets when `asked` (milliseconds) is asked for.
    pub(crate) fn ttl_for(&self, asked: Option<u64>) -> Duration {
        asked
            .map(Duration::from_millis)
            .unwrap_or(self.limits.default_ttl)
            .max(MIN_TTL)
            .min(self.limits.max_ttl)
    }

    /// Whether `scope` may make one more task now; why not, in words. (Checked before a run
    /// starts, so a refused call never runs; [`Tasks::create`] checks again.)
    pub(crate) fn room_for(&self, scope: &Scope) -> Result<(), String> {
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

/// A JSON-RPC error object (`{code, message}`), a failed task's `error`.
pub(crate) fn error_object(code: i32, message: impl Into<String>) -> JsonObject {
    match json!({ "code": code, "message": message.into() }) {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}
