//! What a running call sends its client: progress, log messages, and input requests (elicitation
//! and sampling), each the way the call's era takes it.
#![allow(deprecated)] // logging and sampling are deprecated by SEP-2577 but still served.

use std::sync::atomic::Ordering;

use futures::future::BoxFuture;
use rmcp::model::{
    CreateMessageRequestParams, ElicitRequestParams, LoggingLevel, LoggingMessageNotificationParam,
    ProgressNotificationParam,
};
use rmcp::service::{Peer, RoleServer};
use serde_json::Value;

use super::{AskError, CallContext};
use crate::serve::input::{self, InputAsk, InputKind};

fn severity(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

impl CallContext {
    /// `notifications/progress` with the client's token; nothing when it asked for no progress.
    pub async fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Result<bool, String> {
        let request = self.request();
        let Some(token) = request.meta.get_progress_token() else {
            return Ok(false);
        };
        let mut param = ProgressNotificationParam::new(token, progress);
        param.total = total;
        param.message = message;
        request
            .peer
            .notify_progress(param)
            .await
            .map(|()| true)
            .map_err(|e| format!("progress could not be sent: {e}"))
    }

    /// `notifications/message`, when the client wants that level: per request (`_meta` log
    /// level) in the 2026-07-28 era, which sends nothing without one; per session
    /// (`logging/setLevel`, everything until then) in the handshake era.
    pub async fn log(
        &self,
        level: &str,
        data: Value,
        logger: Option<String>,
    ) -> Result<bool, String> {
        let level: LoggingLevel = serde_json::from_value(Value::String(level.to_string()))
            .map_err(|_| {
                format!(
                    "log level {level:?} is not one of debug, info, notice, warning, error, critical, alert, emergency"
                )
            })?;
        let request = self.request();
        let wanted = if self.modern() {
            request.meta.log_level()
        } else {
            Some(self.log_level.get().unwrap_or(LoggingLevel::Debug))
        };
        if wanted.is_none_or(|wanted| severity(level) < severity(wanted)) {
            return Ok(false);
        }
        let mut param = LoggingMessageNotificationParam::new(level, data);
        param.logger = logger;
        request
            .peer
            .notify_logging_message(param)
            .await
            .map(|()| true)
            .map_err(|e| format!("log message could not be sent: {e}"))
    }

    /// `elicitation/create`; resolves to the client's `ElicitResult` as JSON.
    pub(crate) async fn elicit(&self, params: Value) -> Result<Value, AskError> {
        self.ask_one(InputKind::Elicit, params).await
    }

    /// `sampling/createMessage`; resolves to the client's `CreateMessageResult` as JSON.
    pub(crate) async fn sample(&self, params: Value) -> Result<Value, AskError> {
        self.ask_one(InputKind::Sample, params).await
    }

    async fn ask_one(&self, kind: InputKind, params: Value) -> Result<Value, AskError> {
        let ask = InputAsk {
            kind,
            params,
            key: None,
        };
        self.ask(vec![ask])
            .await
            .pop()
            .unwrap_or_else(|| Err(AskError::Failed("no answer".into())))
    }

    /// Asks the client for everything in `asks` at once, each answered on its own: in the
    /// handshake era as requests on the client's stream, in the 2026-07-28 era as one
    /// input-required result (the call's retry brings the answers).
    pub async fn ask(&self, asks: Vec<InputAsk>) -> Vec<Result<Value, AskError>> {
        let request = self.request();
        let capabilities = request.client_capabilities().unwrap_or_default();
        let mut answers: Vec<BoxFuture<'static, Result<Value, AskError>>> = Vec::new();
        let mut batch = Vec::new();
        for ask in asks {
            if !ask.kind.declared(&capabilities) {
                *self.refused.lock().unwrap_or_else(|e| e.into_inner()) = Some(ask.kind);
                let why = format!(
                    "the client did not declare the {} capability",
                    ask.kind.capability()
                );
                answers.push(Box::pin(futures::future::ready(Err(AskError::Failed(why)))));
                continue;
            }
            if let Err(why) = input::check_params(ask.kind, &ask.params) {
                answers.push(Box::pin(futures::future::ready(Err(AskError::Failed(why)))));
                continue;
            }
            match &self.rounds {
                None => {
                    // Portable sessions (serving with a state key): the ask names its call,
                    // so rmcp sends it on the call's own stream, which reaches the client
                    // whichever replica answers the call.
                    let origin = crate::serve::seal::key_of(&request).map(|_| request.id.clone());
                    answers.push(Box::pin(futures::FutureExt::map(
                        ask_peer(request.peer.clone(), ask, origin),
                        |r| r.map_err(AskError::Failed),
                    )))
                }
                Some(_) => {
                    let n = self.asked.fetch_add(1, Ordering::Relaxed) + 1;
                    let key = ask
                        .key
                        .unwrap_or_else(|| format!("{}-{n}", ask.kind.capability()));
                    let (pending, answer) = input::Pending::new(key, ask.kind, ask.params);
                    batch.push(pending);
                    answers.push(Box::pin(async move {
                        answer.await.map_err(|_| AskError::CallEnded)
                    }));
                }
            }
        }
        if let (Some(rounds), false) = (&self.rounds, batch.is_empty()) {
            let _ = rounds.send(batch);
        }
        futures::future::join_all(answers).await
    }
}

/// A handshake-era input request, sent to the client as a request of its own.
async fn ask_peer(
    peer: Peer<RoleServer>,
    ask: InputAsk,
    origin: Option<rmcp::model::RequestId>,
) -> Result<Value, String> {
    if let Some(origin) = origin {
        return ask_on_call_stream(peer, ask, origin).await;
    }
    let failed = |e: rmcp::ServiceError| format!("{} failed: {e}", ask.kind.capability());
    let answer = match ask.kind {
        InputKind::Elicit => {
            let params: ElicitRequestParams =
                serde_json::from_value(ask.params).map_err(|e| e.to_string())?;
            serde_json::to_value(peer.create_elicitation(params).await.map_err(failed)?)
        }
        InputKind::Sample => {
            let params: CreateMessageRequestParams =
                serde_json::from_value(ask.params).map_err(|e| e.to_string())?;
            serde_json::to_value(peer.create_message(params).await.map_err(failed)?)
        }
        InputKind::Roots => serde_json::to_value(peer.list_roots().await.map_err(failed)?),
    };
    answer.map_err(|e| e.to_string())
}

/// A handshake-era input request marked as asked by the call `origin` (rmcp's typed methods
/// would send it unmarked from the call's task, and rmcp would put it on the GET stream).
async fn ask_on_call_stream(
    peer: Peer<RoleServer>,
    ask: InputAsk,
    origin: rmcp::model::RequestId,
) -> Result<Value, String> {
    use rmcp::model::{ClientResult, GetExtensions, Request, RequestNoParam, ServerRequest};
    let failed = |e: rmcp::ServiceError| format!("{} failed: {e}", ask.kind.capability());
    let mut request = match ask.kind {
        InputKind::Elicit => {
            let params: ElicitRequestParams =
                serde_json::from_value(ask.params).map_err(|e| e.to_string())?;
            ServerRequest::ElicitRequest(Request::new(params))
        }
        InputKind::Sample => {
            let params: CreateMessageRequestParams =
                serde_json::from_value(ask.params).map_err(|e| e.to_string())?;
            params.validate()?;
            ServerRequest::CreateMessageRequest(Request::new(params))
        }
        InputKind::Roots => ServerRequest::ListRootsRequest(RequestNoParam {
            method: Default::default(),
            extensions: Default::default(),
        }),
    };
    request
        .extensions_mut()
        .insert(rmcp::service::OriginatingRequestId(origin));
    // Sent from a task of its own: rmcp marks a request sent inside one of its handlers as
    // that handler's (a task-local), over the marker set here, and a gateway's relay asks from
    // inside the upstream client's handler, whose request the front session does not know.
    // Aborted when the call ends (dropped) before the client answers.
    let mut task =
        crate::serve::abort::AbortOnDrop(tokio::spawn(
            async move { peer.send_request(request).await },
        ));
    let sent = (&mut task.0)
        .await
        .map_err(|_| format!("{} failed: the request was dropped", ask.kind.capability()))?;
    let answer = match sent.map_err(failed)? {
        ClientResult::ElicitResult(result) => serde_json::to_value(result),
        ClientResult::CreateMessageResult(result) => serde_json::to_value(result),
        ClientResult::ListRootsResult(result) => serde_json::to_value(result),
        _ => return Err(failed(rmcp::ServiceError::UnexpectedResponse)),
    };
    answer.map_err(|e| e.to_string())
}
