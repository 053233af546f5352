//! The application's policy hooks (see [`crate::serve::hooks`]) as the handler asks them, for
//! a tool call, a read and a get alike.

use std::sync::Arc;

use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Map, Value};

use crate::serve::ToolServer;
use crate::serve::hooks::{Stopped, after_caller, before, described, server_of};
use crate::serve::rounds::Subject;
use crate::serve::tool::ToolCaller;

/// The hooks as the handler asks them.
impl ToolServer {
    /// `beforeCall` on a call of `subject` (run by `caller`) about to start with `arguments`:
    /// the arguments to start it with instead, or why it does not go on. Without a hook, at
    /// once.
    pub(crate) async fn before_call(
        &self,
        subject: &Subject,
        caller: Option<&dyn ToolCaller>,
        arguments: &Map<String, Value>,
        request: &RequestContext<RoleServer>,
    ) -> Result<Option<Map<String, Value>>, Stopped> {
        let Some(hooks) = self.shared.call_hooks.as_ref().filter(|h| h.has_before()) else {
            return Ok(None);
        };
        let call = described(subject, server_of(subject, caller), arguments, request);
        before(&**hooks, call).await
    }

    /// `beforeCall` on a request of `method` (`resources/subscribe`, `skills/get`,
    /// `resources/directory/read`) that names the resource `uri`: Ok to go on, or its refusal
    /// (or failure) as the request's error. Arguments it gives are ignored: there are none.
    pub(crate) async fn before_request(
        &self,
        method: &str,
        uri: &str,
        request: &RequestContext<RoleServer>,
    ) -> Result<(), rmcp::ErrorData> {
        let Some(hooks) = self.shared.call_hooks.as_ref().filter(|h| h.has_before()) else {
            return Ok(());
        };
        let subject = Subject {
            kind: crate::serve::rounds::SubjectKind::Resource,
            name: uri.to_string(),
            source: "own".into(),
        };
        let mut call = described(&subject, None, &Map::new(), request);
        call["method"] = Value::String(method.to_string());
        before(&**hooks, call)
            .await
            .map(|_| ())
            .map_err(|stopped: Stopped| stopped.error())
    }

    /// `caller`, its results cut to the tool's limit when it has one (after `afterCall`).
    pub(crate) fn cut_results(
        &self,
        subject: &Subject,
        caller: Arc<dyn ToolCaller>,
    ) -> Arc<dyn ToolCaller> {
        let limit = (subject.kind == crate::serve::rounds::SubjectKind::Tool)
            .then(|| self.shared.result_limits.as_ref()?.of(&subject.name))
            .flatten();
        match limit {
            Some(limit) => crate::serve::cut::cut_caller(caller, limit),
            None => caller,
        }
    }

    /// `caller`, answering through `afterCall` when there is one.
    pub(crate) fn after_call(
        &self,
        subject: &Subject,
        caller: Arc<dyn ToolCaller>,
        request: &RequestContext<RoleServer>,
    ) -> Arc<dyn ToolCaller> {
        let Some(hooks) = self.shared.call_hooks.as_ref().filter(|h| h.has_after()) else {
            return caller;
        };
        let call = described(
            subject,
            server_of(subject, Some(&*caller)),
            &Map::new(),
            request,
        );
        after_caller(caller, hooks.clone(), subject.kind, call)
    }
}
