//! Streamable HTTP (MCP 2025-06-18) for an `McpService`: `POST /mcp` carries JSON-RPC, answered
//! as JSON or a one-event SSE stream. There is no server-initiated stream (`GET` is 405) because
//! the tools surface never needs to push anything.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::hash::{BuildHasher, RandomState};
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, ALLOW, CACHE_CONTROL, CONTENT_TYPE, HOST, ORIGIN};
use http::{HeaderMap, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};

use super::{McpService, PARSE_ERROR, error_reply};

const SESSION_HEADER: &str = "mcp-session-id";
/// Tool arguments can carry whole documents, so be generous; the cap only stops runaway bodies.
const MAX_BODY: usize = 16 * 1024 * 1024;
/// How long `stop()` lets in-flight requests finish before cutting them off.
const DRAIN: Duration = Duration::from_secs(5);
/// Ended session ids are remembered (to answer 404) only this far back, so memory stays bounded.
const ENDED_SESSIONS_KEPT: usize = 1024;

/// A running HTTP server. Dropping the handle leaves the server running (like Node's
/// `server.listen`); call `stop()` to shut it down.
pub struct ServeHandle {
    addr: SocketAddr,
    url: String,
    shutdown: watch::Sender<bool>,
    task: tokio::sync::Mutex<Option<JoinHandle<()>>>,
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
        self.shutdown.send_replace(true);
        if let Some(task) = task.take() {
            let _ = task.await;
        }
    }
}

struct Shared {
    service: Arc<McpService>,
    /// DNS-rebinding checks only make sense when the bind is private to this machine.
    loopback: bool,
    ended_sessions: Mutex<VecDeque<String>>,
}

/// Bind `addr` (e.g. `"127.0.0.1:0"`) and serve `service` at `POST /mcp`.
pub async fn serve_http(addr: &str, service: Arc<McpService>) -> Result<ServeHandle, String> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let local = listener
        .local_addr()
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let shared = Arc::new(Shared {
        service,
        loopback: local.ip().is_loopback(),
        ended_sessions: Mutex::new(VecDeque::new()),
    });
    let (shutdown, rx) = watch::channel(false);
    // The task keeps its own sender so a dropped handle never reads as "shut down".
    let keep_open = shutdown.clone();
    let task = tokio::spawn(async move {
        accept_loop(listener, shared, rx).await;
        drop(keep_open);
    });
    Ok(ServeHandle {
        addr: local,
        url: url_for(local),
        shutdown,
        task: tokio::sync::Mutex::new(Some(task)),
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

async fn accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut conns = JoinSet::new();
    // Connections get their own receivers; `shutdown` stays borrowed by the select below.
    let for_connections = shutdown.clone();
    loop {
        tokio::select! {
            _ = stopped(&mut shutdown) => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    conns.spawn(serve_connection(stream, shared.clone(), for_connections.clone()));
                }
                // Usually fd exhaustion: back off instead of spinning on the error.
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            },
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
    drop(listener);
    let drained = async { while conns.join_next().await.is_some() {} };
    let _ = tokio::time::timeout(DRAIN, drained).await;
    // Dropping the set aborts whatever outlived the drain window.
}

async fn serve_connection(
    stream: TcpStream,
    shared: Arc<Shared>,
    mut shutdown: watch::Receiver<bool>,
) {
    let service = service_fn(move |req| {
        let shared = shared.clone();
        async move { Ok::<_, Infallible>(route(req, &shared).await) }
    });
    let conn = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => return,
        _ = stopped(&mut shutdown) => {}
    }
    // Finishes the request in progress (if any), then closes instead of keeping alive.
    conn.as_mut().graceful_shutdown();
    let _ = conn.await;
}

/// Resolves once `stop()` has been called. (Returns `()` so no non-`Send` watch guard is held
/// across the selects' awaits.)
async fn stopped(shutdown: &mut watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|stop| *stop).await;
}

type Reply = Response<Full<Bytes>>;

async fn route(req: Request<Incoming>, shared: &Shared) -> Reply {
    if shared.loopback && !from_loopback_page(req.headers()) {
        return plain(StatusCode::FORBIDDEN, "Forbidden: foreign Host or Origin");
    }
    if req.uri().path() != "/mcp" {
        return plain(StatusCode::NOT_FOUND, "Not Found");
    }
    match *req.method() {
        Method::POST => post(req, shared).await,
        Method::DELETE => {
            if let Some(id) = header(req.headers(), SESSION_HEADER) {
                shared.end_session(id);
            }
            plain(StatusCode::OK, "")
        }
        _ => {
            let mut reply = plain(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed");
            reply
                .headers_mut()
                .insert(ALLOW, "POST, DELETE".parse().unwrap());
            reply
        }
    }
}

async fn post(req: Request<Incoming>, shared: &Shared) -> Reply {
    let sse = wants_sse(header(req.headers(), ACCEPT.as_str()).unwrap_or(""));
    // A client's cancellations only reach its own requests.
    let scope = header(req.headers(), SESSION_HEADER)
        .unwrap_or("")
        .to_string();
    if let Some(id) = header(req.headers(), SESSION_HEADER)
        && shared.session_ended(id)
    {
        // The spec's signal for "re-initialize": clients treat 404 on a session as expiry.
        let body = error_reply(Value::Null, -32001, "Session not found");
        return json(StatusCode::NOT_FOUND, &body, false);
    }
    let body = match Limited::new(req.into_body(), MAX_BODY).collect().await {
        Ok(body) => body.to_bytes(),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            return plain(StatusCode::PAYLOAD_TOO_LARGE, "Payload Too Large");
        }
        Err(_) => return plain(StatusCode::BAD_REQUEST, "Bad Request"),
    };
    let Ok(message) = serde_json::from_slice::<Value>(&body) else {
        let body = error_reply(Value::Null, PARSE_ERROR, "Parse error");
        return json(StatusCode::BAD_REQUEST, &body, false);
    };
    let initializing = has_initialize(&message);
    let Some(answer) = shared.service.handle_in(&scope, message).await else {
        return plain(StatusCode::ACCEPTED, "");
    };
    let mut reply = json(StatusCode::OK, &answer, sse);
    if initializing {
        reply
            .headers_mut()
            .insert(SESSION_HEADER, new_session_id().parse().unwrap());
    }
    reply
}

impl Shared {
    fn end_session(&self, id: &str) {
        let mut ended = self
            .ended_sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if !ended.iter().any(|s| s == id) {
            if ended.len() == ENDED_SESSIONS_KEPT {
                ended.pop_front();
            }
            ended.push_back(id.to_string());
        }
    }

    fn session_ended(&self, id: &str) -> bool {
        let ended = self
            .ended_sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        ended.iter().any(|s| s == id)
    }
}

fn has_initialize(message: &Value) -> bool {
    match message {
        Value::Array(items) => items.iter().any(has_initialize),
        Value::Object(o) => o.get("method").and_then(Value::as_str) == Some("initialize"),
        _ => false,
    }
}

/// Session ids label a conversation, they are not credentials. With no RNG crate in the tree,
/// std's `RandomState` (seeded from the OS, perturbed per construction) is unpredictable enough.
fn new_session_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let a = RandomState::new().hash_one(n);
    let b = RandomState::new().hash_one((n, std::time::SystemTime::now()));
    format!("{a:016x}{b:016x}")
}

/// JSON unless the client can only take (or only names) an event stream.
fn wants_sse(accept: &str) -> bool {
    let mut json = false;
    let mut sse = false;
    for media in accept.split(',') {
        let media = media.split(';').next().unwrap_or("").trim();
        json |= media.eq_ignore_ascii_case("application/json");
        sse |= media.eq_ignore_ascii_case("text/event-stream");
    }
    sse && !json
}

/// Browsers always send `Host`, and `Origin` on cross-site requests, so a page reached through a
/// rebound DNS name shows a foreign name in one of them. Missing headers are not a browser.
fn from_loopback_page(headers: &HeaderMap) -> bool {
    let host_ok = match headers.get(HOST) {
        None => true,
        Some(h) => h.to_str().is_ok_and(|h| is_loopback_name(strip_port(h))),
    };
    let origin_ok = match headers.get(ORIGIN) {
        None => true,
        Some(o) => o
            .to_str()
            .ok()
            .and_then(origin_host)
            .is_some_and(is_loopback_name),
    };
    host_ok && origin_ok
}

fn origin_host(origin: &str) -> Option<&str> {
    let (_, rest) = origin.split_once("://")?;
    rest.split('/').next().map(strip_port)
}

fn strip_port(authority: &str) -> &str {
    if authority.starts_with('[') {
        return authority
            .find(']')
            .map_or(authority, |end| &authority[..=end]);
    }
    authority
        .rsplit_once(':')
        .map_or(authority, |(host, _)| host)
}

fn is_loopback_name(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost") || host == "127.0.0.1" || host == "[::1]"
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

fn plain(status: StatusCode, text: &'static str) -> Reply {
    let mut reply = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
    *reply.status_mut() = status;
    if !text.is_empty() {
        reply
            .headers_mut()
            .insert(CONTENT_TYPE, "text/plain; charset=utf-8".parse().unwrap());
    }
    reply
}

fn json(status: StatusCode, body: &Value, sse: bool) -> Reply {
    // serde_json's compact form escapes newlines, so one `data:` line always suffices.
    let (content_type, bytes) = if sse {
        (
            "text/event-stream",
            format!("event: message\ndata: {body}\n\n").into_bytes(),
        )
    } else {
        ("application/json", body.to_string().into_bytes())
    };
    let mut reply = Response::new(Full::new(Bytes::from(bytes)));
    *reply.status_mut() = status;
    reply
        .headers_mut()
        .insert(CONTENT_TYPE, content_type.parse().unwrap());
    if sse {
        reply
            .headers_mut()
            .insert(CACHE_CONTROL, "no-cache".parse().unwrap());
    }
    reply
}
