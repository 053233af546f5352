//! [`ToolServer`] as rmcp's `ServerHandler`: what it announces, `tools/list`, `tools/call`
//! (checked, then run or resumed by `rounds`), logging levels, list-changed subscriptions, and
//! the session hooks its transport asked for.

use rmcp::ErrorData;
use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};

use super::{ToolServer, changes, rounds, text_result};

impl ServerHandler for ToolServer {
    #[allow(deprecated)] // logging is deprecated by SEP-2577 but still served.
    fn get_info(&self) -> ServerConfig {
        let identity = &self.shared.identity;
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_logging()
                .build(),
        )
        .with_server_info(Implementation::new(
            identity.name.clone(),
            identity.version.clone(),
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            self.current().listed.clone(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let set = self.current();
        set.by_name.get(name)?;
        set.listed.iter().find(|t| t.name == name).cloned()
    }

    async fn initialize(
        &self,
        request: rmcp::model::InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::InitializeResult, ErrorData> {
        // rmcp's own initialize, plus telling the transport before the first call can come.
        context.peer.set_peer_info(request.clone());
        if let Some(hooks) = &self.hooks {
            hooks.initialized(&context, self.log_level.clone());
        }
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        self.shared.changes.register(context.peer);
    }

    async fn on_cancelled(
        &self,
        notification: rmcp::model::CancelledNotificationParam,
        _context: rmcp::service::NotificationContext<RoleServer>,
    ) {
        // rmcp cancels the calls its session loop runs; these are the ones `http` ran.
        if let (Some(hooks), Some(request)) = (&self.hooks, &notification.request_id) {
            hooks.cancelled(request);
        }
    }

    fn accepted_subscription_filter(
        &self,
        _requested: &rmcp::model::SubscriptionFilter,
    ) -> Option<rmcp::model::SubscriptionFilter> {
        Some(changes::ToolChanges::accepted())
    }

    async fn listen(&self, context: rmcp::service::SubscriptionContext) -> Result<(), ErrorData> {
        self.shared.changes.listen(context).await
    }

    #[allow(deprecated)] // logging is deprecated by SEP-2577 but still served.
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.log_level.set(request.level);
        Ok(())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let set = self.current();
        let index = *set.by_name.get(request.name.as_ref()).ok_or_else(|| {
            ErrorData::invalid_params(format!("Unknown tool: {}", request.name), None)
        })?;
        if let Some(state) = &request.request_state {
            let responses = request.input_responses.clone().unwrap_or_default();
            return self.resume(&request.name, state, responses, context).await;
        }
        let started = std::time::Instant::now();
        let tool = set.tools[index].clone();
        let arguments = request.arguments.unwrap_or_default();
        let subject = rounds::Subject {
            kind: rounds::SubjectKind::Tool,
            name: tool.name.clone(),
            source: tool.source.clone(),
        };
        if let Err(problems) = set.check(index, &arguments) {
            // A mismatch is the caller's to fix, so it is a result the model can read; OnCall
            // hears of it as a failed call.
            self.record(&subject, started, true);
            return Ok(CallToolResponse::Complete(text_result(
                format!("Invalid arguments for tool {}: {problems}", tool.name),
                true,
            )));
        }
        let responses = request.input_responses.unwrap_or_default();
        let run = self.start(subject, tool.caller.clone(), arguments, context);
        self.drive(run, responses).await
    }
}
