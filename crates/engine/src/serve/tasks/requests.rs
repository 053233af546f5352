//! What a client asks of its tasks: `tasks/get`, `tasks/update`, `tasks/cancel`, `tasks/list`,
//! `tasks/result` (a wait), and the server's own clean-ups.

use rmcp::model::{DetailedTask, InputResponses, Task, TaskPayload};
use tokio_util::sync::CancellationToken;

use crate::connect::execution::status_name;

use super::{Entry, Refusal, Scope, Tasks, already_ended, not_found, page_of, settle, sweep, tell};

impl Tasks {
    /// `tasks/get`: the task as it is now.
    pub(crate) fn get(&self, id: &str, scope: &Scope) -> Result<DetailedTask, Refusal> {
        let mut entries = self.lock();
        sweep(&mut entries);
        match entries.get(id) {
            Some(entry) if &entry.scope == scope => Ok(entry.detailed()),
            _ => Err(not_found(id)),
        }
    }

    /// `tasks/update`: the client's answers to what the task waits on (partial answers are
    /// taken; keys it does not wait on are ignored).
    pub(crate) fn update(
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
    pub(crate) fn cancel(&self, id: &str, scope: &Scope) -> Result<DetailedTask, Refusal> {
        let detailed = {
            let mut entries = self.lock();
            sweep(&mut entries);
            let entry = match entries.get_mut(id) {
                Some(entry) if &entry.scope == scope => entry,
                _ => return Err(not_found(id)),
            };
            if entry.task.status.is_terminal() {
                return Err(already_ended(id, status_name(entry.task.status)));
            }
            settle(entry, TaskPayload::Cancelled);
            entry.cancel.cancel();
            (entry.detailed(), entry.news(), entry.mirrored())
        };
        tell(detailed.1);
        tell(detailed.2);
        Ok(detailed.0)
    }

    /// A task of the shared store that was ended elsewhere (cancelled, its lease found lapsed,
    /// or too large to keep): its run is dropped here, its entry settled as `ended` says (as
    /// the store has it; cancelled when unknown).
    pub(crate) fn ended_elsewhere(&self, id: &str, ended: Option<DetailedTask>) {
        let news = {
            let mut entries = self.lock();
            match entries.get_mut(id) {
                Some(entry) if !entry.task.status.is_terminal() => {
                    match ended.filter(|t| t.task.status.is_terminal()) {
                        Some(ended) => {
                            entry.task.status_message = ended.task.status_message;
                            settle(entry, ended.payload);
                        }
                        None => settle(entry, TaskPayload::Cancelled),
                    }
                    entry.cancel.cancel();
                    entry.news()
                }
                _ => None,
            }
        };
        tell(news);
    }

    /// Task `id` as it is here, whoever's it is.
    pub(crate) fn detailed(&self, id: &str) -> Option<DetailedTask> {
        self.lock().get(id).map(Entry::detailed)
    }

    /// Whether task `id` is one of this server's (running or ended, not yet expired).
    pub(crate) fn has(&self, id: &str) -> bool {
        self.lock().contains_key(id)
    }

    /// A client's answers to task `id`, sent through another replica: handed to its run.
    pub(crate) fn answer(&self, id: &str, responses: InputResponses) {
        if let Some(entry) = self.lock().get(id) {
            let _ = entry.answers.send(responses);
        }
    }

    /// `tasks/list`: the scope's tasks, oldest first, `page` at a time after `cursor` (a task
    /// id); the next cursor when there are more.
    pub(crate) fn list(
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
        page_of(mine.iter().map(|e| e.task.clone()).collect(), cursor, page)
    }

    /// `tasks/result`: waits until the task ends, then the task as it ended; or until the
    /// request is cancelled (`gone`: the client cancelled it, or its session or connection
    /// ended), which answers the task as it is then.
    pub(crate) async fn wait(
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
    pub(crate) fn forget_closed(&self) {
        sweep(&mut self.lock());
    }

    /// How many `tasks/result` requests wait on task `id` now.
    #[cfg(test)]
    pub(crate) fn waiters(&self, id: &str) -> usize {
        self.lock()
            .get(id)
            .map_or(0, |entry| entry.ended.receiver_count())
    }

    /// Ends every task (the server is stopping): their runs are aborted.
    pub(crate) fn clear(&self) {
        let entries = std::mem::take(&mut *self.lock());
        for entry in entries.values() {
            entry.cancel.cancel();
        }
    }
}
