//! The MCP surface beside tools: resources, resource templates, prompts and skills, as every role
//! (listing, loading, serving, relaying) holds them; their caching hints (SEP-2549); the errors
//! a non-tool request ends with; and the result shapes a read, a prompt and a completion give.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{CacheScope, CompletionInfo, GetPromptResult, ReadResourceResult};
use serde_json::{Map, Value};

pub mod uri_template;

impl Kind {
    pub const ALL: [Kind; 4] = [
        Kind::Resources,
        Kind::ResourceTemplates,
        Kind::Prompts,
        Kind::Skills,
    ];

    /// Its list method (also the name of its listing phase).
    pub(crate) fn method(self) -> &'static str {
        match self {
            Kind::Resources => "resources/list",
            Kind::ResourceTemplates => "resources/templates/list",
            Kind::Prompts => "prompts/list",
            Kind::Skills => "skills/list",
        }
    }

    /// The key its items come under, on the wire and in the inventory JSON.
    pub fn key(self) -> &'static str {
        match self {
            Kind::Resources => "resources",
            Kind::ResourceTemplates => "resourceTemplates",
            Kind::Prompts => "prompts",
            Kind::Skills => "skills",
        }
    }

    /// The field that identifies an item (a string, as `name` must be too).
    pub(crate) fn id_field(self) -> &'static str {
        match self {
            Kind::Resources => "uri",
            Kind::ResourceTemplates => "uriTemplate",
            Kind::Prompts => "name",
            Kind::Skills => "uri",
        }
    }

    /// What one item is called in words ("resource", "resource template", "prompt").
    pub(crate) fn item_words(self) -> &'static str {
        match self {
            Kind::Resources => "resource",
            Kind::ResourceTemplates => "resource template",
            Kind::Prompts => "prompt",
            Kind::Skills => "skill",
        }
    }

    /// What its items are called in words ("resources", "resource templates", "prompts").
    pub(crate) fn plural(self) -> &'static str {
        match self {
            Kind::Resources => "resources",
            Kind::ResourceTemplates => "resource templates",
            Kind::Prompts => "prompts",
            Kind::Skills => "skills",
        }
    }

    /// Whether a server with these capabilities lists this kind.
    pub(crate) fn declared(self, caps: &rmcp::model::ServerCapabilities) -> bool {
        match self {
            Kind::Resources | Kind::ResourceTemplates => caps.resources.is_some(),
            Kind::Prompts => caps.prompts.is_some(),
            // The skills extension (SEP-2640), which needs resources.
            Kind::Skills => caps.resources.is_some() && caps.supports_skills(),
        }
    }
}

/// A result's caching hints (`ttlMs`, `cacheScope`), as given: either may be absent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hints {
    pub ttl_ms: Option<u64>,
    pub scope: Option<CacheScope>,
}

impl Hints {
    /// The hints of a result's JSON: a negative `ttlMs` is 0 (SEP-2549), anything but
    /// `"public"`/`"private"` no scope.
    pub(crate) fn of(result: &Value) -> Hints {
        let ttl_ms = result.get("ttlMs").and_then(|ttl| {
            ttl.as_u64()
                .or_else(|| ttl.as_i64().map(|t| t.max(0) as u64))
                .or_else(|| ttl.as_f64().map(|t| t.max(0.0) as u64))
        });
        Hints {
            ttl_ms,
            scope: scope_of(result.get("cacheScope")),
        }
    }

    /// The hints of two results taken together (rmcp's rule for merged pages): the smaller TTL
    /// (none when either has none), private when either is, no scope when either has none.
    pub(crate) fn merge(self, other: Hints) -> Hints {
        let ttl_ms = match (self.ttl_ms, other.ttl_ms) {
            (Some(a), Some(b)) => Some(a.min(b)),
            _ => None,
        };
        let scope = match (self.scope, other.scope) {
            (Some(CacheScope::Private), _) | (_, Some(CacheScope::Private)) => {
                Some(CacheScope::Private)
            }
            (Some(a), Some(_)) => Some(a),
            _ => None,
        };
        Hints { ttl_ms, scope }
    }

    /// What a served result says: the configured hints, else these, else `(0, private)`.
    pub(crate) fn served(self, configured: Hints) -> (u64, CacheScope) {
        (
            configured
                .ttl_ms
                .or(self.ttl_ms)
                .unwrap_or(crate::bounds::SERVE_DEFAULT_TTL_MS),
            configured
                .scope
                .or(self.scope)
                .unwrap_or(CacheScope::Private),
        )
    }
}

/// A `cacheScope` value read leniently: a bad one is no scope, never a refused result.
pub(crate) fn scope_of(value: Option<&Value>) -> Option<CacheScope> {
    match value.and_then(Value::as_str) {
        Some("public") => Some(CacheScope::Public),
        Some("private") => Some(CacheScope::Private),
        _ => None,
    }
}

/// One kind as a server last listed it.
#[derive(Clone, Debug, Default)]
pub struct Listed {
    /// Its items, with every field the road kept.
    pub items: Arc<Vec<Map<String, Value>>>,
    pub(crate) hints: Hints,
    /// When it was listed (`None`: never).
    pub(crate) at: Option<Instant>,
    /// What its listing left out, over the bound of a listing.
    pub(crate) truncated: Option<Truncated>,
}

impl PartialEq for Listed {
    fn eq(&self, other: &Self) -> bool {
        self.items == other.items && self.hints == other.hints
    }
}

impl Listed {
    pub(crate) fn new(items: Vec<Map<String, Value>>, hints: Hints) -> Self {
        Self {
            items: Arc::new(items),
            hints,
            at: Some(Instant::now()),
            truncated: None,
        }
    }

    /// The same, saying what its listing left out.
    pub(crate) fn with(mut self, truncated: Option<Truncated>) -> Self {
        self.truncated = truncated;
        self
    }

    /// Whether its TTL has run out (never, when the server gave none).
    pub(crate) fn expired(&self) -> bool {
        match (self.at, self.hints.ttl_ms) {
            (Some(at), Some(ttl)) => at.elapsed() >= Duration::from_millis(ttl),
            _ => false,
        }
    }
}

/// A server's resources, resource templates and prompts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SurfaceListing {
    pub(crate) resources: Listed,
    pub(crate) templates: Listed,
    pub(crate) prompts: Listed,
    pub(crate) skills: Listed,
}

impl SurfaceListing {
    pub fn get(&self, kind: Kind) -> &Listed {
        match kind {
            Kind::Resources => &self.resources,
            Kind::ResourceTemplates => &self.templates,
            Kind::Prompts => &self.prompts,
            Kind::Skills => &self.skills,
        }
    }

    pub(crate) fn set(&mut self, kind: Kind, listed: Listed) {
        match kind {
            Kind::Resources => self.resources = listed,
            Kind::ResourceTemplates => self.templates = listed,
            Kind::Prompts => self.prompts = listed,
            Kind::Skills => self.skills = listed,
        }
    }
}

/// Why a non-tool request (a read, a prompt, a completion, a subscription) got no result: the
/// server's JSON-RPC error when it sent one, else our words (no code).
#[derive(Clone, Debug, PartialEq)]
pub struct SurfaceError {
    pub code: Option<i32>,
    pub message: String,
    pub data: Option<Value>,
}

impl std::fmt::Display for SurfaceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SurfaceError {}

impl SurfaceError {
    /// Our words, with no JSON-RPC code.
    pub fn words(message: impl Into<String>) -> Self {
        Self {
            code: None,
            message: message.into(),
            data: None,
        }
    }

    /// Invalid params (-32602), in our words.
    pub(crate) fn invalid_params(message: impl Into<String>) -> Self {
        Self {
            code: Some(rmcp::model::ErrorCode::INVALID_PARAMS.0),
            ..Self::words(message)
        }
    }

    /// As a served JSON-RPC error: its code, or internal error (-32603) for our words.
    pub(crate) fn to_error_data(&self) -> rmcp::ErrorData {
        let code = self
            .code
            .unwrap_or(rmcp::model::ErrorCode::INTERNAL_ERROR.0);
        rmcp::ErrorData::new(
            rmcp::model::ErrorCode(code),
            self.message.clone(),
            self.data.clone(),
        )
    }

    /// `{code?, message, data?}`, for the napi boundary.
    #[cfg(test)]
    pub(crate) fn to_json(&self) -> Value {
        let mut out = Map::new();
        if let Some(code) = self.code {
            out.insert("code".into(), code.into());
        }
        out.insert("message".into(), self.message.clone().into());
        if let Some(data) = &self.data {
            out.insert("data".into(), data.clone());
        }
        Value::Object(out)
    }
}

impl From<&rmcp::ErrorData> for SurfaceError {
    fn from(e: &rmcp::ErrorData) -> Self {
        Self {
            code: Some(e.code.0),
            message: e.message.to_string(),
            data: e.data.clone(),
        }
    }
}

/// A completion of at most [`crate::bounds::MAX_COMPLETION_VALUES`] values: more are cut to the
/// first ones, with `total` the full count and `hasMore` set.
pub(crate) fn completion(
    mut values: Vec<String>,
    total: Option<u32>,
    has_more: Option<bool>,
) -> CompletionInfo {
    let max = crate::bounds::MAX_COMPLETION_VALUES;
    let (total, has_more) = if values.len() > max {
        let count = u32::try_from(values.len()).unwrap_or(u32::MAX);
        values.truncate(max);
        (Some(total.unwrap_or(count).max(count)), Some(true))
    } else {
        (total, has_more)
    };
    let mut info = CompletionInfo::new(values).unwrap_or_default();
    info.total = total;
    info.has_more = has_more;
    info
}

/// A `resources/read` result from its JSON; the error names the field that is wrong.
pub(crate) fn read_result(v: Value) -> Result<ReadResourceResult, String> {
    typed(v, "resource read result")
}

/// A `prompts/get` result from its JSON; the error names the field that is wrong.
pub(crate) fn prompt_result(v: Value) -> Result<GetPromptResult, String> {
    typed(v, "prompt result")
}

fn typed<T: serde::de::DeserializeOwned>(v: Value, what: &str) -> Result<T, String> {
    // serde's message names the missing or mistyped field and what it expected.
    serde_json::from_value(v).map_err(|e| format!("invalid {what}: {e}"))
}

/// What a listing over its budget left out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Truncated {
    pub(crate) kept: usize,
    /// Items of the pages read that were dropped.
    pub(crate) dropped: usize,
    /// Whether the server had more pages, not read.
    pub(crate) unread: bool,
}

impl Truncated {
    /// The warning naming `server`, the kind (`what`: "tools", "resources", …) and how much was
    /// dropped.
    pub(crate) fn warning(&self, server: &str, what: &str) -> String {
        let unread = if self.unread {
            ", and its later pages were not read"
        } else {
            ""
        };
        format!(
            "toolnexus: server {server:?} listed more {what} than are kept ({} at most, {} MiB of JSON): the first {} are kept, {} more were dropped{unread}",
            crate::bounds::MAX_LIST_ITEMS,
            crate::bounds::MAX_LIST_BYTES >> 20,
            self.kept,
            self.dropped
        )
    }
}

#[cfg(test)]
mod tests;

/// The listed kinds beside tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Resources,
    ResourceTemplates,
    Prompts,
    /// The skills of the skills extension (SEP-2640), each a `skills/list` entry.
    Skills,
}
