//! What one conversion of a JavaScript value may read, and how a refusal names where it is.

use std::fmt;

use engine::config::quote::{QUOTE_CHARS, key_path, shorten};

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
        text_bytes: engine::config::MAX_CONFIG_BYTES as usize,
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
