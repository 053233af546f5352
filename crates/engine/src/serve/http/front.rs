//! The per-endpoint request pipeline behind the gate: portable sessions opened and sealed,
//! rmcp's service (or the sessions' direct road) for `/mcp`, and what rmcp's answers need mended
//! (a handshake-era session's tasks, a `subscriptions/listen` cut to the caller's sight, the
//! tools' `execution`, parse errors as JSON-RPC).

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::Incoming;
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;

use super::access_log::AccessLog;
use super::body::{self, GuardedBody};
use super::gate::Gate;
use super::portable;
use super::sessions::Sessions;
use super::sessions::direct::JsonAnswer;
use crate::bounds::SERVE_MAX_BODY as MAX_BODY;
use crate::serve::ToolServer;

pub(super) type Body = BoxBody<Bytes, Infallible>;

/// One of the two rmcp services, chosen by `stateless` (the session manager is a type
/// parameter).
#[derive(Clone)]
pub(super) enum Endpoint {
    Sessions(StreamableHttpService<ToolServer, Sessions>),
    Stateless(StreamableHttpService<ToolServer, NeverSessionManager>),
}

impl Endpoint {
    async fn handle<B>(&self, req: Request<B>) -> Response<Body>
    where
        B: hyper::body::Body + Send + 'static,
        B::Error: std::fmt::Display,
    {
        match self {
            Endpoint::Sessions(service) => service.handle(req).await,
            Endpoint::Stateless(service) => service.handle(req).await,
        }
    }
}

/// What every connection of an endpoint answers with: the gate before rmcp's service.
pub(super) struct Front {
    pub(super) endpoint: Endpoint,
    pub(super) gate: Gate,
    pub(super) access_log: Option<AccessLog>,
    pub(super) state_key: Option<Arc<crate::serve::seal::StateKey>>,
    /// The store replicas share (see [`crate::serve::store`]); only with a state key.
    pub(super) store: Option<Arc<dyn crate::serve::store::StateStore>>,
    /// Serving with a state key: portable handshake-era sessions.
    pub(super) portable: Option<Arc<portable::Portable>>,
    /// What a 2026-07-28 `tools/list` answer gets its tools' `execution` from.
    pub(super) server: ToolServer,
    /// The endpoint's rate and concurrency limits, when it has some.
    pub(super) limiter: Option<Arc<crate::serve::rate::Limiter>>,
    /// The listener's other endpoints (the main one's only), by the name in `/mcp/<name>`.
    pub(super) named: std::collections::HashMap<String, Arc<Front>>,
}

const PRM_PATH: &str = "/.well-known/oauth-protected-resource";

impl Front {
    /// The endpoint a request is for: `/mcp/<name>` (and its protected-resource metadata) is
    /// that endpoint's, its path made `/mcp` for its gate and rmcp; anything else the main
    /// one's. None for a name no endpoint has.
    pub(super) fn route(self: &Arc<Self>, parts: &mut http::request::Parts) -> Option<Arc<Front>> {
        if self.named.is_empty() {
            return Some(self.clone());
        }
        let path = parts.uri.path();
        let (rest, metadata) = match path.strip_prefix("/mcp/") {
            Some(rest) => (rest, false),
            None => match path
                .strip_prefix(PRM_PATH)
                .and_then(|p| p.strip_prefix("/mcp/"))
            {
                Some(rest) => (rest, true),
                None => return Some(self.clone()),
            },
        };
        let front = self.named.get(rest)?.clone();
        if !metadata {
            let mut uri = http::uri::Parts::from(parts.uri.clone());
            let query = parts
                .uri
                .query()
                .map(|q| format!("?{q}"))
                .unwrap_or_default();
            uri.path_and_query = format!("/mcp{query}").parse().ok();
            if let Ok(rewritten) = http::Uri::from_parts(uri) {
                parts.uri = rewritten;
            }
        }
        Some(front)
    }
}

impl Front {
    /// The answer at `/mcp`: with portable sessions, a sealed session id is opened on the way
    /// in and a fresh one sealed on the way out (see `portable`).
    pub(super) async fn answer(&self, mut req: Request<GuardedBody<Incoming>>) -> Response<Body> {
        let Some(portable) = self
            .portable
            .as_ref()
            .filter(|_| req.method() != http::Method::OPTIONS)
        else {
            return self.answer_here(req).await;
        };
        let sent = req.headers().clone();
        let owner = portable::owner_of(req.extensions());
        let deleted = req.method() == http::Method::DELETE;
        let (local, renewed) = match portable.inbound(req.headers_mut(), owner.as_deref()) {
            portable::Inbound::Plain => (None, None),
            portable::Inbound::Local { local, renewed } => (Some(local), renewed),
            portable::Inbound::Refused(reply) => return reply,
        };
        if let (Some(store), Some(local)) = (&self.store, &local)
            && let Some(reply) = self
                .shared_session(store.as_ref(), (local, owner.as_deref()), deleted)
                .await
        {
            portable.settled(local);
            return reply;
        }
        let mut reply = portable::with_client_headers(sent, self.answer_here(req)).await;
        portable.outbound(&mut reply, owner);
        if let Some(renewed) = renewed {
            portable.renew(&mut reply, renewed, deleted);
        }
        if let Some(local) = local {
            portable.settled(&local);
        }
        reply
    }

    /// A portable session as the shared store has it: a DELETE records it ended for every
    /// replica (before this one ends it: when the store fails the session stays open); any
    /// other request is refused when some replica ended it. None: on to rmcp.
    /// A DELETE also cancels the session's tasks, on whichever replica they run.
    async fn shared_session(
        &self,
        store: &dyn crate::serve::store::StateStore,
        (local, owner): (&str, Option<&str>),
        deleted: bool,
    ) -> Option<Response<Body>> {
        if deleted {
            let lifetime = crate::bounds::SERVE_PORTABLE_SESSION_LIFETIME;
            return match store.revoke(local, lifetime).await {
                Ok(()) => {
                    // Its tasks are cancelled after the answer (bounded by the store's bound
                    // on each operation, done together).
                    if let Some(store) = self.store.clone() {
                        let scope = crate::serve::tasks::fleet::shared_scope(Some(local), owner);
                        tokio::spawn(crate::serve::tasks::fleet::cancel_all(store, scope));
                    }
                    None
                }
                Err(e) => Some(super::gate::store_unavailable(
                    "the session could not be ended (it stays open)",
                    &e,
                )),
            };
        }
        match store.is_revoked(local).await {
            Ok(false) => None,
            Ok(true) => Some(portable::session_not_found()),
            Err(e) => Some(super::gate::store_unavailable(
                "the session could not be checked",
                &e,
            )),
        }
    }

    /// rmcp's answer at `/mcp`, or the direct road's.
    async fn answer_here(&self, mut req: Request<GuardedBody<Incoming>>) -> Response<Body> {
        let json_body = is_json(req.headers());
        let delete = req.method() == http::Method::DELETE;
        // 2026-07-28 requests name their method in a header (which rmcp checks against the body).
        // Only a sessionless POST of that era is mended here (rmcp holds its header to its
        // body; a session's answers are mended in `sessions`, and a GET's stream never ends).
        let headers = req.headers();
        let sessionless_modern = req.method() == http::Method::POST
            && !headers.contains_key("mcp-session-id")
            && headers
                .get("mcp-protocol-version")
                .is_some_and(|v| v.as_bytes() >= b"2026-07-28".as_slice());
        let method = |name: &[u8]| {
            sessionless_modern
                && headers
                    .get("mcp-method")
                    .is_some_and(|m| m.as_bytes() == name)
        };
        let listing = method(b"tools/list");
        let listening = method(b"subscriptions/listen");
        // Where a call answered on the sessions' direct road leaves its answer.
        let answer = JsonAnswer::default();
        req.extensions_mut().insert(answer.clone());
        if matches!(self.endpoint, Endpoint::Stateless(_)) {
            req.extensions_mut().insert(crate::serve::caller::Stateless);
        }
        let reply = if self.speaks_tasks(&req) {
            self.handle_with_tasks(req).await
        } else if listening {
            self.handle_listen(req).await
        } else {
            self.endpoint.handle(req).await
        };
        if let Some(json) = answer.take() {
            return json_reply(json);
        }
        let reply = if listing {
            self.with_executions(reply).await
        } else {
            reply
        };
        let mut reply = parse_error_as_json_rpc(reply, json_body);
        // A session ended by DELETE is done, not pending: clients (Python's among them)
        // take anything but 200 as a failed termination.
        if delete && reply.status() == StatusCode::ACCEPTED {
            *reply.status_mut() = StatusCode::OK;
        }
        reply
    }
}

impl Front {
    /// Whether `req` is a POST of a handshake-era session to a server with task tools: its
    /// front speaks that era's tasks (see `serve::task_legacy`).
    fn speaks_tasks(&self, req: &Request<GuardedBody<Incoming>>) -> bool {
        matches!(self.endpoint, Endpoint::Sessions(_))
            && req.method() == http::Method::POST
            && req.headers().contains_key("mcp-session-id")
            && req
                .headers()
                .get("mcp-protocol-version")
                .is_none_or(|v| v.as_bytes() < b"2026-07-28".as_slice())
            && self.server.has_executions()
            && self.server.serves_tasks()
    }

    /// rmcp's answer to a session's POST whose body was read first: a body that names a task
    /// (`"task`, a cheap look before any parse) has `params.task` lifted and `tasks/get` /
    /// `tasks/cancel` renamed (`task_legacy::lift_session`) before rmcp parses it.
    async fn handle_with_tasks(&self, mut req: Request<GuardedBody<Incoming>>) -> Response<Body> {
        req.extensions_mut()
            .insert(crate::serve::task_legacy::LegacyTasks);
        let (parts, body) = req.into_parts();
        let mut body = body::ReadAhead::read(body, MAX_BODY).await;
        let lifted = body
            .whole()
            .filter(|bytes| bytes.windows(5).any(|w| w == b"\"task"))
            .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(bytes).ok())
            .and_then(|mut message| {
                crate::serve::task_legacy::lift_session(&mut message);
                serde_json::to_vec(&message).ok()
            });
        if let Some(lifted) = lifted {
            body.replace(Bytes::from(lifted));
        }
        self.endpoint.handle(Request::from_parts(parts, body)).await
    }

    /// rmcp's answer to a `subscriptions/listen` whose resource URIs were first cut to those
    /// the caller may see: rmcp acknowledges the filter as requested (its handler's hook has no
    /// caller), so a URI outside the caller's scopes is never echoed back, nor followed.
    async fn handle_listen(&self, req: Request<GuardedBody<Incoming>>) -> Response<Body> {
        let sight = crate::serve::caller::Sight::of_http(req.extensions());
        if sight.sees_all(crate::serve::auth::Kind::Resource) {
            return self.endpoint.handle(req).await;
        }
        let (parts, body) = req.into_parts();
        let mut body = body::ReadAhead::read(body, MAX_BODY).await;
        let seen = body
            .whole()
            .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(bytes).ok())
            .and_then(|mut message| {
                let uris = message
                    .pointer_mut("/params/notifications/resourceSubscriptions")?
                    .as_array_mut()?;
                uris.retain(|uri| {
                    uri.as_str()
                        .is_some_and(|uri| sight.sees(crate::serve::auth::Kind::Resource, uri))
                });
                serde_json::to_vec(&message).ok()
            });
        if let Some(seen) = seen {
            body.replace(Bytes::from(seen));
        }
        self.endpoint.handle(Request::from_parts(parts, body)).await
    }

    /// A sessionless (2026-07-28) `tools/list` answer with each tool's `execution` put back
    /// (rmcp's typed answer has none; a session's answers are mended in `sessions`). As it was
    /// when no tool has one, or when it is not a JSON or event-stream answer of our own.
    async fn with_executions(&self, reply: Response<Body>) -> Response<Body> {
        if !self.server.has_executions() || reply.status() != StatusCode::OK {
            return reply;
        }
        let kind = reply
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let (parts, body) = reply.into_parts();
        let bytes = match body.collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(never) => match never {},
        };
        let mended = if kind.starts_with("application/json") {
            serde_json::from_slice::<serde_json::Value>(&bytes)
                .ok()
                .map(|mut message| {
                    self.server.put_executions(&mut message);
                    Bytes::from(message.to_string())
                })
        } else if kind.starts_with("text/event-stream") {
            std::str::from_utf8(&bytes).ok().map(|text| {
                let lines: Vec<String> = text
                    .split('\n')
                    .map(|line| match line.strip_prefix("data:") {
                        Some(data) => match serde_json::from_str::<serde_json::Value>(data) {
                            Ok(mut message) => {
                                self.server.put_executions(&mut message);
                                format!("data: {message}")
                            }
                            Err(_) => line.to_string(),
                        },
                        None => line.to_string(),
                    })
                    .collect();
                Bytes::from(lines.join("\n"))
            })
        } else {
            None
        };
        let mut parts = parts;
        parts.headers.remove(http::header::CONTENT_LENGTH);
        Response::from_parts(parts, Full::new(mended.unwrap_or(bytes)).boxed())
    }
}

fn is_json(headers: &http::HeaderMap) -> bool {
    headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("application/json"))
}

/// rmcp answers a JSON body it cannot parse with 415; JSON-RPC says that is a parse error, and
/// clients look for it as one: HTTP 400 with a `-32700` error object.
fn parse_error_as_json_rpc(reply: Response<Body>, json_body: bool) -> Response<Body> {
    if !json_body || reply.status() != StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return reply;
    }
    let body = br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#;
    let mut reply = Response::new(Full::new(Bytes::from_static(body)).boxed());
    *reply.status_mut() = StatusCode::BAD_REQUEST;
    reply.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    reply
}

/// A JSON-RPC answer as `application/json` (for a POST that accepted it, which rmcp checked).
fn json_reply(json: Bytes) -> Response<Body> {
    let mut reply = Response::new(Full::new(json).boxed());
    reply.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    reply
}
