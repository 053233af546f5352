//! The client side of every connection: what toolnexus tells servers about itself, and how it
//! answers their requests (elicitation is bridged to JavaScript by the caller's `Elicitor`).

use std::sync::Arc;

use futures::future::BoxFuture;
use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, ErrorData, FormElicitationCapability, Implementation, ProtocolVersion,
    UrlElicitationCapability,
};
use rmcp::service::{RequestContext, RoleClient};

/// Counts one server's `notifications/tools/list_changed`; a loadMcp session waits on it to
/// re-list that server. A watch channel, so a burst of notifications costs one re-list.
#[derive(Clone)]
pub struct ToolsChanged {
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
    pub fn notify(&self) {
        self.sender.send_modify(|count| *count += 1);
    }

    /// A receiver that sees every change since this connection's handler was made; it closes
    /// when the connection's handler is dropped.
    pub fn watch(&self) -> tokio::sync::watch::Receiver<u64> {
        self.first.clone()
    }
}

/// Answers `elicitation/create` for one server.
pub type Elicitor =
    Arc<dyn Fn(ElicitRequestParams) -> BoxFuture<'static, ElicitResult> + Send + Sync>;

#[derive(Clone)]
pub struct ClientSide {
    pub elicitor: Option<Elicitor>,
    /// The fronts of forwarded calls in flight, which get this server's messages about them.
    pub(crate) relays: super::relay::Relays,
    pub(crate) tools_changed: ToolsChanged,
    /// The revision `initialize` offers (rmcp's own default names 2026-07-28, which has no
    /// `initialize`).
    pub(crate) offered: ProtocolVersion,
    /// How remote servers of this call are authorised (the app's `authorize`, its token store).
    pub auth: super::auth::AuthContext,
}

impl Default for ClientSide {
    fn default() -> Self {
        Self {
            elicitor: None,
            relays: Default::default(),
            tools_changed: Default::default(),
            offered: ProtocolVersion::LATEST_WITH_INITIALIZE,
            auth: Default::default(),
        }
    }
}

impl ClientSide {
    pub fn with_elicitor(elicitor: Option<Elicitor>) -> Self {
        Self {
            elicitor,
            ..Self::default()
        }
    }

    pub(crate) fn offering(&self, version: ProtocolVersion) -> Self {
        Self {
            offered: version,
            ..self.clone()
        }
    }
}

impl ClientHandler for ClientSide {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        if self.elicitor.is_some() {
            capabilities.elicitation = Some(
                ElicitationCapability::new()
                    .with_form(FormElicitationCapability::default())
                    .with_url(UrlElicitationCapability::new()),
            );
        }
        ClientConfig::new(
            capabilities,
            Implementation::new("toolnexus", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(self.offered.clone())
    }

    /// A forwarded call's front client answers first (a gateway relays the question); else the
    /// caller's `Elicitor`; else it is declined.
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let Some(result) = self.relays.elicit(request.clone()).await {
            return Ok(result);
        }
        Ok(match &self.elicitor {
            Some(elicitor) => elicitor(request).await,
            None => ElicitResult::new(ElicitationAction::Decline),
        })
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

    #[allow(deprecated)] // logging is deprecated by SEP-2577 but still relayed.
    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        self.relays.log(params);
    }
}
