//! Tool calls on a stdio connection's direct requests (see [`crate::connect::stdio::direct`]),
//! for servers in the handshake era. Same request on the wire as rmcp's, same outcomes and
//! messages, without rmcp's service task in between.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{NumberOrString, ProgressToken};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::failure::NoResult;
use super::result::map_raw_result;
use super::{CallOutcome, LiveServer};
use crate::connect::relay::Front;
use crate::connect::stdio::direct::{Direct, Failure, Listener};

/// Gets a call's outcome, on whichever thread settled it.
pub type Done = Box<dyn FnOnce(CallOutcome) + Send>;

/// A direct call in flight, to abort it.
pub struct DirectCall {
    direct: Direct,
    id: u64,
}

impl DirectCall {
    /// Tells the server with `notifications/cancelled`; the call settles as aborted (unless it
    /// already settled).
    pub fn abort(&self) {
        self.direct.abort(self.id, "aborted by the caller");
    }
}

impl LiveServer {
    /// Starts calling `tool` on the direct path, on the caller's thread: the request is written
    /// before this returns and `done` gets the outcome later (or at once, when the connection
    /// has ended). `done` and the arguments come back when this server has no direct path.
    pub(crate) fn start_call(
        self: &Arc<Self>,
        tool: &str,
        arguments: Map<String, Value>,
        (timeout, meta): (Option<Duration>, Option<Map<String, Value>>),
        closed: &CancellationToken,
        done: Done,
    ) -> Result<DirectCall, (Done, Map<String, Value>)> {
        let Some(direct) = self.direct().cloned() else {
            return Err((done, arguments));
        };
        let started = Instant::now();
        if closed.is_cancelled() {
            done(CallOutcome::failure(
                "not connected (source closed)",
                started,
            ));
            return Ok(DirectCall { direct, id: 0 });
        }
        let timeout = timeout.unwrap_or(self.timeout);
        let server = self.clone();
        let closed = closed.clone();
        let runtime = direct.runtime().clone();
        let id = direct.new_id();
        direct.send(
            id,
            "tools/call",
            call_params(tool, arguments, meta),
            timeout,
            Box::new(move |answer| match answer {
                Ok(raw) => done(map_raw_result(raw, started)),
                Err(failure) => {
                    let why = NoResult::from(failure);
                    let error_type = why.error_type();
                    match why.words(&closed) {
                        Some(words) => done(CallOutcome::failure(words, started).typed(error_type)),
                        // Why the connection ended takes waiting for the server's exit: the rare
                        // case that gets a task.
                        None => {
                            runtime.spawn(async move {
                                let reason = server.describe_closed(&closed).await;
                                done(CallOutcome::failure(reason, started).typed(error_type));
                            });
                        }
                    }
                }
            }),
        );
        Ok(DirectCall { direct, id })
    }

    /// [`LiveServer::call`] on the direct path, from async code. `front` is registered under
    /// the request's progress token (its id) for the call's duration.
    pub(super) async fn call_direct(
        &self,
        direct: &Direct,
        (tool, arguments, meta): super::Call<'_>,
        timeout: Duration,
        (cancel, closed): (&CancellationToken, &CancellationToken),
        front: Option<Arc<dyn Front>>,
        started: Instant,
    ) -> Result<CallOutcome, NoResult> {
        let id = direct.new_id();
        let token = ProgressToken(NumberOrString::Number(id as i64));
        // Progress reaches the front from the reader, in order and before the answer (through
        // rmcp's notification tasks it could come after the call ended); the rest of what the
        // server sends during the call reaches it through the relays.
        let heard: Option<Listener> = front.clone().map(|front| {
            Arc::new(move |params: &RawValue| {
                if let Ok(param) = serde_json::from_str(params.get()) {
                    front.progress(param);
                }
            }) as Listener
        });
        let _relayed = front.map(|front| {
            self.client
                .relays
                .register(token, Arc::new(NoProgress(front)))
        });
        let (answered, answer) = tokio::sync::oneshot::channel();
        direct.send_heard(
            id,
            "tools/call",
            call_params(tool, arguments, meta),
            timeout,
            Box::new(move |answer| {
                let _ = answered.send(answer.map(RawValue::to_owned));
            }),
            heard,
        );
        let _forget = direct.forget_on_drop(id);
        let answer = tokio::select! {
            answer = answer => answer.unwrap_or(Err(Failure::Closed)),
            _ = cancel.cancelled() => {
                direct.abort(id, "aborted by the caller");
                return Err(NoResult::Aborted);
            }
            _ = closed.cancelled() => return Err(NoResult::SourceClosed),
        };
        // The server's notifications go on to rmcp, which hands each to a task of its own,
        // queued before the answer that followed: one yield lets the last progress reach the
        // front while it is still registered.
        tokio::task::yield_now().await;
        Ok(map_raw_result(&answer?, started))
    }
}

fn call_params(
    tool: &str,
    arguments: Map<String, Value>,
    meta: Option<Map<String, Value>>,
) -> Map<String, Value> {
    let mut params = Map::new();
    params.insert("name".into(), Value::String(tool.to_string()));
    params.insert("arguments".into(), Value::Object(arguments));
    if let Some(meta) = meta {
        params.insert("_meta".into(), Value::Object(meta));
    }
    params
}

/// A front whose progress is heard from the reader ([`Direct::listen`]), not the relays.
struct NoProgress(Arc<dyn Front>);

#[allow(deprecated)] // the Front trait names logging and sampling (SEP-2577).
impl Front for NoProgress {
    fn progress(&self, _: rmcp::model::ProgressNotificationParam) {}

    fn log(&self, param: rmcp::model::LoggingMessageNotificationParam) {
        self.0.log(param)
    }

    fn elicit(
        &self,
        params: rmcp::model::ElicitRequestParams,
    ) -> futures::future::BoxFuture<'static, Option<rmcp::model::ElicitResult>> {
        self.0.elicit(params)
    }

    fn sample(
        &self,
        params: rmcp::model::CreateMessageRequestParams,
    ) -> futures::future::BoxFuture<'static, Option<rmcp::model::CreateMessageResult>> {
        self.0.sample(params)
    }
}
