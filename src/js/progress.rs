//! `ctx.onProgress` of a loadMcp tool's `execute`: the server's progress notifications on that
//! call, handed to JavaScript as `{ progress, total?, message? }`, in the order they came.
//!
//! The callback is a [`Front`] of the call, registered under the call's progress token like a
//! gateway's front client (see [`crate::connect::relay`]): it takes progress and nothing else,
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
use crate::connect::relay::Front;

/// Weak: a call in flight keeps Node alive, its progress callback does not.
type OnProgress = JsCallback<Value>;

/// A call's `onProgress`, with the count of notifications handed to JavaScript that it has not
/// run yet: the call's result waits for them ([`ProgressFront::flush`]), so every progress is
/// heard before the promise settles.
pub struct ProgressFront {
    callback: OnProgress,
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

impl Outstanding {
    fn done(&self) {
        if self.count.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.none_left.notify_waiters();
        }
    }
}

impl Front for ProgressFront {
    fn progress(&self, param: ProgressNotificationParam) {
        let mut progress = Map::new();
        progress.insert("progress".into(), Value::from(param.progress));
        if let Some(total) = param.total {
            progress.insert("total".into(), Value::from(total));
        }
        if let Some(message) = param.message {
            progress.insert("message".into(), Value::String(message));
        }
        // The callback is guarded (a throw is a warning), so a call cannot abort Node;
        // non-blocking calls keep their order.
        self.outstanding.count.fetch_add(1, Ordering::AcqRel);
        let outstanding = self.outstanding.clone();
        let status = self.callback.call_with_return_value(
            Value::Object(progress),
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

/// `ctx.onProgress` (guarded by lib/options.js: a throw is a warning) as the call's front.
pub fn on_progress(callback: Function<Value, ()>) -> Result<Arc<ProgressFront>> {
    Ok(Arc::new(ProgressFront {
        callback: js_callback(callback)?,
        outstanding: Arc::default(),
    }))
}
