//! Connecting to every server of a config concurrently, in isolation, in config order.

use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::client::ClientSide;
use super::error::{ConnectError, Status};
use super::session::{Joined, Session};
use super::tool_info::ToolInfo;
use crate::surface::SurfaceListing;

pub mod json;
use super::connection::{Connection, Listing};
use super::error::{Explained, phase};
use crate::config::{Config, ServerEntry};

/// How one configured server ended up.
pub(crate) enum Opened {
    Disabled,
    /// Why, with what the server's process showed; its `Display` is the server's `error`.
    Failed(Explained),
    /// The caller's token was cancelled (abort or deadline); everything is already torn down.
    Cancelled,
    /// Connected and listed: its tools (unfiltered) and the rest of its surface.
    Connected(Box<Connection>, Box<Listing>),
}

/// The error of a server whose connecting was cancelled.
const CANCELLED: &str = "cancelled";

/// Why a whole call stopped early.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Interrupted {
    Cancelled,
    Deadline,
}

/// Starts, initialises and lists one server, each phase under the server's timeout. On any
/// failure or cancellation the connection is torn down before this returns.
pub(crate) async fn open(
    entry: &ServerEntry,
    handler: ClientSide,
    stop: &CancellationToken,
    warnings: &mut Vec<String>,
) -> Opened {
    if !entry.enabled {
        return Opened::Disabled;
    }
    let spec = match &entry.spec {
        Ok(spec) => spec.expanded(&entry.name, warnings),
        Err(why) => return Opened::Failed(ConnectError::Start(why.to_string()).into()),
    };
    if stop.is_cancelled() {
        return Opened::Cancelled;
    }
    let timeout = Duration::from_millis(entry.timeout_ms);
    let mut conn = match Connection::start(&spec, entry.protocol, timeout) {
        Ok(conn) => conn,
        Err(error) => return Opened::Failed(error.into()),
    };
    conn.use_oauth(entry, &handler.auth, warnings);
    let trace = handler.trace.clone();
    let result = tokio::select! {
        biased;
        _ = stop.cancelled() => None,
        result = async {
            let startup = conn.startup_phase();
            let mut started = phase(startup, timeout, conn.initialize(handler.clone(), timeout)).await;
            // A server that needs the user to authorise it: asked outside the timed attempt.
            if started.is_err()
                && let Some(asked) = conn.authorize_deferred().await
            {
                asked?;
                started = phase(startup, timeout, conn.initialize(handler, timeout)).await;
            }
            started?;
            let peer = conn.peer_attributes();
            // Boxed: the listing's future is large, and this one is polled on a worker's stack.
            let listing = Box::pin(conn.list_all(&entry.name, timeout, warnings));
            crate::telemetry::connecting(trace.as_ref(), peer, listing).await
        } => Some(result),
    };
    match result {
        Some(Ok(listing)) => Opened::Connected(Box::new(conn), Box::new(listing)),
        Some(Err(error)) => {
            let explained = conn.explain(error).await;
            conn.shutdown(false).await;
            Opened::Failed(explained)
        }
        None => {
            conn.shutdown(false).await;
            Opened::Cancelled
        }
    }
}

/// Runs `per_server` for every entry concurrently (each on its own task, so one panicking
/// server cannot take the others down) and returns the results in config order, with why the
/// call stopped early if it did. A task that panicked is an `Err` with a reason. A `deadline` cancels the servers' token like an abort does.
pub(crate) async fn for_each_server<T, F, Fut>(
    config: &Config,
    cancel: &CancellationToken,
    deadline: Option<Duration>,
    per_server: F,
) -> (Vec<Result<T, ConnectError>>, Option<Interrupted>)
where
    T: Send + 'static,
    F: Fn(ServerEntry, CancellationToken) -> Fut,
    Fut: Future<Output = T> + Send + 'static,
{
    let stop = cancel.child_token();
    let owner = super::reaper::current_owner();
    let tasks: Vec<_> = config
        .servers
        .iter()
        .map(|entry| {
            let work = per_server(entry.clone(), stop.clone());
            tokio::spawn(super::reaper::owned(owner, work))
        })
        .collect();
    let all = futures::future::join_all(tasks);
    tokio::pin!(all);
    let sleep = async {
        match deadline {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending().await,
        }
    };
    let mut deadline_hit = false;
    let results = tokio::select! {
        results = &mut all => results,
        _ = sleep => {
            deadline_hit = true;
            stop.cancel();
            all.await
        }
    };
    let results = results
        .into_iter()
        .map(|r| {
            r.map_err(|e| ConnectError::Internal(format!("internal error while connecting: {e}")))
        })
        .collect();
    let interrupted = if cancel.is_cancelled() {
        Some(Interrupted::Cancelled)
    } else if deadline_hit {
        Some(Interrupted::Deadline)
    } else {
        None
    };
    (results, interrupted)
}

pub struct ServerInventory {
    pub name: String,
    pub status: Status,
    pub tools: Vec<ToolInfo>,
    /// Its resources, resource templates and prompts (connected servers only).
    pub(crate) surface: SurfaceListing,
    pub error: Option<String>,
    /// What a connected server said about itself (`ServerInfo` JSON).
    pub info: Option<Value>,
    pub warnings: Vec<String>,
}

/// listMcpTools: every server's raw tool inventory, with nothing left running afterwards.
pub async fn list_all(
    config: &Config,
    cancel: &CancellationToken,
    deadline: Option<Duration>,
    handler: impl Fn(&str) -> ClientSide,
) -> Result<Vec<ServerInventory>, Interrupted> {
    let (servers, interrupted) = for_each_server(config, cancel, deadline, |entry, stop| {
        let handler = handler(&entry.name);
        async move {
            let mut warnings = Vec::new();
            let opened = open(&entry, handler, &stop, &mut warnings).await;
            let mut info = None;
            let mut surface = SurfaceListing::default();
            let (status, tools, error) = match opened {
                Opened::Disabled => (Status::Disabled, Vec::new(), None),
                Opened::Failed(why) => (Status::Failed, Vec::new(), Some(why.to_string())),
                Opened::Cancelled => (Status::Failed, Vec::new(), Some(CANCELLED.to_string())),
                Opened::Connected(conn, listing) => {
                    info = conn.server_info();
                    conn.shutdown(true).await;
                    surface = listing.surface;
                    (Status::Connected, listing.tools, None)
                }
            };
            ServerInventory {
                name: entry.name,
                status,
                tools,
                surface,
                error,
                info,
                warnings,
            }
        }
    })
    .await;
    match interrupted {
        Some(why) => Err(why),
        None => Ok(servers
            .into_iter()
            .zip(&config.servers)
            .map(|(server, entry)| {
                server.unwrap_or_else(|error| ServerInventory {
                    name: entry.name.clone(),
                    status: Status::Failed,
                    tools: Vec::new(),
                    surface: SurfaceListing::default(),
                    error: Some(error.to_string()),
                    info: None,
                    warnings: Vec::new(),
                })
            })
            .collect()),
    }
}

/// What loadMcp connected: the live session, each server's status/error, the tools of each
/// connected server (filtered by its `tools` map), and warnings.
pub struct Loaded {
    pub session: Session,
    pub servers: Vec<ServerInventory>,
    pub warnings: Vec<String>,
}

/// loadMcp: connects every server concurrently and keeps the connections open. On abort or
/// deadline every connection that did come up is shut down before this returns.
pub async fn load_all(
    config: &Config,
    cancel: &CancellationToken,
    deadline: Option<Duration>,
    handler: impl Fn(&str) -> ClientSide,
) -> Result<Loaded, Interrupted> {
    let (results, interrupted) = for_each_server(config, cancel, deadline, |entry, stop| {
        let handler = handler(&entry.name);
        async move {
            let mut warnings = Vec::new();
            let opened = open(&entry, handler, &stop, &mut warnings).await;
            (entry, opened, warnings)
        }
    })
    .await;
    if let Some(why) = interrupted {
        let teardown = results.into_iter().filter_map(|r| match r {
            Ok((_, Opened::Connected(conn, _), _)) => Some(conn.shutdown(false)),
            _ => None,
        });
        futures::future::join_all(teardown).await;
        return Err(why);
    }
    let mut servers = Vec::new();
    let mut connections = Vec::new();
    let mut warnings = config.warnings.clone();
    for (result, entry) in results.into_iter().zip(&config.servers) {
        let mut info = None;
        let mut surface = SurfaceListing::default();
        let (status, tools, error) = match result {
            Err(error) => (Status::Failed, Vec::new(), Some(error.to_string())),
            Ok((entry, opened, server_warnings)) => {
                warnings.extend(server_warnings);
                match opened {
                    Opened::Disabled => (Status::Disabled, Vec::new(), None),
                    Opened::Failed(why) => (Status::Failed, Vec::new(), Some(why.to_string())),
                    Opened::Cancelled => (Status::Failed, Vec::new(), Some(CANCELLED.into())),
                    Opened::Connected(conn, listing) => {
                        info = conn.server_info();
                        let tools = filter_tools(&entry, listing.tools, &mut warnings);
                        surface = listing.surface.clone();
                        connections.push(Joined {
                            name: entry.name.clone(),
                            connection: *conn,
                            timeout: Duration::from_millis(entry.timeout_ms),
                            tools: tools.clone(),
                            filter: entry.tools.clone(),
                            tool_hints: listing.tool_hints,
                            surface: listing.surface,
                        });
                        (Status::Connected, tools, None)
                    }
                }
            }
        };
        servers.push(ServerInventory {
            name: entry.name.clone(),
            status,
            tools,
            surface,
            error,
            info,
            warnings: Vec::new(),
        });
    }
    Ok(Loaded {
        session: Session::new(connections),
        servers,
        warnings,
    })
}

/// The per-server `tools` map: absent or empty => all; any `true` => only the `true` names;
/// only `false` values => all but those. Names that match no tool are warned about.
fn filter_tools(
    entry: &ServerEntry,
    tools: Vec<ToolInfo>,
    warnings: &mut Vec<String>,
) -> Vec<ToolInfo> {
    let Some(filter) = entry.tools.as_ref().filter(|f| !f.is_empty()) else {
        return tools;
    };
    let names: std::collections::HashSet<&str> = tools.iter().map(ToolInfo::name).collect();
    for (name, _) in filter {
        if !names.contains(name.as_str()) {
            warnings.push(format!(
                "toolnexus: server {:?} has no tool {name:?} (named in its tools filter)",
                entry.name
            ));
        }
    }
    super::tool_info::apply_filter(Some(filter), tools)
}
