//! Tasks in a state store replicas share: what the store keeps of each task, and the store in
//! this process ([`MemoryTasks`], behind [`super::store::MemoryStore`]).
//!
//! A task's record (what `tasks/get` answers, opaque to the store) is written by the replica
//! that runs it and read by any. Beside it the store keeps:
//! - the task's end, claimed once: by its runner (the run ended), by a `tasks/cancel` on any
//!   replica, or by a reader that found the runner's lease lapsed. The first claim wins; a
//!   later one, and a running task's update after it, is refused. Its runner, told by its next
//!   tick, drops the run.
//! - its runner's lease, renewed by the runner while it runs: a task still running without one
//!   lost its runner.
//! - its summary (the task without its result), what `tasks/list` and a session's stream read.
//! - an inbox of messages for its runner (a client's answers): each tick reads those after
//!   what the run was handed already, and the store forgets those (so a tick whose answer was
//!   lost loses nothing).
//! - per scope (whose the tasks are), which tasks it has, for `tasks/list`.
//!
//! Everything a task has expires with it (its ttl from creation).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::bounds::SERVE_STORE_TASK_INBOX as MAX_INBOX;

/// The key names a task's parts are kept under in a shared store (a keyed digest of its id:
/// the store learns no id).
pub(crate) struct TaskNames {
    pub(crate) record: String,
    pub(crate) summary: String,
    pub(crate) end: String,
    pub(crate) lease: String,
    pub(crate) inbox: String,
    /// How many of the inbox's messages its runner was handed.
    pub(crate) inbox_base: String,
    /// What the scope's set holds of it.
    pub(crate) member: String,
}

/// Where the summary and the lease of the task whose scope set holds `member` are (the list
/// script builds the same names).
pub(crate) const SUMMARY_PREFIX: &str = "toolnexus:task-summary:";
pub(crate) const LEASE_PREFIX: &str = "toolnexus:task-lease:";

impl TaskNames {
    pub(crate) fn new(key: &super::seal::StateKey, id: &str) -> Self {
        let digest = key.name(&format!("task\0{id}"));
        Self {
            record: format!("toolnexus:task:{digest}"),
            summary: format!("{SUMMARY_PREFIX}{digest}"),
            end: format!("toolnexus:task-end:{digest}"),
            lease: format!("{LEASE_PREFIX}{digest}"),
            inbox: format!("toolnexus:task-inbox:{digest}"),
            inbox_base: format!("toolnexus:task-inbox-base:{digest}"),
            member: digest,
        }
    }
}

/// The name of the set of one scope's tasks.
pub(crate) fn scope_name(key: &super::seal::StateKey, scope: &str) -> String {
    format!("toolnexus:tasks:{}", key.name(&format!("tasks\0{scope}")))
}

/// What is written of a task: its record (what `tasks/get` answers, its result included) and
/// its summary (what `tasks/list` and a session's stream read: small).
#[derive(Clone, Copy)]
pub struct TaskWrite<'a> {
    pub record: &'a [u8],
    pub summary: &'a [u8],
}

/// What became of a message sent to a task's runner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sent {
    Queued,
    /// The task ended, or expired.
    Ended,
    /// As many messages as a task keeps wait already.
    Full,
}

/// One task as the memory store keeps it.
struct Kept {
    scope: String,
    record: Vec<u8>,
    summary: Vec<u8>,
    until: Instant,
    ended: bool,
    lease: Instant,
    inbox: Vec<Vec<u8>>,
    /// How many messages the runner was handed (and the inbox no longer holds).
    base: usize,
}

/// The tasks of a store in this process, bounded: past `max` the oldest are forgotten.
pub(crate) struct MemoryTasks {
    kept: HashMap<String, Kept>,
    max: usize,
}

impl MemoryTasks {
    pub(crate) fn new(max: usize) -> Self {
        Self {
            kept: HashMap::new(),
            max: max.max(1),
        }
    }

    fn live(&mut self, id: &str) -> Option<&mut Kept> {
        let now = Instant::now();
        self.kept.retain(|_, k| k.until > now);
        self.kept.get_mut(id)
    }

    pub(crate) fn create(
        &mut self,
        id: &str,
        scope: &str,
        write: TaskWrite<'_>,
        ttl: Duration,
        lease: Duration,
    ) {
        let now = Instant::now();
        self.kept.retain(|_, k| k.until > now);
        while self.kept.len() >= self.max {
            let oldest = self
                .kept
                .iter()
                .min_by_key(|(_, k)| k.until)
                .map(|(id, _)| id.clone());
            match oldest {
                Some(oldest) => self.kept.remove(&oldest),
                None => break,
            };
        }
        self.kept.insert(
            id.to_string(),
            Kept {
                scope: scope.to_string(),
                record: write.record.to_vec(),
                summary: write.summary.to_vec(),
                until: now + ttl,
                ended: false,
                lease: now + lease,
                inbox: Vec::new(),
                base: 0,
            },
        );
    }

    pub(crate) fn update(&mut self, id: &str, write: TaskWrite<'_>) -> bool {
        match self.live(id) {
            Some(kept) if !kept.ended => {
                kept.record = write.record.to_vec();
                kept.summary = write.summary.to_vec();
                true
            }
            _ => false,
        }
    }

    pub(crate) fn end(&mut self, id: &str, write: TaskWrite<'_>) -> bool {
        let ended = self.update(id, write);
        if let Some(kept) = self.live(id).filter(|_| ended) {
            kept.ended = true;
            kept.lease = Instant::now();
        }
        ended
    }

    pub(crate) fn tick(
        &mut self,
        id: &str,
        lease: Option<Duration>,
        handed: usize,
    ) -> Option<Vec<Vec<u8>>> {
        let kept = self.live(id).filter(|k| !k.ended)?;
        if let Some(lease) = lease {
            kept.lease = Instant::now() + lease;
        }
        if handed > kept.base {
            let taken = (handed - kept.base).min(kept.inbox.len());
            kept.inbox.drain(..taken);
            kept.base = handed;
        }
        Some(kept.inbox.clone())
    }

    pub(crate) fn read(&mut self, id: &str) -> Option<(Vec<u8>, bool)> {
        let kept = self.live(id)?;
        Some((kept.record.clone(), kept.lease > Instant::now()))
    }

    pub(crate) fn list(&mut self, scope: &str) -> Vec<(Vec<u8>, bool)> {
        let now = Instant::now();
        self.kept.retain(|_, k| k.until > now);
        self.kept
            .values()
            .filter(|k| k.scope == scope)
            .map(|k| (k.summary.clone(), k.lease > now))
            .collect()
    }

    pub(crate) fn send(&mut self, id: &str, message: &[u8]) -> Sent {
        match self.live(id) {
            Some(kept) if !kept.ended => {
                if kept.inbox.len() >= MAX_INBOX {
                    return Sent::Full;
                }
                kept.inbox.push(message.to_vec());
                Sent::Queued
            }
            _ => Sent::Ended,
        }
    }
}
