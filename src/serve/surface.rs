//! A service's resources, resource templates and prompts from JavaScript (`setSurface`): its
//! own entries, as lib/surface.js's `servedSurface` prepares them, run through `execute` like
//! tools; the upstream ones from loadMcp sources' sessions, relayed in Rust.
//!
//! The contract with lib/: `setSurface(own, upstreams, cache?) -> { warnings }`.
//! - `own[i] = { kind: "resource" | "template" | "prompt", listing, execute, abort, complete?, completes? }`
//!   - `execute({ id, args })` resolves an envelope `{ result } | { error: { code?, message, data? } }`;
//!     `args` is `{ uri, vars }` for a read (vars `{}` for a plain resource) or the prompt's
//!     arguments. `id` names the call for `abort(id)` and for its `ctx` (as for tools).
//!   - `complete({ argument: { name, value }, context? })` resolves an envelope whose result is
//!     a `string[]` or `{ values, total?, hasMore? }`; it is asked only for the `completes` names.
//! - `upstreams[i]` is a source's session handle (`NativeSource.upstream()`), in config order.
//! - `cache = { ttlMs?, scope? }` overrides the served caching hints.

use std::sync::Arc;

use futures::FutureExt;
use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::{Map, Value, json};

use super::tools::{Abort, Execute, JsTool};
use crate::bounded::JsonValue;
use crate::callback::js_callback;
use engine::connect::session::Session;
use engine::serve::surface::{Hints, OwnItem, OwnKind, Upstream};
use engine::serve::{CallContext, ToolCaller};

/// One of a service's own resources, templates or prompts (internal).
#[napi(object, object_to_js = false)]
pub struct NativeSurfaceEntry<'a> {
    /// `"resource"`, `"template"` or `"prompt"`.
    pub kind: String,
    /// Its MCP listing (`Resource`, `ResourceTemplate` or `Prompt`).
    #[napi(ts_type = "Record<string, unknown>")]
    pub listing: Unknown<'a>,
    /// `execute({ id, args })`, resolving `{ result } | { error }`.
    #[napi(ts_type = "(call: { id: number; args: Record<string, unknown> }) => Promise<unknown>")]
    pub execute: Function<'a, Value, Promise<JsonValue>>,
    /// `abort(id)` fires the AbortSignal of the call with this id.
    #[napi(ts_type = "(id: number) => void")]
    pub abort: Function<'a, f64, ()>,
    /// `complete({ argument, context? })`, resolving `{ result } | { error }`.
    #[napi(
        ts_type = "(call: { argument: { name: string; value: string }; context?: { arguments?: Record<string, string> } }) => Promise<unknown>"
    )]
    pub complete: Option<Function<'a, Value, Promise<JsonValue>>>,
    /// The arguments (or template variables) `complete` completes.
    pub completes: Option<Vec<String>>,
}

/// Caching hints a service serves instead of its upstreams' (internal).
#[napi(object)]
pub struct NativeCacheHints {
    pub ttl_ms: Option<f64>,
    #[napi(ts_type = "'public' | 'private'")]
    pub scope: Option<String>,
}

/// What `setSurface` found worth saying (internal).
#[napi(object)]
pub struct SurfaceSet {
    pub warnings: Vec<String>,
}

/// A surface entry's answer: the envelope `execute` resolved, or its failure as one.
fn envelope_answer(outcome: std::result::Result<Value, String>) -> Value {
    match outcome {
        Ok(envelope) => envelope,
        Err(message) => json!({ "error": { "message": message } }),
    }
}

/// A completer: its `complete(call)` with the argument and context, resolving an envelope.
struct JsCompleter(Arc<Execute>);

impl ToolCaller for JsCompleter {
    fn call(
        &self,
        arguments: Map<String, Value>,
        _ctx: CallContext,
    ) -> futures::future::BoxFuture<'static, Value> {
        let complete = self.0.clone();
        async move {
            let outcome = match complete.call_async_catch(Value::Object(arguments)).await {
                Ok(promise) => promise.await.map(|v| v.0).map_err(|e| e.reason.clone()),
                Err(e) => Err(e.reason.clone()),
            };
            envelope_answer(outcome)
        }
        .boxed()
    }
}

fn own_item(env: &Env, i: usize, entry: NativeSurfaceEntry) -> Result<OwnItem> {
    let kind = match entry.kind.as_str() {
        "resource" => OwnKind::Resource,
        "template" => OwnKind::Template,
        "prompt" => OwnKind::Prompt,
        other => {
            return Err(Error::new(
                Status::InvalidArg,
                format!(
                    "toolnexus: surface entry {i} is of kind {other:?}; expected \"resource\", \"template\" or \"prompt\""
                ),
            ));
        }
    };
    let about = format!("surface entry {i}");
    let Value::Object(listing) = crate::convert::json_value(env, entry.listing, &about, "listing")?
    else {
        return Err(Error::new(
            Status::InvalidArg,
            format!("toolnexus: the listing of surface entry {i} is not an object"),
        ));
    };
    let execute: Execute = js_callback(entry.execute)?;
    let abort: Abort = js_callback(entry.abort)?;
    let completer = match entry.complete {
        Some(complete) => {
            let complete: Execute = js_callback(complete)?;
            Some(Arc::new(JsCompleter(Arc::new(complete))) as Arc<dyn ToolCaller>)
        }
        None => None,
    };
    Ok(OwnItem {
        kind,
        listing,
        caller: Arc::new(JsTool {
            execute: Arc::new(execute),
            abort: Arc::new(abort),
            map: envelope_answer,
            defer_task: false,
        }),
        completer,
        completes: entry.completes.unwrap_or_default(),
    })
}

/// What `setSurface` hands the native server.
pub(super) type SurfaceParts = (Vec<OwnItem>, Vec<Arc<dyn Upstream>>, Hints);

/// The own entries, the upstreams (every connected server of each session, in order) and
/// the configured hints, as the native server takes them.
pub(super) fn surface_parts(
    env: &Env,
    own: Vec<NativeSurfaceEntry>,
    upstreams: Vec<&Arc<Session>>,
    cache: Option<NativeCacheHints>,
) -> Result<SurfaceParts> {
    let own = own
        .into_iter()
        .enumerate()
        .map(|(i, entry)| own_item(env, i, entry))
        .collect::<Result<Vec<_>>>()?;
    let upstreams = upstreams
        .into_iter()
        .flat_map(engine::gateway::upstream::Live::all)
        .collect();
    let mut hints = Hints::default();
    if let Some(cache) = cache {
        if let Some(ttl) = cache.ttl_ms {
            if !(ttl.is_finite() && ttl >= 0.0 && ttl.fract() == 0.0) {
                return Err(Error::new(
                    Status::InvalidArg,
                    format!(
                        "toolnexus: cache.ttlMs must be a whole number of milliseconds ≥ 0, not {ttl}"
                    ),
                ));
            }
            hints.ttl_ms = Some(ttl as u64);
        }
        hints.scope = match cache.scope.as_deref() {
            None => None,
            Some("public") => Some(rmcp::model::CacheScope::Public),
            Some("private") => Some(rmcp::model::CacheScope::Private),
            Some(other) => {
                return Err(Error::new(
                    Status::InvalidArg,
                    format!(
                        "toolnexus: cache.scope must be \"public\" or \"private\", not {other:?}"
                    ),
                ));
            }
        };
    }
    Ok((own, upstreams, hints))
}
