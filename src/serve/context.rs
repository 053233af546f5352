//! What a running tool call may do towards its client: report progress, log, ask the user
//! (elicitation) and ask the client's model (sampling). Each goes to the client that made the
//! call, and only in the ways that client can take.
#![allow(deprecated)] // logging and sampling are deprecated by SEP-2577 but still served.

use std::sync::{Arc, Mutex};

use rmcp::model::{
    CreateMessageRequestParams, ElicitRequestParams, LoggingLevel, LoggingMessageNotificationParam,
    ProgressNotificationParam,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;

/// The lowest level a handshake-era session asked for with `logging/setLevel` (None: all).
#[derive(Clone, Default)]
pub struct SessionLogLevel(Arc<Mutex<Option<LoggingLevel>>>);

impl SessionLogLevel {
    pub fn set(&self, level: LoggingLevel) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(level);
    }

    fn get(&self) -> Option<LoggingLevel> {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What a running call knows about the request that started it.
#[derive(Clone)]
pub struct CallContext {
    /// rmcp's view of the request: its cancellation token, `_meta` (progress token), the peer.
    pub request: RequestContext<RoleServer>,
    pub log_level: SessionLogLevel,
}

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
    /// Whether the call was made in the 2026-07-28 era (no server-to-client requests).
    fn modern(&self) -> bool {
        self.request
            .protocol_version()
            .is_some_and(|v| v.as_str() >= "2026-07-28")
    }

    /// `notifications/progress` with the client's token; nothing when it asked for no progress.
    pub async fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Result<bool, String> {
        let Some(token) = self.request.meta.get_progress_token() else {
            return Ok(false);
        };
        let mut param = ProgressNotificationParam::new(token, progress);
        param.total = total;
        param.message = message;
        self.request
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
        let wanted = if self.modern() {
            self.request.meta.log_level()
        } else {
            Some(self.log_level.get().unwrap_or(LoggingLevel::Debug))
        };
        if wanted.is_none_or(|wanted| severity(level) < severity(wanted)) {
            return Ok(false);
        }
        let mut param = LoggingMessageNotificationParam::new(level, data);
        param.logger = logger;
        self.request
            .peer
            .notify_logging_message(param)
            .await
            .map(|()| true)
            .map_err(|e| format!("log message could not be sent: {e}"))
    }

    /// `elicitation/create` to the client; resolves to its `ElicitResult` as JSON.
    pub async fn elicit(&self, params: Value) -> Result<Value, String> {
        if self.modern() {
            return Err(
                "elicitation is not available to 2026-07-28 clients: toolnexus does not send input-required results yet"
                    .into(),
            );
        }
        let params: ElicitRequestParams = serde_json::from_value(params)
            .map_err(|e| format!("elicitation request is not valid: {e}"))?;
        if self.request.peer.supported_elicitation_modes().is_empty() {
            return Err("the client did not declare the elicitation capability".into());
        }
        let result = self
            .request
            .peer
            .create_elicitation(params)
            .await
            .map_err(|e| format!("elicitation failed: {e}"))?;
        serde_json::to_value(result).map_err(|e| e.to_string())
    }

    /// `sampling/createMessage` to the client; resolves to its `CreateMessageResult` as JSON.
    pub async fn sample(&self, params: Value) -> Result<Value, String> {
        if self.modern() {
            return Err(
                "sampling is not available to 2026-07-28 clients: toolnexus does not send input-required results yet"
                    .into(),
            );
        }
        let params: CreateMessageRequestParams = serde_json::from_value(params)
            .map_err(|e| format!("sampling request is not valid: {e}"))?;
        let declared = self
            .request
            .peer
            .peer_info()
            .is_some_and(|info| info.capabilities.sampling.is_some());
        if !declared {
            return Err("the client did not declare the sampling capability".into());
        }
        let result = self
            .request
            .peer
            .create_message(params)
            .await
            .map_err(|e| format!("sampling failed: {e}"))?;
        serde_json::to_value(result).map_err(|e| e.to_string())
    }
}

/// A forwarded call's client as the upstream server's messages see it: progress and log
/// messages are sent on in the order they came (one task per call), elicitations asked.
struct Relay {
    ctx: CallContext,
    events: tokio::sync::mpsc::UnboundedSender<Event>,
}

enum Event {
    Progress(ProgressNotificationParam),
    Log(LoggingMessageNotificationParam),
}

impl CallContext {
    /// This call as the front of a call forwarded upstream.
    pub fn relay(&self) -> Arc<dyn crate::connect::relay::Front> {
        let (events, mut queue) = tokio::sync::mpsc::unbounded_channel();
        let ctx = self.clone();
        tokio::spawn(async move {
            while let Some(event) = queue.recv().await {
                let _ = match event {
                    Event::Progress(p) => ctx.progress(p.progress, p.total, p.message).await,
                    Event::Log(p) => {
                        let level = serde_json::to_value(p.level)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_string))
                            .unwrap_or_default();
                        ctx.log(&level, p.data, p.logger).await
                    }
                };
            }
        });
        Arc::new(Relay {
            ctx: self.clone(),
            events,
        })
    }
}

impl crate::connect::relay::Front for Relay {
    fn progress(&self, param: ProgressNotificationParam) {
        let _ = self.events.send(Event::Progress(param));
    }

    fn log(&self, param: LoggingMessageNotificationParam) {
        let _ = self.events.send(Event::Log(param));
    }

    fn elicit(
        &self,
        params: ElicitRequestParams,
    ) -> futures::future::BoxFuture<'static, Option<rmcp::model::ElicitResult>> {
        let ctx = self.ctx.clone();
        Box::pin(async move {
            let params = serde_json::to_value(params).ok()?;
            let result = ctx.elicit(params).await.ok()?;
            serde_json::from_value(result).ok()
        })
    }
}
