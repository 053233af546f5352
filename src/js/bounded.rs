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

mod walk;

use std::fmt;

use napi::bindgen_prelude::*;
use napi::sys;
use serde_json::Value;

use crate::config::quote::{QUOTE_CHARS, key_path, shorten};

/// How deep a value may nest: serde_json's own parse limit, which every value an MCP server sent
/// us has passed (and napi's own bound), so whatever came from a server can always be handed
/// back; far deeper than any real config, schema or argument, and shallow enough that the walk
/// needs only a few hundred KB of stack on any thread.
pub const MAX_DEPTH: usize = 128;

/// What one conversion may read.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub depth: usize,
    /// Values of any kind, counted each time they are reached (a shared object counts per use,
    /// as `JSON.stringify` would write it out each time).
    pub values: usize,
    /// UTF-8 bytes of strings and keys, in all.
    pub text_bytes: usize,
}

impl Limits {
    /// A config object: as much text as a config file may hold.
    pub const CONFIG: Limits = Limits {
        depth: MAX_DEPTH,
        values: 100_000,
        text_bytes: crate::config::MAX_CONFIG_BYTES as usize,
    };
    /// Tool arguments, schemas, answers and protocol messages.
    pub const MESSAGE: Limits = Limits {
        depth: MAX_DEPTH,
        values: 1_000_000,
        text_bytes: 64 * 1024 * 1024,
    };
}

/// Why a value was refused, and where: `mcpServers.a.env: circular reference`.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub path: String,
    pub problem: String,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.problem)
        } else {
            write!(f, "{}: {}", self.path, self.problem)
        }
    }
}

/// One step from a value to a member: an object key or an array index.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Key(String),
    Index(u32),
}

/// How a path reads in a message: `mcpServers.a.args[2]`, cut after a few hundred characters
/// (a refusal 100 levels down names where it starts, which is where to look).
pub fn describe_path(root: &str, steps: &[Step]) -> String {
    let mut out = root.to_string();
    for step in steps {
        if out.chars().count() > QUOTE_CHARS {
            out = shorten(&out, QUOTE_CHARS);
            break;
        }
        out = match step {
            Step::Key(key) => key_path(&out, key),
            Step::Index(i) => format!("{out}[{i}]"),
        };
    }
    out
}

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
        assert!(path.chars().count() <= QUOTE_CHARS + 1);
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
