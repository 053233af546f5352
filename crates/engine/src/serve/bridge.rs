//! A [`ToolServer`] fed one message at a time: what `buildMcpServer(...).connect(transport)`
//! uses for an SDK `Transport`, whose messages arrive through JavaScript callbacks.

use futures::StreamExt;
use futures::channel::mpsc;
use rmcp::ServiceExt;
use rmcp::model::{ClientJsonRpcMessage, ErrorCode, ServerJsonRpcMessage};
use serde_json::{Value, json};

use super::ToolServer;

use crate::bounds::SERVE_BRIDGE_BACKLOG as BACKLOG;

/// The sending half of a bridged session; dropping it (or `close`) ends the session once the
/// calls in flight have been answered.
pub struct Bridge {
    incoming: Option<mpsc::Sender<ClientJsonRpcMessage>>,
    /// Replies to messages that never reached rmcp (unreadable ones) go straight out.
    reply: std::sync::Arc<dyn Fn(Value) + Send + Sync>,
}

impl Bridge {
    /// Starts serving; every outgoing message is handed to `send` as JSON.
    pub fn start(server: ToolServer, send: std::sync::Arc<dyn Fn(Value) + Send + Sync>) -> Self {
        let (incoming, stream) = mpsc::channel::<ClientJsonRpcMessage>(BACKLOG);
        let (outgoing, mut replies) = mpsc::unbounded::<ServerJsonRpcMessage>();
        let forward = send.clone();
        let session = server.for_session();
        let announcer = session.clone();
        tokio::spawn(async move {
            while let Some(message) = replies.next().await {
                let message = announcer.announce_tasks(message);
                if let Ok(value) = serde_json::to_value(&message) {
                    forward(value);
                }
            }
        });
        tokio::spawn(async move {
            if let Ok(running) = super::wire::Wire(session).serve((outgoing, stream)).await {
                let _ = running.waiting().await;
            }
        });
        Self {
            incoming: Some(incoming),
            reply: send,
        }
    }

    /// One message from the client. A message that is not JSON-RPC is answered with
    /// `Invalid Request` when it carries an id, and otherwise dropped.
    pub fn push(&mut self, message: Value) {
        let id = message.get("id").cloned();
        let mut message = message;
        super::task_legacy::lift(&mut message);
        let parsed = serde_json::from_value::<ClientJsonRpcMessage>(message);
        let refused = match (parsed, self.incoming.as_mut()) {
            (Ok(message), Some(incoming)) => match incoming.try_send(message) {
                Ok(()) => None,
                Err(_) => Some((ErrorCode::INTERNAL_ERROR, "server is busy or closed")),
            },
            (Ok(_), None) => Some((ErrorCode::INTERNAL_ERROR, "server is closed")),
            (Err(_), _) => Some((ErrorCode::INVALID_REQUEST, "Invalid Request")),
        };
        if let (Some((code, message)), Some(id)) = (refused, id)
            && (id.is_string() || id.is_number())
        {
            (self.reply)(json!({
                "jsonrpc": "2.0", "id": id, "error": {"code": code.0, "message": message}
            }));
        }
    }

    /// No more messages: the session ends once the calls in flight are answered.
    pub fn close(&mut self) {
        self.incoming = None;
    }
}
