//! Requests on rmcp's service: tool calls of HTTP servers and of stdio servers in the
//! 2026-07-28 era (whose calls may answer input-required and be sent again), and every other
//! request of every server (reads, prompts, completions: [`LiveServer::request_once`]).

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest, ServerResult,
};
use rmcp::service::PeerRequestOptions;
use tokio_util::sync::CancellationToken;

use super::failure::NoResult;
use super::result::map_result;
use super::{CallOutcome, LiveServer};
use crate::connect::relay::Front;

/// How many input-required rounds one call (or read, or prompt) may take (rmcp's own client
/// default).
pub(super) const MAX_INPUT_ROUNDS: usize = rmcp::model::DEFAULT_MRTR_MAX_ROUNDS;

impl LiveServer {
    /// [`LiveServer::call`] on rmcp's service: a 2026-07-28 server may answer input-required;
    /// answered, the call is sent again.
    pub(super) async fn call_service(
        &self,
        (tool, arguments, meta): super::Call<'_>,
        timeout: Duration,
        (cancel, closed): (&CancellationToken, &CancellationToken),
        front: Option<Arc<dyn Front>>,
        started: Instant,
    ) -> Result<CallOutcome, NoResult> {
        let mut params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        // The caller's trace context travels on (rmcp adds its progress token beside it).
        params.meta = meta.map(Into::into);
        // A call run again by another replica resumes where the upstream last asked for input.
        let mut resumed = front.as_ref().and_then(|f| f.resume_point());
        let fresh = params.clone();
        let mut from_point = false;
        // The progress token of the request that made a task: the task's progress comes under it.
        let mut token = None;
        for _ in 0..=MAX_INPUT_ROUNDS {
            let result = if let Some(point) = resumed.take() {
                from_point = true;
                ServerResult::InputRequiredResult(point)
            } else {
                let sent = self
                    .call_once(
                        params.clone(),
                        timeout,
                        (cancel, closed),
                        front.clone(),
                        &mut token,
                    )
                    .await;
                match (sent, std::mem::take(&mut from_point)) {
                    // The upstream did not take the state it gave another replica's call (it
                    // was that connection's memory): the call is made afresh.
                    (Err(NoResult::Refused(_)), true) => {
                        if let Some(front) = &front {
                            front.restart();
                        }
                        params = fresh.clone();
                        continue;
                    }
                    (sent, _) => sent?,
                }
            };
            // The server made the call a task (the 2026-07-28 extension): followed to its end.
            if let ServerResult::CreateTaskResult(created) = result {
                return self
                    .follow_extension(created, (timeout, token), (cancel, closed), front, started)
                    .await;
            }
            let ServerResult::InputRequiredResult(input_required) = result else {
                return Ok(map_result(result, started));
            };
            if let Some(front) = &front {
                front.reached(&input_required);
            }
            let requests = input_required.input_requests.unwrap_or_default();
            let responses = self
                .client
                .answer_input(requests, front.as_deref())
                .await
                .map_err(NoResult::Failed)?;
            params.input_responses = Some(responses);
            params.request_state = input_required.request_state;
        }
        Err(NoResult::Failed(format!(
            "the server still asked for input after {MAX_INPUT_ROUNDS} rounds"
        )))
    }

    /// One `tools/call` request and its answer, or why there was none.
    async fn call_once(
        &self,
        params: CallToolRequestParams,
        timeout: Duration,
        (cancel, closed): (&CancellationToken, &CancellationToken),
        front: Option<Arc<dyn Front>>,
        token: &mut Option<rmcp::model::ProgressToken>,
    ) -> Result<ServerResult, NoResult> {
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        self.request_once_heard(request, timeout, (cancel, closed), front, token)
            .await
    }

    /// One request on rmcp's service and its answer, or why there was none: `timeout` restarts
    /// at each progress notification; `cancel` aborts it (the server is told); `front` gets the
    /// server's progress, logs and questions about it while it runs.
    pub(super) async fn request_once(
        &self,
        request: ClientRequest,
        timeout: Duration,
        (cancel, closed): (&CancellationToken, &CancellationToken),
        front: Option<Arc<dyn Front>>,
    ) -> Result<ServerResult, NoResult> {
        self.request_once_heard(request, timeout, (cancel, closed), front, &mut None)
            .await
    }

    /// [`LiveServer::request_once`], telling `token` the progress token the request carried
    /// (the progress of a task outlives its request).
    pub(super) async fn request_once_heard(
        &self,
        request: ClientRequest,
        timeout: Duration,
        (cancel, closed): (&CancellationToken, &CancellationToken),
        front: Option<Arc<dyn Front>>,
        token: &mut Option<rmcp::model::ProgressToken>,
    ) -> Result<ServerResult, NoResult> {
        let options = PeerRequestOptions::with_timeout(timeout).reset_timeout_on_progress();
        let handle = self.peer.send_cancellable_request(request, options).await?;
        *token = Some(handle.progress_token.clone());
        let id = handle.id.clone();
        let _relayed = front.map(|front| {
            self.client
                .relays
                .register(handle.progress_token.clone(), front)
        });
        // Biased: a caller's abort (or a closed source) wins over an answer that is ready in the
        // same poll, so an already-aborted signal always aborts, however fast the server is.
        let result = tokio::select! {
            biased;
            _ = cancel.cancelled() => {
                self.send_cancelled(id, "aborted by the caller").await;
                return Err(NoResult::Aborted);
            }
            _ = closed.cancelled() => return Err(NoResult::SourceClosed),
            result = handle.await_response() => result,
        };
        // rmcp hands each notification to its own task, queued before the answer that followed
        // it: one yield lets the last progress notifications reach the front while it is still
        // registered.
        tokio::task::yield_now().await;
        Ok(result?)
    }

    async fn send_cancelled(&self, id: rmcp::model::RequestId, reason: &str) {
        let params = CancelledNotificationParam::new(Some(id), Some(reason.to_string()));
        let notification = rmcp::model::CancelledNotification::new(params);
        let _ = self.peer.send_notification(notification.into()).await;
    }
}
