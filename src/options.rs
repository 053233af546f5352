//! The options the package's JavaScript hands the binding, checked there, once, in the words the
//! API documents (lib/options.js); here they are typed values, never read by name.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::Value;

use super::bounded::JsonValue;

/// What an app's function may answer: a value, or a promise of one.
pub type Answer = Either<Promise<JsonValue>, JsonValue>;

/// A listMcpTools or loadMcp call's options (internal: lib/options.js checks the app's).
#[napi(object, object_to_js = false)]
pub struct CallOptions<'a> {
    /// `opts.deadline` (or `opts.timeout`), in whole milliseconds, at most `MAX_TIMEOUT_MS`.
    pub deadline_ms: Option<u32>,
    /// `opts.signal`, taken as a plain object (see src/abort.rs).
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<Object<'a>>,
    /// `opts.authorize(url)`, bound to `opts`.
    #[napi(ts_type = "(url: string) => unknown")]
    pub authorize: Option<Function<'a, String, Answer>>,
    /// `opts.tokenStore`, its methods bound to it.
    pub token_store: Option<TokenStoreOptions<'a>>,
    /// The app's trace context when the call was made (lib/telemetry.js): the engine's spans
    /// of the servers' listings are its children. Absent without OpenTelemetry.
    pub trace: Option<std::collections::HashMap<String, String>>,
}

impl CallOptions<'_> {
    /// The trace the call's listings are made under (see [`CallOptions::trace`]).
    pub fn call_trace(opts: Option<&Self>) -> Option<engine::telemetry::CallTrace> {
        let carrier = opts?.trace.clone()?;
        Some(engine::telemetry::CallTrace::from_carrier(
            &crate::telemetry::meta_object(carrier),
        ))
    }
}

/// An app's `tokenStore`: `get(key)`, `set(key, record)`, `delete(key)` (internal).
#[napi(object, object_to_js = false)]
pub struct TokenStoreOptions<'a> {
    #[napi(ts_type = "(key: string) => unknown")]
    pub get: Function<'a, String, Answer>,
    #[napi(ts_type = "(key: string, record: unknown) => unknown")]
    pub set: Function<'a, FnArgs<(String, Value)>, Answer>,
    #[napi(ts_type = "(key: string) => unknown")]
    pub delete: Function<'a, String, Answer>,
}

/// What loadMcp takes besides a call's options (internal: lib/options.js).
#[napi(object, object_to_js = false)]
pub struct LoadHooks<'a> {
    /// `opts.waitFor(request)`, asked for each elicitation.
    #[napi(ts_type = "(request: unknown) => unknown")]
    pub wait_for: Option<Function<'a, Value, Promise<JsonValue>>>,
    /// `opts.onToolsChanged` (or a toolkit's own listener), guarded by lib/options.js so a
    /// throw in it is a `ToolnexusWarning`.
    #[napi(ts_type = "(change: { server: string; tools: unknown[] }) => void")]
    pub on_tools_changed: Option<Function<'a, Value, ()>>,
    /// Told `{ server, kind, items }` after a server's resources (`kind: "resources"`), resource
    /// templates (`"resourceTemplates"`) or prompts (`"prompts"`) were re-listed and changed;
    /// guarded by lib/options.js (a throw in it is a `ToolnexusWarning`).
    #[napi(
        ts_type = "(change: { server: string; kind: \"resources\" | \"resourceTemplates\" | \"prompts\"; items: Array<Record<string, unknown>> }) => void"
    )]
    pub on_surface_changed: Option<Function<'a, Value, ()>>,
    /// The servers' elicitation and sampling requests go to the front clients of a gateway
    /// serving these tools (a toolkit's sources).
    pub relay_input: Option<bool>,
    /// A toolkit names the tools of all its sources together, and warns about names then; it
    /// calls them from its tasks, so their answers are read on the runtime.
    pub named_by_toolkit: Option<bool>,
}

/// A loadMcp tool call's `ctx` (internal: lib/options.js checks it).
#[napi(object, object_to_js = false)]
pub struct McpCallOptions<'a> {
    /// `ctx.timeout`, in whole milliseconds, at most `MAX_TIMEOUT_MS`.
    pub timeout_ms: Option<u32>,
    /// `ctx.signal`, taken as a plain object (see src/abort.rs).
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<Object<'a>>,
    /// `ctx.onProgress`, guarded by lib/options.js (a throw in it is a warning).
    #[napi(ts_type = "(progress: { progress: number; total?: number; message?: string }) => void")]
    pub on_progress: Option<Function<'a, Value, ()>>,
    /// `ctx.onStatus`, guarded by lib/options.js (a throw in it is a warning).
    #[napi(
        ts_type = "(status: { taskId: string; status: string; statusMessage?: string }) => void"
    )]
    pub on_status: Option<Function<'a, Value, ()>>,
    /// `ctx.task`: run a tool whose listing allows it (`taskSupport: "optional"`) as a task.
    pub task: Option<bool>,
    /// Why the `ctx` was refused (`toolnexus: ctx.timeout must be …`): the call's error result,
    /// after bad arguments' (a call never rejects).
    pub refusal: Option<String>,
    /// Entries of the request's `_meta`: the caller's trace context (`traceparent`,
    /// `tracestate`, `baggage`) as lib/telemetry.js injects it.
    pub meta: Option<std::collections::HashMap<String, String>>,
}

/// The options of a request on a loadMcp source's resources or prompts (`readResource`,
/// `getPrompt`, `complete`; internal: lib/options.js checks them).
#[napi(object, object_to_js = false)]
pub struct SurfaceRequestOptions<'a> {
    /// `opts.timeout`, in whole milliseconds, at most `MAX_TIMEOUT_MS`.
    pub timeout_ms: Option<u32>,
    /// `opts.signal`, taken as a plain object (see src/abort.rs).
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<Object<'a>>,
    /// Entries of the request's `_meta`: the caller's trace context (lib/telemetry.js).
    pub meta: Option<std::collections::HashMap<String, String>>,
}
