//! Connections to MCP servers: transports, handshake, listing, calling and teardown.
//!
//! A [`Connection`] is started (a child spawned, or nothing yet for HTTP), initialised, used, and
//! always ended through [`Connection::shutdown`], whatever happened: success, failure, timeout,
//! abort and deadline share that one teardown path.

pub mod auth;
pub mod client;
pub mod elicit;
pub mod execution;
pub mod http;
pub mod inventory;
pub mod lifecycle;
pub mod listing;
pub mod naming;
pub mod reaper;
pub mod reason;
pub mod relay;
pub mod session;
pub mod sse;
pub mod stdio;
pub mod tool_info;

use std::future::Future;
use std::time::Duration;

use reqwest::header::HeaderMap;
use rmcp::model::ProtocolVersion;
use rmcp::service::{Peer, RoleClient};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::Value;

use crate::config::{Protocol, RemoteTransport, ServerSpec};
use client::ClientSide;
use lifecycle::{Carrier, Lifecycle, Probe, Service};
use reason::Cause;
use stdio::StdioProcess;

/// A closing HTTP session gets at most this long to send its DELETE (less when the server's
/// timeout is shorter: closing is a phase too).
const HTTP_CLOSE_BOUND: Duration = Duration::from_secs(3);

type Pipes = (tokio::process::ChildStdout, tokio::process::ChildStdin);

enum Endpoint {
    Stdio {
        /// What was spawned, kept to spawn it again for a handshake after a failed probe.
        launch: Launch,
        pipes: Option<Pipes>,
    },
    Remote {
        url: String,
        transport: RemoteTransport,
        headers: HeaderMap,
    },
}

struct Launch {
    command: Vec<String>,
    environment: Vec<(String, String)>,
    cwd: Option<String>,
}

pub struct Connection {
    endpoint: Endpoint,
    protocol: Option<Protocol>,
    process: Option<StdioProcess>,
    service: Option<Service>,
    /// The direct requests of a stdio connection in the handshake era.
    direct: Option<stdio::direct::Direct>,
    /// Ends every HTTP request and response stream of this connection (see
    /// [`http::Cancellable`]); fired by `shutdown`.
    requests: tokio_util::sync::CancellationToken,
    /// A cause rmcp's streamable-HTTP transport lost (it reports only a closed transport).
    lost_cause: http::LostCause,
    /// OAuth for a remote server without a static `Authorization` header.
    oauth: Option<std::sync::Arc<auth::ServerAuth>>,
    /// How long closing the session (an HTTP DELETE) may take: the server's timeout, at most
    /// [`HTTP_CLOSE_BOUND`].
    close_bound: Duration,
}

/// Runs one phase of a server's life under its timeout.
pub async fn phase<T>(
    name: &str,
    timeout: Duration,
    work: impl Future<Output = Result<T, String>>,
) -> Result<T, String> {
    match tokio::time::timeout(timeout, work).await {
        Ok(result) => result,
        Err(_) => Err(format!(
            "timed out after {} ms during {name}",
            timeout.as_millis()
        )),
    }
}

impl Connection {
    /// Spawns a stdio child (its failure to start is the error) or prepares a remote endpoint.
    /// `spec` must already have its variables expanded; `protocol` is the server's era setting.
    /// `timeout` is the server's: it also bounds closing.
    pub fn start(
        spec: &ServerSpec,
        protocol: Option<Protocol>,
        timeout: Duration,
    ) -> Result<Self, String> {
        match spec {
            ServerSpec::Local {
                command,
                environment,
                cwd,
            } => {
                let (process, stdout, stdin) = stdio::spawn(command, environment, cwd.as_deref())?;
                let launch = Launch {
                    command: command.clone(),
                    environment: environment.clone(),
                    cwd: cwd.clone(),
                };
                Ok(Self {
                    endpoint: Endpoint::Stdio {
                        launch,
                        pipes: Some((stdout, stdin)),
                    },
                    protocol,
                    requests: Default::default(),
                    lost_cause: Default::default(),
                    oauth: None,
                    close_bound: timeout.min(HTTP_CLOSE_BOUND),
                    process: Some(process),
                    service: None,
                    direct: None,
                })
            }
            ServerSpec::Remote {
                url,
                transport,
                headers,
            } => {
                let parsed = reqwest::Url::parse(url)
                    .map_err(|_| format!("url {:?} is not a valid URL", http::redact_url(url)))?;
                if !matches!(parsed.scheme(), "http" | "https") {
                    return Err(format!(
                        "url scheme {:?} is not supported (use http or https)",
                        reason::bounded(parsed.scheme())
                    ));
                }
                Ok(Self {
                    endpoint: Endpoint::Remote {
                        url: url.clone(),
                        transport: *transport,
                        headers: http::header_map(headers)?,
                    },
                    protocol,
                    requests: Default::default(),
                    lost_cause: Default::default(),
                    oauth: None,
                    close_bound: timeout.min(HTTP_CLOSE_BOUND),
                    process: None,
                    service: None,
                    direct: None,
                })
            }
        }
    }

    /// Authorises a remote server by OAuth when the server asks for it (see [`auth`]), unless
    /// its headers carry an `Authorization` of their own. `entry.auth` is expanded here.
    pub fn use_oauth(
        &mut self,
        entry: &crate::config::ServerEntry,
        context: &auth::AuthContext,
        warnings: &mut Vec<String>,
    ) {
        if let Endpoint::Remote { url, headers, .. } = &self.endpoint {
            self.oauth = auth::ServerAuth::for_remote(entry, url, headers, context, warnings);
        }
    }

    /// The name a timeout in [`Connection::initialize`] gives its phase.
    pub fn startup_phase(&self) -> &'static str {
        let carrier = match &self.endpoint {
            Endpoint::Stdio { .. } => Carrier::Stdio,
            Endpoint::Remote { .. } => Carrier::StreamableHttp,
        };
        Lifecycle::choose(self.protocol, carrier).phase_name()
    }

    /// Starts the session in the server's era (the handshake, discover, or a probe for either),
    /// then refuses a protocol version toolnexus does not know. Untimed: callers bound it with
    /// [`phase`]; `timeout` is that bound, of which a discover probe takes at most half.
    pub async fn initialize(
        &mut self,
        handler: ClientSide,
        timeout: Duration,
    ) -> Result<(), String> {
        let service = match &mut self.endpoint {
            Endpoint::Stdio { pipes, .. } => {
                let pipes = pipes.take().ok_or("already initialised")?;
                self.start_stdio(&handler, pipes, timeout).await?
            }
            Endpoint::Remote {
                url,
                transport,
                headers,
            } => {
                let http = (&self.requests, &self.lost_cause, &self.oauth);
                connect_remote(
                    url,
                    *transport,
                    headers,
                    self.protocol,
                    &handler,
                    timeout,
                    http,
                )
                .await?
            }
        };
        let negotiated = lifecycle::check_negotiated(&service);
        self.service = Some(service);
        if let Some(oauth) = &self.oauth {
            oauth.connected();
        }
        negotiated
    }

    /// After a failed [`Connection::initialize`]: the OAuth authorisation it needed from the
    /// user, run outside the server's timeout (see [`auth::USER_WAIT`]); `None` when it needed
    /// none. On `Ok`, initialise again.
    pub async fn authorize_deferred(&self) -> Option<Result<(), String>> {
        self.oauth.as_ref()?.authorize_deferred().await
    }

    /// stdio under `protocol: "auto"` probes with `server/discover`; a server that closes on the
    /// probe (or ignores it) is spawned again for the handshake, since its first process is gone
    /// or in no state to start over.
    async fn start_stdio(
        &mut self,
        handler: &ClientSide,
        pipes: Pipes,
        timeout: Duration,
    ) -> Result<Service, String> {
        let (lifecycle, pipes) = match Lifecycle::choose(self.protocol, Carrier::Stdio) {
            Lifecycle::Auto => {
                let bound = lifecycle::probe_bound(timeout);
                let transport = self.framed(pipes)?;
                let direct = transport.direct();
                match lifecycle::probe(handler, transport, bound, true).await {
                    Probe::Connected(service) => {
                        self.keep_direct(&service, direct);
                        return Ok(service);
                    }
                    Probe::Failed(e) => {
                        let reason = lifecycle::describe(&e, &Lifecycle::Auto).to_string();
                        return Err(self.violation_or(reason));
                    }
                    Probe::TryHandshake => (
                        Lifecycle::Handshake(ProtocolVersion::LATEST_WITH_INITIALIZE),
                        self.respawn().await?,
                    ),
                }
            }
            other => (other, pipes),
        };
        let transport = self.framed(pipes)?;
        let direct = transport.direct();
        match lifecycle::start(handler, transport, &lifecycle).await {
            Ok(service) => {
                self.keep_direct(&service, direct);
                Ok(service)
            }
            Err(e) => {
                let reason = lifecycle::describe(&e, &lifecycle).to_string();
                Err(self.violation_or(reason))
            }
        }
    }

    /// Calls take the direct path in the handshake era. In 2026-07-28, rmcp adds its per-request
    /// `_meta` and answers input-required rounds, so its own path stays.
    fn keep_direct(&mut self, service: &Service, direct: stdio::direct::Direct) {
        if service
            .peer_info()
            .is_some_and(|info| info.protocol_version.has_initialize())
        {
            self.direct = Some(direct);
        }
    }

    /// The child's pipes as a transport that fails at once on a broken stdio framing.
    fn framed(
        &self,
        (stdout, stdin): Pipes,
    ) -> Result<stdio::LineTransport<tokio::process::ChildStdout>, String> {
        let process = self.process.as_ref().ok_or("not started")?;
        Ok(process.transport(stdout, stdin))
    }

    /// "server sent an invalid message: …" when the child broke the framing, else `reason`.
    fn violation_or(&self, reason: String) -> String {
        match self.process.as_ref().and_then(|p| p.protocol_violation()) {
            Some(violation) => format!("server {violation}"),
            None => reason,
        }
    }

    /// Ends the stdio child (its whole group) and starts the same command again.
    async fn respawn(&mut self) -> Result<Pipes, String> {
        if let Some(process) = self.process.take() {
            process.shutdown(false).await;
        }
        let Endpoint::Stdio { launch, .. } = &self.endpoint else {
            return Err("not a stdio server".into());
        };
        let (process, stdout, stdin) =
            stdio::spawn(&launch.command, &launch.environment, launch.cwd.as_deref())?;
        self.process = Some(process);
        Ok((stdout, stdin))
    }

    /// What the server said about itself (`ServerInfo` JSON), once connected.
    pub fn server_info(&self) -> Option<Value> {
        self.service.as_ref().and_then(lifecycle::server_info)
    }

    /// Where this server's messages about forwarded calls go.
    pub fn relays(&self) -> Option<relay::Relays> {
        self.service.as_ref().map(|s| s.service().relays.clone())
    }

    /// How this connection answers its server (elicitation, relays).
    pub fn client_side(&self) -> Option<client::ClientSide> {
        self.service.as_ref().map(|s| s.service().clone())
    }

    /// This server's `notifications/tools/list_changed`, once connected.
    pub fn tools_changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        self.service
            .as_ref()
            .map(|s| s.service().tools_changed.watch())
    }

    /// Its direct requests, when calls may take them (see [`stdio::direct`]).
    pub fn direct(&self) -> Option<stdio::direct::Direct> {
        self.direct.clone()
    }

    pub fn peer(&self) -> Option<&Peer<RoleClient>> {
        self.service.as_ref().map(|s| s.peer())
    }

    /// Every tool the server lists, following `nextCursor`, as `ToolInfo`s, all of its pages
    /// within `timeout`.
    pub async fn list_tools(&self, timeout: Duration) -> Result<Vec<tool_info::ToolInfo>, String> {
        let lister = match &self.direct {
            Some(direct) => listing::Lister::Direct(direct),
            None => listing::Lister::Rmcp(self.peer().ok_or("not connected")?),
        };
        listing::list_tools(lister, timeout).await
    }

    /// "exited (code 1)" once a stdio child has exited (waiting at most `wait`).
    pub async fn exit_description(&mut self, wait: Duration) -> Option<String> {
        self.process.as_mut()?.exit_description(wait).await
    }

    /// "sent an invalid message: …" once a stdio server broke the framing.
    pub fn protocol_violation(&self) -> Option<String> {
        self.process.as_ref()?.protocol_violation()
    }

    /// Adds what is known about a stdio child (exit status, stderr tail) to a failure reason.
    pub async fn explain(&mut self, reason: String) -> String {
        let Some(process) = self.process.as_mut() else {
            // An HTTP failure rmcp only saw as a closed connection: its cause is the reason.
            return match self.lost_cause.get() {
                Some(cause) if reason.contains("connection closed") => {
                    reason.replacen("connection closed", &cause, 1)
                }
                _ => reason,
            };
        };
        // A broken framing is the cause; rmcp only saw the transport close.
        let reason = match process.protocol_violation() {
            Some(violation) => format!("server {violation}"),
            None => reason,
        };
        // A server that timed out is still running: don't wait for an exit that won't come.
        let wait = if reason.starts_with("timed out") {
            Duration::ZERO
        } else {
            Duration::from_millis(300)
        };
        let exit = process.exit_description(wait).await;
        let stderr = process.stderr_tail();
        let mut out = match exit {
            // The exit is the real cause; rmcp's "connection closed" adds nothing.
            Some(exit) if reason.contains("connection closed") || reason.contains("closed") => exit,
            Some(exit) => format!("{reason} ({exit})"),
            None => reason,
        };
        if !stderr.is_empty() {
            out.push_str("; stderr: ");
            out.push_str(&stderr);
        }
        let stdout = process.stdout_noise();
        if !stdout.is_empty() {
            out.push_str("; stdout (not JSON-RPC): ");
            out.push_str(&stdout);
        }
        out
    }

    /// Ends the connection. Graceful: the session is closed (stdin end for stdio, DELETE for
    /// HTTP) and a stdio child gets a short grace before its group is killed. Not graceful (a
    /// failure, an abort): the group is killed at once and an HTTP close goes on in the
    /// background, bounded. In both cases the stdio process group is gone when this returns.
    pub async fn shutdown(mut self, graceful: bool) {
        let service = self.service.take();
        let requests = self.requests.clone();
        let bound = self.close_bound;
        if graceful {
            if let Some(mut service) = service {
                let _ = tokio::time::timeout(bound, service.close()).await;
            }
            requests.cancel();
        } else if let Some(mut service) = service {
            tokio::spawn(async move {
                let _ = tokio::time::timeout(bound, service.close()).await;
                requests.cancel();
            });
        } else {
            requests.cancel();
        }
        if let Endpoint::Stdio { pipes, .. } = &mut self.endpoint {
            pipes.take();
        }
        if let Some(process) = self.process.take() {
            process.shutdown(graceful).await;
        }
    }
}

/// Streamable HTTP in the server's era (a discover probe by default), and for a plain `url`
/// legacy SSE when that fails; the reason then says what both attempts met, once if alike.
async fn connect_remote(
    url: &str,
    transport: RemoteTransport,
    headers: &HeaderMap,
    protocol: Option<Protocol>,
    handler: &ClientSide,
    timeout: Duration,
    (requests, lost_cause, oauth): (
        &tokio_util::sync::CancellationToken,
        &http::LostCause,
        &Option<std::sync::Arc<auth::ServerAuth>>,
    ),
) -> Result<Service, String> {
    let streamable = || async {
        let config = StreamableHttpClientTransportConfig::with_uri(url)
            .custom_headers(http::header_hash_map(headers));
        let fresh = |cancel| {
            StreamableHttpClientTransport::with_client(
                auth::http::Authorized::new(
                    http::Cancellable::new(cancel, lost_cause.clone()),
                    oauth.clone(),
                ),
                config.clone(),
            )
        };
        let lifecycle = match Lifecycle::choose(protocol, Carrier::StreamableHttp) {
            Lifecycle::Auto => {
                let bound = lifecycle::probe_bound(timeout);
                // A probe given up on must not keep its request open.
                let probe = requests.child_token();
                match lifecycle::probe(handler, fresh(probe.clone()), bound, false).await {
                    Probe::Connected(service) => return Ok(service),
                    Probe::Failed(e) => {
                        probe.cancel();
                        return Err(lifecycle::describe(&e, &Lifecycle::Auto));
                    }
                    Probe::TryHandshake => {
                        probe.cancel();
                        Lifecycle::Handshake(ProtocolVersion::LATEST_WITH_INITIALIZE)
                    }
                }
            }
            other => other,
        };
        lifecycle::start(handler, fresh(requests.child_token()), &lifecycle)
            .await
            .map_err(|e| lifecycle::describe(&e, &lifecycle))
    };
    let sse = || async {
        let lifecycle = Lifecycle::choose(protocol, Carrier::LegacySse);
        let transport = sse::SseTransport::connect(http::client(), url, headers.clone()).await?;
        lifecycle::start(handler, transport, &lifecycle)
            .await
            .map_err(|e| lifecycle::describe(&e, &lifecycle))
    };
    match transport {
        RemoteTransport::StreamableHttp => streamable().await.map_err(|c: Cause| c.at(url)),
        RemoteTransport::Sse => sse().await.map_err(|c| c.at(url)),
        RemoteTransport::Auto => match streamable().await {
            Ok(service) => Ok(service),
            // Pinned to 2026-07-28 there is nothing to fall back to: legacy SSE only shakes hands.
            Err(first) if protocol == Some(Protocol::Discover) => Err(first.at(url)),
            // A server that asks for authorization is there; legacy SSE would only ask again.
            Err(first) if asks_for_authorization(&first, oauth) => Err(first.at(url)),
            Err(first) => sse()
                .await
                .map_err(|second| Cause::both_at(&first, &second, url)),
        },
    }
}

fn asks_for_authorization(cause: &Cause, oauth: &Option<std::sync::Arc<auth::ServerAuth>>) -> bool {
    matches!(
        cause,
        Cause::Http {
            status: 401 | 403,
            ..
        }
    ) || oauth.as_ref().is_some_and(|auth| auth.failure().is_some())
}
