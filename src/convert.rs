//! Conversions between JavaScript values and the engine's types.

use napi::bindgen_prelude::*;

use super::bounded::{self, Limits};
use engine::config::{ConfigError, ConfigErrorKind, ConfigInput};

/// A settled outcome built off the JavaScript thread and turned into a value (or a rejection)
/// on it.
pub enum Settle<T> {
    Value(T),
    /// A fresh `Error` / `TypeError` with this message.
    Fail(ErrorKind, String),
    /// A value JavaScript chose (an abort reason), handed back untouched.
    Reject(Error),
    /// The caller's signal fired; the reason it captured replaces this on the JavaScript thread.
    Aborted,
}

#[derive(Clone, Copy)]
pub enum ErrorKind {
    Error,
    TypeError,
}

impl<T> Settle<T> {
    pub fn config_error(error: ConfigError) -> Self {
        let kind = match error.kind {
            ConfigErrorKind::Type => ErrorKind::TypeError,
            _ => ErrorKind::Error,
        };
        Settle::Fail(kind, error.message)
    }

    pub fn into_result(self, env: &Env) -> Result<T> {
        match self {
            Settle::Value(value) => Ok(value),
            Settle::Fail(kind, message) => Err(js_error(env, kind, &message)),
            Settle::Reject(error) => Err(error),
            Settle::Aborted => Err(js_error(
                env,
                ErrorKind::Error,
                "This operation was aborted",
            )),
        }
    }
}

/// An error built with the global constructor, so it looks like any other JavaScript error
/// (no napi `code` property).
pub fn js_error(env: &Env, kind: ErrorKind, message: &str) -> Error {
    let name = match kind {
        ErrorKind::Error => "Error",
        ErrorKind::TypeError => "TypeError",
    };
    let build = || -> Result<Error> {
        let ctor: Function<&str, Unknown> = env.get_global()?.get_named_property(name)?;
        let value = ctor.new_instance(message)?;
        Ok(Error::from_unknown_without_coercion(value))
    };
    build().unwrap_or_else(|_| Error::from_reason(message.to_string()))
}

/// `JSON.parse(text)` on the JavaScript thread: cheaper than building big objects through napi.
pub fn parse_json<'env>(env: &'env Env, text: &str) -> Result<Unknown<'env>> {
    let json: Object = env.get_global()?.get_named_property("JSON")?;
    let parse: Function<&str, Unknown> = json.get_named_property("parse")?;
    parse.call(text)
}

/// The accepted config inputs: a file path, JSON text, or an object, read within
/// [`Limits::CONFIG`] (a cyclic, deep or huge object is a `TypeError` naming the path).
pub fn config_input(env: &Env, input: Unknown) -> std::result::Result<ConfigInput, String> {
    let kind = input.get_type().map_err(|e| e.reason.clone())?;
    if !matches!(kind, ValueType::String | ValueType::Object) {
        return Err(
            "toolnexus: MCP config must be a file path, JSON text or an object".to_string(),
        );
    }
    let what = if kind == ValueType::String {
        "text"
    } else {
        "object"
    };
    match bounded::to_json(env, input, "", Limits::CONFIG) {
        Ok(Some(serde_json::Value::String(text))) => Ok(engine::config::input_from_string(&text)),
        Ok(Some(value)) => Ok(ConfigInput::Value(value)),
        Ok(None) => {
            Err("toolnexus: MCP config must be a file path, JSON text or an object".to_string())
        }
        Err(refusal) => Err(format!("toolnexus: invalid MCP config {what}: {refusal}")),
    }
}

/// Reads a JSON value handed in by JavaScript (tool arguments, a schema, an answer) within
/// [`Limits::MESSAGE`]; `undefined` reads as `null`. A refusal is a `TypeError` naming the path
/// from `root`, after `about` when given: `toolnexus: tool "add": inputSchema.o: …`.
pub fn json_value(env: &Env, value: Unknown, about: &str, root: &str) -> Result<serde_json::Value> {
    match bounded::to_json(env, value, root, Limits::MESSAGE) {
        Ok(value) => Ok(value.unwrap_or(serde_json::Value::Null)),
        Err(refusal) => {
            let about = if about.is_empty() {
                String::new()
            } else {
                format!("{about}: ")
            };
            let message = format!("toolnexus: {about}{refusal}");
            Err(js_error(env, ErrorKind::TypeError, &message))
        }
    }
}

/// Runs `f`, turning a panic into an `Error`: a panic unwinding into Node aborts the process.
pub fn contain<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .unwrap_or_else(|panic| Err(Error::from_reason(internal_error(&*panic))))
}

/// Awaits `work`, turning a panic into `Err(message)`.
pub async fn contain_future<T>(work: impl Future<Output = T>) -> std::result::Result<T, String> {
    use futures::FutureExt;
    std::panic::AssertUnwindSafe(work)
        .catch_unwind()
        .await
        .map_err(|panic| internal_error(&*panic))
}

/// A panic's message, in words a caller can report.
pub fn internal_error(panic: &(dyn std::any::Any + Send)) -> String {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_string());
    format!(
        "toolnexus: internal error ({}); please report it",
        engine::config::quote::shorten(&what, engine::config::quote::QUOTE_CHARS)
    )
}

/// Emits each warning with `process.emitWarning`, so it can be listened to or silenced.
pub fn emit_warnings(env: &Env, warnings: &[String]) {
    if warnings.is_empty() {
        return;
    }
    let emit = || -> Result<()> {
        let process: Object = env.get_global()?.get_named_property("process")?;
        let emit: Function<FnArgs<(&str, &str)>, Unknown> =
            process.get_named_property("emitWarning")?;
        for warning in warnings {
            emit.apply(process, (warning.as_str(), "ToolnexusWarning").into())?;
        }
        Ok(())
    };
    let _ = emit();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_an_error() {
        let out: Result<()> = contain(|| panic!("boom {}", 1));
        assert_eq!(
            out.unwrap_err().reason,
            "toolnexus: internal error (boom 1); please report it"
        );
        let out: Result<u8> = contain(|| Ok(7));
        assert_eq!(out.unwrap(), 7);
    }

    #[test]
    fn a_panicking_future_becomes_an_error() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let out = runtime.block_on(contain_future(async { panic!("in a task") }));
        let out: std::result::Result<(), String> = out;
        assert_eq!(
            out.unwrap_err(),
            "toolnexus: internal error (in a task); please report it"
        );
    }
}
