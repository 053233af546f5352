//! What stands before an endpoint's MCP path: who may reach it (a bearer token, checked on
//! every request by the endpoint's [`Guard`]; a session answers only the principal that opened
//! it), and the paths outside it that need no token: liveness (`/healthz`), readiness
//! (`/readyz`) and the OAuth protected-resource metadata (RFC 9728). `/metrics`, when served,
//! needs the same token as `/mcp`.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;
use http::{Method, Response, StatusCode};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use serde_json::{Value, json};

use super::sessions::Sessions;
use crate::serve::auth::Guard;
use crate::serve::caller::Caller;

type Body = BoxBody<Bytes, Infallible>;

/// Whether the servers behind an endpoint are connected: `{ ready, servers }`, or None when
/// the answer could not be had.
pub type Readiness = Arc<dyn Fn() -> BoxFuture<'static, Option<Value>> + Send + Sync>;

const PRM_PATH: &str = "/.well-known/oauth-protected-resource";

/// One endpoint's gate.
pub(crate) struct Gate {
    pub(crate) guard: Option<Arc<Guard>>,
    pub(crate) ready: Option<Readiness>,
    /// The endpoint's sessions (none when stateless), to tell whose each is.
    pub(crate) sessions: Option<Arc<Sessions>>,
    /// Whether `/metrics` is served.
    pub(crate) metrics: bool,
    /// The store replicas share, reported by `/readyz` (which it does not make unready: the
    /// requests that need it fail in words, the others are served).
    pub(crate) store: Option<Arc<dyn crate::serve::store::StateStore>>,
}

/// What becomes of a request.
pub(crate) enum Admission {
    /// On to rmcp at `/mcp`, as the caller the token proved (None: served without auth).
    Mcp(Option<Arc<Caller>>),
    /// Answered here.
    Reply(Response<Body>),
    /// Refused here: who it was, when the token said, and why, for the access log (the words
    /// of the refusal, or for a failed check its cause; never the token).
    Refused {
        reply: Response<Body>,
        principal: Option<String>,
        why: String,
    },
}

fn refused(denial: &crate::serve::auth::Denial, principal: Option<String>) -> Admission {
    Admission::Refused {
        reply: denial.response().map(|b| Full::new(b).boxed()),
        principal: principal.or_else(|| denial.subject().map(str::to_string)),
        why: denial.detail().unwrap_or(denial.description()).to_string(),
    }
}

impl Gate {
    pub(crate) async fn admit(&self, parts: &http::request::Parts) -> Admission {
        let path = parts.uri.path();
        match path {
            "/mcp" => self.admit_mcp(parts).await,
            "/healthz" if reads(&parts.method) => {
                Admission::Reply(json_reply(StatusCode::OK, &json!({ "status": "ok" })))
            }
            "/readyz" if reads(&parts.method) => Admission::Reply(self.readiness().await),
            "/metrics" if self.metrics && reads(&parts.method) => self.metrics(parts).await,
            _ if path == PRM_PATH || path.starts_with(&format!("{PRM_PATH}/")) => {
                match self.guard.as_ref().and_then(|g| g.metadata_response(path)) {
                    Some(reply) => Admission::Reply(reply.map(|b| Full::new(b).boxed())),
                    None => Admission::Reply(not_found()),
                }
            }
            _ => Admission::Reply(not_found()),
        }
    }

    async fn admit_mcp(&self, parts: &http::request::Parts) -> Admission {
        // A browser's CORS preflight carries no credentials; rmcp answers it.
        let Some(guard) = self
            .guard
            .as_ref()
            .filter(|_| parts.method != Method::OPTIONS)
        else {
            return Admission::Mcp(None);
        };
        let principal = match guard.check(&parts.headers).await {
            Ok(principal) => principal,
            Err(denial) => return refused(&denial, None),
        };
        let session = parts
            .headers
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok());
        if let (Some(id), Some(sessions)) = (session, &self.sessions)
            && let Some(owner) = sessions.owner(id)
            && *owner != *principal.key()
        {
            let denial = crate::serve::auth::Denial::other_session();
            return refused(&denial, Some(principal.subject.clone()));
        }
        Admission::Mcp(Some(Arc::new(Caller {
            principal,
            guard: guard.clone(),
        })))
    }

    /// The durations in Prometheus text, to a caller the guard lets in (anyone without auth).
    async fn metrics(&self, parts: &http::request::Parts) -> Admission {
        if let Some(guard) = &self.guard
            && let Err(denial) = guard.check(&parts.headers).await
        {
            return refused(&denial, None);
        }
        Admission::Reply(reply(
            StatusCode::OK,
            "text/plain; version=0.0.4; charset=utf-8",
            Bytes::from(crate::telemetry::metrics_text()),
        ))
    }

    /// 200 when every server behind the endpoint is connected, 503 (with each one's status)
    /// when one is not; with a shared store, whether it answers too (`store`).
    async fn readiness(&self) -> Response<Body> {
        let mut reply = self.servers_readiness().await;
        if let Some(store) = &self.store {
            let started = std::time::Instant::now();
            let pinged = store.ping().await;
            let ms = (started.elapsed().as_secs_f64() * 10_000.0).round() / 10.0;
            let mut report = json!({ "url": store.describe(), "ms": ms });
            match pinged {
                Ok(()) => report["status"] = json!("ok"),
                Err(e) => {
                    report["status"] = json!("unreachable");
                    report["error"] = json!(e.cause);
                }
            }
            reply.1["store"] = report;
        }
        json_reply(reply.0, &reply.1)
    }

    async fn servers_readiness(&self) -> (StatusCode, Value) {
        let Some(ready) = &self.ready else {
            return (StatusCode::OK, json!({ "status": "ready", "servers": {} }));
        };
        match ready().await {
            Some(answer) => {
                let is_ready = answer.get("ready").and_then(Value::as_bool) == Some(true);
                let servers = answer.get("servers").cloned().unwrap_or_else(|| json!({}));
                let (status, word) = if is_ready {
                    (StatusCode::OK, "ready")
                } else {
                    (StatusCode::SERVICE_UNAVAILABLE, "not ready")
                };
                (status, json!({ "status": word, "servers": servers }))
            }
            None => (
                StatusCode::SERVICE_UNAVAILABLE,
                json!({ "status": "not ready", "servers": {} }),
            ),
        }
    }
}

fn reads(method: &Method) -> bool {
    method == Method::GET || method == Method::HEAD
}

fn json_reply(status: StatusCode, value: &Value) -> Response<Body> {
    reply(status, "application/json", Bytes::from(value.to_string()))
}

/// An answer of the gate's own, never cached.
fn reply(status: StatusCode, content_type: &'static str, body: Bytes) -> Response<Body> {
    let mut reply = Response::new(Full::new(body).boxed());
    *reply.status_mut() = status;
    reply.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static(content_type),
    );
    reply.headers_mut().insert(
        http::header::CACHE_CONTROL,
        http::HeaderValue::from_static("no-store"),
    );
    reply
}

pub(crate) fn not_found() -> Response<Body> {
    let mut reply = Response::new(Full::new(Bytes::from_static(b"Not Found")).boxed());
    *reply.status_mut() = StatusCode::NOT_FOUND;
    reply.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    reply
}

/// A request that needed the shared state store, which failed: 503 with a JSON-RPC error in
/// words (`what` could not be done, and why), to be retried once the store answers.
pub(crate) fn store_unavailable(what: &str, e: &crate::serve::store::StoreError) -> Response<Body> {
    let body = json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": -32603,
            "message": format!("{what}: the state store failed ({e}); retry in a moment"),
        },
    });
    json_reply(StatusCode::SERVICE_UNAVAILABLE, &body)
}

/// A request over a rate or concurrency limit: 429 with `Retry-After`, and a JSON-RPC error
/// in words saying which limit and when to retry.
pub(crate) fn too_many(refusal: &crate::serve::rate::Refusal) -> Response<Body> {
    let body = json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": { "code": -32000, "message": format!("Too many requests: {}", refusal.message) },
    });
    let mut reply = json_reply(StatusCode::TOO_MANY_REQUESTS, &body);
    if let Ok(value) = http::HeaderValue::from_str(&refusal.retry_after.to_string()) {
        reply.headers_mut().insert(http::header::RETRY_AFTER, value);
    }
    reply
}
