//! The application's policy hooks (lib/hooks.js's `nativeHooks`) as the engine's
//! [`CallHooks`]: each is a JavaScript function called through a thread-safe function, whose
//! promise resolves the verdict lib/hooks.js already checked and normalized.

use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::Value;

use crate::bounded::JsonValue;
use crate::callback::{JsCallback, js_callback};
use engine::serve::hooks::{CallHooks, Verdict};

type Hook = JsCallback<Value, Promise<JsonValue>>;

/// A served toolkit's policy (internal): lib/hooks.js's hooks (`before(call)` resolves `null`,
/// `{ deny }` or `{ arguments }`; `after(call)` resolves `null` or `{ result }`) and
/// lib/curation.js's result limits (`maxResultBytes`, overall; `toolResultBytes`, by glob).
#[napi(object, object_to_js = false)]
pub struct NativePolicy<'a> {
    #[napi(ts_type = "(call: unknown) => Promise<unknown>")]
    pub before: Option<Function<'a, Value, Promise<JsonValue>>>,
    #[napi(ts_type = "(call: unknown) => Promise<unknown>")]
    pub after: Option<Function<'a, Value, Promise<JsonValue>>>,
    pub max_result_bytes: Option<f64>,
    pub tool_result_bytes: Option<Vec<NativeResultLimit>>,
}

/// The largest result of the tools a glob names, in bytes.
#[napi(object)]
pub struct NativeResultLimit {
    pub glob: String,
    pub bytes: f64,
}

/// The result limits of `policy`, when it sets any.
pub(super) fn result_limits(policy: &NativePolicy) -> Option<engine::serve::cut::ResultLimits> {
    let tools: Vec<(String, usize)> = policy
        .tool_result_bytes
        .iter()
        .flatten()
        .map(|l| (l.glob.clone(), l.bytes as usize))
        .collect();
    let max_bytes = policy.max_result_bytes.map(|b| b as usize);
    (max_bytes.is_some() || !tools.is_empty())
        .then_some(engine::serve::cut::ResultLimits { max_bytes, tools })
}

struct JsHooks {
    before: Option<Arc<Hook>>,
    after: Option<Arc<Hook>>,
}

/// The hooks of `policy` as the engine asks them (None without any).
pub(super) fn call_hooks(policy: NativePolicy) -> Result<Option<Arc<dyn CallHooks>>> {
    if policy.before.is_none() && policy.after.is_none() {
        return Ok(None);
    }
    let before = policy.before.map(js_callback).transpose()?.map(Arc::new);
    let after = policy.after.map(js_callback).transpose()?.map(Arc::new);
    Ok(Some(Arc::new(JsHooks { before, after })))
}

/// What the hook's promise resolved, or why it has none (it threw or rejected).
async fn answer(hook: Option<Arc<Hook>>, call: Value) -> std::result::Result<Value, String> {
    let Some(hook) = hook else {
        return Ok(Value::Null);
    };
    match hook.call_async_catch(call).await {
        Ok(promise) => promise.await.map(|v| v.0).map_err(|e| e.reason.clone()),
        Err(e) => Err(e.reason.clone()),
    }
}

impl CallHooks for JsHooks {
    fn has_before(&self) -> bool {
        self.before.is_some()
    }

    fn has_after(&self) -> bool {
        self.after.is_some()
    }

    fn before(&self, call: Value) -> BoxFuture<'static, std::result::Result<Verdict, String>> {
        let hook = self.before.clone();
        async move {
            let mut verdict = answer(hook, call).await?;
            if let Some(Value::String(why)) = verdict.get("deny") {
                return Ok(Verdict::Deny(why.clone()));
            }
            match verdict.get_mut("arguments").map(Value::take) {
                Some(Value::Object(arguments)) => Ok(Verdict::Arguments(arguments)),
                _ => Ok(Verdict::Go),
            }
        }
        .boxed()
    }

    fn after(&self, call: Value) -> BoxFuture<'static, std::result::Result<Option<Value>, String>> {
        let hook = self.after.clone();
        async move {
            let mut answered = answer(hook, call).await?;
            Ok(answered
                .get_mut("result")
                .map(Value::take)
                .filter(|r| !r.is_null()))
        }
        .boxed()
    }
}
