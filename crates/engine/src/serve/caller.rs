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
pub(crate) struct Caller {
    pub(crate) principal: Arc<Principal>,
    pub(crate) guard: Arc<Guard>,
}

impl Caller {
    /// The caller of the request `context` answers, when it came through an auth gate.
    pub(crate) fn of(context: &RequestContext<RoleServer>) -> Option<Arc<Caller>> {
        from_front(context)
    }

    fn allows(&self, kind: Kind, name: &str) -> bool {
        let policy = self.guard.policy();
        if kind == Kind::Resource && !policy.is_open(kind) {
            // A URI is matched as the server it reaches would read it: escaped letters and
            // dots are decoded first, and one with dot segments (which climb out of an allowed
            // prefix there) or a separator hidden in an escape or a backslash is seen by no
            // policy.
            return canonical_uri(name)
                .is_some_and(|uri| policy.allows(kind, Some(&self.principal), &uri));
        }
        policy.allows(kind, Some(&self.principal), name)
    }
}

/// `uri` with the escapes of unreserved characters decoded (RFC 3986 §6.2.2.2); None when it
/// has a `.` or `..` segment (servers resolve those differently: a template's expansion may
/// climb over what looks like an authority), escapes a `/` or a `\\`, or holds a `\\`.
pub(crate) fn canonical_uri(uri: &str) -> Option<String> {
    if uri.contains('\\') {
        return None;
    }
    let mut decoded = String::with_capacity(uri.len());
    let bytes = uri.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = uri.get(i + 1..i + 3).unwrap_or_default();
            if hex.len() == 2
                && hex.bytes().all(|b| b.is_ascii_hexdigit())
                && let Ok(byte) = u8::from_str_radix(hex, 16)
            {
                if byte == b'/' || byte == b'\\' {
                    return None;
                }
                if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
                    decoded.push(byte as char);
                    i += 3;
                    continue;
                }
            }
        }
        let ch = uri[i..].chars().next()?;
        decoded.push(ch);
        i += ch.len_utf8();
    }
    let before_query = decoded.split(['?', '#']).next().unwrap_or_default();
    let after_scheme = before_query
        .split_once(':')
        .map_or(before_query, |(_, rest)| rest);
    if after_scheme
        .split('/')
        .any(|segment| segment == "." || segment == "..")
    {
        return None;
    }
    Some(decoded)
}

/// What one request may see: everything, or what its caller's scopes allow.
pub(crate) struct Sight(Option<Arc<Caller>>);

impl Sight {
    pub(crate) fn of(context: &RequestContext<RoleServer>) -> Self {
        Self(Caller::of(context))
    }

    /// What the request whose HTTP extensions are `extensions` may see (the gate put its
    /// caller there), for the front, before rmcp has a context.
    pub(crate) fn of_http(extensions: &http::Extensions) -> Self {
        Self(extensions.get::<Arc<Caller>>().cloned())
    }

    /// Whether the `kind` named `name` (a tool or prompt name, a resource URI or template) is
    /// visible to this request. One outside its scopes is answered as if it did not exist.
    pub(crate) fn sees(&self, kind: Kind, name: &str) -> bool {
        self.0
            .as_ref()
            .is_none_or(|caller| caller.allows(kind, name))
    }

    /// Whether every `kind` is visible (no filtering needed).
    pub(crate) fn sees_all(&self, kind: Kind) -> bool {
        self.0
            .as_ref()
            .is_none_or(|caller| caller.guard.policy().is_open(kind))
    }
}

/// Marks a request the HTTP front answers statelessly: no stream outlives its answer.
#[derive(Clone, Copy)]
pub(crate) struct Stateless;

/// What the HTTP front put in the request's parts for the handler (its caller, its endpoint's
/// state key), if the request came through it.
pub(crate) fn from_front<T: Clone + Send + Sync + 'static>(
    context: &RequestContext<RoleServer>,
) -> Option<T> {
    context
        .extensions
        .get::<http::request::Parts>()?
        .extensions
        .get::<T>()
        .cloned()
}

/// The principal of the request `context` answers, if it has one.
pub(crate) fn principal_of(context: &RequestContext<RoleServer>) -> Option<Arc<Principal>> {
    Caller::of(context).map(|caller| caller.principal.clone())
}

/// Who a parked run or a session belongs to: the principal's key, or None without auth.
pub(crate) fn owner_of(context: &RequestContext<RoleServer>) -> Option<String> {
    principal_of(context).map(|p| p.key())
}

/// The W3C trace context for a request sent upstream on behalf of the request `context`
/// answers (SEP-414), as `_meta` entries: its SERVER span's when telemetry exports spans,
/// else the one it came with (its `_meta`'s, else its HTTP headers'). None without any.
pub(crate) fn trace_meta(context: &RequestContext<RoleServer>) -> Option<Map<String, Value>> {
    if let Some(crate::telemetry::SpanCx(cx)) = context.extensions.get() {
        return crate::telemetry::inject(cx);
    }
    let incoming = crate::telemetry::incoming(context);
    incoming.meta.or(incoming.headers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_uris_are_matched_as_the_server_resolves_them() {
        let c = |u: &str| canonical_uri(u);
        assert_eq!(
            c("file:///public/a.txt").as_deref(),
            Some("file:///public/a.txt")
        );
        assert_eq!(
            c("file:///public/%41%7e").as_deref(),
            Some("file:///public/A~")
        );
        assert_eq!(
            c("users://42/profile?x=../y").as_deref(),
            Some("users://42/profile?x=../y")
        );
        assert_eq!(c("file:///a..b/.c").as_deref(), Some("file:///a..b/.c"));
        for climbing in [
            "file:///public/../secret/x",
            "file:///public/%2e%2e/secret",
            "file:///public/%2E%2E/%2e/s",
            "file:///public/./a",
            "docs://public/../secret",
            "note:a/../b",
            "note:..",
            "file:///public%2f..%2fsecret",
            "file:///public\\..\\secret",
            "file:///public/%5c",
        ] {
            assert_eq!(c(climbing), None, "{climbing}");
        }
        assert_eq!(
            c("file:///caf%C3%A9/%41").as_deref(),
            Some("file:///caf%C3%A9/A")
        );
        assert_eq!(c("file:///x/%zz/%4").as_deref(), Some("file:///x/%zz/%4"));
        assert_eq!(c("ünï://çödé/x").as_deref(), Some("ünï://çödé/x"));
        assert_eq!(c("file:///%é%").as_deref(), Some("file:///%é%"));
        assert_eq!(c("file:///%+1").as_deref(), Some("file:///%+1"));
    }
}
