//! What the calling side's telemetry (lib/telemetry.js) needs of the engine: where a loadMcp
//! tool's server is and what it speaks, and the trace context JavaScript hands a request.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::{Map, Value};

use std::sync::Arc;

use engine::gateway::tool::LoadedTool;

/// What telemetry says of a loadMcp tool's calls (internal: lib/telemetry.js): its server's
/// name, the tool's original name, `transport` (`pipe` or `tcp`), a remote server's `address`
/// and `port`, and the `protocolVersion` it speaks.
#[napi(
    ts_args_type = "tool: unknown",
    ts_return_type = "{ server: string; tool: string; transport: string; address?: string; port?: number; protocolVersion?: string }"
)]
pub fn mcp_tool_peer(tool: &External<Arc<LoadedTool>>) -> Result<Value> {
    let mut peer = serde_json::to_value(tool.server.peer_attributes())
        .map_err(|e| Error::from_reason(e.to_string()))?;
    if let Value::Object(peer) = &mut peer {
        peer.insert("server".into(), Value::String(tool.server.name.clone()));
        peer.insert("tool".into(), Value::String(tool.tool.clone()));
    }
    Ok(peer)
}

/// `_meta` entries from JavaScript (strings: the trace context) as the request's `_meta`.
pub(crate) fn meta_object(
    entries: std::collections::HashMap<String, String>,
) -> Map<String, Value> {
    entries
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect()
}

/// Sends the spans and metrics the engine has queued for the OpenTelemetry collector (serving
/// with the `OTEL_EXPORTER_OTLP_*` variables set), and waits for it, at most a few seconds.
#[napi]
pub async fn flush_telemetry() -> Result<()> {
    tokio::task::spawn_blocking(engine::telemetry::flush)
        .await
        .map_err(|_| Error::from_reason("toolnexus: the telemetry flush did not finish"))
}
