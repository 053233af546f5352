//! Policy hooks on served and relayed requests (`createToolkit({ hooks })`): `beforeCall` may
//! let a tool call, resource read or prompt get go on, refuse it in its own words, or rewrite
//! its arguments; `afterCall` may replace what it answered. Both are the application's code,
//! so each is bounded in time and a failure of one fails that request in words, never the
//! server.
//!
//! A hook sees the call as JSON: `{kind, method, tool | uri | prompt, server?, arguments,
//! principal?, meta?}` (and `result` for `afterCall`). Besides calls, reads and gets,
//! `beforeCall` is asked of the other requests that name a resource (`resources/subscribe`,
//! `skills/get`, `resources/directory/read`), which it may refuse. `beforeCall` runs before anything of the call
//! starts (a task is made only for a call it let through); a retry that resumes a run parked
//! on this replica continues what it already let through, while a call run again from a
//! sealed state (another replica's) is asked again. `afterCall` runs on the run's own task,
//! so it applies alike to a call answered at once and to one run as a task.

use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Map, Value, json};

use super::rounds::{Subject, SubjectKind};
use super::tool::ToolCaller;
use crate::bounds::HOOK_TIMEOUT;

/// What `beforeCall` said.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Go on as asked.
    Go,
    /// Refused, in these words.
    Deny(String),
    /// Go on with these arguments instead (checked against the schema again).
    Arguments(Map<String, Value>),
}

/// The application's hooks, as the binding adapts them. Each gets the call as JSON (see the
/// module's doc) and answers in its own time; the engine bounds it.
pub trait CallHooks: Send + Sync + 'static {
    fn has_before(&self) -> bool;
    fn has_after(&self) -> bool;
    /// `beforeCall`: its verdict, or why it failed (it threw, or answered something else).
    fn before(&self, call: Value) -> BoxFuture<'static, Result<Verdict, String>>;
    /// `afterCall` (`call` has the `result`): a replacement, None to keep it, or why it failed.
    fn after(&self, call: Value) -> BoxFuture<'static, Result<Option<Value>, String>>;
}

/// Why a call its `beforeCall` saw does not go on.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Stopped {
    /// The hook refused it (its words).
    Denied(String),
    /// The hook failed (threw, timed out, or gave arguments or an answer that do not fit).
    Failed(String),
}

impl Stopped {
    pub(crate) fn message(&self) -> String {
        match self {
            Stopped::Denied(why) => why.clone(),
            Stopped::Failed(why) => why.clone(),
        }
    }

    /// As the JSON-RPC error of a read or a get: a refusal is the caller's (invalid request),
    /// a failing hook the server's (internal error).
    pub(crate) fn error(&self) -> rmcp::ErrorData {
        match self {
            Stopped::Denied(why) => rmcp::ErrorData::invalid_request(why.clone(), None),
            Stopped::Failed(why) => rmcp::ErrorData::internal_error(why.clone(), None),
        }
    }
}

/// The server a served subject is relayed to, when it is relayed: a tool's caller says so; a
/// read or get names its upstream as its source (`own` and `mcp`, "any upstream", are not).
pub(crate) fn server_of(subject: &Subject, caller: Option<&dyn ToolCaller>) -> Option<String> {
    match subject.kind {
        SubjectKind::Tool => caller?.upstream(),
        _ if subject.source == "own" || subject.source == "mcp" => None,
        _ => Some(subject.source.clone()),
    }
}

/// The call as a hook sees it (without its result).
pub(crate) fn described(
    subject: &Subject,
    server: Option<String>,
    arguments: &Map<String, Value>,
    request: &RequestContext<RoleServer>,
) -> Value {
    let mut call = Map::new();
    let (kind, key, method) = match subject.kind {
        SubjectKind::Tool => ("tool", "tool", "tools/call"),
        SubjectKind::Resource => ("resource", "uri", "resources/read"),
        SubjectKind::Prompt => ("prompt", "prompt", "prompts/get"),
    };
    call.insert("kind".into(), kind.into());
    call.insert("method".into(), method.into());
    call.insert(key.into(), Value::String(subject.name.clone()));
    if let Some(server) = server {
        call.insert("server".into(), Value::String(server));
    }
    // A read's arguments are the engine's (its URI and template variables): the hook sees
    // none.
    let arguments = match subject.kind {
        SubjectKind::Resource => Map::new(),
        _ => arguments.clone(),
    };
    call.insert("arguments".into(), Value::Object(arguments));
    if let Some(principal) = super::caller::principal_of(request) {
        call.insert("principal".into(), principal.to_json());
    }
    if !request.meta.is_empty()
        && let Ok(meta) = serde_json::to_value(&request.meta)
    {
        call.insert("meta".into(), meta);
    }
    Value::Object(call)
}

/// Runs `beforeCall` on `call`, bounded: the arguments to go on with (None: as they were).
pub(crate) async fn before(
    hooks: &dyn CallHooks,
    call: Value,
) -> Result<Option<Map<String, Value>>, Stopped> {
    match bounded("beforeCall", hooks.before(call)).await? {
        Verdict::Go => Ok(None),
        Verdict::Deny(why) => Err(Stopped::Denied(why)),
        Verdict::Arguments(arguments) => Ok(Some(arguments)),
    }
}

async fn bounded<T>(
    which: &str,
    hook: BoxFuture<'static, Result<T, String>>,
) -> Result<T, Stopped> {
    bounded_by(which, hook, HOOK_TIMEOUT).await
}

async fn bounded_by<T>(
    which: &str,
    hook: BoxFuture<'static, Result<T, String>>,
    bound: Duration,
) -> Result<T, Stopped> {
    match tokio::time::timeout(bound, hook).await {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(why)) => Err(Stopped::Failed(format!("{which} hook failed: {why}"))),
        Err(_) if bound.as_secs() > 0 => Err(Stopped::Failed(format!(
            "{which} hook did not answer within {} s",
            bound.as_secs()
        ))),
        Err(_) => Err(Stopped::Failed(format!(
            "{which} hook did not answer within {} ms",
            bound.as_millis()
        ))),
    }
}

/// `inner`, its answer going through `afterCall`; `call` is the call as the hook sees it, but
/// for its arguments (those of the run) and result.
pub(crate) fn after_caller(
    inner: Arc<dyn ToolCaller>,
    hooks: Arc<dyn CallHooks>,
    kind: SubjectKind,
    call: Value,
) -> Arc<dyn ToolCaller> {
    super::tool::around(inner, move |inner, arguments, ctx| {
        let mut call = call.clone();
        if kind != SubjectKind::Resource {
            call["arguments"] = Value::Object(arguments.clone());
        }
        let hooks = hooks.clone();
        let run = inner.call(arguments, ctx);
        async move { after(&*hooks, kind, call, run.await).await }.boxed()
    })
}

/// `value` (a tool's CallToolResult, or the `{result}`/`{error}` envelope of a read or get)
/// after `afterCall`: replaced, kept, or (when the hook fails) the call's failure in words. A
/// read or get that failed is not the hook's to see.
async fn after(hooks: &dyn CallHooks, kind: SubjectKind, mut call: Value, value: Value) -> Value {
    let result = match kind {
        SubjectKind::Tool => value.clone(),
        _ => match value.get("result") {
            Some(result) => result.clone(),
            None => return value,
        },
    };
    call["result"] = result;
    let answered = bounded("afterCall", hooks.after(call)).await;
    let replaced = answered.and_then(|replacement| match replacement {
        None => Ok(None),
        Some(replacement) => fits(kind, &replacement).map(|()| Some(replacement)),
    });
    match (kind, replaced) {
        (_, Ok(None)) => value,
        (SubjectKind::Tool, Ok(Some(replacement))) => replacement,
        (_, Ok(Some(replacement))) => json!({ "result": replacement }),
        (SubjectKind::Tool, Err(stopped)) => {
            crate::tool_result::ToolResult::text(stopped.message(), true).into_mcp()
        }
        (_, Err(stopped)) => json!({ "error": {
            "code": rmcp::model::ErrorCode::INTERNAL_ERROR.0,
            "message": stopped.message(),
        }}),
    }
}

/// Whether `afterCall`'s replacement is an answer of the call's kind.
fn fits(kind: SubjectKind, replacement: &Value) -> Result<(), Stopped> {
    let (field, what) = match kind {
        SubjectKind::Tool => ("content", "a tool result ({ content: [...] })"),
        SubjectKind::Resource => ("contents", "a resource read result ({ contents: [...] })"),
        SubjectKind::Prompt => ("messages", "a prompt result ({ messages: [...] })"),
    };
    if replacement.get(field).is_some_and(Value::is_array) {
        return Ok(());
    }
    Err(Stopped::Failed(format!(
        "afterCall hook failed: it returned something other than {what}"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Slow;

    impl CallHooks for Slow {
        fn has_before(&self) -> bool {
            true
        }
        fn has_after(&self) -> bool {
            false
        }
        fn before(&self, _: Value) -> BoxFuture<'static, Result<Verdict, String>> {
            futures::future::pending().boxed()
        }
        fn after(&self, _: Value) -> BoxFuture<'static, Result<Option<Value>, String>> {
            futures::future::pending().boxed()
        }
    }

    #[tokio::test]
    async fn a_hook_that_never_answers_fails_within_its_bound() {
        let stopped = bounded_by(
            "beforeCall",
            Slow.before(json!({})),
            Duration::from_millis(20),
        )
        .await
        .unwrap_err();
        assert_eq!(
            stopped,
            Stopped::Failed("beforeCall hook did not answer within 20 ms".into())
        );
    }

    #[test]
    fn a_replacement_must_be_an_answer_of_the_calls_kind() {
        assert!(fits(SubjectKind::Tool, &json!({"content": []})).is_ok());
        assert_eq!(
            fits(SubjectKind::Prompt, &json!({"content": []})).unwrap_err(),
            Stopped::Failed(
                "afterCall hook failed: it returned something other than a prompt result \
                 ({ messages: [...] })"
                    .into()
            )
        );
    }
}
