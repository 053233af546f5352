//! `tools/call` as the handler answers it: search's two tools, the caller's sight, the
//! arguments' check, a parked run resumed, and the call run plainly or as a task of either era.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use rmcp::service::{RequestContext, RoleServer};

use crate::serve::auth::Kind;
use crate::serve::caller::Sight;
use crate::serve::{ToolServer, input, rounds, task_calls};
use crate::tool_result::text_result;

impl ToolServer {
    /// The handler's `tools/call`.
    pub(super) async fn tools_call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let set = self.current();
        let mut request = request;
        // Search is offered only to a caller who may see some tool; to another, its two tools
        // are unknown like any it may not see.
        let searching = self
            .search_mode()
            .filter(|_| crate::serve::search::offered(&set, &Sight::of(&context)));
        if let Some(mode) = searching {
            match request.name.as_ref() {
                crate::serve::search::SEARCH_TOOLS => {
                    let arguments = request.arguments.unwrap_or_default();
                    let sight = Sight::of(&context);
                    let found = crate::serve::search::search(mode, &set, &sight, &arguments);
                    return Ok(CallToolResponse::Complete(found));
                }
                crate::serve::search::CALL_TOOL => match crate::serve::search::unwrap_call(request)
                {
                    Ok(inner) => request = inner,
                    Err(refused) => return Ok(CallToolResponse::Complete(*refused)),
                },
                _ => {}
            }
        }
        // A tool outside the caller's scopes is answered as one that does not exist.
        let seen = Sight::of(&context).sees(Kind::Tool, &request.name);
        let index = *set
            .by_name
            .get(request.name.as_ref())
            .filter(|_| seen)
            .ok_or_else(|| {
                ErrorData::invalid_params(format!("Unknown tool: {}", request.name), None)
            })?;
        let arguments = request.arguments.unwrap_or_default();
        let mut responses = request.input_responses.unwrap_or_default();
        let state = request.request_state.as_deref();
        let kind = rounds::SubjectKind::Tool;
        let (parked, again) = self
            .reopen(
                kind,
                &request.name,
                state,
                &arguments,
                &mut responses,
                &context,
            )
            .await?;
        if let Some(run) = parked {
            return self.drive(run, responses).await;
        }
        let started = std::time::Instant::now();
        let tool = set.tools[index].clone();
        let subject = rounds::Subject {
            kind: rounds::SubjectKind::Tool,
            name: tool.name.clone(),
            source: tool.source.clone(),
        };
        if let Err(problems) = set.check(index, &arguments) {
            // A mismatch is the caller's to fix, so it is a result the model can read; OnCall
            // hears of it as a failed call.
            let why = format!("Invalid arguments for tool {}: {problems}", tool.name);
            return Ok(self.stopped(&subject, started, why, &context));
        }
        // The concurrency caps and the tool's own limit (served over HTTP with `limits`): the
        // places are held by the run, so a task holds them until it ends.
        let mut caller = tool.caller.clone();
        if let Some(limiter) =
            crate::serve::caller::from_front::<Arc<crate::serve::rate::Limiter>>(&context)
                .filter(|limiter| limiter.limits_calls())
        {
            // Each caller by its principal, or without auth by its address.
            let key = match crate::serve::caller::owner_of(&context) {
                Some(owner) => owner,
                None => crate::serve::caller::from_front::<crate::telemetry::PeerAddr>(&context)
                    .map(|peer| peer.0.ip().to_string())
                    .unwrap_or_default(),
            };
            let store = crate::serve::store::of(&context);
            match limiter
                .admit_call_shared(store.as_deref(), &key, &tool.name)
                .await
            {
                Ok(permit) => caller = crate::serve::rate::held(caller, permit),
                Err(refusal) => {
                    crate::telemetry::limit_refused(refusal.limit, Some(&tool.name));
                    let why = format!("Too many calls: {}", refusal.message);
                    return Ok(self.stopped(&subject, started, why, &context));
                }
            }
        }
        // The application's policy, before anything of the call starts (a task included).
        let (arguments, made_with) = match self
            .before_call(&subject, Some(&*tool.caller), &arguments, &context)
            .await
        {
            Ok(None) => (arguments, None),
            Ok(Some(rewritten)) => {
                if let Err(problems) = set.check(index, &rewritten) {
                    let why = format!(
                        "beforeCall hook failed: the arguments it gave do not fit tool {}'s \
                         schema: {problems}",
                        tool.name
                    );
                    return Ok(self.stopped(&subject, started, why, &context));
                }
                (rewritten, Some(arguments))
            }
            Err(stopped) => {
                return Ok(self.stopped(&subject, started, stopped.message(), &context));
            }
        };
        let arguments = (arguments, made_with.as_ref());
        let as_task = match task_calls::support(&set, &tool.name) {
            None => false,
            Some(support) if input::is_modern(&context) => {
                // 2026-07-28: the server decides; a client that declared the extension gets a
                // task, one that did not an ordinary call (or, when the tool needs a task,
                // MissingRequiredClientCapability).
                let declared = task_calls::declared(&context);
                if !declared
                    && support == task_calls::Support::Required
                    && !tool.caller.runs_plainly()
                {
                    return Err(task_calls::tasks_required());
                }
                declared
            }
            Some(support) => {
                // 2025-11-25: a task when the call asks for one, through a front that speaks
                // that era's tasks (see `task_legacy`).
                let front = crate::serve::task_legacy::front_speaks(&context);
                match (front, crate::serve::task_legacy::asked(&context)) {
                    (true, Some(ttl)) => {
                        // A call that cannot be a task never runs.
                        let life = self.shared.tasks.ttl_for(ttl);
                        let context = ToolServer::task_context(context, life);
                        let reserved = match self.reserve_task(ttl, &context, false).await {
                            Ok(reserved) => reserved,
                            Err(why) => {
                                return Ok(CallToolResponse::Complete(text_result(why, true)));
                            }
                        };
                        let run = self.start(subject, caller.clone(), arguments, context.clone());
                        return Ok(CallToolResponse::Complete(
                            match self.run_as_task(run, reserved, &context).await {
                                Ok(task) => {
                                    crate::tool_result::call_result_from_json(serde_json::json!({
                                        "content": [],
                                        "_meta": {
                                            crate::serve::task_legacy::CREATED_META:
                                                crate::serve::task_legacy::task_json(&task),
                                        },
                                    }))
                                }
                                Err(why) => text_result(why, true),
                            },
                        ));
                    }
                    (true, None)
                        if support == task_calls::Support::Required
                            && !tool.caller.runs_plainly() =>
                    {
                        return Err(ErrorData::new(
                            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                            format!(
                                "tool {} requires task-based execution: call it with params.task",
                                tool.name
                            ),
                            None,
                        ));
                    }
                    _ => false,
                }
            }
        };
        if as_task && tool.caller.defers_task() {
            // The run asks what it needs as an ordinary call, then goes on as a task when it
            // says so (`ctx.startTask()`; see `escalate`).
            let mut run = self.start(subject, caller.clone(), arguments, context);
            if let Some(resume) = &again {
                resume.apply(&mut run);
            }
            run.allow_task();
            return self.drive(run, responses).await;
        }
        if as_task {
            let life = self.shared.tasks.ttl_for(None);
            let context = ToolServer::task_context(context, life);
            let reserved = match self.reserve_task(None, &context, false).await {
                Ok(reserved) => reserved,
                Err(why) => return Ok(CallToolResponse::Complete(text_result(why, true))),
            };
            let mut run = self.start(subject, caller.clone(), arguments, context.clone());
            if let Some(resume) = &again {
                resume.apply(&mut run);
            }
            run.answer(&responses);
            return self.answer_with_task(run, reserved, &context).await;
        }
        let mut run = self.start(subject, caller.clone(), arguments, context);
        if let Some(resume) = &again {
            resume.apply(&mut run);
        }
        self.drive(run, responses).await
    }

    /// A call that does not run (`why`), as the tool error the model reads; OnCall hears of
    /// it as a failed call.
    fn stopped(
        &self,
        subject: &rounds::Subject,
        started: std::time::Instant,
        why: String,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let principal = crate::serve::caller::principal_of(context);
        self.record(subject, started, true, principal);
        CallToolResponse::Complete(text_result(why, true))
    }
}
