//! How a served run is driven: started on its own task, run until it finishes, is cancelled
//! or waits on input (then parked), and resumed by its retry; a tool call's run is then
//! answered as a `tools/call` and reported to `OnCall`.
#![allow(deprecated)] // sampling and roots are deprecated by SEP-2577 but still served.

use std::sync::Arc;
use std::time::Instant;

use rmcp::ErrorData;
use rmcp::model::{CallToolResponse, CallToolResult, InputRequiredResult, InputResponses};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Map, Value, json};

use super::super::ToolServer;
use super::super::abort::AbortOnDrop;
use super::super::context::CallContext;
use super::super::input;
use super::super::tool::{CallRecord, ToolCaller};
use super::{Running, Sealed, Subject, SubjectKind, call_digest};
use crate::serve::seal;
use crate::tool_result::{call_result_from_json as to_call_result, text_result};

/// What a 2026-07-28 retry continues.
pub(crate) enum Retry {
    /// The run parked on this replica, resumed with the retry's answers.
    Parked(Box<Running>),
    /// No such run here (another replica parked it, or it ended): the call is run again from
    /// the start with every answer given so far.
    Again(Resume),
}

/// How a call run again continues the one a sealed state was given for.
pub(crate) struct Resume {
    /// Every answer given so far, the retry's included.
    pub(crate) answers: InputResponses,
    round: u32,
    upstream: Option<Value>,
}

impl Resume {
    /// The new run of the call carries on the old one's round count and upstream round.
    pub(crate) fn apply(&self, run: &mut Running) {
        run.round = self.round;
        run.ctx.resume_from(self.upstream.clone());
    }
}

const NOT_ISSUED: &str =
    "requestState is not one this server issued, or its call waited too long and ended";

/// How one drive of a run ended.
pub(crate) enum Driven {
    /// The run's own value.
    Done(Value),
    Panicked,
    Cancelled,
    /// Parked until the client retries with what it asks for.
    InputRequired(InputRequiredResult),
    /// It would wait on input but no slot was free (the reason).
    Full(String),
    /// The run asked to go on as a task (`ctx.startTask()`): handed back, with where to tell
    /// it whether it became one.
    Escalate(Box<Running>, super::super::context::Escalation),
}

/// How a served call runs: started on its own task, driven until it finishes or waits on input.
impl ToolServer {
    /// Starts a run on its own task, so a panicking caller (synchronously or while polled)
    /// costs one result, not the connection; dropping the guard aborts it. `made_with` is
    /// what the client asked with, when a hook rewrote it into `arguments` (its retry repeats
    /// what it asked).
    pub(in crate::serve) fn start(
        &self,
        subject: Subject,
        caller: Arc<dyn ToolCaller>,
        (arguments, made_with): (Map<String, Value>, Option<&Map<String, Value>>),
        request: RequestContext<RoleServer>,
    ) -> Running {
        let digest = (input::is_modern(&request) && seal::key_of(&request).is_some())
            .then(|| call_digest(subject.kind, &subject.name, made_with.unwrap_or(&arguments)));
        let caller = self.after_call(&subject, caller, &request);
        let caller = self.cut_results(&subject, caller);
        let (ctx, asks) = CallContext::new(request, self.log_level.clone());
        let run_ctx = ctx.clone();
        let task = AbortOnDrop(tokio::spawn(async move {
            caller.call(arguments, run_ctx).await
        }));
        Running {
            subject,
            task,
            asks,
            ctx,
            pending: Vec::new(),
            started: Instant::now(),
            answered: Map::new(),
            round: 0,
            digest,
            escalate: None,
        }
    }

    /// Runs a run until it finishes, the client cancels it, or (2026-07-28) it waits on input
    /// the client has to give: then it is parked and answered as input-required.
    pub(in crate::serve) async fn drive_raw(
        &self,
        run: &mut Option<Running>,
        responses: &InputResponses,
    ) -> Driven {
        let Some(running) = run.as_mut() else {
            return Driven::Cancelled;
        };
        loop {
            running.drain_asks(responses);
            if !running.pending.is_empty() {
                let Some(parked) = run.take() else {
                    return Driven::Cancelled;
                };
                return match self.shared.parking.park(parked) {
                    Ok(input_required) => Driven::InputRequired(input_required),
                    Err(why) => Driven::Full(why),
                };
            }
            let cancelled = running.ctx.request().ct.clone();
            let asks = async {
                match running.asks.as_mut() {
                    Some(asks) => asks.recv().await,
                    None => std::future::pending().await,
                }
            };
            let escalate = async {
                match running.escalate.as_mut() {
                    Some(escalate) => escalate.recv().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                joined = &mut running.task.0 => {
                    return match joined {
                        Ok(value) => Driven::Done(value),
                        Err(_) => Driven::Panicked,
                    };
                }
                Some(asks) = asks => running.asked(asks, responses),
                Some(reply) = escalate => {
                    let Some(escalated) = run.take() else {
                        return Driven::Cancelled;
                    };
                    return Driven::Escalate(Box::new(escalated), reply);
                }
                _ = cancelled.cancelled() => return Driven::Cancelled,
            }
        }
    }

    /// A tool call's run, driven to its `tools/call` answer.
    pub(in crate::serve) async fn drive(
        &self,
        run: Running,
        responses: InputResponses,
    ) -> Result<CallToolResponse, ErrorData> {
        let (subject, ctx, started) = (run.subject.clone(), run.ctx.clone(), run.started);
        let mut run = Some(run);
        let result = match self.drive_raw(&mut run, &responses).await {
            Driven::InputRequired(input_required) => {
                return Ok(CallToolResponse::InputRequired(input_required));
            }
            Driven::Full(why) => return Ok(CallToolResponse::Complete(text_result(why, true))),
            Driven::Escalate(run, reply) => return Ok(self.escalate(*run, reply).await),
            Driven::Done(value) => to_call_result(value),
            Driven::Panicked => text_result("tool panicked", true),
            Driven::Cancelled => text_result("cancelled by the client", true),
        };
        self.finish(&subject, &ctx, started, result)
    }

    /// A finished call: reported to `OnCall`, and in the 2026-07-28 era a run that failed
    /// after being refused a capability is the client's MissingRequiredClientCapability.
    fn finish(
        &self,
        subject: &Subject,
        ctx: &CallContext,
        started: Instant,
        result: CallToolResult,
    ) -> Result<CallToolResponse, ErrorData> {
        let is_error = result.is_error.unwrap_or(false);
        self.record(subject, started, is_error, ctx.principal());
        if is_error && let Some(refusal) = refused_capability(ctx) {
            return Err(refusal);
        }
        Ok(CallToolResponse::Complete(result))
    }

    /// Tells `OnCall` of a finished tool call.
    pub(in crate::serve) fn record(
        &self,
        subject: &Subject,
        started: Instant,
        is_error: bool,
        principal: Option<Arc<crate::serve::auth::Principal>>,
    ) {
        if let Some(on_call) = &self.shared.on_call {
            on_call(CallRecord {
                name: subject.name.clone(),
                source: subject.source.clone(),
                ms: started.elapsed().as_secs_f64() * 1000.0,
                is_error,
                principal,
            });
        }
    }

    /// A 2026-07-28 retry of a call of `kind` `name` made with `arguments`: the run parked
    /// under `state` (resumed with the client's answers), or, with a state key, the answers to
    /// run it again with when this replica has no such run.
    pub(in crate::serve) async fn retry(
        &self,
        kind: SubjectKind,
        name: &str,
        state: &str,
        arguments: &Map<String, Value>,
        responses: &InputResponses,
        request: &RequestContext<RoleServer>,
    ) -> Result<Retry, ErrorData> {
        // A retry from another principal finds no run: the state is not theirs to resume.
        let owner = crate::serve::caller::owner_of(request);
        let refused = |why: String| Err(ErrorData::invalid_params(why, None));
        let Some(key) = seal::key_of(request) else {
            return match self
                .shared
                .parking
                .take(state, kind, name, owner.as_deref())
            {
                Ok(run) => Ok(Retry::Parked(Box::new(
                    self.resumed(run, responses, request),
                ))),
                Err(None) => refused(NOT_ISSUED.into()),
                Err(Some(other)) => refused(format!("requestState belongs to {other}")),
            };
        };
        let Some(sealed) = Sealed::open(&key, state) else {
            return refused(NOT_ISSUED.into());
        };
        if sealed.owner != owner.map(|o| seal::digest(o.as_bytes())) {
            return refused(NOT_ISSUED.into());
        }
        if sealed.kind != kind || sealed.name != name {
            return refused(format!(
                "requestState belongs to {} \"{}\"",
                sealed.kind.call_of(),
                sealed.name
            ));
        }
        if sealed.expired() {
            return refused("requestState has expired: make the call again".into());
        }
        if sealed.args != call_digest(kind, name, arguments) {
            return refused(
                "requestState belongs to a call with other arguments: a retry must repeat the \
                 call's arguments"
                    .into(),
            );
        }
        // A state is retried once: a replay (its last retry sent again, say) would otherwise
        // run the call again from its answers, steps after its last question included.
        let replayed = || {
            refused(
                "requestState was already retried: its call went on from there (each state is \
                 answered once); make the call again"
                    .into(),
            )
        };
        if !self.shared.parking.spend(&sealed.handle, sealed.expires) {
            return replayed();
        }
        // With a shared store, once per fleet: another replica may have had its retry.
        if let Some(store) = crate::serve::store::of(request) {
            match store.mark_spent(&sealed.handle, sealed.expires).await {
                Ok(true) => {}
                Ok(false) => return replayed(),
                Err(e) => {
                    // Not gone on: the same state may be retried once the store answers.
                    self.shared.parking.unspend(&sealed.handle);
                    return Err(ErrorData::internal_error(
                        format!(
                            "requestState could not be checked against the state store ({e}); \
                             retry with the same requestState"
                        ),
                        None,
                    ));
                }
            }
        }
        let owner = crate::serve::caller::owner_of(request);
        match self
            .shared
            .parking
            .take(&sealed.handle, kind, name, owner.as_deref())
        {
            Ok(run) => Ok(Retry::Parked(Box::new(
                self.resumed(run, responses, request),
            ))),
            Err(_) => {
                let Some(mut answers) = sealed.answers else {
                    return refused(
                        "requestState's earlier answers were too large to carry to another \
                         replica, and this one does not hold the call: make the call again"
                            .into(),
                    );
                };
                for (key, response) in responses {
                    answers.insert(key.clone(), response.clone());
                }
                Ok(Retry::Again(Resume {
                    answers: answers.into_iter().collect(),
                    round: sealed.round,
                    upstream: sealed.upstream,
                }))
            }
        }
    }

    /// What a call that may be a retry (`state`) continues: the run parked here (resumed), or
    /// nothing (a first call, or a retry to run again: then `responses` becomes every answer
    /// given so far, and the [`Resume`] is applied to the new run).
    pub(in crate::serve) async fn reopen(
        &self,
        kind: SubjectKind,
        name: &str,
        state: Option<&str>,
        arguments: &Map<String, Value>,
        responses: &mut InputResponses,
        request: &RequestContext<RoleServer>,
    ) -> Result<(Option<Running>, Option<Resume>), ErrorData> {
        let Some(state) = state else {
            return Ok((None, None));
        };
        match self
            .retry(kind, name, state, arguments, responses, request)
            .await?
        {
            Retry::Parked(run) => Ok((Some(*run), None)),
            Retry::Again(resume) => {
                *responses = resume.answers.clone();
                Ok((None, Some(resume)))
            }
        }
    }

    /// A parked run that its retry resumes: it reports to the retry's response from now on.
    fn resumed(
        &self,
        mut run: Running,
        responses: &InputResponses,
        request: &RequestContext<RoleServer>,
    ) -> Running {
        run.ctx.follow(request.clone());
        run.answer(responses);
        run
    }
}

/// In the 2026-07-28 era, a run that failed after being refused a capability is the client's
/// MissingRequiredClientCapability (-32021).
pub(in crate::serve) fn refused_capability(ctx: &CallContext) -> Option<ErrorData> {
    let request = ctx.request();
    let kind = ctx.refused()?;
    if !input::is_modern(&request) {
        return None;
    }
    let mut required = Map::new();
    required.insert(kind.capability().into(), json!({}));
    let required = serde_json::from_value(Value::Object(required)).unwrap_or_default();
    Some(ErrorData::missing_required_client_capability(required))
}
