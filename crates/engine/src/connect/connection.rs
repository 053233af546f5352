//! One server's connection: spawned or reached, its session started in its era, listed and
//! ended.

use std::time::Duration;

use reqwest::header::HeaderMap;
use rmcp::service::{Peer, RoleClient};
use serde_json::Value;

use super::client::ClientSide;
use super::error::ConnectError;
use super::error::Explained;
use super::{auth, client, http, lifecycle, listing, reason, remote, road, stdio, tool_info};
use crate::bounds::HTTP_CLOSE_BOUND;
use crate::config::{Protocol, RemoteTransport, ServerSpec};

mod start_stdio;

/// What listing a server gave: its tools (and their caching hints) and the rest of its surface.
pub(crate) struct Listing {
    pub(crate) tools: Vec<tool_info::ToolInfo>,
    pub(crate) tool_hints: crate::surface::Hints,
    pub(crate) surface: crate::surface::SurfaceListing,
}
use super::lifecycle::{Carrier, Lifecycle, Service};
use super::stdio::StdioProcess;

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

pub(crate) struct Connection {
    endpoint: Endpoint,
    protocol: Option<Protocol>,
    process: Option<StdioProcess>,
    service: Option<Service>,
    /// The fast path of a stdio connection in the handshake era (its direct requests, and its
    /// stdout to hand over).
    fast: Option<stdio::Fast>,
    /// Ends every HTTP request and response stream of this connection (see
    /// [`http::streamable::RemoteClient`]); fired by `shutdown`.
    requests: tokio_util::sync::CancellationToken,
    /// A cause rmcp's streamable-HTTP transport lost (it reports only a closed transport).
    lost_cause: http::LostCause,
    /// OAuth for a remote server without a static `Authorization` header.
    oauth: Option<std::sync::Arc<auth::ServerAuth>>,
    /// How long closing the session (an HTTP DELETE) may take: the server's timeout, at most
    /// [`HTTP_CLOSE_BOUND`].
    close_bound: Duration,
}

/// A state the connection's own code should never reach, in words.
fn internal(words: &str) -> ConnectError {
    ConnectError::Internal(words.to_string())
}

impl Connection {
    /// A remote server's URL; None for a stdio server.
    pub(crate) fn url(&self) -> Option<&str> {
        match &self.endpoint {
            Endpoint::Remote { url, .. } => Some(url),
            Endpoint::Stdio { .. } => None,
        }
    }

    /// Spawns a stdio child (its failure to start is the error) or prepares a remote endpoint.
    /// `spec` must already have its variables expanded; `protocol` is the server's era setting.
    /// `timeout` is the server's: it also bounds closing.
    pub(crate) fn start(
        spec: &ServerSpec,
        protocol: Option<Protocol>,
        timeout: Duration,
    ) -> Result<Self, ConnectError> {
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
                    fast: None,
                })
            }
            ServerSpec::Remote {
                url,
                transport,
                headers,
            } => {
                let parsed = reqwest::Url::parse(url).map_err(|_| {
                    ConnectError::Start(format!(
                        "url {:?} is not a valid URL",
                        http::redact_url(url)
                    ))
                })?;
                if !matches!(parsed.scheme(), "http" | "https") {
                    return Err(ConnectError::Start(format!(
                        "url scheme {:?} is not supported (use http or https)",
                        reason::bounded(parsed.scheme())
                    )));
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
                    fast: None,
                })
            }
        }
    }

    /// Authorises a remote server by OAuth when the server asks for it (see [`auth`]), unless
    /// its headers carry an `Authorization` of their own. `entry.auth` is expanded here.
    pub(crate) fn use_oauth(
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
    pub(crate) fn startup_phase(&self) -> &'static str {
        let carrier = match &self.endpoint {
            Endpoint::Stdio { .. } => Carrier::Stdio,
            Endpoint::Remote { .. } => Carrier::StreamableHttp,
        };
        Lifecycle::choose(self.protocol, carrier).phase_name()
    }

    /// Starts the session in the server's era (the handshake, discover, or a probe for either),
    /// then refuses a protocol version toolnexus does not know. Untimed: callers bound it with
    /// [`phase`]; `timeout` is that bound, of which a discover probe takes at most half.
    pub(crate) async fn initialize(
        &mut self,
        handler: ClientSide,
        timeout: Duration,
    ) -> Result<(), ConnectError> {
        let service = match &mut self.endpoint {
            Endpoint::Stdio { pipes, .. } => {
                let pipes = pipes
                    .take()
                    .ok_or_else(|| internal("already initialised"))?;
                self.start_stdio(&handler, pipes, timeout).await?
            }
            Endpoint::Remote {
                url,
                transport,
                headers,
            } => {
                let http = (&self.requests, &self.lost_cause, &self.oauth);
                remote::connect_remote(
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
    pub(crate) async fn authorize_deferred(&self) -> Option<Result<(), ConnectError>> {
        let asked = self.oauth.as_ref()?.authorize_deferred().await?;
        Some(asked.map_err(ConnectError::Auth))
    }

    /// What the server said about itself (`ServerInfo` JSON), once connected.
    pub(crate) fn server_info(&self) -> Option<Value> {
        self.service.as_ref().and_then(lifecycle::server_info)
    }

    /// How this connection answers its server (elicitation, relays).
    pub(crate) fn client_side(&self) -> Option<client::ClientSide> {
        self.service.as_ref().map(|s| s.service().clone())
    }

    /// This server's `notifications/tools/list_changed`, once connected.
    pub(crate) fn tools_changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        self.service
            .as_ref()
            .map(|s| s.service().tools_changed.watch())
    }

    /// The one handle to its stdio transport's fast path, when calls and listings take it (see
    /// [`stdio::Fast`]).
    pub(crate) fn fast(&self) -> Option<stdio::Fast> {
        self.fast.clone()
    }

    pub(crate) fn peer(&self) -> Option<&Peer<RoleClient>> {
        self.service.as_ref().map(|s| s.peer())
    }

    /// Every tool the server lists, following `nextCursor`, as `ToolInfo`s, all of its pages
    /// within `timeout`; and beside them, concurrently, the resources, resource templates and
    /// prompts its capabilities declare. Only a failure to list its tools is an error: a kind
    /// beside them that fails is `[]`, with a warning in `warnings`.
    pub(crate) async fn list_all(
        &self,
        server: &str,
        timeout: Duration,
        warnings: &mut Vec<String>,
    ) -> Result<Listing, ConnectError> {
        let peer = self.peer().ok_or_else(|| internal("not connected"))?;
        let road = road::Road::of(peer, self.fast.as_ref().map(|fast| &fast.direct));
        let caps = self.capabilities();
        let (tools, (surface, surface_warnings)) = futures::join!(
            listing::list_tools(road, timeout),
            listing::list_surface(road, server, caps.as_ref(), timeout)
        );
        let (tools, tool_hints, truncated) = tools?;
        if let Some(truncated) = truncated {
            warnings.push(truncated.warning(server, "tools"));
        }
        warnings.extend(surface_warnings);
        Ok(Listing {
            tools,
            tool_hints,
            surface,
        })
    }

    /// Where the server is and what it speaks (for telemetry).
    pub(crate) fn peer_attributes(&self) -> crate::telemetry::PeerAttributes {
        let info = self.peer().and_then(|peer| peer.peer_info());
        crate::telemetry::PeerAttributes::of(self.url(), info.as_ref().map(|i| &i.protocol_version))
    }

    /// What the server declared at the handshake (or discovery), once connected.
    pub(crate) fn capabilities(&self) -> Option<rmcp::model::ServerCapabilities> {
        Some(self.peer()?.peer_info()?.capabilities.clone())
    }

    /// "exited (code 1)" once a stdio child has exited (waiting at most `wait`).
    pub(crate) async fn exit_description(&mut self, wait: Duration) -> Option<String> {
        Some(self.process.as_mut()?.exit(wait).await?.to_string())
    }

    /// "sent an invalid message: …" once a stdio server broke the framing.
    pub(crate) fn protocol_violation(&self) -> Option<String> {
        self.process.as_ref()?.protocol_violation()
    }

    /// Adds what is known about the server to a failure: for a stdio child its broken framing
    /// (the cause; rmcp only saw the transport close), exit status, stderr tail and stray stdout;
    /// for HTTP the cause rmcp's transport lost.
    pub(crate) async fn explain(&mut self, error: ConnectError) -> Explained {
        let Some(process) = self.process.as_mut() else {
            return error.with_lost_cause(self.lost_cause.get()).into();
        };
        let error = process.violation().unwrap_or(error);
        // A server that timed out is still running: don't wait for an exit that won't come.
        let wait = if error.is_timeout() {
            Duration::ZERO
        } else {
            crate::bounds::EXIT_WAIT_ON_FAILURE
        };
        Explained {
            exit: process.exit(wait).await,
            stderr: process.stderr_tail(),
            stdout: process.stdout_noise(),
            error,
        }
    }

    /// Ends the connection. Graceful: the session is closed (stdin end for stdio, DELETE for
    /// HTTP) and a stdio child gets a short grace before its group is killed. Not graceful (a
    /// failure, an abort): the group is killed at once and an HTTP close goes on in the
    /// background, bounded. In both cases the stdio process group is gone when this returns.
    pub(crate) async fn shutdown(mut self, graceful: bool) {
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
