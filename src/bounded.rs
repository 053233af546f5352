//! The one way a JavaScript value becomes JSON (`serde_json::Value`) in Rust: with a depth
//! bound, cycle detection and budgets for values and text, so no value a caller hands us can
//! crash Node.
//!
//! napi's own conversions cannot be trusted with hostile values: `Env::from_js_value` recurses
//! without bound (a cyclic or 9 000-deep object overflows the native stack: SIGSEGV), and its
//! `FromNapiValue for Value` allocates an array's full length up front (a sparse array of length
//! 2^32-1 asks for 300 GB: abort). This walk reads a value the way `JSON.stringify` does (own
//! enumerable string keys, `toJSON`, `undefined` dropped from objects and `null` in arrays) and
//! refuses, with a message naming the path, what JSON cannot hold or what is too big.

mod limits;
mod walk;

pub use limits::{Limits, MAX_DEPTH, Refusal, Step, describe_path};

use napi::bindgen_prelude::*;
use napi::sys;
use serde_json::Value;

/// Converts `value` within `limits`. `root` names the value in messages (`""` for a config, so
/// paths read `mcpServers.a.env`; `"arguments"` for a tool call). `undefined` gives `None`.
pub fn to_json(
    env: &Env,
    value: Unknown,
    root: &str,
    limits: Limits,
) -> std::result::Result<Option<Value>, Refusal> {
    walk::Walk::new(env, root, limits).read(value)
}

/// A JSON value read from JavaScript within [`Limits::MESSAGE`]: use it where napi converts
/// for us (parameters, a promise's resolved value) instead of `serde_json::Value`.
pub struct JsonValue(pub Value);

impl FromNapiValue for JsonValue {
    unsafe fn from_napi_value(env: sys::napi_env, napi_val: sys::napi_value) -> Result<Self> {
        let env = Env::from_raw(env);
        // SAFETY: napi hands this conversion a live value of this environment (the contract of
        // `from_napi_value`); the walk reads it as any value, checking its type first.
        let value = unsafe { Unknown::from_raw_unchecked(env.raw(), napi_val) };
        match to_json(&env, value, "", Limits::MESSAGE) {
            Ok(value) => Ok(JsonValue(value.unwrap_or(Value::Null))),
            Err(refusal) => Err(Error::new(
                Status::InvalidArg,
                format!("toolnexus: cannot send this value as JSON: {refusal}"),
            )),
        }
    }
}

impl TypeName for JsonValue {
    fn type_name() -> &'static str {
        "JsonValue"
    }

    fn value_type() -> ValueType {
        ValueType::Unknown
    }
}

impl ValidateNapiValue for JsonValue {}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(names: &[&str]) -> Vec<Step> {
        names.iter().map(|k| Step::Key(k.to_string())).collect()
    }

    #[test]
    fn paths_read_like_javascript() {
        let mut steps = keys(&["mcpServers", "a", "args"]);
        steps.push(Step::Index(2));
        assert_eq!(describe_path("", &steps), "mcpServers.a.args[2]");
        assert_eq!(
            describe_path("arguments", &keys(&["my key", "x"])),
            "arguments[\"my key\"].x"
        );
        assert_eq!(describe_path("", &[]), "");
        assert_eq!(describe_path("", &[Step::Index(0)]), "[0]");
    }

    #[test]
    fn a_deep_path_is_cut_where_it_starts() {
        let mut steps = keys(&["mcpServers", "a", "env"]);
        steps.extend(std::iter::repeat_n(Step::Key("x".into()), 10_000));
        let path = describe_path("", &steps);
        assert!(path.starts_with("mcpServers.a.env.x.x."), "{path}");
        assert!(path.ends_with('…'), "{path}");
        assert!(path.chars().count() <= engine::config::quote::QUOTE_CHARS + 1);
    }

    #[test]
    fn refusal_reads_path_then_problem() {
        let r = Refusal {
            path: "mcpServers.a.env".into(),
            problem: "nested too deeply (more than 128 levels)".into(),
        };
        assert_eq!(
            r.to_string(),
            "mcpServers.a.env: nested too deeply (more than 128 levels)"
        );
        let top = Refusal {
            path: String::new(),
            problem: "a function is not JSON".into(),
        };
        assert_eq!(top.to_string(), "a function is not JSON");
    }
}
