//! What rmcp's typed `tools/list` loses, put back on the wire: its `Tool` has no `execution`
//! field, so a served tool's `execution` (its own, or the one its upstream listed) would be
//! dropped. rmcp's blanket `Service` impl of every `ServerHandler` cannot be replaced, so the
//! transports that take any `Service` (stdio, the bridge) serve [`Wire`], and HTTP sessions
//! rewrite the answer on its way out (`http::sessions`). A tool set without any `execution`
//! costs nothing here: the typed result goes out as it was.

use std::sync::Arc;

use rmcp::model::{ClientRequest, CustomResult, ServerJsonRpcMessage, ServerResult};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, Service, ServiceRole};
use serde_json::Value;

use super::ToolServer;

/// A [`ToolServer`] whose `tools/list` answers keep `execution`.
pub(crate) struct Wire(pub ToolServer);

impl Service<RoleServer> for Wire {
    async fn handle_request(
        &self,
        request: <RoleServer as ServiceRole>::PeerReq,
        context: RequestContext<RoleServer>,
    ) -> Result<ServerResult, rmcp::ErrorData> {
        let mut context = context;
        if !super::input::is_modern(&context) {
            context.extensions.insert(super::task_legacy::LegacyTasks);
        }
        // The handshake era's task methods (see `task_legacy`).
        if let Some(answer) = self.0.legacy_task_request(&request, &context).await {
            return answer;
        }
        let listing = matches!(request, ClientRequest::ListToolsRequest(_));
        let calling = matches!(request, ClientRequest::CallToolRequest(_));
        let result = Service::handle_request(&self.0, request, context).await;
        if listing {
            result.map(|r| self.0.with_executions(r))
        } else if calling {
            result.map(ToolServer::legacy_created)
        } else {
            result
        }
    }

    async fn handle_notification(
        &self,
        notification: <RoleServer as ServiceRole>::PeerNot,
        context: NotificationContext<RoleServer>,
    ) -> Result<(), rmcp::ErrorData> {
        Service::handle_notification(&self.0, notification, context).await
    }

    fn get_info(&self) -> <RoleServer as ServiceRole>::Info {
        Service::get_info(&self.0)
    }

    fn supported_protocol_versions(
        &self,
    ) -> std::borrow::Cow<'static, [rmcp::model::ProtocolVersion]> {
        Service::supported_protocol_versions(&self.0)
    }
}

impl ToolServer {
    /// A `tools/list` result with each listed tool's `execution` put back (the result as it
    /// was when no tool has one).
    pub(super) fn with_executions(&self, result: ServerResult) -> ServerResult {
        let set = self.current();
        if set.executions.is_empty() {
            return result;
        }
        let ServerResult::ListToolsResult(list) = result else {
            return result;
        };
        let Ok(Value::Object(mut value)) = serde_json::to_value(&list) else {
            return ServerResult::ListToolsResult(list);
        };
        put(&set, &mut value);
        ServerResult::CustomResult(CustomResult(Value::Object(value)))
    }

    /// Whether any tool served now has an `execution`.
    pub(super) fn has_executions(&self) -> bool {
        !self.current().executions.is_empty()
    }

    /// A JSON-RPC message as JSON: when it answers with a tools listing, each listed tool gets
    /// its `execution` back.
    pub(super) fn put_executions(&self, message: &mut Value) {
        if let Some(Value::Object(result)) = message.get_mut("result") {
            put(&self.current(), result);
        }
    }

    /// An outgoing message, with `execution` put back when it answers `tools/list`.
    pub(super) fn message_with_executions(
        &self,
        message: Arc<ServerJsonRpcMessage>,
    ) -> Arc<ServerJsonRpcMessage> {
        match &*message {
            ServerJsonRpcMessage::Response(response)
                if matches!(response.result, ServerResult::ListToolsResult(_))
                    && !self.current().executions.is_empty() =>
            {
                let mut response = response.clone();
                response.result = self.with_executions(response.result);
                Arc::new(ServerJsonRpcMessage::Response(response))
            }
            _ => message,
        }
    }
}

/// Each tool of a `tools/list` result gets its `execution` back.
fn put(set: &super::toolset::ToolSet, result: &mut serde_json::Map<String, Value>) {
    if let Some(Value::Array(tools)) = result.get_mut("tools") {
        for tool in tools.iter_mut().filter_map(Value::as_object_mut) {
            let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
            if let Some(execution) = set.executions.get(name) {
                tool.insert("execution".into(), execution.clone());
            }
        }
    }
}
