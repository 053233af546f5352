//! A served call as the front of a call forwarded upstream (a gateway's relayed tool): what the
//! upstream server sends during the call reaches this call's client.
#![allow(deprecated)] // logging and sampling are deprecated by SEP-2577 but still served.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use futures::future::BoxFuture;
use rmcp::model::{
    CreateMessageRequestParams, ElicitRequestParams, LoggingMessageNotificationParam,
    ProgressNotificationParam,
};
use serde_json::Value;

use super::CallContext;

/// A forwarded call's client as the upstream server's messages see it: progress and log
/// messages are sent on in the order they came (one task per call), elicitations asked.
struct Relay {
    ctx: CallContext,
    /// The trace context the upstream request carries (its CLIENT span's), when spans are
    /// exported; else the served request's own is forwarded.
    meta: Option<serde_json::Map<String, Value>>,
    events: tokio::sync::mpsc::UnboundedSender<Event>,
}

enum Event {
    Progress(ProgressNotificationParam),
    Log(LoggingMessageNotificationParam),
}

impl CallContext {
    /// This call as the front of a call forwarded upstream (carrying `meta` up, else the
    /// call's own trace context), and the task that sends on what the upstream reported: it
    /// ends once the front is dropped and everything was sent.
    pub(crate) fn relay(
        &self,
        meta: Option<serde_json::Map<String, Value>>,
    ) -> (
        Arc<dyn crate::connect::relay::Front>,
        tokio::task::JoinHandle<()>,
    ) {
        let (events, mut queue) = tokio::sync::mpsc::unbounded_channel();
        let ctx = self.clone();
        let sending = tokio::spawn(async move {
            while let Some(event) = queue.recv().await {
                let _ = match event {
                    Event::Progress(p) => ctx.progress(p.progress, p.total, p.message).await,
                    Event::Log(p) => {
                        let level = serde_json::to_value(p.level)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_string))
                            .unwrap_or_default();
                        ctx.log(&level, p.data, p.logger).await
                    }
                };
            }
        });
        let front = Arc::new(Relay {
            ctx: self.clone(),
            meta,
            events,
        });
        (front, sending)
    }
}

impl crate::connect::relay::Front for Relay {
    fn meta(&self) -> Option<serde_json::Map<String, Value>> {
        self.meta.clone().or_else(|| self.ctx.trace_meta())
    }

    fn resume_point(&self) -> Option<rmcp::model::InputRequiredResult> {
        let point = self.ctx.checkpoint()?;
        let result = serde_json::from_value(point.get("result")?.clone()).ok()?;
        // The questions asked from here are numbered as they were on the replica that asked.
        let asked = point.get("asked").and_then(Value::as_u64).unwrap_or(0);
        self.ctx.asked.store(asked, Ordering::Relaxed);
        Some(result)
    }

    fn reached(&self, result: &rmcp::model::InputRequiredResult) {
        // Only a state that will be sealed carries the upstream's round.
        if !self.ctx.modern() || crate::serve::seal::key_of(&self.ctx.request()).is_none() {
            return;
        }
        let asked = self.ctx.asked.load(Ordering::Relaxed);
        let point = serde_json::json!({ "result": result, "asked": asked });
        self.ctx.resume_from(Some(point));
    }

    fn restart(&self) {
        self.ctx.asked.store(0, Ordering::Relaxed);
        self.ctx.resume_from(None);
    }

    fn progress(&self, param: ProgressNotificationParam) {
        let _ = self.events.send(Event::Progress(param));
    }

    fn log(&self, param: LoggingMessageNotificationParam) {
        let _ = self.events.send(Event::Log(param));
    }

    /// The upstream task's status message becomes this call's task's (when it runs as one).
    fn status(&self, update: &crate::connect::relay::TaskUpdate) {
        if let Some(message) = &update.status_message {
            self.ctx.task_status(message);
        }
    }

    fn elicit(
        &self,
        params: ElicitRequestParams,
    ) -> BoxFuture<'static, Option<rmcp::model::ElicitResult>> {
        let ctx = self.ctx.clone();
        Box::pin(async move {
            let params = serde_json::to_value(params).ok()?;
            let result = ctx.elicit(params).await.ok()?;
            serde_json::from_value(result).ok()
        })
    }

    fn sample(
        &self,
        params: CreateMessageRequestParams,
    ) -> BoxFuture<'static, Option<rmcp::model::CreateMessageResult>> {
        let ctx = self.ctx.clone();
        Box::pin(async move {
            let params = serde_json::to_value(params).ok()?;
            let result = ctx.sample(params).await.ok()?;
            serde_json::from_value(result).ok()
        })
    }
}
