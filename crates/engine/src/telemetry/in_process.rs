//! Spans handed to the app's own OpenTelemetry SDK, in its process: a library user who serves
//! (or runs a gateway) sets a span processor of theirs once, and from then on every span the
//! engine makes goes to it as a plain JSON record (the binding turns each into the SDK's
//! `ReadableSpan` shape) instead of over OTLP. Its parent is whatever the request carried, so
//! an app calling its own served toolkit sees one trace.
//!
//! The sink is the binding's: a bounded queue to the JavaScript thread that answers false
//! when full (the span is then dropped and counted, as on the way to a collector).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, RwLock};
use std::time::{SystemTime, UNIX_EPOCH};

use opentelemetry::trace::{SpanKind, Status, TracerProvider as _};
use opentelemetry::{Array, Context, Value as OtelValue};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{Span, SpanData, SpanProcessor};
use serde_json::{Map, Value, json};

/// Takes one finished span as its JSON record; false when it could not (the span is dropped).
pub type Sink = dyn Fn(Value) -> bool + Send + Sync;

/// The in-process tracer, built the first time a sink is set, and the sink now in use.
struct InProcess {
    tracer: opentelemetry_sdk::trace::SdkTracer,
    _provider: opentelemetry_sdk::trace::SdkTracerProvider,
    on: AtomicBool,
    sink: Arc<RwLock<Option<Arc<Sink>>>>,
}

static IN_PROCESS: OnceLock<InProcess> = OnceLock::new();

/// Sends every span the engine makes from now on to `sink` (None: stop, and make none unless
/// spans go over OTLP). While a sink is set, spans go to it and not to an OTLP endpoint.
pub fn export_to(sink: Option<Arc<Sink>>) {
    let state = IN_PROCESS.get_or_init(|| {
        let slot: Arc<RwLock<Option<Arc<Sink>>>> = Arc::default();
        let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
            .with_span_processor(ToSink { sink: slot.clone() })
            .build();
        InProcess {
            tracer: provider.tracer_with_scope(super::setup::scope()),
            _provider: provider,
            on: AtomicBool::new(false),
            sink: slot,
        }
    });
    let on = sink.is_some();
    *state.sink.write().unwrap_or_else(|e| e.into_inner()) = sink;
    state.on.store(on, Ordering::Release);
}

/// The in-process tracer, while a sink is set.
pub(super) fn tracer() -> Option<&'static opentelemetry_sdk::trace::SdkTracer> {
    let state = IN_PROCESS.get()?;
    state.on.load(Ordering::Acquire).then_some(&state.tracer)
}

/// The span processor: each sampled span, ended, goes to the sink as its record.
struct ToSink {
    sink: Arc<RwLock<Option<Arc<Sink>>>>,
}

impl std::fmt::Debug for ToSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ToSink")
    }
}

impl SpanProcessor for ToSink {
    fn on_start(&self, _span: &mut Span, _cx: &Context) {}

    fn on_end(&self, span: SpanData) {
        if !span.span_context.is_sampled() {
            return;
        }
        let sink = self.sink.read().unwrap_or_else(|e| e.into_inner()).clone();
        let Some(sink) = sink else { return };
        if !sink(record(&span)) {
            super::export::DROPPED.add(
                1,
                "the app's span processor is not keeping up (the JavaScript thread is busy)",
            );
        }
    }

    fn force_flush(&self) -> OTelSdkResult {
        Ok(())
    }

    fn shutdown_with_timeout(&self, _timeout: std::time::Duration) -> OTelSdkResult {
        Ok(())
    }
}

/// A time as OpenTelemetry JavaScript's `HrTime`: whole seconds and nanoseconds.
fn hr_time(time: SystemTime) -> Value {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    json!([since.as_secs(), since.subsec_nanos()])
}

fn attribute(value: &OtelValue) -> Value {
    fn list<T: Clone + Into<Value>>(items: &[T]) -> Value {
        Value::Array(items.iter().cloned().map(Into::into).collect())
    }
    match value {
        OtelValue::Bool(b) => Value::Bool(*b),
        OtelValue::I64(n) => Value::from(*n),
        OtelValue::F64(n) => Value::from(*n),
        OtelValue::String(s) => Value::String(s.to_string()),
        OtelValue::Array(Array::Bool(items)) => list(items),
        OtelValue::Array(Array::I64(items)) => list(items),
        OtelValue::Array(Array::F64(items)) => list(items),
        OtelValue::Array(Array::String(items)) => {
            Value::Array(items.iter().map(|s| Value::String(s.to_string())).collect())
        }
        other => Value::String(other.to_string()),
    }
}

fn attributes<'a>(pairs: impl Iterator<Item = &'a opentelemetry::KeyValue>) -> Value {
    let map: Map<String, Value> = pairs
        .map(|kv| (kv.key.to_string(), attribute(&kv.value)))
        .collect();
    Value::Object(map)
}

/// A span as the binding hands it to JavaScript: ids in lowercase hex, `kind` as
/// `@opentelemetry/api`'s `SpanKind` number, `status.code` as its `SpanStatusCode`.
fn record(span: &SpanData) -> Value {
    let context = &span.span_context;
    let parent = (span.parent_span_id != opentelemetry::trace::SpanId::INVALID)
        .then(|| span.parent_span_id.to_string());
    let kind = match span.span_kind {
        SpanKind::Internal => 0,
        SpanKind::Server => 1,
        SpanKind::Client => 2,
        SpanKind::Producer => 3,
        SpanKind::Consumer => 4,
    };
    let (code, message) = match &span.status {
        Status::Unset => (0, String::new()),
        Status::Ok => (1, String::new()),
        Status::Error { description } => (2, description.to_string()),
    };
    let links: Vec<Value> = span
        .links
        .iter()
        .map(|link| {
            json!({
                "traceId": link.span_context.trace_id().to_string(),
                "spanId": link.span_context.span_id().to_string(),
                "traceFlags": link.span_context.trace_flags().to_u8(),
                "attributes": attributes(link.attributes.iter()),
            })
        })
        .collect();
    json!({
        "name": span.name,
        "kind": kind,
        "traceId": context.trace_id().to_string(),
        "spanId": context.span_id().to_string(),
        "traceFlags": context.trace_flags().to_u8(),
        "traceState": context.trace_state().header(),
        "parentSpanId": parent,
        "parentIsRemote": span.parent_span_is_remote,
        "startTime": hr_time(span.start_time),
        "endTime": hr_time(span.end_time),
        "attributes": attributes(span.attributes.iter()),
        "status": { "code": code, "message": message },
        "links": links,
        "scope": {
            "name": span.instrumentation_scope.name(),
            "version": span.instrumentation_scope.version(),
        },
    })
}
