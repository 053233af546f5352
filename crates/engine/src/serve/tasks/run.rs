//! A task's run: made a task and driven to its end ([`Tasks::create`], `drive`), and what the
//! driver tells the task on the way (what the run waits on, its status message, how it ended,
//! its expiry), within the ended tasks' result budget.

use std::collections::BTreeMap;
use std::sync::{Arc, Weak};
use std::time::Instant;

use rmcp::model::{
    DetailedTask, InputRequests, InputResponses, JsonObject, Task, TaskPayload, TaskStatus,
};
use serde_json::Value;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::{Ended, Entry, Scope, Tasks, Watch, error_object, now, settle, sweep, tell};
use crate::serve::rounds::Running;

/// What a task is tied to beside its run.
#[derive(Default)]
pub(crate) struct Ties {
    /// Told of each status change after the first (a front's status notifications).
    pub(crate) watch: Option<Watch>,
    /// The handshake-era session it ends with.
    pub(crate) session: Option<rmcp::Peer<rmcp::service::RoleServer>>,
    /// Told of every change (the shared store's record of it).
    pub(crate) mirror: Option<Watch>,
}

impl Tasks {
    /// A new task (not made yet): a fresh id, working, with the ttl `ttl`.
    pub(crate) fn new_task(&self, ttl: std::time::Duration) -> Task {
        let stamp = now();
        let mut task = Task::new(
            crate::serve::rounds::new_state(),
            TaskStatus::Working,
            stamp.clone(),
            stamp,
        );
        task.ttl_ms = Some(ttl.as_millis() as u64);
        task.poll_interval_ms = Some(self.limits.poll_interval.as_millis() as u64);
        task
    }

    /// Makes `run` the task `task` (from [`Tasks::new_task`]) of `scope` and starts driving
    /// it; the task is readable (`get`) before this returns. `ended` is told how it ended (to
    /// report the call). Refused in words when as many tasks as allowed exist.
    pub(crate) fn create(
        self: &Arc<Self>,
        scope: Scope,
        task: Task,
        run: Running,
        ended: impl FnOnce(&Ended) + Send + 'static,
        ties: Ties,
    ) -> Result<Task, String> {
        let ttl = std::time::Duration::from_millis(task.ttl_ms.unwrap_or(0)).max(super::MIN_TTL);
        let id = task.task_id.clone();
        let cancel = CancellationToken::new();
        let (answers, answers_rx) = mpsc::unbounded_channel();
        let weak = Arc::downgrade(self);
        let expiry = {
            let (weak, id) = (weak.clone(), id.clone());
            crate::serve::abort::AbortOnDrop(tokio::spawn(async move {
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
                watch: ties.watch,
                mirror: ties.mirror,
                session: ties.session,
                _expiry: expiry,
                kept: None,
            };
            entries.insert(id.clone(), entry);
        }
        tokio::spawn(drive(weak, id, run, answers_rx, cancel, ended));
        Ok(task)
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
        let (news, mirrored) = {
            let mut entries = self.lock();
            match entries.get_mut(id) {
                Some(entry) if !entry.task.status.is_terminal() => {
                    (change(entry), entry.mirrored())
                }
                _ => (None, None),
            }
        };
        tell(news);
        tell(mirrored);
    }

    /// The run's own words on how it is going (a gateway's: its upstream task's): the task's
    /// `statusMessage` while it runs, bounded; watchers hear of a change.
    pub(crate) fn status_message(&self, id: &str, message: &str) {
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
