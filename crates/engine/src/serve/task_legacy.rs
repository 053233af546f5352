//! Tasks in the 2025-11-25 era (the handshake era's `tasks` capability): a task-augmented
//! `tools/call` (`params.task: {ttl?}`) answered `{task}` at once, `tasks/get` (the task),
//! `tasks/result` (waits for its end: the call's result, or its JSON-RPC error), `tasks/list`
//! and `tasks/cancel`, over the same engine ([`super::tasks`]) as the 2026-07-28 extension.
//!
//! rmcp 3.11 knows only the 2026-07-28 shapes: its `CallToolRequestParams` drops `task`, it
//! has no `tasks/result` or `tasks/list`, and its `tasks/get` hook wants the 2026-07-28
//! extension declared. So the fronts that see raw messages (stdio, the bridge) move
//! `params.task` into the request's `_meta` under [`TASK_META`] ([`lift`]) before rmcp parses
//! it, and [`super::wire::Wire`] answers the task methods of a handshake-era session itself.
//!
//! Streamable HTTP sessions do the same in their own way (rmcp's HTTP service takes only a
//! `ServerHandler`, so no `Wire`): the front buffers a session's POST body and lifts it
//! ([`lift_session`], which also renames `tasks/get` and `tasks/cancel`, whose typed hooks rmcp
//! gates on the 2026-07-28 extension, to custom methods), marks the request ([`LegacyTasks`]
//! in its HTTP parts), and the custom methods are answered in `on_custom_request` by the same
//! [`ToolServer::legacy_task_request`]. A sessionless (`stateless`) handshake-era endpoint has
//! nothing to keep a task's owner by, so it announces no `tasks` capability and serves task
//! tools as ordinary calls.

use rmcp::ErrorData;
use std::sync::Arc;

use rmcp::model::{
    ClientRequest, CustomRequest, CustomResult, ErrorCode, ServerJsonRpcMessage, ServerResult,
    TaskPayload,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::Transport;
use serde_json::{Map, Value, json};

use super::ToolServer;
use super::tasks::Refusal;

/// Where a lifted `params.task` travels in a request's `_meta`.
pub(crate) const TASK_META: &str = "io.toolnexus/task";
/// Marks a handshake-era request whose front answers the era's task methods and turns a
/// created task into `{task}` (set by `Wire`, and by HTTP sessions in the request's parts).
#[derive(Clone, Copy)]
pub(crate) struct LegacyTasks;
/// Where the created task rides out of `call_tool` to `Wire` (on the result's `_meta`).
pub(crate) const CREATED_META: &str = "io.toolnexus/created-task";
const RELATED: &str = "io.modelcontextprotocol/related-task";
/// How many tasks one `tasks/list` page holds.
const PAGE: usize = 100;

/// A raw `tools/call` whose params carry `task`: moved into `params._meta` (rmcp would drop
/// it). Anything else is left as it is.
pub(crate) fn lift(message: &mut Value) {
    if message.get("method").and_then(Value::as_str) != Some("tools/call") {
        return;
    }
    let Some(params) = message.get_mut("params").and_then(Value::as_object_mut) else {
        return;
    };
    let Some(task) = params.remove("task") else {
        return;
    };
    let meta = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(meta) = meta.as_object_mut() {
        meta.insert(TASK_META.into(), task);
    }
}

/// What a handshake-era `tasks/get` and `tasks/cancel` become on the way into rmcp over HTTP
/// (see [`lift_session`]).
const GET: &str = "io.toolnexus/tasks/get";
const CANCEL: &str = "io.toolnexus/tasks/cancel";

/// A raw message of a handshake-era session: [`lift`]ed, and `tasks/get` / `tasks/cancel`
/// renamed to custom methods (rmcp's typed hooks refuse handshake-era clients).
pub(crate) fn lift_session(message: &mut Value) {
    let renamed = match message.get("method").and_then(Value::as_str) {
        Some("tasks/get") => GET,
        Some("tasks/cancel") => CANCEL,
        _ => return lift(message),
    };
    message["method"] = Value::String(renamed.into());
}

/// Whether the front of `context`'s request speaks the handshake era's tasks.
pub(crate) fn front_speaks(context: &RequestContext<RoleServer>) -> bool {
    context.extensions.get::<LegacyTasks>().is_some()
        || context
            .extensions
            .get::<http::request::Parts>()
            .is_some_and(|parts| parts.extensions.get::<LegacyTasks>().is_some())
}

/// The task a handshake-era call asked for: `Some(ttl)` when it asked (ttl in ms, if given).
pub(crate) fn asked(context: &RequestContext<RoleServer>) -> Option<Option<u64>> {
    let task = context.meta.get(TASK_META)?;
    Some(task.get("ttl").and_then(Value::as_u64))
}

/// A 2026-07-28 `Task` in the 2025-11-25 shape (`ttl`, `pollInterval`).
pub(crate) fn task_json(task: &rmcp::model::Task) -> Value {
    let mut value = serde_json::to_value(task).unwrap_or_default();
    if let Some(object) = value.as_object_mut() {
        if let Some(ttl) = object.remove("ttlMs") {
            object.insert("ttl".into(), ttl);
        }
        if let Some(poll) = object.remove("pollIntervalMs") {
            object.insert("pollInterval".into(), poll);
        }
    }
    value
}

/// The handshake era's `notifications/tasks/status` of `task`: its fields as `tasks/get` gives
/// them.
pub(crate) fn status_notification(task: &rmcp::model::Task) -> ServerJsonRpcMessage {
    let notification = rmcp::model::CustomNotification::new(STATUS, Some(task_json(task)));
    ServerJsonRpcMessage::notification(rmcp::model::ServerNotification::CustomNotification(
        notification,
    ))
}

/// The handshake era's task status notification.
pub(crate) const STATUS: &str = "notifications/tasks/status";

fn refused(refusal: Refusal) -> ErrorData {
    refusal.error()
}

fn custom(value: Value) -> ServerResult {
    ServerResult::CustomResult(CustomResult(value))
}

fn task_id(params: Option<&Value>) -> Result<String, ErrorData> {
    params
        .and_then(|p| p.get("taskId"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| ErrorData::invalid_params("taskId is required: a string", None))
}

impl ToolServer {
    /// A handshake-era request `Wire` answers itself (the task methods), or gives back.
    pub(super) async fn legacy_task_request(
        &self,
        request: &ClientRequest,
        context: &RequestContext<RoleServer>,
    ) -> Option<Result<ServerResult, ErrorData>> {
        let task_method = match request {
            ClientRequest::CustomRequest(r) => {
                r.method.starts_with("tasks/") || r.method == GET || r.method == CANCEL
            }
            ClientRequest::GetTaskRequest(_) | ClientRequest::CancelTaskRequest(_) => true,
            _ => false,
        };
        if !task_method
            || super::input::is_modern(context)
            || !front_speaks(context)
            || !self.serves_tasks()
        {
            return None;
        }
        let book = self.book(context);
        // tasks/get and tasks/cancel, as rmcp types them or renamed on the way in.
        let (id, cancel) = match request {
            ClientRequest::CustomRequest(r) if r.method == GET || r.method == CANCEL => {
                (Some(task_id(r.params.as_ref())), r.method == CANCEL)
            }
            ClientRequest::GetTaskRequest(r) => (Some(Ok(r.params.task_id.clone())), false),
            ClientRequest::CancelTaskRequest(r) => (Some(Ok(r.params.task_id.clone())), true),
            _ => (None, false),
        };
        if let Some(id) = id {
            let id = match id {
                Ok(id) => id,
                Err(e) => return Some(Err(e)),
            };
            let answered = if cancel {
                book.cancel(&id).await
            } else {
                book.get(&id).await
            };
            return Some(
                answered
                    .map(|t| custom(task_json(&t.task)))
                    .map_err(refused),
            );
        }
        Some(match request {
            ClientRequest::CustomRequest(r) if r.method == "tasks/result" => {
                let id = match task_id(r.params.as_ref()) {
                    Ok(id) => id,
                    Err(e) => return Some(Err(e)),
                };
                match book.wait(&id, &context.ct).await {
                    Err(refusal) => Err(refused(refusal)),
                    Ok(ended) => match ended.payload {
                        TaskPayload::Completed { result } => {
                            let mut result = Value::Object(result);
                            result["_meta"][RELATED] = json!({ "taskId": id });
                            result.as_object_mut().map(|o| o.remove("resultType"));
                            Ok(custom(result))
                        }
                        TaskPayload::Failed { error } => {
                            let code = error
                                .get("code")
                                .and_then(Value::as_i64)
                                .unwrap_or(ErrorCode::INTERNAL_ERROR.0 as i64);
                            let message = error
                                .get("message")
                                .and_then(Value::as_str)
                                .unwrap_or("the task failed")
                                .to_string();
                            Err(ErrorData::new(ErrorCode(code as i32), message, None))
                        }
                        _ => Err(ErrorData::new(
                            ErrorCode::INTERNAL_ERROR,
                            format!("task {id:?} was cancelled"),
                            None,
                        )),
                    },
                }
            }
            ClientRequest::CustomRequest(r) if r.method == "tasks/list" => {
                let cursor = r
                    .params
                    .as_ref()
                    .and_then(|p| p.get("cursor"))
                    .and_then(Value::as_str);
                book.list(cursor, PAGE)
                    .await
                    .map(|(page, next)| {
                        let listed: Vec<Value> = page.iter().map(task_json).collect();
                        let mut out = json!({ "tasks": listed });
                        if let Some(next) = next {
                            out["nextCursor"] = Value::String(next);
                        }
                        custom(out)
                    })
                    .map_err(refused)
            }
            _ => return None,
        })
    }

    /// A custom request (`on_custom_request`): a handshake-era task method of an HTTP session,
    /// or -32601 naming it.
    pub(super) async fn legacy_custom(
        &self,
        request: CustomRequest,
        context: &RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let method = match request.method.as_str() {
            GET => "tasks/get",
            CANCEL => "tasks/cancel",
            other => other,
        }
        .to_string();
        let request = ClientRequest::CustomRequest(request);
        match self.legacy_task_request(&request, context).await {
            Some(Ok(ServerResult::CustomResult(result))) => Ok(result),
            Some(Ok(other)) => Ok(CustomResult(
                serde_json::to_value(other).unwrap_or_default(),
            )),
            Some(Err(e)) => Err(e),
            None => Err(ErrorData::new(ErrorCode::METHOD_NOT_FOUND, method, None)),
        }
    }

    /// An outgoing message of an HTTP session: a `tools/call` answer that carries a created
    /// task becomes `{task}` (see [`Self::legacy_created`]); anything else as it was.
    pub(crate) fn message_with_created(
        message: Arc<ServerJsonRpcMessage>,
    ) -> Arc<ServerJsonRpcMessage> {
        match &*message {
            ServerJsonRpcMessage::Response(response)
                if matches!(&response.result, ServerResult::CallToolResult(call)
                    if call.meta.as_ref().is_some_and(|m| m.get(CREATED_META).is_some())) =>
            {
                let mut response = response.clone();
                response.result = ToolServer::legacy_created(response.result);
                Arc::new(ServerJsonRpcMessage::Response(response))
            }
            _ => message,
        }
    }

    /// A handshake-era `tools/call` result that carries a created task: `{task}`.
    pub(super) fn legacy_created(result: ServerResult) -> ServerResult {
        let ServerResult::CallToolResult(call) = &result else {
            return result;
        };
        match call.meta.as_ref().and_then(|m| m.get(CREATED_META)) {
            Some(task) => custom(json!({ "task": task })),
            None => result,
        }
    }

    /// An outgoing message; the `initialize` answer gets 2025-11-25's `tasks` capability (when
    /// task tools are served), which rmcp's `ServerCapabilities` has no field for.
    pub(crate) fn announce_tasks(&self, message: ServerJsonRpcMessage) -> ServerJsonRpcMessage {
        let ServerJsonRpcMessage::Response(response) = &message else {
            return message;
        };
        let ServerResult::InitializeResult(init) = &response.result else {
            return message;
        };
        if !self.serves_tasks() {
            return message;
        }
        let Ok(mut value) = serde_json::to_value(init) else {
            return message;
        };
        value["capabilities"]["tasks"] = json!({
            "list": {},
            "cancel": {},
            "requests": { "tools": { "call": {} } },
        });
        let mut response = response.clone();
        response.result = custom(value);
        ServerJsonRpcMessage::Response(response)
    }
}

/// A server transport whose `initialize` answer announces 2025-11-25's tasks (see
/// [`ToolServer::announce_tasks`]).
pub(crate) struct Announcing<T> {
    pub(crate) inner: T,
    pub(crate) server: ToolServer,
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for Announcing<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let item = self.server.announce_tasks(item);
        self.inner.send(item)
    }

    fn receive(
        &mut self,
    ) -> impl Future<Output = Option<rmcp::model::ClientJsonRpcMessage>> + Send {
        self.inner.receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sessions_task_messages_are_lifted_and_renamed() {
        let mut call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "job", "task": {"ttl": 5}, "_meta": {"progressToken": 3}}});
        lift_session(&mut call);
        assert_eq!(
            call["params"],
            json!({"name": "job", "_meta": {"progressToken": 3, TASK_META: {"ttl": 5}}})
        );
        let mut get = json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get",
            "params": {"taskId": "t"}});
        lift_session(&mut get);
        assert_eq!(get["method"], GET);
        assert_eq!(get["params"], json!({"taskId": "t"}));
        let mut cancel = json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/cancel"});
        lift_session(&mut cancel);
        assert_eq!(cancel["method"], CANCEL);
        // Anything else is left as it came, a `task` in other places too.
        for untouched in [
            json!({"jsonrpc": "2.0", "id": 4, "method": "tasks/result", "params": {"taskId": "t"}}),
            json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"task": {}}}),
            json!({"jsonrpc": "2.0", "id": 6, "result": {"task": {}}}),
            json!([{"jsonrpc": "2.0", "id": 7, "method": "tasks/get"}]),
            json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": 5}),
        ] {
            let mut message = untouched.clone();
            lift_session(&mut message);
            assert_eq!(message, untouched);
        }
    }
}
