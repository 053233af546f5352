//! Streamable HTTP for a [`ToolServer`]: rmcp's `StreamableHttpService` mounted on plain hyper at
//! `/mcp`. rmcp speaks the protocol (both eras, sessions, `MCP-Protocol-Version`, the GET stream,
//! Host/Origin checks); this module owns the socket: which paths exist, and the bounds a client
//! cannot push past (header-read, body and idle timeouts, a connection cap with eviction of idle
//! connections, a body limit). Sessions are `sessions::Sessions`, rmcp's session manager with
//! a direct road that answers a plain `tools/call` as JSON without rmcp's session worker.

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};
use tokio_util::sync::CancellationToken;

use super::ToolServer;
use crate::bounds::{SERVE_DRAIN as DRAIN, SERVE_MAX_BODY as MAX_BODY};
use body::GuardedBody;
use limits::{Calls, Slots};
pub use sessions::SessionLimits;
use sessions::Sessions;
use sessions::direct::JsonAnswer;

pub use access_log::AccessLog;
pub use gate::Readiness;
use gate::{Admission, Gate};

mod accept;
mod access_log;
mod body;
mod gate;
mod limits;
mod portable;
pub(super) mod sessions;

/// Who may use an endpoint.
#[derive(Default)]
pub enum Auth {
    /// Nothing said: served as is on a loopback address, refused on any other.
    #[default]
    Unset,
    /// `auth: "none"`: anyone who reaches the endpoint may use it, on any address.
    Open,
    /// A bearer token on every request, checked as these options say.
    Required(Box<crate::serve::auth::AuthOptions>),
}

/// How a server is exposed.
#[derive(Default)]
pub struct ServeOptions {
    /// Serve handshake-era clients without sessions too, so replicas need no affinity.
    pub stateless: bool,
    /// `Host` values accepted besides the loopback names (required for a non-loopback bind;
    /// `"*"` accepts any).
    pub allowed_hosts: Option<Vec<String>>,
    /// Browser origins accepted (`scheme://host[:port|:*]`); loopback origins are always
    /// accepted on a loopback bind, and no others unless listed.
    pub allowed_origins: Option<Vec<String>>,
    /// How long a session may go unused, and how many may live at once.
    pub sessions: SessionLimits,
    /// Who may use it.
    pub auth: Auth,
    /// Where each request's access-log entry goes (None: no log).
    pub access_log: Option<AccessLog>,
    /// Whether the servers behind it are connected (`/readyz`); None: always ready.
    pub ready: Option<Readiness>,
    /// The key replicas share to continue each other's work (sealed `requestState`, portable
    /// handshake-era sessions); None: state stays in this process.
    pub state_key: Option<Arc<crate::serve::seal::StateKey>>,
    /// The URL other replicas reach this one at (`http://host:port`), for answers to its
    /// requests that reach them; None: the address it is bound to.
    pub replica_url: Option<String>,
}

/// A running HTTP server. Dropping the handle leaves the server running (like Node's
/// `server.listen`); call `stop()` to shut it down.
pub struct ServeHandle {
    addr: SocketAddr,
    url: String,
    shutdown: watch::Sender<bool>,
    task: tokio::sync::Mutex<Option<JoinHandle<()>>>,
    /// Its `subscriptions/listen` streams never finish by themselves, so stopping ends them.
    server: ToolServer,
}

impl ServeHandle {
    /// `http://HOST:PORT`, no trailing slash; the MCP endpoint is `url() + "/mcp"`.
    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stop accepting, let in-flight requests finish (bounded), then return. Idempotent; a
    /// concurrent second call waits for the first to finish.
    pub async fn stop(&self) {
        let mut task = self.task.lock().await;
        self.server.end_listeners();
        self.server.end_parked();
        self.shutdown.send_replace(true);
        if let Some(task) = task.take() {
            let _ = task.await;
        }
    }
}

const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];
const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "https://[::1]:*",
];

/// rmcp's configuration for a bind: who may connect (DNS-rebinding protection) and the era
/// rules. A loopback bind refuses foreign `Host`/`Origin` values; any other bind must name the
/// hosts it answers to.
fn rmcp_config(
    local: SocketAddr,
    options: &ServeOptions,
    stopping: CancellationToken,
) -> Result<StreamableHttpServerConfig, String> {
    let loopback = local.ip().is_loopback();
    if !loopback && matches!(options.auth, Auth::Unset) {
        return Err(format!(
            "serving on {local} (not a loopback address) needs auth: {{ tokens }} or {{ oauth }}, \
             or auth: \"none\" to let anyone who can reach it use every tool (--no-auth on \
             the CLI)"
        ));
    }
    let mut hosts: Vec<String> = Vec::new();
    if loopback {
        hosts.extend(LOOPBACK_HOSTS.iter().map(|h| h.to_string()));
    }
    match &options.allowed_hosts {
        Some(extra) => hosts.extend(extra.iter().cloned()),
        None if !loopback => {
            return Err(format!(
                "serving on {local} (not a loopback address) needs allowedHosts: the Host names \
                 clients use to reach this server (e.g. [\"mcp.example.com\"]), or [\"*\"] for any"
            ));
        }
        None => {}
    }
    let mut origins: Vec<String> = Vec::new();
    if loopback {
        origins.extend(LOOPBACK_ORIGINS.iter().map(|o| o.to_string()));
    }
    if let Some(extra) = &options.allowed_origins {
        origins.extend(extra.iter().cloned());
    }
    let mut config = StreamableHttpServerConfig::default()
        // With a state key, handshake-era sessions are portable (whether or not `stateless`):
        // rmcp's sessions, restored on any replica.
        .with_legacy_session_mode(!options.stateless || options.state_key.is_some())
        .with_max_request_body_bytes(MAX_BODY)
        .with_cancellation_token(stopping);
    config = if hosts.iter().any(|h| h == "*") {
        config.disable_allowed_hosts()
    } else {
        config.with_allowed_hosts(hosts)
    };
    config = if origins.iter().any(|o| o == "*") {
        config.disable_allowed_origins()
    } else {
        // An empty list still validates: no browser origin is accepted.
        config
            .with_allowed_origins(origins)
            .enforce_origin_validation()
    };
    Ok(config)
}

type Body = BoxBody<Bytes, Infallible>;

/// One of the two rmcp services, chosen by `stateless` (the session manager is a type
/// parameter).
#[derive(Clone)]
enum Endpoint {
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

/// Bind `addr` (e.g. `"127.0.0.1:0"`) and serve `server` at `/mcp`.
pub async fn serve_http(
    addr: &str,
    server: ToolServer,
    mut options: ServeOptions,
) -> Result<ServeHandle, String> {
    let unspecified = addr
        .parse::<SocketAddr>()
        .is_ok_and(|a| a.ip().is_unspecified());
    if options.state_key.is_some() && options.replica_url.is_none() && unspecified {
        // Every replica bound to 0.0.0.0 would name itself 127.0.0.1:<port> to the others, so
        // an answer could be taken for another replica's question. Refused before binding.
        return Err(format!(
            "serving on {addr} with a stateKey needs replicaUrl (--replica-url): the URL the \
             other replicas reach this one at"
        ));
    }
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let local = listener
        .local_addr()
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let stopping = CancellationToken::new();
    let mut config = rmcp_config(local, &options, stopping.clone())?;
    let url = url_for(local);
    let portable = options.state_key.clone().map(|key| {
        let replica = options.replica_url.clone().unwrap_or_else(|| url.clone());
        Arc::new(portable::Portable::new(key, &replica))
    });
    if let Some(portable) = &portable {
        config.session_store = Some(portable.store());
    }
    let guard = match std::mem::take(&mut options.auth) {
        Auth::Required(auth) => Some(Arc::new(
            crate::serve::auth::Guard::new(*auth, &format!("{url}/mcp")).await?,
        )),
        Auth::Unset | Auth::Open => None,
    };
    let mut gate = Gate {
        guard,
        ready: options.ready.take(),
        sessions: None,
    };
    let served = server.clone();
    let endpoint = if options.stateless && portable.is_none() {
        Endpoint::Stateless(StreamableHttpService::new(
            move || Ok(served.for_session()),
            Arc::new(NeverSessionManager::default()),
            config,
        ))
    } else {
        let mut sessions = Sessions::new(server.clone(), options.sessions);
        if let Some(portable) = &portable {
            sessions = sessions.with_portable(portable.clone());
        }
        let sessions = Arc::new(sessions);
        tokio::spawn(sessions.clone().sweep_until(stopping.clone()));
        let handlers = sessions.clone();
        gate.sessions = Some(sessions.clone());
        Endpoint::Sessions(StreamableHttpService::new(
            move || Ok(handlers.handler()),
            sessions,
            config,
        ))
    };
    let (shutdown, rx) = watch::channel(false);
    // The task keeps its own sender so a dropped handle never reads as "shut down".
    let keep_open = shutdown.clone();
    let front = Arc::new(Front {
        endpoint,
        gate,
        access_log: options.access_log.take(),
        state_key: options.state_key.clone(),
        portable,
        server: server.clone(),
    });
    let task = tokio::spawn(async move {
        accept_loop(listener, front, rx, &stopping).await;
        stopping.cancel();
        drop(keep_open);
    });
    Ok(ServeHandle {
        addr: local,
        url,
        shutdown,
        task: tokio::sync::Mutex::new(Some(task)),
        server,
    })
}

fn url_for(addr: SocketAddr) -> String {
    let host = match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => "127.0.0.1".to_string(),
        IpAddr::V6(ip) if ip.is_unspecified() => "[::1]".to_string(),
        IpAddr::V4(ip) => ip.to_string(),
        IpAddr::V6(ip) => format!("[{ip}]"),
    };
    format!("http://{host}:{}", addr.port())
}

/// What every connection of an endpoint answers with: the gate before rmcp's service.
struct Front {
    endpoint: Endpoint,
    gate: Gate,
    access_log: Option<AccessLog>,
    state_key: Option<Arc<crate::serve::seal::StateKey>>,
    /// Serving with a state key: portable handshake-era sessions.
    portable: Option<Arc<portable::Portable>>,
    /// What a 2026-07-28 `tools/list` answer gets its tools' `execution` from.
    server: ToolServer,
}

async fn accept_loop(
    listener: TcpListener,
    front: Arc<Front>,
    mut shutdown: watch::Receiver<bool>,
    stopping: &CancellationToken,
) {
    let slots = Arc::new(Slots::for_this_process());
    let calls = Arc::new(Calls::default());
    let mut conns = JoinSet::new();
    // Connections get their own receivers; `shutdown` stays borrowed by the select below.
    let for_connections = shutdown.clone();
    loop {
        tokio::select! {
            _ = stopped(&mut shutdown) => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let Some(slot) = slots.take() else {
                        // Every connection is busy with a request: refuse this one.
                        drop(stream);
                        continue;
                    };
                    let _ = stream.set_nodelay(true);
                    conns.spawn(serve_connection(
                        stream,
                        front.clone(),
                        slot,
                        calls.clone(),
                        for_connections.clone(),
                    ));
                }
                // Out of descriptors: end the idlest connection to make room, and give it a
                // moment to close so one shortage does not evict several.
                Err(_) => {
                    let pause = if slots.evict_idlest() {
                        crate::bounds::SERVE_ACCEPT_PAUSE_EVICTED
                    } else {
                        crate::bounds::SERVE_ACCEPT_PAUSE_FULL
                    };
                    tokio::time::sleep(pause).await;
                }
            },
            Some(_) = conns.join_next(), if !conns.is_empty() => {
                if conns.is_empty() {
                    limits::release_memory();
                }
            }
        }
    }
    drop(listener);
    // Calls in flight finish first; then rmcp ends the GET streams, which would otherwise keep
    // their connections (and so this drain) open for as long as their clients stay.
    let drained = async {
        calls.settled().await;
        stopping.cancel();
        while conns.join_next().await.is_some() {}
    };
    let _ = tokio::time::timeout(DRAIN, drained).await;
    // Dropping the set aborts whatever outlived the drain window.
}

async fn serve_connection(
    stream: tokio::net::TcpStream,
    front: Arc<Front>,
    slot: limits::Slot,
    calls: Arc<Calls>,
    mut shutdown: watch::Receiver<bool>,
) {
    let activity = slot.activity();
    let service = service_fn(move |req: Request<Incoming>| {
        let front = front.clone();
        let mut busy = activity.begin_request();
        if req.method() != http::Method::GET {
            busy.count_in(&calls);
        }
        async move {
            let (mut parts, body) = req.into_parts();
            let mut entry = front
                .access_log
                .as_ref()
                .map(|log| access_log::Entry::begin(log, &parts));
            let reply = match front.gate.admit(&parts).await {
                Admission::Reply(reply) => reply,
                Admission::Refused {
                    reply,
                    principal,
                    why,
                } => {
                    if let Some(entry) = entry.as_mut() {
                        entry.principal = principal;
                        entry.error = Some(why);
                    }
                    reply
                }
                Admission::Mcp(caller) => {
                    if let (Some(entry), Some(caller)) = (entry.as_mut(), &caller) {
                        entry.principal = Some(caller.principal.subject.clone());
                    }
                    if let Some(caller) = caller {
                        parts.extensions.insert(caller);
                    }
                    if let Some(key) = &front.state_key {
                        parts.extensions.insert(key.clone());
                    }
                    let tee = entry.as_ref().map(access_log::Entry::tee);
                    front
                        .answer(Request::from_parts(parts, GuardedBody::new(body, tee)))
                        .await
                }
            };
            if let Some(entry) = entry.as_mut() {
                entry.status = reply.status().as_u16();
            }
            Ok::<_, Infallible>(busy.wrap(reply.map(|b| access_log::Logged::new(b, entry))))
        }
    });
    let io = TokioIo::new(slot.watch(stream));
    let conn = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(crate::bounds::SERVE_HEADER_READ_TIMEOUT)
        .serve_connection(io, service);
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => return,
        _ = slot.ended() => return,
        _ = stopped(&mut shutdown) => {}
    }
    // Finishes the request in progress (if any), then closes instead of keeping alive.
    conn.as_mut().graceful_shutdown();
    let _ = conn.await;
}

impl Front {
    /// The answer at `/mcp`: with portable sessions, a sealed session id is opened on the way
    /// in and a fresh one sealed on the way out (see `portable`).
    async fn answer(&self, mut req: Request<GuardedBody<Incoming>>) -> Response<Body> {
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

/// Resolves once `stop()` has been called. (Returns `()` so no non-`Send` watch guard is held
/// across the selects' awaits.)
async fn stopped(shutdown: &mut watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|stop| *stop).await;
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
