//! Connecting to every server of a config concurrently, in isolation, in config order.

use std::time::Duration;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::client::ClientSide;
use super::{Connection, phase};
use crate::config::{Config, ServerEntry};

/// How one configured server ended up.
pub enum Opened {
    Disabled,
    Failed(String),
    /// The caller's token was cancelled (abort or deadline); everything is already torn down.
    Cancelled,
    Connected(Connection, Vec<Value>),
}

/// Why a whole call stopped early.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Interrupted {
    Cancelled,
    Deadline,
}

/// Starts, initialises and lists one server, each phase under the server's timeout. On any
/// failure or cancellation the connection is torn down before this returns.
pub async fn open(
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
        Err(reason) => return Opened::Failed(reason.clone()),
    };
    if stop.is_cancelled() {
        return Opened::Cancelled;
    }
    let mut conn = match Connection::start(&spec) {
        Ok(conn) => conn,
        Err(reason) => return Opened::Failed(reason),
    };
    let timeout = Duration::from_millis(entry.timeout_ms);
    let result = tokio::select! {
        biased;
        _ = stop.cancelled() => None,
        result = async {
            phase("initialize", timeout, conn.initialize(handler)).await?;
            conn.list_tools(timeout).await
        } => Some(result),
    };
    match result {
        Some(Ok(tools)) => Opened::Connected(conn, tools),
        Some(Err(reason)) => {
            let reason = conn.explain(reason).await;
            conn.shutdown(false).await;
            Opened::Failed(reason)
        }
        None => {
            conn.shutdown(false).await;
            Opened::Cancelled
        }
    }
}

/// Runs `per_server` for every entry concurrently (each on its own task, so one panicking
/// server cannot take the others down) and returns the results in config order. A `deadline`
/// cancels `stop` like an abort does; the call reports which one happened.
pub async fn for_each_server<T, F, Fut>(
    config: &Config,
    cancel: &CancellationToken,
    deadline: Option<Duration>,
    per_server: F,
) -> Result<Vec<T>, Interrupted>
where
    T: Send + 'static,
    F: Fn(ServerEntry, CancellationToken) -> Fut,
    Fut: Future<Output = T> + Send + 'static,
{
    let stop = cancel.child_token();
    let tasks: Vec<_> = config
        .servers
        .iter()
        .map(|entry| tokio::spawn(per_server(entry.clone(), stop.clone())))
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
    if cancel.is_cancelled() {
        return Err(Interrupted::Cancelled);
    }
    if deadline_hit {
        return Err(Interrupted::Deadline);
    }
    Ok(results
        .into_iter()
        .map(|r| r.unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic())))
        .collect())
}

pub struct ServerInventory {
    pub name: String,
    pub status: &'static str,
    pub tools: Vec<Value>,
    pub error: Option<String>,
    pub warnings: Vec<String>,
}

/// listMcpTools: every server's raw tool inventory, with nothing left running afterwards.
pub async fn list_all(
    config: &Config,
    cancel: &CancellationToken,
    deadline: Option<Duration>,
) -> Result<Vec<ServerInventory>, Interrupted> {
    for_each_server(config, cancel, deadline, |entry, stop| async move {
        let mut warnings = Vec::new();
        let opened = open(&entry, ClientSide::default(), &stop, &mut warnings).await;
        let (status, tools, error) = match opened {
            Opened::Disabled => ("disabled", Vec::new(), None),
            Opened::Failed(reason) => ("failed", Vec::new(), Some(reason)),
            Opened::Cancelled => ("failed", Vec::new(), Some("cancelled".to_string())),
            Opened::Connected(conn, tools) => {
                conn.shutdown(true).await;
                ("connected", tools, None)
            }
        };
        ServerInventory {
            name: entry.name,
            status,
            tools,
            error,
            warnings,
        }
    })
    .await
}

/// `{ tools, status, errors }` in config order.
pub fn inventory_json(servers: Vec<ServerInventory>) -> Value {
    let mut tools = Map::new();
    let mut status = Map::new();
    let mut errors = Map::new();
    for server in servers {
        status.insert(server.name.clone(), Value::String(server.status.into()));
        if let Some(error) = server.error {
            errors.insert(server.name.clone(), Value::String(error));
        }
        if server.status == "connected" {
            tools.insert(server.name, Value::Array(server.tools));
        }
    }
    let mut out = Map::new();
    out.insert("tools".into(), Value::Object(tools));
    out.insert("status".into(), Value::Object(status));
    out.insert("errors".into(), Value::Object(errors));
    Value::Object(out)
}
