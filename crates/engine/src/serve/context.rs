//! What a running tool call may do towards its client: report progress, log, ask the user
//! (elicitation) and ask the client's model (sampling). Each goes to the client that made the
//! call, and only in the ways that client can take.
#![allow(deprecated)] // logging and sampling are deprecated by SEP-2577 but still served.

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use rmcp::model::LoggingLevel;
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;
use tokio::sync::mpsc;

use super::input;
pub use super::input::{InputAsk, InputKind};

mod messages;
mod relay;

/// The lowest level a handshake-era session asked for with `logging/setLevel` (None: all).
#[derive(Clone, Default)]
pub struct SessionLogLevel(Arc<Mutex<Option<LoggingLevel>>>);

impl SessionLogLevel {
    pub(crate) fn set(&self, level: LoggingLevel) {
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
pub(crate) type Escalation = tokio::sync::oneshot::Sender<bool>;

impl CallContext {
    /// The context of a new call; in the 2026-07-28 era also the receiver of its input requests.
    pub(crate) fn new(
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

    pub(crate) fn request(&self) -> RequestContext<RoleServer> {
        self.request
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The client retried the call: progress and logs go to the retry's response from now on.
    pub(crate) fn follow(&self, request: RequestContext<RoleServer>) {
        *self.request.lock().unwrap_or_else(|e| e.into_inner()) = request;
    }

    /// The principal the call's request was let in as (serving with auth), if any.
    pub fn principal(&self) -> Option<Arc<super::auth::Principal>> {
        super::caller::principal_of(&self.request.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The W3C trace context the call's request came with (`traceparent`, and `tracestate`
    /// when valid), from its `_meta` or else its HTTP headers; None without a valid one.
    pub fn trace_meta(&self) -> Option<serde_json::Map<String, Value>> {
        super::caller::trace_meta(&self.request.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The call's SERVER span, when telemetry exports spans: the parent of what it sends
    /// upstream.
    pub(crate) fn span_cx(&self) -> Option<opentelemetry::Context> {
        self.extension(|span: &crate::telemetry::SpanCx| span.0.clone())
    }

    /// Whether the call runs in a SERVER span of the engine's (telemetry exports spans), which
    /// [`CallContext::trace_meta`] then names.
    pub fn spanned(&self) -> bool {
        self.span_cx().is_some()
    }

    /// Who the call belongs to (a retry must come from the same principal).
    pub(crate) fn owner(&self) -> Option<String> {
        super::caller::owner_of(&self.request.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Where the call stands upstream (a forwarded call whose upstream asked for input): the
    /// upstream's input-required result and how many questions this call had asked by then.
    /// Sealed into the call's `requestState`, so a replica that runs the call again resumes
    /// the upstream's round instead of calling it afresh.
    pub(crate) fn checkpoint(&self) -> Option<Value> {
        self.checkpoint
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// A call run again from a sealed state starts where the state says the upstream was.
    pub(crate) fn resume_from(&self, checkpoint: Option<Value>) {
        *self.checkpoint.lock().unwrap_or_else(|e| e.into_inner()) = checkpoint;
    }

    /// The run failed rather than answered (its result is then an error result about it).
    pub fn fail(&self, why: impl Into<String>) {
        *self.failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(why.into());
    }

    /// Why the run failed, when it did (see [`CallContext::fail`]).
    pub(crate) fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Lets the run become a task partway: [`CallContext::start_task`] asks the driver holding
    /// the receiver from now on.
    pub(crate) fn allow_task(&self) -> mpsc::UnboundedReceiver<Escalation> {
        let (tx, rx) = mpsc::unbounded_channel();
        *self.escalate.lock().unwrap_or_else(|e| e.into_inner()) = Some(tx);
        rx
    }

    /// The run may no longer become a task (it is one now, or its call ended).
    pub(crate) fn forbid_task(&self) {
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
    pub(crate) fn refused(&self) -> Option<InputKind> {
        *self.refused.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn modern(&self) -> bool {
        self.rounds.is_some()
    }
}
