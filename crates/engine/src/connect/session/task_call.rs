//! Tool calls run as tasks, in both eras the client speaks.
//!
//! - 2025-11-25 (the revision's `tasks`): a task-augmented `tools/call` (`params.task`) is
//!   answered `{task}`; its status is followed by `tasks/get` at the server's `pollInterval`
//!   and by `notifications/tasks/status`; once it needs input or has ended, `tasks/result`
//!   (which may block until the end, and carries the server's elicitations meanwhile) gives the
//!   `CallToolResult`. rmcp 3.11 has no types for these, so they are sent as JSON on either road
//!   ([`LiveServer::raw_request`]): the stdio transport's direct requests, or rmcp's
//!   `CustomRequest`.
//! - 2026-07-28 (the `io.modelcontextprotocol/tasks` extension): the server answers a call with
//!   rmcp's `CreateTaskResult` when it chooses; `tasks/get` inlines the result, and an
//!   `input_required` task's `inputRequests` are answered with `tasks/update`.
//!
//! Either way the call's timeout bounds the whole task, an abort or a timeout sends
//! `tasks/cancel`, and each change of status reaches the call's front
//! ([`Front::status`](crate::connect::relay::Front::status)).
//!
//! The shared helpers are in `task_common.rs`, the 2025-11-25 following in
//! `task_legacy_call.rs`, the 2026-07-28 one in `task_extension_call.rs`.

use std::time::Duration;

use rmcp::model::{ClientRequest, CustomRequest, NumberOrString, ProgressToken};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::LiveServer;
use super::failure::NoResult;
use crate::connect::road::Road;
use crate::connect::stdio::direct::Failure;

impl LiveServer {
    /// The `execution.taskSupport` its listing gives `tool` (`"required"`, `"optional"`).
    pub(crate) fn task_support(&self, tool: &str) -> Option<String> {
        let listing = self.listing.lock().unwrap_or_else(|e| e.into_inner());
        let info = listing.iter().find(|info| info.name() == tool)?;
        // Most tools have none: a scan of the text, no parse.
        if !info.json().get().contains("\"execution\"") {
            return None;
        }
        let fields = info.fields();
        let execution = fields.iter().find(|(k, _)| k == "execution")?.1;
        let execution: Value = serde_json::from_str(execution.get()).ok()?;
        execution
            .get("taskSupport")
            .and_then(Value::as_str)
            .map(str::to_string)
    }

    /// One request of a method rmcp has no type for, as JSON, on the connection's road; its
    /// answer's `result` as JSON.
    pub(super) async fn raw_request(
        &self,
        method: &str,
        params: Map<String, Value>,
        timeout: Duration,
        (cancel, closed): (&CancellationToken, &CancellationToken),
    ) -> Result<Value, NoResult> {
        self.raw_request_heard(method, params, timeout, (cancel, closed), &mut None)
            .await
    }

    /// [`LiveServer::raw_request`], telling `token` the progress token the request carried.
    pub(super) async fn raw_request_heard(
        &self,
        method: &str,
        params: Map<String, Value>,
        timeout: Duration,
        (cancel, closed): (&CancellationToken, &CancellationToken),
        token: &mut Option<ProgressToken>,
    ) -> Result<Value, NoResult> {
        match self.road() {
            Road::Direct(direct) => {
                let id = direct.new_id();
                *token = Some(ProgressToken(NumberOrString::Number(id as i64)));
                let (answered, answer) = tokio::sync::oneshot::channel();
                direct.send(
                    id,
                    method,
                    params,
                    timeout,
                    Box::new(move |answer| {
                        let _ = answered
                            .send(answer.map(|raw| serde_json::from_str::<Value>(raw.get())));
                    }),
                );
                let _forget = direct.forget_on_drop(id);
                let answer = tokio::select! {
                    biased;
                    _ = cancel.cancelled() => {
                        direct.abort(id, "aborted by the caller");
                        return Err(NoResult::Aborted);
                    }
                    _ = closed.cancelled() => return Err(NoResult::SourceClosed),
                    answer = answer => answer.unwrap_or(Err(Failure::Closed)),
                };
                answer?.map_err(|e| {
                    NoResult::Failed(format!(
                        "the server's answer to {method} is unreadable: {e}"
                    ))
                })
            }
            Road::Rmcp(_) => {
                let request = ClientRequest::CustomRequest(CustomRequest::new(
                    method,
                    Some(Value::Object(params)),
                ));
                let result = self
                    .request_once_heard(request, timeout, (cancel, closed), None, token)
                    .await?;
                serde_json::to_value(&result).map_err(|e| {
                    NoResult::Failed(format!(
                        "the server's answer to {method} is unreadable: {e}"
                    ))
                })
            }
        }
    }
}
