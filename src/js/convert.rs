//! Conversions between JavaScript values and the engine's types.

use napi::bindgen_prelude::*;

use crate::config::{ConfigError, ConfigErrorKind, ConfigInput};

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

/// The accepted config inputs: a file path, JSON text, or an object.
pub fn config_input(env: &Env, input: Unknown) -> std::result::Result<ConfigInput, String> {
    match input.get_type().map_err(|e| e.reason.clone())? {
        ValueType::String => {
            let text: String = unsafe { input.cast() }.map_err(|e| e.reason.clone())?;
            Ok(crate::config::input_from_string(&text))
        }
        ValueType::Object => {
            let value: serde_json::Value = env.from_js_value(input).map_err(|e| {
                format!("toolnexus: MCP config object cannot be read: {}", e.reason)
            })?;
            Ok(ConfigInput::Value(value))
        }
        _ => Err("toolnexus: MCP config must be a file path, JSON text or an object".to_string()),
    }
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

/// Reads an optional number option, rejecting anything that is not a finite non-negative number.
pub fn millis_option(opts: &Object, names: &[&str]) -> std::result::Result<Option<u64>, String> {
    for name in names {
        let value: Unknown = match opts.get_named_property(name) {
            Ok(v) => v,
            Err(_) => continue,
        };
        match value.get_type().map_err(|e| e.reason.clone())? {
            ValueType::Undefined | ValueType::Null => continue,
            ValueType::Number => {
                let n: f64 = unsafe { value.cast() }.map_err(|e| e.reason.clone())?;
                if !n.is_finite() || n < 0.0 {
                    return Err(format!(
                        "toolnexus: opts.{name} must be a non-negative number of milliseconds"
                    ));
                }
                return Ok(Some(n as u64));
            }
            _ => {
                return Err(format!(
                    "toolnexus: opts.{name} must be a number of milliseconds"
                ));
            }
        }
    }
    Ok(None)
}

/// `Object.defineProperty(target, key, { value })`: not enumerable, not writable, so it stays
/// out of `JSON.stringify`, spreads and `Object.keys`.
pub fn define_hidden<V: ToNapiValue>(
    env: &Env,
    target: &Object,
    key: &str,
    value: V,
) -> Result<()> {
    let object_ctor: Object = env.get_global()?.get_named_property_unchecked("Object")?;
    let define: Function<FnArgs<(Object, &str, Object)>, Unknown> =
        object_ctor.get_named_property("defineProperty")?;
    let mut descriptor = Object::new(env)?;
    descriptor.set_named_property("value", value)?;
    define.call((*target, key, descriptor).into())?;
    Ok(())
}
