//! The runner's side of a task in the shared store: a loop of its own per task, on the replica
//! that runs it.

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use rmcp::model::{DetailedTask, InputResponses, Task, TaskStatus};
use tokio::sync::watch;

use super::record::{Written, decode, failed};
use crate::bounds::{
    SERVE_TASK_LEASE as LEASE, SERVE_TASK_LEASE_RENEW as RENEW, SERVE_TASK_STORE_POLL as POLL,
};
use crate::serve::store::StateStore;
use crate::serve::tasks::Tasks;
use crate::serve::tasks::Watch;

/// Why a task whose runner stopped (its server stopping) failed.
const RUNNER_STOPPED: &str = "the replica running this task stopped: the task's run is lost";

/// Links task `task` of `scope` to `store`: what the task's entry tells of each change (the
/// returned [`Watch`]) is written by a loop of its own, which also renews the runner's lease,
/// hands the run what other replicas sent it, and ends the run when the task was ended
/// elsewhere, until the task ends (or its ttl passes). `tell` (status notifications) hears of
/// each change of status or status message as the store has it, once written.
pub(crate) fn link(
    store: Arc<dyn StateStore>,
    tasks: Weak<Tasks>,
    task: &Task,
    scope: String,
    tell: Option<Watch>,
) -> Watch {
    let (changes, seen) = watch::channel::<Option<DetailedTask>>(None);
    let ttl = Duration::from_millis(task.ttl_ms.unwrap_or(1));
    let link = Link {
        store,
        tasks,
        id: task.task_id.clone(),
        scope,
        until: Instant::now() + ttl,
        tell,
        told: (TaskStatus::Working, None),
    };
    match link.tasks.upgrade() {
        Some(tasks) => tasks.track_link(link.run(seen)),
        None => drop(tokio::spawn(link.run(seen))),
    }
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
    tell: Option<Watch>,
    /// What `tell` was last told (a task is made `working`, which is not news).
    told: (TaskStatus, Option<String>),
}

impl Link {
    async fn run(mut self, mut seen: watch::Receiver<Option<DetailedTask>>) {
        // The first tick one period on (the task's entry is made just after the link).
        let mut poll = tokio::time::interval_at((Instant::now() + POLL).into(), POLL);
        poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut renewed = Instant::now();
        // How many messages of the task's inbox the run was handed.
        let mut handed = 0;
        // A change not yet written (the store failed): written on the next tick.
        let mut unwritten: Option<DetailedTask> = None;
        // The last change written.
        let mut last: Option<DetailedTask> = None;
        loop {
            if Instant::now() >= self.until {
                return;
            }
            tokio::select! {
                changed = seen.changed() => match changed {
                    Ok(()) => unwritten = seen.borrow_and_update().clone(),
                    Err(_) => return self.gone(unwritten.or(last)).await,
                },
                _ = poll.tick() => {
                    let renew = (renewed.elapsed() >= RENEW).then_some(LEASE);
                    match self.store.task_tick(&self.id, renew, handed).await {
                        Ok(Some(messages)) => {
                            if renew.is_some() {
                                renewed = Instant::now();
                            }
                            // Those that do not open are passed over (counted all the same).
                            handed += messages.len();
                            self.hand_over(messages.into_iter().flatten());
                        }
                        // Ended elsewhere (cancelled, or its lease lapsed): the run goes.
                        Ok(None) => return self.ended_elsewhere().await,
                        Err(_) => {}
                    }
                }
            }
            let Some(task) = unwritten.take() else {
                continue;
            };
            let written = Written::of(&self.scope, &task);
            let stored = if written.ends() {
                self.store.task_end(&self.id, written.write()).await
            } else {
                self.store.task_update(&self.id, written.write()).await
            };
            match stored {
                Ok(true) if written.ends() => {
                    self.told(&written.task);
                    if !task.task.status.is_terminal() {
                        // Ended for what it is (too large to keep): so is its run.
                        if let Some(tasks) = self.tasks.upgrade() {
                            tasks.ended_elsewhere(&self.id, Some(written.task));
                        }
                    }
                    return;
                }
                Ok(true) => {
                    self.told(&written.task);
                    last = Some(task);
                }
                Ok(false) => return self.ended_elsewhere().await,
                Err(_) => unwritten = Some(task),
            }
        }
    }

    /// `tell` of `task`, when its status or status message is news.
    fn told(&mut self, task: &DetailedTask) {
        let now = (task.task.status, task.task.status_message.clone());
        if now == self.told {
            return;
        }
        self.told = now;
        if let Some(tell) = &self.tell {
            tell(task);
        }
    }

    /// The task was ended elsewhere: the run goes, and the task here (and its client) hear how
    /// it ended as the store has it.
    async fn ended_elsewhere(mut self) {
        let mut ended = None;
        for _ in 0..2 {
            match self.store.task_read(&self.id).await {
                Ok(Some((bytes, _))) => {
                    ended = decode(&bytes).map(|r| r.task);
                    break;
                }
                Ok(None) => break,
                Err(_) => tokio::time::sleep(POLL).await,
            }
        }
        let Some(tasks) = self.tasks.upgrade() else {
            return;
        };
        tasks.ended_elsewhere(&self.id, ended);
        // How it ended, as the store has it (as this replica settled it, when unread).
        if let Some(ended) = tasks.detailed(&self.id) {
            self.told(&ended);
        }
    }

    /// The task is gone here (the server stopped, or it was forgotten) with `task` its last
    /// change: an end not yet written is written; a run still going is lost, and said so at
    /// once rather than when the lease lapses (unless its ttl passes now: the store forgets it
    /// by itself).
    async fn gone(self, task: Option<DetailedTask>) {
        let Some(task) = task else {
            return;
        };
        if Instant::now() + POLL >= self.until {
            return;
        }
        let ended = if task.task.status.is_terminal() {
            task
        } else {
            failed(&task, RUNNER_STOPPED)
        };
        let written = Written::of(&self.scope, &ended);
        let _ = self.store.task_end(&self.id, written.write()).await;
    }

    /// Messages other replicas sent the task: a client's answers, handed to the run.
    fn hand_over(&self, messages: impl Iterator<Item = Vec<u8>>) {
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
