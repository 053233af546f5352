//! `ctx.onProgress` and `ctx.onStatus` of a loadMcp tool's `execute`: the server's progress
//! notifications on that call, handed to JavaScript as `{ progress, total?, message? }`, and
//! (a call run as a task) each change of the task's status as `{ taskId, status,
//! statusMessage? }`, in the order they came.
//!
//! The callback is a [`Front`] of the call, registered under the call's progress token like a
//! gateway's front client (see [`engine::connect::relay`]): it takes progress and nothing else,
//! so the server's logs, elicitations and sampling requests go where they went before.
#![allow(deprecated)] // the Front trait names logging and sampling (SEP-2577).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::future::BoxFuture;
use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    LoggingMessageNotificationParam, ProgressNotificationParam,
};
use serde_json::{Map, Value};

use super::callback::{JsCallback, js_callback};
use engine::connect::relay::Front;

/// Weak: a call in flight keeps Node alive, its progress callback does not.
type OnProgress = JsCallback<Value>;

/// A call's `onProgress`, with the count of notifications handed to JavaScript that it has not
/// run yet: the call's result waits for them ([`ProgressFront::flush`]), so every progress is
/// heard before the promise settles.
pub struct ProgressFront {
    callback: Option<OnProgress>,
    on_status: Option<OnProgress>,
    outstanding: Arc<Outstanding>,
}

#[derive(Default)]
struct Outstanding {
    count: AtomicUsize,
    none_left: tokio::sync::Notify,
}

impl ProgressFront {
    /// Resolves once every progress notification handed over so far has run in JavaScript.
    pub async fn flush(&self) {
        loop {
            let none_left = self.outstanding.none_left.notified();
            if self.outstanding.count.load(Ordering::Acquire) == 0 {
                return;
            }
            none_left.await;
        }
    }
}

impl ProgressFront {
    /// Hands `value` to `callback` (guarded by lib/options.js: a throw is a warning), counted
    /// until it has run; non-blocking calls keep their order.
    fn hand(&self, callback: &OnProgress, value: Value) {
        self.outstanding.count.fetch_add(1, Ordering::AcqRel);
        let outstanding = self.outstanding.clone();
        let status = callback.call_with_return_value(
            value,
            ThreadsafeFunctionCallMode::NonBlocking,
            move |_, _| {
                outstanding.done();
                Ok(())
            },
        );
        if status != Status::Ok {
            self.outstanding.done();
        }
    }
}

impl Outstanding {
    fn done(&self) {
        if self.count.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.none_left.notify_waiters();
        }
    }
}

impl Front for ProgressFront {
    fn progress(&self, param: ProgressNotificationParam) {
        if self.callback.is_none() {
            return;
        }
        let mut progress = Map::new();
        progress.insert("progress".into(), Value::from(param.progress));
        if let Some(total) = param.total {
            progress.insert("total".into(), Value::from(total));
        }
        if let Some(message) = param.message {
            progress.insert("message".into(), Value::String(message));
        }
        if let Some(callback) = &self.callback {
            self.hand(callback, Value::Object(progress));
        }
    }

    fn status(&self, update: &engine::connect::relay::TaskUpdate) {
        if let Some(callback) = &self.on_status {
            self.hand(callback, update.to_json());
        }
    }

    fn log(&self, _: LoggingMessageNotificationParam) {}

    fn elicit(&self, _: ElicitRequestParams) -> BoxFuture<'static, Option<ElicitResult>> {
        Box::pin(async { None })
    }

    fn sample(
        &self,
        _: CreateMessageRequestParams,
    ) -> BoxFuture<'static, Option<CreateMessageResult>> {
        Box::pin(async { None })
    }
}

/// `ctx.onProgress` and `ctx.onStatus` (guarded by lib/options.js: a throw is a warning) as
/// the call's front, when it has either.
pub fn on_progress(
    callback: Option<Function<Value, ()>>,
    on_status: Option<Function<Value, ()>>,
) -> Result<Option<Arc<ProgressFront>>> {
    if callback.is_none() && on_status.is_none() {
        return Ok(None);
    }
    Ok(Some(Arc::new(ProgressFront {
        callback: callback.map(js_callback).transpose()?,
        on_status: on_status.map(js_callback).transpose()?,
        outstanding: Arc::default(),
    })))
}
