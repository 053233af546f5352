//! A loaded server's tool served again by a gateway: listed as its server listed it (under the
//! served name), and called straight down the server's connection.

use std::sync::Arc;

use futures::FutureExt;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::connect::session::{LiveServer, Session};
use crate::connect::tool_info::ToolInfo;
use crate::serve::{self, CallContext, ServedTool, ToolCaller};
use crate::telemetry::{Named, Op};
use crate::tool_result::ToolResult;

/// A tool that came from loadMcp: which live server serves it, under which original name.
/// JavaScript holds it on each loaded tool (not enumerable), so a gateway can call it here.
pub struct LoadedTool {
    pub session: Arc<Session>,
    pub server: Arc<LiveServer>,
    /// The original name.
    pub tool: String,
    /// The tool as its server listed it (`ToolInfo`, shared with the session), so a gateway
    /// re-serves it unchanged.
    pub listing: ToolInfo,
    /// Whether its listing says it can only be called as a task.
    pub task_required: bool,
    /// Whether its listing says it may be called as a task (`ctx.task` asks for one).
    pub task_optional: bool,
}

/// `tool` served as `name`: its description, schema and the other listing fields as its server
/// listed them (read from the listing's text once; `description` when it gave none), its calls
/// relayed.
pub fn relayed(
    tool: Arc<LoadedTool>,
    (name, description): (String, String),
    source: String,
) -> Result<ServedTool, String> {
    let Value::Object(mut listing) = tool.listing.to_value() else {
        return Err("toolnexus: a listed tool is not an object".into());
    };
    let description = match listing.remove("description") {
        Some(Value::String(d)) => d,
        _ => description,
    };
    let input_schema = listing.remove("inputSchema").unwrap_or(Value::Null);
    let mut extras = Map::new();
    for key in serve::LISTING_EXTRAS {
        if let Some(value) = listing.remove(key) {
            extras.insert(key.to_string(), value);
        }
    }
    Ok(ServedTool {
        name,
        description,
        input_schema: serve::object_schema(input_schema),
        extras,
        source,
        caller: Arc::new(Relayed(tool)),
    })
}

/// A loaded tool's caller: the call goes straight down its server's connection.
struct Relayed(Arc<LoadedTool>);

impl ToolCaller for Relayed {
    fn runs_plainly(&self) -> bool {
        true
    }

    fn upstream(&self) -> Option<String> {
        Some(self.0.server.name.clone())
    }

    fn call(
        &self,
        arguments: Map<String, Value>,
        ctx: CallContext,
    ) -> futures::future::BoxFuture<'static, Value> {
        let tool = self.0.clone();
        // A task-required upstream tool runs as a task upstream, within the call's timeout
        // (LiveServer::call follows it). Served as a task itself, the call runs as a task
        // upstream when the upstream tool may be one, bounded by this task's life instead.
        let life = ctx.task_life();
        let opts = crate::connect::session::CallOpts {
            timeout: life,
            task: life.is_some(),
            meta: None,
        };
        // The upstream call is a CLIENT span, a child of this call's SERVER span.
        let op = Op::client(
            "tools/call",
            Named::Tool(&tool.tool),
            ctx.span_cx().as_ref(),
            tool.server.peer_attributes().telemetry(),
        );
        // Progress, log messages and elicitations of the upstream reach the calling client.
        let (front, relayed) = ctx.relay(op.as_ref().and_then(Op::meta));
        async move {
            // The call runs on its own task: if this future is dropped (the client cancelled or
            // went away), the token tells the upstream server with notifications/cancelled.
            let cancel = CancellationToken::new();
            let _cancel_on_drop = cancel.clone().drop_guard();
            let call = tokio::spawn(async move {
                let closed = tool.session.closed_token().clone();
                tool.server
                    .call_with(&tool.tool, arguments, opts, &cancel, &closed, Some(front))
                    .await
            });
            let result = match call.await {
                // The server's own result travels on untouched; a failure to get one is text
                // (and fails a task this call runs as).
                Ok(out) => {
                    if let Some(op) = op {
                        // A result with `isError` is the tool's own failure.
                        let tool_error = out.is_error.then_some("tool_error");
                        op.end(out.error_type.as_deref().or(tool_error));
                    }
                    if out.task_failed || out.raw.is_none() {
                        ctx.fail(out.output.clone());
                    }
                    let mut raw = out.raw.unwrap_or_else(|| text_result(out.output, true));
                    // An upstream cannot make its result pass for a task of ours.
                    if let Some(meta) = raw.get_mut("_meta").and_then(Value::as_object_mut) {
                        meta.remove(crate::serve::task_legacy::CREATED_META);
                    }
                    raw
                }
                Err(_) => {
                    ctx.fail("MCP tool call failed");
                    text_result("MCP tool call failed".to_string(), true)
                }
            };
            // What the upstream reported before its result reaches the client before it too
            // (bounded, so a client that stopped reading cannot hold the result back).
            let _ = tokio::time::timeout(crate::bounds::SERVE_RELAY_FLUSH, relayed).await;
            result
        }
        .boxed()
    }
}

fn text_result(text: String, is_error: bool) -> Value {
    ToolResult::text(text, is_error).into_mcp()
}
