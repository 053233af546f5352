//! What a server sends during a call that belongs to whoever made the call: progress, log
//! messages, elicitation, sampling. When a gateway forwards a call, its front client is registered here
//! for the call's duration, so those reach it mid-call instead of stopping at toolnexus.
#![allow(deprecated)] // logging and sampling are deprecated by SEP-2577 but still relayed.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken,
};

/// A task's state as its call reports it (`onStatus`).
#[derive(Clone, Debug, PartialEq)]
pub struct TaskUpdate {
    pub(crate) task_id: String,
    /// `working`, `input_required`, `completed`, `failed` or `cancelled`.
    pub(crate) status: &'static str,
    pub(crate) status_message: Option<String>,
}

impl TaskUpdate {
    /// `{ taskId, status, statusMessage? }`.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::{Map, Value};
        let mut update = Map::new();
        update.insert("taskId".into(), Value::String(self.task_id.clone()));
        update.insert("status".into(), Value::String(self.status.into()));
        if let Some(message) = &self.status_message {
            update.insert("statusMessage".into(), Value::String(message.clone()));
        }
        Value::Object(update)
    }
}

/// The caller of a forwarded call, as far as the upstream server's messages go.
pub trait Front: Send + Sync {
    /// `_meta` entries the forwarded request carries on (the caller's trace context).
    fn meta(&self) -> Option<serde_json::Map<String, serde_json::Value>> {
        None
    }
    /// The upstream reported progress on this call (sent on with the front's own token).
    fn progress(&self, param: ProgressNotificationParam);
    /// The upstream logged something while this call ran.
    fn log(&self, param: LoggingMessageNotificationParam);
    /// The upstream asked the user for input; None when the front client cannot be asked.
    fn elicit(&self, params: ElicitRequestParams) -> BoxFuture<'static, Option<ElicitResult>>;
    /// The upstream asked the client's model; None when the front client cannot be asked.
    fn sample(
        &self,
        params: CreateMessageRequestParams,
    ) -> BoxFuture<'static, Option<CreateMessageResult>>;
    /// Where a call run again (by another replica) resumes upstream: the upstream's last
    /// input-required result, when the run that was continued had reached one.
    fn resume_point(&self) -> Option<rmcp::model::InputRequiredResult> {
        None
    }
    /// The upstream answered this call input-required: a replica that runs the call again
    /// resumes from here instead of calling it afresh.
    fn reached(&self, _result: &rmcp::model::InputRequiredResult) {}
    /// The call runs as a task upstream, whose status is now this (each change once).
    fn status(&self, _update: &TaskUpdate) {}
    /// Resuming from [`Front::resume_point`] failed (the upstream did not take its state): the
    /// call is made afresh, its questions numbered from the start again.
    fn restart(&self) {}
}

/// The fronts of one connection's calls in flight.
#[derive(Clone, Default)]
pub(crate) struct Relays(Arc<Mutex<Table>>);

#[derive(Default)]
struct Table {
    next: u64,
    /// In start order; each with the progress token of its upstream request.
    active: Vec<(u64, ProgressToken, Arc<dyn Front>)>,
}

impl Relays {
    /// Registers `front` for the request sent with `token` until the guard drops.
    pub(crate) fn register(&self, token: ProgressToken, front: Arc<dyn Front>) -> Registration {
        let mut table = self.0.lock().unwrap_or_else(|e| e.into_inner());
        table.next += 1;
        let id = table.next;
        table.active.push((id, token, front));
        Registration {
            relays: self.clone(),
            id,
        }
    }

    fn find(&self, token: &ProgressToken) -> Option<Arc<dyn Front>> {
        let table = self.0.lock().unwrap_or_else(|e| e.into_inner());
        table
            .active
            .iter()
            .find(|(_, t, _)| t == token)
            .map(|(_, _, f)| f.clone())
    }

    fn all(&self) -> Vec<Arc<dyn Front>> {
        let table = self.0.lock().unwrap_or_else(|e| e.into_inner());
        table.active.iter().map(|(_, _, f)| f.clone()).collect()
    }

    pub(crate) fn progress(&self, param: ProgressNotificationParam) {
        if let Some(front) = self.find(&param.progress_token) {
            front.progress(param);
        }
    }

    /// Log messages carry no request: they go to every call in flight on the connection.
    pub(crate) fn log(&self, param: LoggingMessageNotificationParam) {
        for front in self.all() {
            front.log(param.clone());
        }
    }

    /// An elicitation goes to the most recent call in flight whose front can take it. (In the
    /// handshake era a server's request does not name the call it belongs to.)
    pub(crate) async fn elicit(&self, params: ElicitRequestParams) -> Option<ElicitResult> {
        for front in self.all().into_iter().rev() {
            if let Some(result) = front.elicit(params.clone()).await {
                return Some(result);
            }
        }
        None
    }

    /// A sampling request goes where an elicitation would.
    pub(crate) async fn sample(
        &self,
        params: CreateMessageRequestParams,
    ) -> Option<CreateMessageResult> {
        for front in self.all().into_iter().rev() {
            if let Some(result) = front.sample(params.clone()).await {
                return Some(result);
            }
        }
        None
    }
}

/// A front's place in the table while its call runs.
pub(crate) struct Registration {
    relays: Relays,
    id: u64,
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut table = self.relays.0.lock().unwrap_or_else(|e| e.into_inner());
        table.active.retain(|(id, _, _)| *id != self.id);
    }
}
