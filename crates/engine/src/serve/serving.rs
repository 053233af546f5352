//! The requests of the served surface besides tools: listings with their caching hints,
//! `resources/read`, `prompts/get` (both run, parked and resumed like a tool call, whether the
//! server's own or relayed upstream), `completion/complete` and resource subscriptions.

use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use rmcp::ErrorData;
use rmcp::model::{
    ErrorCode, GetPromptRequestParams, GetPromptResponse, InputRequiredResult, InputResponses,
    ReadResourceRequestParams, ReadResourceResponse, ResultType,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Map, Value, json};

use super::ToolServer;
use super::auth::Kind;
use super::caller::Sight;
use super::context::CallContext;
use super::rounds::drive::{Driven, refused_capability};
use super::rounds::{Running, Subject, SubjectKind};
use super::surface::{Owner, Surface, Upstream};
use super::tool::ToolCaller;
use crate::surface::{prompt_result, read_result};

mod completion;
mod follow;

/// A `{result}` / `{error}` envelope (what the JavaScript side and the upstream callers give).
pub(crate) fn envelope(value: Value) -> Result<Value, ErrorData> {
    let Value::Object(mut value) = value else {
        return Err(ErrorData::internal_error(
            "the handler gave no result",
            None,
        ));
    };
    if let Some(error) = value.remove("error") {
        let code = error
            .get("code")
            .and_then(Value::as_i64)
            .and_then(|c| i32::try_from(c).ok())
            .unwrap_or(ErrorCode::INTERNAL_ERROR.0);
        let message = match error.get("message") {
            Some(Value::String(m)) => m.clone(),
            _ => "the handler failed".to_string(),
        };
        return Err(ErrorData::new(
            ErrorCode(code),
            message,
            error.get("data").cloned(),
        ));
    }
    value
        .remove("result")
        .ok_or_else(|| ErrorData::internal_error("the handler gave no result", None))
}

/// An upstream's failure as the envelope its run resolves.
fn failed(error: ErrorData) -> Value {
    json!({"error": {"code": error.code.0, "message": error.message, "data": error.data}})
}

/// A read of one upstream resource, run like a call (its input requests go to the client).
struct UpRead(Arc<dyn Upstream>);

impl ToolCaller for UpRead {
    fn call(&self, arguments: Map<String, Value>, ctx: CallContext) -> BoxFuture<'static, Value> {
        let uri = arguments
            .get("uri")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let read = self.0.read(uri.to_string(), ctx);
        async move {
            read.await
                .map_or_else(failed, |result| json!({"result": result}))
        }
        .boxed()
    }
}

/// A read of an upstream's skill file the server serves re-rooted (see `super::skills`): the
/// upstream is asked with its own URI, and the contents answer with the served one.
struct UpSkillRead(Arc<dyn Upstream>, String);

impl ToolCaller for UpSkillRead {
    fn call(&self, _arguments: Map<String, Value>, ctx: CallContext) -> BoxFuture<'static, Value> {
        let read = self.0.read(self.1.clone(), ctx);
        let server = self.0.name().to_string();
        async move {
            read.await.map_or_else(
                failed,
                |result| json!({"result": super::skills::rerooted_read(&server, result)}),
            )
        }
        .boxed()
    }
}

/// A read of a URI no listing names: each upstream that declares resources is asked in turn,
/// and the first answer that is not "not found" is the answer.
struct UpAny(Vec<Arc<dyn Upstream>>);

impl ToolCaller for UpAny {
    fn call(&self, arguments: Map<String, Value>, ctx: CallContext) -> BoxFuture<'static, Value> {
        let uri = arguments
            .get("uri")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let readers = self.0.clone();
        async move {
            for up in readers {
                match up.read(uri.clone(), ctx.clone()).await {
                    Ok(result) => return json!({"result": result}),
                    Err(e)
                        if e.code == ErrorCode::RESOURCE_NOT_FOUND
                            || e.code == ErrorCode::INVALID_PARAMS => {}
                    Err(e) => return failed(e),
                }
            }
            failed(not_found(&uri))
        }
        .boxed()
    }
}

/// `resources/read` of a URI nobody serves (rmcp makes it -32602 for 2026-07-28 peers).
pub(super) fn not_found(uri: &str) -> ErrorData {
    ErrorData::resource_not_found(
        format!("Resource not found: {uri}"),
        Some(json!({ "uri": uri })),
    )
}

/// A get of one upstream prompt, by the name its server knows it by.
struct UpPrompt(Arc<dyn Upstream>, String);

impl ToolCaller for UpPrompt {
    fn call(&self, arguments: Map<String, Value>, ctx: CallContext) -> BoxFuture<'static, Value> {
        let get = self.0.get_prompt(self.1.clone(), arguments, ctx);
        async move {
            get.await
                .map_or_else(failed, |result| json!({"result": result}))
        }
        .boxed()
    }
}

fn unknown_prompt(name: &str) -> ErrorData {
    ErrorData::invalid_params(format!("Unknown prompt: {name}"), None)
}

fn invalid_result(what: &str, e: impl std::fmt::Display) -> ErrorData {
    ErrorData::internal_error(format!("{what} gave an invalid result: {e}"), None)
}

impl ToolServer {
    /// Drives a prompt's or resource's run: its value, or input-required.
    async fn drive_item(
        &self,
        run: Running,
        responses: InputResponses,
    ) -> Result<Result<Value, InputRequiredResult>, ErrorData> {
        let ctx = run.ctx.clone();
        let mut run = Some(run);
        match self.drive_raw(&mut run, &responses).await {
            Driven::InputRequired(input_required) => Ok(Err(input_required)),
            Driven::Full(why) => Err(ErrorData::internal_error(why, None)),
            Driven::Panicked => Err(ErrorData::internal_error("the handler panicked", None)),
            Driven::Cancelled => Err(ErrorData::internal_error("cancelled by the client", None)),
            // Only a tool call's run may become a task (no other is allowed to ask).
            Driven::Escalate(..) => Err(ErrorData::internal_error(
                "only a tool call can become a task",
                None,
            )),
            Driven::Done(value) => match envelope(value) {
                Ok(value) => Ok(Ok(value)),
                Err(error) => Err(refused_capability(&ctx).unwrap_or(error)),
            },
        }
    }

    pub(super) async fn read(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let surface = self.surface();
        let uri = request.uri.clone();
        // A resource outside the caller's scopes is answered as one nobody serves.
        if !Sight::of(&context).sees(Kind::Resource, &uri) {
            return Err(not_found(&uri));
        }
        let mut responses = request.input_responses.clone().unwrap_or_default();
        let state = request.request_state.as_deref();
        let (parked, again) = self
            .reopen(
                SubjectKind::Resource,
                &uri,
                state,
                &Map::new(),
                &mut responses,
                &context,
            )
            .await?;
        let run = if let Some(run) = parked {
            run
        } else {
            let (caller, source, vars): (Arc<dyn ToolCaller>, String, _) =
                if let Some((up, original)) = self.relayed_skill_file(&uri) {
                    // An upstream's skill file, served re-rooted: read with its own URI.
                    let name = up.name().to_string();
                    (Arc::new(UpSkillRead(up, original)), name, None)
                } else {
                    match surface.resolve(&uri) {
                        Some((Owner::Own(item), vars)) => (item.caller.clone(), "own".into(), vars),
                        Some((Owner::Up(up), vars)) => {
                            (Arc::new(UpRead(up.clone())), up.name().to_string(), vars)
                        }
                        None if !surface.readers.is_empty() => {
                            (Arc::new(UpAny(surface.readers.clone())), "mcp".into(), None)
                        }
                        None => return Err(not_found(&uri)),
                    }
                };
            let mut arguments = Map::new();
            arguments.insert("uri".into(), Value::String(uri.clone()));
            arguments.insert("vars".into(), Value::Object(vars.unwrap_or_default()));
            let subject = Subject {
                kind: SubjectKind::Resource,
                name: uri.clone(),
                source,
            };
            // A read's hook may refuse it, not rewrite it (what it reads is its URI).
            self.before_call(&subject, Some(&*caller), &arguments, &context)
                .await
                .map_err(|stopped| stopped.error())?;
            let mut run = self.start(subject, caller, (arguments, None), context);
            if let Some(resume) = &again {
                resume.apply(&mut run);
            }
            run
        };
        match self.drive_item(run, responses).await? {
            Err(input_required) => Ok(ReadResourceResponse::InputRequired(input_required)),
            Ok(value) => {
                let mut result = read_result(value)
                    .map_err(|e| invalid_result(&format!("resource {uri:?}"), e))?;
                // Read from JSON, the result has no resultType; 2026-07-28 requires one (rmcp
                // strips it for older peers).
                result.result_type.get_or_insert(ResultType::COMPLETE);
                let (ttl, scope) = surface.read_hints();
                result.ttl_ms.get_or_insert(ttl);
                result.cache_scope.get_or_insert(scope);
                Ok(ReadResourceResponse::Complete(result))
            }
        }
    }

    pub(super) async fn get(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let surface = self.surface();
        let name = request.name.clone();
        if !Sight::of(&context).sees(Kind::Prompt, &name) {
            return Err(unknown_prompt(&name));
        }
        let mut responses = request.input_responses.clone().unwrap_or_default();
        let state = request.request_state.as_deref();
        let arguments = request.arguments.clone().unwrap_or_default();
        let (parked, again) = self
            .reopen(
                SubjectKind::Prompt,
                &name,
                state,
                &arguments,
                &mut responses,
                &context,
            )
            .await?;
        let run = if let Some(run) = parked {
            run
        } else {
            let Some((prompt, owner, original)) = surface.prompt(&name) else {
                return Err(unknown_prompt(&name));
            };
            let arguments = request.arguments.unwrap_or_default();
            let (caller, source): (Arc<dyn ToolCaller>, String) = match owner {
                Owner::Own(item) => {
                    let missing: Vec<&str> = prompt
                        .arguments
                        .iter()
                        .flatten()
                        .filter(|a| a.required == Some(true) && !arguments.contains_key(&a.name))
                        .map(|a| a.name.as_str())
                        .collect();
                    if let Some((arg, _)) = arguments.iter().find(|(_, v)| !v.is_string()) {
                        return Err(ErrorData::invalid_params(
                            format!("Argument {arg:?} for prompt {name:?} must be a string"),
                            None,
                        ));
                    }
                    if !missing.is_empty() {
                        return Err(ErrorData::invalid_params(
                            format!(
                                "Missing required argument(s) for prompt {name:?}: {}",
                                missing.join(", ")
                            ),
                            None,
                        ));
                    }
                    (item.caller.clone(), "own".into())
                }
                Owner::Up(up) => (
                    Arc::new(UpPrompt(up.clone(), original.clone())),
                    up.name().to_string(),
                ),
            };
            let subject = Subject {
                kind: SubjectKind::Prompt,
                name: name.clone(),
                source,
            };
            let (arguments, made_with) = match self
                .before_call(&subject, Some(&*caller), &arguments, &context)
                .await
            {
                Ok(None) => (arguments, None),
                Ok(Some(rewritten)) => {
                    if let Some((arg, _)) = rewritten.iter().find(|(_, v)| !v.is_string()) {
                        return Err(ErrorData::internal_error(
                            format!(
                                "beforeCall hook failed: the argument {arg:?} it gave for \
                                 prompt {name:?} is not a string"
                            ),
                            None,
                        ));
                    }
                    (rewritten, Some(arguments))
                }
                Err(stopped) => return Err(stopped.error()),
            };
            let mut run = self.start(subject, caller, (arguments, made_with.as_ref()), context);
            if let Some(resume) = &again {
                resume.apply(&mut run);
            }
            run
        };
        match self.drive_item(run, responses).await? {
            Err(input_required) => Ok(GetPromptResponse::InputRequired(input_required)),
            Ok(value) => {
                let mut result = prompt_result(value)
                    .map_err(|e| invalid_result(&format!("prompt {name:?}"), e))?;
                result.result_type.get_or_insert(ResultType::COMPLETE);
                Ok(GetPromptResponse::Complete(result))
            }
        }
    }

    /// How long a listing of `kind` may be cached, and by whom.
    pub(super) fn list_hints(
        &self,
        kind: super::surface::ListKind,
    ) -> (u64, rmcp::model::CacheScope) {
        self.surface().hints(kind)
    }

    pub(super) fn surface_now(&self) -> Arc<Surface> {
        self.surface()
    }
}
