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

/// lib/hooks.js's hooks (internal): `before(call)` resolves `null`, `{ deny }` or
/// `{ arguments }`; `after(call)` resolves `null` or `{ result }`.
#[napi(object, object_to_js = false)]
pub struct NativeHooks<'a> {
    #[napi(ts_type = "(call: unknown) => Promise<unknown>")]
    pub before: Option<Function<'a, Value, Promise<JsonValue>>>,
    #[napi(ts_type = "(call: unknown) => Promise<unknown>")]
    pub after: Option<Function<'a, Value, Promise<JsonValue>>>,
}

struct JsHooks {
    before: Option<Arc<Hook>>,
    after: Option<Arc<Hook>>,
}

/// `hooks` as the engine asks them.
pub(super) fn call_hooks(hooks: NativeHooks) -> Result<Arc<dyn CallHooks>> {
    let before = hooks.before.map(js_callback).transpose()?.map(Arc::new);
    let after = hooks.after.map(js_callback).transpose()?.map(Arc::new);
    Ok(Arc::new(JsHooks { before, after }))
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
