//! What a served JavaScript call asks of its client (`ctx.progress/log/elicit/sample/
//! listRoots`), by the call's id.

use std::sync::Mutex;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::{Value, json};

use crate::bounded::JsonValue;
use engine::serve::CallContext;
use engine::serve::context::{InputAsk, InputKind};

/// The contexts of served JavaScript calls in flight, by call id, for `ctx.progress/log/elicit/
/// sample` to reach their client.
pub(super) static CONTEXTS: std::sync::LazyLock<
    Mutex<std::collections::HashMap<u64, CallContext>>,
> = std::sync::LazyLock::new(Default::default);

/// `ctx.progress/log/elicit/sample` of a served JavaScript call (internal): what the call asks
/// of its client. Resolves with the client's answer (elicit, sample) or whether anything was
/// sent (progress, log); rejects with a reason in words.
#[napi(
    ts_args_type = "id: number, op: string, payload: object",
    ts_return_type = "Promise<any>"
)]
pub fn call_context<'env>(
    env: &'env Env,
    id: f64,
    op: String,
    payload: JsonValue,
) -> Result<PromiseRaw<'env, Value>> {
    let payload = payload.0;
    let ctx = CONTEXTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&(id as u64))
        .cloned();
    env.spawn_future(async move {
        let ctx = ctx
            .ok_or_else(|| Error::from_reason("toolnexus: this tool call has already finished"))?;
        let text = |key: &str| payload.get(key).and_then(Value::as_str).map(str::to_string);
        let number = |key: &str| payload.get(key).and_then(Value::as_f64);
        let outcome = match op.as_str() {
            "progress" => match number("progress") {
                Some(progress) => ctx
                    .progress(progress, number("total"), text("message"))
                    .await
                    .map(Value::Bool),
                None => Err("ctx.progress(progress, total?, message?) needs a number".into()),
            },
            "log" => {
                let level = text("level").unwrap_or_default();
                let data = payload.get("data").cloned().unwrap_or(Value::Null);
                ctx.log(&level, data, text("logger")).await.map(Value::Bool)
            }
            "input" => input(&ctx, &payload).await,
            "startTask" => Ok(Value::Bool(ctx.start_task().await)),
            other => Err(format!("unknown call context operation {other:?}")),
        };
        outcome.map_err(|m| Error::from_reason(format!("toolnexus: {m}")))
    })
}

/// `ctx.elicit/sample/listRoots` of one tick, asked together: `{ asks: [{ kind, request,
/// key? }] }`, answered with one `{ ok: true, value } | { ok: false, error, ended }` per ask.
async fn input(ctx: &CallContext, payload: &Value) -> std::result::Result<Value, String> {
    let mut asks = Vec::new();
    for ask in payload
        .get("asks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let kind = ask.get("kind").and_then(Value::as_str).unwrap_or_default();
        let kind =
            InputKind::parse(kind).ok_or_else(|| format!("unknown input request {kind:?}"))?;
        asks.push(InputAsk {
            kind,
            params: ask.get("request").cloned().unwrap_or_else(|| json!({})),
            key: ask.get("key").and_then(Value::as_str).map(str::to_string),
        });
    }
    let answers = ctx.ask(asks).await.into_iter().map(|answer| match answer {
        Ok(value) => json!({ "ok": true, "value": value }),
        // `ended`: the run is being aborted (its signal is fired before the ask rejects).
        Err(error) => {
            let ended = error == engine::serve::context::AskError::CallEnded;
            json!({ "ok": false, "error": error.to_string(), "ended": ended })
        }
    });
    Ok(Value::Array(answers.collect()))
}
