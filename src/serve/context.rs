//! What a running tool call may do towards its client: report progress, log, ask the user
//! (elicitation) and ask the client's model (sampling). Each goes to the client that made the
//! call, and only in the ways that client can take.
#![allow(deprecated)] // logging and sampling are deprecated by SEP-2577 but still served.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use rmcp::model::{
    CreateMessageRequestParams, ElicitRequestParams, LoggingLevel, LoggingMessageNotificationParam,
    ProgressNotificationParam,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use serde_json::Value;
use tokio::sync::mpsc;

use super::input;
pub use super::input::{InputAsk, InputKind};

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

/// What a running call knows about the request that started it (in the 2026-07-28 era, about
/// the latest retry of it), and where its input requests go.
#[derive(Clone)]
pub struct CallContext {
    /// rmcp's view of the request: its cancellation token, `_meta` (progress token), the peer.
    request: Arc<Mutex<RequestContext<RoleServer>>>,
    log_level: SessionLogLevel,
    /// 2026-07-28: input requests go out as input-required results, through the call's driver.
    rounds: Option<mpsc::UnboundedSender<Vec<input::Pending>>>,
    /// An input request refused because the client lacks its capability.
    refused: Arc<Mutex<Option<InputKind>>>,
    asked: Arc<AtomicU64>,
    /// A gateway call's upstream round, for a replica that runs the call again (see
    /// [`CallContext::checkpoint`]).
    checkpoint: Arc<Mutex<Option<Value>>>,
    /// Why the run failed rather than answered (a throw, an upstream's protocol error): a
    /// task of it ends `failed`, not `completed`.
    failure: Arc<Mutex<Option<String>>>,
    /// A run that may become a task partway (`ctx.startTask()`, see [`CallContext::start_task`]):
    /// where it asks its driver to hand it to a task, with where the driver says whether it did.
    escalate: Arc<Mutex<Option<mpsc::UnboundedSender<Escalation>>>>,
}

/// Why an input request failed when its run was dropped before the client answered (the call
/// was cancelled, expired or its server closed): the run is being aborted.
/// Why a request a run made of its client (an elicitation, a sampling, the roots) got no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AskError {
    /// The call ended (it finished or was aborted) before the client answered.
    #[error("the call ended before the client answered")]
    CallEnded,
    /// Refused here or failed on the way, in words.
    #[error("{0}")]
    Failed(String),
}

impl From<String> for AskError {
    fn from(words: String) -> Self {
        Self::Failed(words)
    }
}

/// A run's ask to become a task: answered `true` once its call was answered with the task.
pub type Escalation = tokio::sync::oneshot::Sender<bool>;

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
    /// The context of a new call; in the 2026-07-28 era also the receiver of its input requests.
    pub fn new(
        request: RequestContext<RoleServer>,
        log_level: SessionLogLevel,
    ) -> (Self, Option<mpsc::UnboundedReceiver<Vec<input::Pending>>>) {
        let (rounds, asks) = if input::is_modern(&request) {
            let (tx, rx) = mpsc::unbounded_channel();
            (Some(tx), Some(rx))
        } else {
            (None, None)
        };
        let ctx = Self {
            request: Arc::new(Mutex::new(request)),
            log_level,
            rounds,
            refused: Arc::default(),
            asked: Arc::default(),
            checkpoint: Arc::default(),
            failure: Arc::default(),
            escalate: Arc::default(),
        };
        (ctx, asks)
    }

    /// The request the call answers now (a 2026-07-28 retry replaces the one before).
    /// What `read` makes of the request's extension of type `T`, when it has one.
    pub(super) fn extension<T: Send + Sync + 'static, R>(
        &self,
        read: impl FnOnce(&T) -> R,
    ) -> Option<R> {
        let request = self.request.lock().unwrap_or_else(|e| e.into_inner());
        request.extensions.get::<T>().map(read)
    }

    pub fn request(&self) -> RequestContext<RoleServer> {
        self.request
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The client retried the call: progress and logs go to the retry's response from now on.
    pub fn follow(&self, request: RequestContext<RoleServer>) {
        *self.request.lock().unwrap_or_else(|e| e.into_inner()) = request;
    }

    /// The principal the call's request was let in as (serving with auth), if any.
    pub fn principal(&self) -> Option<Arc<super::auth::Principal>> {
        super::caller::principal_of(&self.request.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Who the call belongs to (a retry must come from the same principal).
    pub fn owner(&self) -> Option<String> {
        super::caller::owner_of(&self.request.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Where the call stands upstream (a forwarded call whose upstream asked for input): the
    /// upstream's input-required result and how many questions this call had asked by then.
    /// Sealed into the call's `requestState`, so a replica that runs the call again resumes
    /// the upstream's round instead of calling it afresh.
    pub fn checkpoint(&self) -> Option<Value> {
        self.checkpoint
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// A call run again from a sealed state starts where the state says the upstream was.
    pub fn resume_from(&self, checkpoint: Option<Value>) {
        *self.checkpoint.lock().unwrap_or_else(|e| e.into_inner()) = checkpoint;
    }

    /// The run failed rather than answered (its result is then an error result about it).
    pub fn fail(&self, why: impl Into<String>) {
        *self.failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(why.into());
    }

    /// Why the run failed, when it did (see [`CallContext::fail`]).
    pub fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Lets the run become a task partway: [`CallContext::start_task`] asks the driver holding
    /// the receiver from now on.
    pub fn allow_task(&self) -> mpsc::UnboundedReceiver<Escalation> {
        let (tx, rx) = mpsc::unbounded_channel();
        *self.escalate.lock().unwrap_or_else(|e| e.into_inner()) = Some(tx);
        rx
    }

    /// The run may no longer become a task (it is one now, or its call ended).
    pub fn forbid_task(&self) {
        *self.escalate.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// The run asks to go on as a task (`ctx.startTask()`): its call is answered with a new
    /// task and the run continues inside it (what it asks from then on is the task's input).
    /// `true` once that happened; `false` when the call cannot become one (it already is a
    /// task, the tool does not defer its task, the client did not declare tasks, the
    /// handshake era's call was not task-augmented): the run simply goes on in its call.
    pub async fn start_task(&self) -> bool {
        let (reply, answer) = tokio::sync::oneshot::channel();
        let sent = match &*self.escalate.lock().unwrap_or_else(|e| e.into_inner()) {
            Some(escalate) => escalate.send(reply).is_ok(),
            None => false,
        };
        sent && answer.await.unwrap_or(false)
    }

    /// The capability an input request of this call was refused for, if any.
    pub fn refused(&self) -> Option<InputKind> {
        *self.refused.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn modern(&self) -> bool {
        self.rounds.is_some()
    }

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
    pub async fn elicit(&self, params: Value) -> Result<Value, AskError> {
        self.ask_one(InputKind::Elicit, params).await
    }

    /// `sampling/createMessage`; resolves to the client's `CreateMessageResult` as JSON.
    pub async fn sample(&self, params: Value) -> Result<Value, AskError> {
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
                    let origin = super::seal::key_of(&request).map(|_| request.id.clone());
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
        super::abort::AbortOnDrop(tokio::spawn(
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
    /// This call as the front of a call forwarded upstream, and the task that sends on what
    /// the upstream reported: it ends once the front is dropped and everything was sent.
    pub fn relay(
        &self,
    ) -> (
        Arc<dyn crate::connect::relay::Front>,
        tokio::task::JoinHandle<()>,
    ) {
        let (events, mut queue) = tokio::sync::mpsc::unbounded_channel();
        let ctx = self.clone();
        let sending = tokio::spawn(async move {
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
        let front = Arc::new(Relay {
            ctx: self.clone(),
            events,
        });
        (front, sending)
    }
}

impl crate::connect::relay::Front for Relay {
    fn meta(&self) -> Option<serde_json::Map<String, Value>> {
        super::caller::trace_meta(&self.ctx.request())
    }

    fn resume_point(&self) -> Option<rmcp::model::InputRequiredResult> {
        let point = self.ctx.checkpoint()?;
        let result = serde_json::from_value(point.get("result")?.clone()).ok()?;
        // The questions asked from here are numbered as they were on the replica that asked.
        let asked = point.get("asked").and_then(Value::as_u64).unwrap_or(0);
        self.ctx.asked.store(asked, Ordering::Relaxed);
        Some(result)
    }

    fn reached(&self, result: &rmcp::model::InputRequiredResult) {
        // Only a state that will be sealed carries the upstream's round.
        if !self.ctx.modern() || super::seal::key_of(&self.ctx.request()).is_none() {
            return;
        }
        let asked = self.ctx.asked.load(Ordering::Relaxed);
        let point = serde_json::json!({ "result": result, "asked": asked });
        self.ctx.resume_from(Some(point));
    }

    fn restart(&self) {
        self.ctx.asked.store(0, Ordering::Relaxed);
        self.ctx.resume_from(None);
    }

    fn progress(&self, param: ProgressNotificationParam) {
        let _ = self.events.send(Event::Progress(param));
    }

    fn log(&self, param: LoggingMessageNotificationParam) {
        let _ = self.events.send(Event::Log(param));
    }

    /// The upstream task's status message becomes this call's task's (when it runs as one).
    fn status(&self, update: &crate::connect::relay::TaskUpdate) {
        if let Some(message) = &update.status_message {
            self.ctx.task_status(message);
        }
    }

    fn elicit(
        &self,
        params: ElicitRequestParams,
    ) -> BoxFuture<'static, Option<rmcp::model::ElicitResult>> {
        let ctx = self.ctx.clone();
        Box::pin(async move {
            let params = serde_json::to_value(params).ok()?;
            let result = ctx.elicit(params).await.ok()?;
            serde_json::from_value(result).ok()
        })
    }

    fn sample(
        &self,
        params: CreateMessageRequestParams,
    ) -> BoxFuture<'static, Option<rmcp::model::CreateMessageResult>> {
        let ctx = self.ctx.clone();
        Box::pin(async move {
            let params = serde_json::to_value(params).ok()?;
            let result = ctx.sample(params).await.ok()?;
            serde_json::from_value(result).ok()
        })
    }
}
