//! What the calling side's telemetry (lib/telemetry.js) needs of the engine: where a loadMcp
//! tool's server is and what it speaks, and the trace context JavaScript hands a request.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::{Map, Value};

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use napi::threadsafe_function::ThreadsafeFunctionCallMode;

use engine::gateway::tool::LoadedTool;

/// What telemetry says of a loadMcp tool's calls (internal: lib/telemetry.js): its server's
/// name, the tool's original name, `transport` (`pipe` or `tcp`), a remote server's `address`
/// and `port`, and the `protocolVersion` it speaks.
#[napi(
    ts_args_type = "tool: unknown",
    ts_return_type = "{ server: string; tool: string; transport: string; address?: string; port?: number; protocolVersion?: string }"
)]
pub fn mcp_tool_peer(tool: &External<Arc<LoadedTool>>) -> Result<Value> {
    let mut peer = serde_json::to_value(tool.server.peer_attributes())
        .map_err(|e| Error::from_reason(e.to_string()))?;
    if let Value::Object(peer) = &mut peer {
        peer.insert("server".into(), Value::String(tool.server.name.clone()));
        peer.insert("tool".into(), Value::String(tool.tool.clone()));
    }
    Ok(peer)
}

/// `_meta` entries from JavaScript (strings: the trace context) as the request's `_meta`.
pub(crate) fn meta_object(
    entries: std::collections::HashMap<String, String>,
) -> Map<String, Value> {
    entries
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect()
}

/// Sends the spans and metrics the engine has queued for the OpenTelemetry collector (serving
/// with the `OTEL_EXPORTER_OTLP_*` variables set), and waits for it, at most a few seconds.
#[napi]
pub async fn flush_telemetry() -> Result<()> {
    tokio::task::spawn_blocking(engine::telemetry::flush)
        .await
        .map_err(|_| Error::from_reason("toolnexus: the telemetry flush did not finish"))
}

/// Which call of `exportSpans` set the sink now in use (an environment that ends takes its
/// own sink away, not a later one).
static SINK_GENERATION: AtomicU64 = AtomicU64::new(0);

/// How many spans may wait for the JavaScript thread; past that they are dropped and counted.
const MAX_QUEUED_SPANS: usize = 4096;

/// One `exportSpans` callback's queue (internal): how many spans it has been sent, so that a
/// flush can wait until the callback has been given as many.
#[napi]
pub struct SpanSink {
    queued: Arc<AtomicU64>,
}

#[napi]
impl SpanSink {
    /// How many spans have been queued for the callback so far.
    #[napi]
    pub fn queued(&self) -> f64 {
        self.queued.load(Ordering::Acquire) as f64
    }
}

/// Sends every span the engine makes to `onSpan` (internal: lib/telemetry.js, which hands
/// them to the app's span processor), or stops when it is null. Spans then go there instead
/// of to an OTLP endpoint.
#[napi(ts_args_type = "onSpan: ((span: unknown) => void) | null")]
pub fn export_spans(env: Env, on_span: Option<Function<Value, ()>>) -> Result<Option<SpanSink>> {
    let generation = SINK_GENERATION.fetch_add(1, Ordering::AcqRel) + 1;
    let Some(on_span) = on_span else {
        engine::telemetry::export_to(None);
        return Ok(None);
    };
    // lib/telemetry.js's callback never throws: it catches what the processor throws.
    let tsfn = on_span
        .build_threadsafe_function()
        .weak::<true>()
        .callee_handled::<false>()
        .max_queue_size::<MAX_QUEUED_SPANS>()
        .build()?;
    let queued = Arc::new(AtomicU64::new(0));
    let counted = queued.clone();
    let sink: Arc<engine::telemetry::Sink> = Arc::new(move |span: Value| {
        let sent = tsfn.call(span, ThreadsafeFunctionCallMode::NonBlocking) == Status::Ok;
        if sent {
            counted.fetch_add(1, Ordering::AcqRel);
        }
        sent
    });
    env.add_env_cleanup_hook(generation, |generation| {
        if SINK_GENERATION.load(Ordering::Acquire) == generation {
            engine::telemetry::export_to(None);
        }
    })?;
    engine::telemetry::export_to(Some(sink));
    Ok(Some(SpanSink { queued }))
}
