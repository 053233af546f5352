//! Who makes a request, and the trace context it carries, as the handler reads them from the
//! request's context.
//!
//! The HTTP gate (`http::gate`) lets a request in with a [`Caller`] in its extensions: the
//! principal its token proved, and the endpoint's guard, whose policy says which tools,
//! prompts and resources that principal may see. rmcp hands the request's HTTP parts to the
//! handler in the context's extensions, on both of the session's roads and statelessly, so
//! every check here reads one place. A request with no caller (stdio, an SDK transport, HTTP
//! served without auth) may see everything.

use std::sync::Arc;

use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Map, Value};

use super::auth::{Guard, Kind, Principal};

/// The principal a request was let in as, and the guard that let it in.
pub struct Caller {
    pub principal: Arc<Principal>,
    pub guard: Arc<Guard>,
}

impl Caller {
    /// The caller of the request `context` answers, when it came through an auth gate.
    pub fn of(context: &RequestContext<RoleServer>) -> Option<Arc<Caller>> {
        context
            .extensions
            .get::<http::request::Parts>()?
            .extensions
            .get::<Arc<Caller>>()
            .cloned()
    }

    fn allows(&self, kind: Kind, name: &str) -> bool {
        self.guard
            .policy()
            .allows(kind, Some(&self.principal), name)
    }
}

/// What one request may see: everything, or what its caller's scopes allow.
pub struct Sight(Option<Arc<Caller>>);

impl Sight {
    pub fn of(context: &RequestContext<RoleServer>) -> Self {
        Self(Caller::of(context))
    }

    /// Whether the `kind` named `name` (a tool or prompt name, a resource URI or template) is
    /// visible to this request. One outside its scopes is answered as if it did not exist.
    pub fn sees(&self, kind: Kind, name: &str) -> bool {
        self.0
            .as_ref()
            .is_none_or(|caller| caller.allows(kind, name))
    }

    /// Whether every `kind` is visible (no filtering needed).
    pub fn sees_all(&self, kind: Kind) -> bool {
        self.0
            .as_ref()
            .is_none_or(|caller| caller.guard.policy().is_open(kind))
    }
}

/// The principal of the request `context` answers, if it has one.
pub fn principal_of(context: &RequestContext<RoleServer>) -> Option<Arc<Principal>> {
    Caller::of(context).map(|caller| caller.principal.clone())
}

/// Who a parked run or a session belongs to: the principal's key, or None without auth.
pub fn owner_of(context: &RequestContext<RoleServer>) -> Option<String> {
    principal_of(context).map(|p| p.key())
}

const TRACEPARENT: &str = "traceparent";
const TRACESTATE: &str = "tracestate";
/// W3C Trace Context: tracestate is at most 32 list members of at most 256 characters; longer
/// ones are dropped rather than forwarded.
const MAX_TRACESTATE: usize = 512;

/// The W3C trace context of the request `context` answers, as `_meta` entries for an upstream
/// request (SEP-414): from the request's own `_meta`, else from its HTTP headers. A malformed
/// `traceparent` is not forwarded (nor then its `tracestate`).
pub fn trace_meta(context: &RequestContext<RoleServer>) -> Option<Map<String, Value>> {
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
    let (parent, state) = match from_meta(TRACEPARENT) {
        Some(parent) => (parent, from_meta(TRACESTATE)),
        None => (from_headers(TRACEPARENT)?, from_headers(TRACESTATE)),
    };
    let parent = parent.trim();
    if !valid_traceparent(parent) {
        return None;
    }
    let mut meta = Map::new();
    meta.insert(TRACEPARENT.into(), Value::String(parent.to_string()));
    if let Some(state) = state
        .map(|s| s.trim().to_string())
        .filter(|s| valid_tracestate(s))
    {
        meta.insert(TRACESTATE.into(), Value::String(state));
    }
    Some(meta)
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
