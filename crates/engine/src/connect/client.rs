//! The client side of every connection: what toolnexus tells servers about itself, and how it
//! answers their requests (elicitation is bridged to JavaScript by the caller's `Elicitor`).

use std::sync::Arc;

use futures::future::BoxFuture;
use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, ErrorData, FormElicitationCapability, Implementation, InputRequest,
    InputRequests, InputResponses, ProtocolVersion, UrlElicitationCapability,
};
#[allow(deprecated)] // sampling is deprecated by SEP-2577 but still relayed.
use rmcp::model::{CreateMessageRequestParams, CreateMessageResult};
use rmcp::service::{RequestContext, RoleClient};

/// Counts one server's `notifications/tools/list_changed`; a loadMcp session waits on it to
/// re-list that server. A watch channel, so a burst of notifications costs one re-list.
#[derive(Clone)]
pub(crate) struct ToolsChanged {
    sender: Arc<tokio::sync::watch::Sender<u64>>,
    /// Subscribed at creation, so a change sent while the server is still being listed counts.
    first: tokio::sync::watch::Receiver<u64>,
}

impl Default for ToolsChanged {
    fn default() -> Self {
        let (sender, first) = tokio::sync::watch::channel(0);
        Self {
            sender: Arc::new(sender),
            first,
        }
    }
}

impl ToolsChanged {
    pub(crate) fn notify(&self) {
        self.sender.send_modify(|count| *count += 1);
    }

    /// A receiver that sees every change since this connection's handler was made; it closes
    /// when the connection's handler is dropped.
    pub(crate) fn watch(&self) -> tokio::sync::watch::Receiver<u64> {
        self.first.clone()
    }
}

/// Answers `elicitation/create` for one server.
pub type Elicitor =
    Arc<dyn Fn(ElicitRequestParams) -> BoxFuture<'static, ElicitResult> + Send + Sync>;

#[derive(Clone)]
pub struct ClientSide {
    pub(crate) elicitor: Option<Elicitor>,
    /// The fronts of forwarded calls in flight, which get this server's messages about them.
    pub(crate) relays: super::relay::Relays,
    pub(crate) tools_changed: ToolsChanged,
    /// Its `notifications/prompts/list_changed` and `notifications/resources/list_changed`.
    pub(crate) prompts_changed: ToolsChanged,
    pub(crate) resources_changed: ToolsChanged,
    /// The listeners of its `notifications/resources/updated`.
    pub(crate) updates: Arc<super::updates::ResourceUpdates>,
    /// The revision `initialize` offers (rmcp's own default names 2026-07-28, which has no
    /// `initialize`).
    pub(crate) offered: ProtocolVersion,
    /// Declares elicitation and sampling, answered by forwarded calls' front clients (a
    /// gateway's sources).
    pub(crate) relay_input: bool,
    /// How remote servers of this call are authorised (the app's `authorize`, its token store).
    pub(crate) auth: super::auth::AuthContext,
    /// Its `notifications/tasks/status` (2025-11-25), each a task's state, to the task calls
    /// in flight that follow them (bounded: a lagging follower polls instead).
    pub(crate) task_status: tokio::sync::broadcast::Sender<serde_json::Value>,
    /// Declares the 2026-07-28 `io.modelcontextprotocol/tasks` extension (not in a handshake of
    /// an earlier revision, whose capabilities have no `extensions`).
    pub(crate) tasks_extension: bool,
    /// The app's trace context when the call was made: the connection's listings are CLIENT
    /// spans under it (see [`crate::telemetry::connecting`]).
    pub(crate) trace: Option<crate::telemetry::CallTrace>,
}

impl Default for ClientSide {
    fn default() -> Self {
        Self {
            elicitor: None,
            relays: Default::default(),
            tools_changed: Default::default(),
            prompts_changed: Default::default(),
            resources_changed: Default::default(),
            updates: Default::default(),
            offered: ProtocolVersion::LATEST_WITH_INITIALIZE,
            relay_input: false,
            auth: Default::default(),
            task_status: tokio::sync::broadcast::channel(crate::bounds::TASK_STATUS_QUEUE).0,
            tasks_extension: false,
            trace: None,
        }
    }
}

impl ClientSide {
    /// The handler of a connection made for the app: how its remote servers are authorised, who
    /// answers its elicitations, and whether it declares elicitation and sampling for forwarded
    /// calls (a gateway's sources).
    pub fn new(
        auth: super::auth::AuthContext,
        elicitor: Option<Elicitor>,
        relay_input: bool,
    ) -> Self {
        Self {
            elicitor,
            relay_input,
            auth,
            ..Self::default()
        }
    }

    /// This handler with its connection's listings traced under `trace`.
    pub fn traced(self, trace: Option<crate::telemetry::CallTrace>) -> Self {
        Self { trace, ..self }
    }

    /// This handler for a start that offers `version` (and, with `extensions`, may speak
    /// 2026-07-28: the tasks extension is declared).
    pub(crate) fn offering(&self, version: ProtocolVersion, extensions: bool) -> Self {
        Self {
            offered: version,
            tasks_extension: extensions,
            ..self.clone()
        }
    }
}

impl ClientSide {
    /// A forwarded call's front client answers first (a gateway relays the question); else the
    /// caller's `Elicitor`; else it is declined.
    async fn elicit(&self, request: ElicitRequestParams) -> ElicitResult {
        if let Some(result) = self.relays.elicit(request.clone()).await {
            return result;
        }
        match &self.elicitor {
            Some(elicitor) => elicitor(request).await,
            None => ElicitResult::new(ElicitationAction::Decline),
        }
    }

    /// The answers to a 2026-07-28 server's input-required result, asked where a handshake-era
    /// server's requests would go: the call's own front client first (a forwarded call), then
    /// as for a request. A request toolnexus cannot answer fails the call.
    pub(crate) async fn answer_input(
        &self,
        requests: InputRequests,
        front: Option<&dyn super::relay::Front>,
    ) -> Result<InputResponses, String> {
        let mut responses = InputResponses::new();
        for (key, request) in requests {
            let answer = match request {
                InputRequest::Elicitation(request) => {
                    let asked = match front {
                        Some(front) => front.elicit(request.params.clone()).await,
                        None => None,
                    };
                    match asked {
                        Some(answer) => serde_json::to_value(answer),
                        None => serde_json::to_value(self.elicit(request.params).await),
                    }
                }
                InputRequest::CreateMessage(request) => {
                    let asked = match front {
                        Some(front) => front.sample(request.params).await,
                        None => self.relays.sample(request.params).await,
                    };
                    match asked {
                        Some(result) => serde_json::to_value(result),
                        None => {
                            return Err(
                                "the server asked for sampling, which this client cannot answer"
                                    .into(),
                            );
                        }
                    }
                }
                InputRequest::ListRoots(_) => {
                    return Err(
                        "the server asked for roots, which this client does not have".into(),
                    );
                }
                _ => {
                    return Err(format!(
                        "the server asked for input {key:?} of a kind toolnexus does not know"
                    ));
                }
            };
            responses.insert(key, answer.map_err(|e| e.to_string())?);
        }
        Ok(responses)
    }
}

impl ClientHandler for ClientSide {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        // Tool calls may run as tasks (the 2026-07-28 extension; the 2025-11-25 `tasks`
        // capability has no field in rmcp's ClientCapabilities, and servers do not ask for it).
        if self.tasks_extension {
            let tasks = (
                rmcp::model::TASKS_EXTENSION_ID.to_string(),
                Default::default(),
            );
            capabilities.extensions = Some([tasks].into_iter().collect());
        }
        if self.elicitor.is_some() || self.relay_input {
            capabilities.elicitation = Some(
                ElicitationCapability::new()
                    .with_form(FormElicitationCapability::default())
                    .with_url(UrlElicitationCapability::new()),
            );
        }
        if self.relay_input {
            capabilities.sampling = Some(Default::default());
        }
        ClientConfig::new(
            capabilities,
            Implementation::new("toolnexus", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(self.offered.clone())
    }

    /// Answered as `ClientSide::elicit` says.
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Ok(self.elicit(request).await)
    }

    /// Only a forwarded call's front client can answer (toolnexus has no model of its own).
    #[allow(deprecated)] // sampling is deprecated by SEP-2577 but still relayed.
    async fn create_message(
        &self,
        request: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        match self.relays.sample(request).await {
            Some(result) => Ok(result),
            None => Err(ErrorData::invalid_request(
                "no client of this gateway can answer sampling right now",
                None,
            )),
        }
    }

    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        self.relays.progress(params);
    }

    async fn on_tool_list_changed(&self, _context: rmcp::service::NotificationContext<RoleClient>) {
        self.tools_changed.notify();
    }

    async fn on_prompt_list_changed(
        &self,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        self.prompts_changed.notify();
    }

    async fn on_resource_list_changed(
        &self,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        self.resources_changed.notify();
    }

    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        self.updates.deliver(&params.uri);
    }

    /// A 2025-11-25 `notifications/tasks/status` goes to the task calls in flight.
    async fn on_custom_notification(
        &self,
        notification: rmcp::model::CustomNotification,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        if notification.method == "notifications/tasks/status"
            && let Some(serde_json::Value::Object(params)) = notification.params
            && self.task_status.receiver_count() > 0
        {
            // Only what a task call reads is queued, each part bounded.
            let mut kept = serde_json::Map::new();
            for key in ["taskId", "status", "statusMessage", "pollInterval"] {
                match params.get(key) {
                    Some(serde_json::Value::String(text))
                        if text.len() > crate::bounds::TASK_MAX_MESSAGE_CHARS * 4 =>
                    {
                        let cut: String = text
                            .chars()
                            .take(crate::bounds::TASK_MAX_MESSAGE_CHARS + 1)
                            .collect();
                        kept.insert(key.into(), serde_json::Value::String(cut));
                    }
                    Some(serde_json::Value::Object(_) | serde_json::Value::Array(_)) => {
                        kept.insert(key.into(), serde_json::Value::Null);
                    }
                    Some(value) => {
                        kept.insert(key.into(), value.clone());
                    }
                    None => {}
                }
            }
            let _ = self.task_status.send(serde_json::Value::Object(kept));
        }
    }

    #[allow(deprecated)] // logging is deprecated by SEP-2577 but still relayed.
    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        self.relays.log(params);
    }
}
