//! Streamable HTTP for a [`ToolServer`]: rmcp's `StreamableHttpService` mounted on plain hyper at
//! `/mcp`. rmcp speaks the protocol (both eras, sessions, `MCP-Protocol-Version`, the GET stream,
//! Host/Origin checks); this module owns the socket: which paths exist, and the bounds a client
//! cannot push past (header-read, body and idle timeouts, a connection cap with eviction of idle
//! connections, a body limit). Sessions are `sessions::Sessions`, rmcp's session manager with
//! a direct road that answers a plain `tools/call` as JSON without rmcp's session worker.
//!
//! The connections are `connection`'s; what a request to `/mcp` is answered with, `front`'s.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::ToolServer;
use crate::bounds::SERVE_MAX_BODY as MAX_BODY;
use connection::accept_loop;
use front::{Endpoint, Front};
pub use sessions::SessionLimits;
use sessions::Sessions;

pub use access_log::AccessLog;
use gate::Gate;
pub use gate::Readiness;

mod accept;
pub(crate) mod access_log;
mod body;
mod connection;
mod front;
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
    /// The store replicas share what must hold once per fleet in (spent `requestState`s,
    /// sessions ended by DELETE; see [`crate::serve::store`]). Needs `state_key`. None: each
    /// replica keeps its own record, as without one.
    pub state_store: Option<Arc<dyn crate::serve::store::StateStore>>,
    /// The URL other replicas reach this one at (`http://host:port`), for answers to its
    /// requests that reach them; None: the address it is bound to.
    pub replica_url: Option<String>,
    /// Serve the operation and session durations as Prometheus text at `/metrics` (behind the
    /// same auth as `/mcp`).
    pub metrics: bool,
    /// Rate and concurrency limits (see [`crate::serve::rate`]); None: unlimited.
    pub limits: Option<crate::serve::rate::RateLimits>,
    /// Other endpoints on the same listener, each at `/mcp/<name>`.
    pub endpoints: Vec<NamedEndpoint>,
}

/// Another endpoint on the same listener, at `/mcp/<name>`: its own server (a subset of the
/// tools, its own hooks), sessions, auth and limits; the main endpoint's origin, host and
/// session settings.
pub struct NamedEndpoint {
    /// Its path segment: letters, digits, `-`, `_` and `.`.
    pub name: String,
    pub server: ToolServer,
    /// Who may use it; [`Auth::Unset`]: whoever may use the main endpoint (its guard).
    pub auth: Auth,
    pub limits: Option<crate::serve::rate::RateLimits>,
}

/// A running HTTP server. Dropping the handle leaves the server running (like Node's
/// `server.listen`); call `stop()` to shut it down.
pub struct ServeHandle {
    addr: SocketAddr,
    url: String,
    shutdown: watch::Sender<bool>,
    task: tokio::sync::Mutex<Option<JoinHandle<()>>>,
    /// Its `subscriptions/listen` streams never finish by themselves, so stopping ends them
    /// (and those of its other endpoints).
    server: ToolServer,
    others: Vec<ToolServer>,
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
        for server in std::iter::once(&self.server).chain(&self.others) {
            server.end_listeners();
            server.end_parked();
        }
        self.shutdown.send_replace(true);
        if let Some(task) = task.take() {
            let _ = task.await;
        }
        // The tasks a shared store holds have their ends written before the stop is done (the
        // process may exit right after it): each within the store's own bound.
        for server in std::iter::once(&self.server).chain(&self.others) {
            server
                .tasks_written(crate::bounds::SERVE_STORE_TIMEOUT * 2)
                .await;
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

/// Bind `addr` (e.g. `"127.0.0.1:0"`) and serve `server` at `/mcp`.
pub async fn serve_http(
    addr: &str,
    server: ToolServer,
    mut options: ServeOptions,
) -> Result<ServeHandle, String> {
    let unspecified = addr
        .parse::<SocketAddr>()
        .is_ok_and(|a| a.ip().is_unspecified());
    if options.state_store.is_some() && options.state_key.is_none() {
        return Err(
            "stateStore needs stateKey: what replicas keep in it is named and sealed \
                    with the key they share"
                .into(),
        );
    }
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
    let endpoints = std::mem::take(&mut options.endpoints);
    if !endpoints.is_empty() && portable.is_some() {
        return Err(
            "endpoints are not served with a stateKey yet: serve each audience on its own \
             port, or without a stateKey"
                .into(),
        );
    }
    crate::telemetry::start();
    if options.metrics {
        crate::telemetry::serve_metrics();
    }
    let ready = options.ready.take();
    let access_log = options.access_log.take();
    let limits = options.limits.take();
    let mut named = std::collections::HashMap::new();
    for endpoint in endpoints {
        let guard = match endpoint.auth {
            Auth::Required(auth) => Some(Arc::new(
                crate::serve::auth::Guard::new(*auth, &format!("{url}/mcp/{}", endpoint.name))
                    .await?,
            )),
            Auth::Open => None,
            Auth::Unset => guard.clone(),
        };
        let parts = FrontParts {
            guard,
            ready: ready.clone(),
            access_log: access_log.clone(),
            limits: endpoint.limits,
        };
        let front = front_for(
            endpoint.server,
            parts,
            &options,
            config.clone(),
            None,
            &stopping,
        );
        named.insert(endpoint.name, Arc::new(front));
    }
    let parts = FrontParts {
        guard,
        ready,
        access_log,
        limits,
    };
    let others = named
        .values()
        .map(|front: &Arc<Front>| front.server.clone())
        .collect();
    let mut front = front_for(server.clone(), parts, &options, config, portable, &stopping);
    front.named = named;
    let front = Arc::new(front);
    let (shutdown, rx) = watch::channel(false);
    // The task keeps its own sender so a dropped handle never reads as "shut down".
    let keep_open = shutdown.clone();
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
        others,
    })
}

/// What one endpoint's front is made of besides its server and the listener's settings.
struct FrontParts {
    guard: Option<Arc<crate::serve::auth::Guard>>,
    ready: Option<Readiness>,
    access_log: Option<AccessLog>,
    limits: Option<crate::serve::rate::RateLimits>,
}

/// The front of one endpoint: its gate, its sessions (or none, stateless), rmcp's service.
fn front_for(
    server: ToolServer,
    parts: FrontParts,
    options: &ServeOptions,
    config: StreamableHttpServerConfig,
    portable: Option<Arc<portable::Portable>>,
    stopping: &CancellationToken,
) -> Front {
    // Only an endpoint with portable sessions (a state key) has the store.
    let store = portable.as_ref().and(options.state_store.clone());
    let mut gate = Gate {
        guard: parts.guard,
        ready: parts.ready,
        sessions: None,
        metrics: options.metrics,
        store: store.clone(),
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
        if let Some(store) = &store {
            sessions = sessions.with_store(store.clone());
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
    Front {
        endpoint,
        gate,
        access_log: parts.access_log,
        state_key: options.state_key.clone(),
        store,
        portable,
        server,
        limiter: parts
            .limits
            .filter(|limits| !limits.is_empty())
            .map(crate::serve::rate::Limiter::new),
        named: Default::default(),
    }
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
