//! Connections to MCP servers: transports, handshake, listing, calling and teardown.
//!
//! A [`Connection`] is started (a child spawned, or nothing yet for HTTP), initialised, used, and
//! always ended through [`Connection::shutdown`], whatever happened: success, failure, timeout,
//! abort and deadline share that one teardown path.

pub mod client;
pub mod elicit;
pub mod http;
pub mod inventory;
pub mod naming;
pub mod reaper;
pub mod session;
pub mod sse;
pub mod stdio;

use std::future::Future;
use std::time::Duration;

use reqwest::header::HeaderMap;
use rmcp::ServiceExt;
use rmcp::model::PaginatedRequestParams;
use rmcp::service::{Peer, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Map, Value};

use crate::config::{RemoteTransport, ServerSpec};
use client::ClientSide;
use stdio::StdioProcess;

/// At most this many `tools/list` pages are followed.
pub const MAX_LIST_PAGES: usize = 1000;
/// A closing HTTP session gets this long to send its DELETE.
const HTTP_CLOSE_BOUND: Duration = Duration::from_secs(3);

enum Endpoint {
    Stdio(Option<(tokio::process::ChildStdout, tokio::process::ChildStdin)>),
    Remote {
        url: String,
        transport: RemoteTransport,
        headers: HeaderMap,
    },
}

pub struct Connection {
    endpoint: Endpoint,
    process: Option<StdioProcess>,
    service: Option<RunningService<RoleClient, ClientSide>>,
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
    /// `spec` must already have its variables expanded.
    pub fn start(spec: &ServerSpec) -> Result<Self, String> {
        match spec {
            ServerSpec::Local {
                command,
                environment,
                cwd,
            } => {
                let (process, stdout, stdin) = stdio::spawn(command, environment, cwd.as_deref())?;
                Ok(Self {
                    endpoint: Endpoint::Stdio(Some((stdout, stdin))),
                    process: Some(process),
                    service: None,
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
                        parsed.scheme()
                    ));
                }
                Ok(Self {
                    endpoint: Endpoint::Remote {
                        url: url.clone(),
                        transport: *transport,
                        headers: http::header_map(headers)?,
                    },
                    process: None,
                    service: None,
                })
            }
        }
    }

    /// The MCP handshake. Untimed: callers bound it with [`phase`].
    pub async fn initialize(&mut self, handler: ClientSide) -> Result<(), String> {
        let service = match &mut self.endpoint {
            Endpoint::Stdio(pipes) => {
                let (stdout, stdin) = pipes.take().ok_or("already initialised")?;
                let process = self.process.as_ref().ok_or("not started")?;
                handler
                    .serve(process.transport(stdout, stdin))
                    .await
                    .map_err(|e| match process.protocol_violation() {
                        Some(violation) => format!("server {violation}"),
                        None => e.to_string(),
                    })?
            }
            Endpoint::Remote {
                url,
                transport,
                headers,
            } => connect_remote(url, *transport, headers, handler).await?,
        };
        self.service = Some(service);
        Ok(())
    }

    pub fn peer(&self) -> Option<&Peer<RoleClient>> {
        self.service.as_ref().map(|s| s.peer())
    }

    /// Every tool the server lists, following `nextCursor`, as `ToolInfo` JSON objects.
    pub async fn list_tools(&self, page_timeout: Duration) -> Result<Vec<Value>, String> {
        let peer = self.peer().ok_or("not connected")?;
        let mut tools = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_LIST_PAGES {
            let params = PaginatedRequestParams::default().with_cursor(cursor.clone());
            let page = phase("tools/list", page_timeout, async {
                peer.list_tools(Some(params))
                    .await
                    .map_err(|e| format!("tools/list failed: {e}"))
            })
            .await?;
            tools.extend(page.tools.into_iter().map(tool_info));
            match page.next_cursor {
                None => return Ok(tools),
                Some(next) => {
                    if !seen.insert(next.clone()) {
                        return Err(format!(
                            "tools/list repeated cursor {next:?}; stopped paging"
                        ));
                    }
                    cursor = Some(next);
                }
            }
        }
        Err(format!(
            "tools/list returned more than {MAX_LIST_PAGES} pages"
        ))
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
            return reason;
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
        if graceful {
            if let Some(mut service) = service {
                let _ = tokio::time::timeout(HTTP_CLOSE_BOUND, service.close()).await;
            }
        } else if let Some(mut service) = service {
            tokio::spawn(async move {
                let _ = tokio::time::timeout(HTTP_CLOSE_BOUND, service.close()).await;
            });
        }
        self.endpoint = Endpoint::Stdio(None);
        if let Some(process) = self.process.take() {
            process.shutdown(graceful).await;
        }
    }
}

async fn connect_remote(
    url: &str,
    transport: RemoteTransport,
    headers: &HeaderMap,
    handler: ClientSide,
) -> Result<RunningService<RoleClient, ClientSide>, String> {
    let streamable = || async {
        let config = StreamableHttpClientTransportConfig::with_uri(url)
            .custom_headers(http::header_hash_map(headers));
        let transport = StreamableHttpClientTransport::with_client(http::client(), config);
        handler
            .clone()
            .serve(transport)
            .await
            .map_err(|e| http::describe_chain(&e, url))
    };
    let sse = || async {
        let transport = sse::SseTransport::connect(http::client(), url, headers.clone()).await?;
        handler
            .clone()
            .serve(transport)
            .await
            .map_err(|e| http::describe_chain(&e, url))
    };
    match transport {
        RemoteTransport::StreamableHttp => streamable().await,
        RemoteTransport::Sse => sse().await,
        RemoteTransport::Auto => match streamable().await {
            Ok(service) => Ok(service),
            Err(first) => sse()
                .await
                .map_err(|second| format!("{first} (legacy SSE fallback: {second})")),
        },
    }
}

/// A listed tool as `ToolInfo`: original name, description ("" when absent), and an input
/// schema with `type: "object"` and `properties` ensured.
fn tool_info(tool: rmcp::model::Tool) -> Value {
    let mut schema: Map<String, Value> = (*tool.input_schema).clone();
    schema
        .entry("type")
        .or_insert_with(|| Value::String("object".into()));
    schema
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    let mut info = Map::new();
    info.insert("name".into(), Value::String(tool.name.into_owned()));
    info.insert(
        "description".into(),
        Value::String(tool.description.map(|d| d.into_owned()).unwrap_or_default()),
    );
    info.insert("inputSchema".into(), Value::Object(schema));
    Value::Object(info)
}
