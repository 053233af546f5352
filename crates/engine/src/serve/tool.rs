//! One served tool: what runs it ([`ToolCaller`]), how it is listed ([`ServedTool`]), and what
//! is heard of each call ([`CallRecord`]).

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Map, Value};

use super::context::CallContext;

/// The result of one call as MCP's CallToolResult JSON (`{content:[...], isError?, structuredContent?}`).
pub type CallResult = Value;

/// Something that can run a tool: a JS callback, a forwarded MCP tool, a native closure.
pub trait ToolCaller: Send + Sync + 'static {
    /// Never fails: failures are a CallResult with `isError: true`. The future is dropped when
    /// the client cancels the call or goes away, so callers clean up on drop.
    fn call(
        &self,
        arguments: Map<String, Value>,
        ctx: CallContext,
    ) -> BoxFuture<'static, CallResult>;

    /// Whether a call made without a task still works when the tool is listed as needing one
    /// (a gateway's relayed tool: it waits for the upstream's task within the call).
    fn runs_plainly(&self) -> bool {
        false
    }

    /// Whether a task call of this tool starts as an ordinary call, which its run turns into
    /// a task partway ([`CallContext::start_task`]; a JavaScript tool's `deferTask`). Until
    /// then it asks for input as any call does (2026-07-28: input-required rounds).
    fn defers_task(&self) -> bool {
        false
    }

    /// The upstream server a relayed tool's calls go to (what a policy hook is told).
    fn upstream(&self) -> Option<String> {
        None
    }
}

/// A caller around another (a policy's `afterCall`, a curation's arguments, a result limit, a
/// limit's place held by the run): its `call` is `around`'s, given the inner caller; what the
/// call is otherwise (plain, deferred, relayed) is the inner caller's.
pub(crate) struct Around<F> {
    pub(crate) inner: Arc<dyn ToolCaller>,
    pub(crate) around: F,
}

/// `inner` called through `around`.
pub(crate) fn around<F>(inner: Arc<dyn ToolCaller>, around: F) -> Arc<dyn ToolCaller>
where
    F: Fn(&Arc<dyn ToolCaller>, Map<String, Value>, CallContext) -> BoxFuture<'static, CallResult>
        + Send
        + Sync
        + 'static,
{
    Arc::new(Around { inner, around })
}

impl<F> ToolCaller for Around<F>
where
    F: Fn(&Arc<dyn ToolCaller>, Map<String, Value>, CallContext) -> BoxFuture<'static, CallResult>
        + Send
        + Sync
        + 'static,
{
    fn call(
        &self,
        arguments: Map<String, Value>,
        ctx: CallContext,
    ) -> BoxFuture<'static, CallResult> {
        (self.around)(&self.inner, arguments, ctx)
    }

    fn runs_plainly(&self) -> bool {
        self.inner.runs_plainly()
    }

    fn defers_task(&self) -> bool {
        self.inner.defers_task()
    }

    fn upstream(&self) -> Option<String> {
        self.inner.upstream()
    }
}

/// Closures over the arguments alone are callers, which keeps tests and adapters short.
impl<F> ToolCaller for F
where
    F: Fn(Map<String, Value>) -> BoxFuture<'static, CallResult> + Send + Sync + 'static,
{
    fn call(
        &self,
        arguments: Map<String, Value>,
        _: CallContext,
    ) -> BoxFuture<'static, CallResult> {
        self(arguments)
    }
}

/// The fields of a tool's listing besides name, description and inputSchema, served as given.
pub const LISTING_EXTRAS: [&str; 6] = [
    "title",
    "annotations",
    "outputSchema",
    "icons",
    "execution",
    "_meta",
];

/// One tool as exposed to MCP clients.
#[derive(Clone)]
pub struct ServedTool {
    pub name: String,
    pub description: String,
    /// An object schema (see [`object_schema`]), shared with the tool's `tools/list` entry.
    pub input_schema: Arc<Map<String, Value>>,
    /// Other listing fields (`LISTING_EXTRAS`), served as given.
    pub extras: Map<String, Value>,
    /// Where the tool came from (`mcp`, `native`, ...); only reported through `OnCall`.
    pub source: String,
    pub caller: Arc<dyn ToolCaller>,
}

/// MCP requires `inputSchema` to be an object schema; a source that has none gets the completed
/// empty one (see [`crate::tools::object_schema`]).
pub fn object_schema(schema: Value) -> Arc<Map<String, Value>> {
    Arc::new(crate::tools::object_schema(schema))
}

/// What `OnCall` hears about each finished `tools/call`.
#[derive(Debug, Clone)]
pub struct CallRecord {
    pub name: String,
    pub source: String,
    pub ms: f64,
    pub is_error: bool,
    /// Who made the call, when served with auth.
    pub principal: Option<Arc<super::auth::Principal>>,
}

pub type OnCall = Arc<dyn Fn(CallRecord) + Send + Sync>;
