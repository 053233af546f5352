//! W3C trace context in and out of `_meta` (and HTTP headers), with the SDK's propagator.

use std::collections::HashMap;

use opentelemetry::Context;
use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::{SpanContext, TraceContextExt};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Map, Value};

/// `traceparent` (and `tracestate`) naming the span of `cx`, as `_meta` entries for a request
/// sent on its behalf; None when `cx` has no valid span.
pub(crate) fn inject(cx: &Context) -> Option<Map<String, Value>> {
    if !cx.span().span_context().is_valid() {
        return None;
    }
    let mut carrier: HashMap<String, String> = HashMap::new();
    TraceContextPropagator::new().inject_context(cx, &mut carrier);
    let meta: Map<String, Value> = carrier
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    (!meta.is_empty()).then_some(meta)
}

/// The remote span a `traceparent`/`tracestate` pair names, when valid.
pub(super) fn extract(meta: &Map<String, Value>) -> Option<SpanContext> {
    let carrier: HashMap<String, String> = meta
        .iter()
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
        .collect();
    let cx = TraceContextPropagator::new().extract(&carrier);
    let span = cx.span().span_context().clone();
    span.is_valid().then_some(span)
}

const TRACEPARENT: &str = "traceparent";
const TRACESTATE: &str = "tracestate";
/// W3C Trace Context: tracestate is at most 32 list members of at most 256 characters; longer
/// ones are dropped rather than forwarded.
const MAX_TRACESTATE: usize = 512;

/// The trace context a request came with: its `_meta`'s and its HTTP headers' (each when
/// valid), as `_meta` entries.
pub(crate) struct Incoming {
    pub(crate) meta: Option<Map<String, Value>>,
    pub(crate) headers: Option<Map<String, Value>>,
}

/// The trace context the request `context` answers came with (a malformed `traceparent` is
/// none, and takes its `tracestate` with it).
pub(crate) fn incoming(context: &RequestContext<RoleServer>) -> Incoming {
    let from_meta = |key: &str| {
        context
            .meta
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let headers = context
        .extensions
        .get::<http::request::Parts>()
        .map(|p| &p.headers);
    let from_headers = |key: &str| {
        headers
            .and_then(|h| h.get(key))
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let entries = |parent: Option<String>, state: Option<String>| {
        let parent = parent?.trim().to_string();
        if !valid_traceparent(&parent) {
            return None;
        }
        let mut meta = Map::new();
        meta.insert(TRACEPARENT.into(), Value::String(parent));
        if let Some(state) = state
            .map(|s| s.trim().to_string())
            .filter(|s| valid_tracestate(s))
        {
            meta.insert(TRACESTATE.into(), Value::String(state));
        }
        Some(meta)
    };
    Incoming {
        meta: entries(from_meta(TRACEPARENT), from_meta(TRACESTATE)),
        headers: entries(from_headers(TRACEPARENT), from_headers(TRACESTATE)),
    }
}

/// `version-traceid-parentid-flags` in lowercase hex (W3C Trace Context §3.2), with the ids
/// not all zeros and the version not `ff`. A later version may append fields after a dash.
fn valid_traceparent(value: &str) -> bool {
    let hex = |s: &str, n: usize| {
        s.len() == n
            && s.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    let mut fields = value.split('-');
    let (Some(version), Some(trace), Some(parent), Some(flags)) =
        (fields.next(), fields.next(), fields.next(), fields.next())
    else {
        return false;
    };
    let rest_ok = version != "00" || fields.next().is_none();
    hex(version, 2)
        && version != "ff"
        && hex(trace, 32)
        && trace.bytes().any(|b| b != b'0')
        && hex(parent, 16)
        && parent.bytes().any(|b| b != b'0')
        && hex(flags, 2)
        && rest_ok
}

fn valid_tracestate(value: &str) -> bool {
    !value.is_empty()
        && value.len() <= MAX_TRACESTATE
        && value.bytes().all(|b| (0x20..0x7f).contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traceparents_are_checked_as_w3c_says() {
        let good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        assert!(valid_traceparent(good));
        assert!(!valid_traceparent(&good.to_uppercase()));
        assert!(!valid_traceparent(
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01"
        ));
        assert!(!valid_traceparent(
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"
        ));
        assert!(!valid_traceparent(
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        ));
        assert!(!valid_traceparent(&format!("{good}-extra")));
        assert!(valid_traceparent(
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra"
        ));
        assert!(!valid_traceparent("garbage"));
        assert!(valid_tracestate("congo=t61rcWkgMzE"));
        assert!(!valid_tracestate(&"a".repeat(513)));
        assert!(!valid_tracestate("bad\nline"));
    }
}
