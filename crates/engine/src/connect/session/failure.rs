//! Why a tool call (or another request: a read, a prompt, a completion) got no result, on
//! either road (rmcp's service or the stdio transport's direct requests), and the one place
//! that puts it in words.

use std::time::Duration;

use rmcp::service::ServiceError;
use tokio_util::sync::CancellationToken;

use crate::connect::stdio::direct::Failure;
use crate::surface::SurfaceError;

/// Why a call got no result.
#[derive(Debug)]
pub(super) enum NoResult {
    /// Aborted by the caller (`notifications/cancelled` was sent).
    Aborted,
    /// The session was closed while the call ran.
    SourceClosed,
    /// No answer (nor progress) within the timeout.
    TimedOut(Duration),
    /// The server answered with a JSON-RPC error: its code, message and data.
    Refused(SurfaceError),
    /// The connection ended mid-call: why takes asking the connection.
    Closed,
    /// Anything else: why, in words (said after "<what> failed: ").
    Failed(String),
}

impl From<Failure> for NoResult {
    fn from(failure: Failure) -> Self {
        match failure {
            Failure::JsonRpc { code, message } => NoResult::Refused(SurfaceError {
                code: Some(code),
                message,
                data: None,
            }),
            Failure::TimedOut(timeout) => NoResult::TimedOut(timeout),
            Failure::Aborted => NoResult::Aborted,
            Failure::Closed => NoResult::Closed,
        }
    }
}

impl From<ServiceError> for NoResult {
    fn from(error: ServiceError) -> Self {
        match error {
            ServiceError::Timeout { timeout } => NoResult::TimedOut(timeout),
            ServiceError::McpError(e) => NoResult::Refused((&e).into()),
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => NoResult::Closed,
            other => NoResult::Failed(crate::connect::reason::service_error(&other).to_string()),
        }
    }
}

impl NoResult {
    /// Its words, or `None` when they take asking the connection why it ended
    /// (`LiveServer::describe_closed`). A closed session wins over all but an abort.
    /// Why there is no result, as telemetry's `error.type` names it: `cancelled`, `closed`,
    /// `timeout`, the server's JSON-RPC error code, else `_OTHER`.
    pub(super) fn error_type(&self) -> String {
        match self {
            NoResult::Aborted => "cancelled".into(),
            NoResult::SourceClosed | NoResult::Closed => "closed".into(),
            NoResult::TimedOut(_) => "timeout".into(),
            NoResult::Refused(SurfaceError {
                code: Some(code), ..
            }) => code.to_string(),
            NoResult::Refused(_) | NoResult::Failed(_) => super::OTHER_ERROR.into(),
        }
    }

    pub(super) fn words(&self, closed: &CancellationToken) -> Option<String> {
        self.words_of(CALL, closed)
    }

    /// Its words for a request that is `what` ("MCP tool call", "resources/read").
    pub(super) fn words_of(&self, what: &str, closed: &CancellationToken) -> Option<String> {
        Some(match self {
            NoResult::Aborted => format!("{what} aborted"),
            _ if closed.is_cancelled() => "not connected (source closed)".to_string(),
            NoResult::SourceClosed => "not connected (source closed)".to_string(),
            NoResult::TimedOut(timeout) => {
                format!("{what} timed out after {} ms", timeout.as_millis())
            }
            NoResult::Refused(error) => error.message.clone(),
            NoResult::Failed(why) => format!("{what} failed: {why}"),
            NoResult::Closed => return None,
        })
    }
}

/// What a tool call is called in its failures.
pub(super) const CALL: &str = "MCP tool call";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_road_words_a_failure_alike() {
        let open = CancellationToken::new();
        let closed = CancellationToken::new();
        closed.cancel();
        let timeout = Duration::from_millis(1500);
        let words = |why: NoResult, token: &CancellationToken| why.words(token);
        assert_eq!(
            words(Failure::TimedOut(timeout).into(), &open),
            words(ServiceError::Timeout { timeout }.into(), &open)
        );
        assert_eq!(
            words(Failure::TimedOut(timeout).into(), &open).as_deref(),
            Some("MCP tool call timed out after 1500 ms")
        );
        assert_eq!(words(Failure::Closed.into(), &open), None);
        assert_eq!(words(ServiceError::TransportClosed.into(), &open), None);
        assert_eq!(
            words(Failure::Closed.into(), &closed).as_deref(),
            Some("not connected (source closed)")
        );
        assert_eq!(
            words(Failure::Aborted.into(), &closed).as_deref(),
            Some("MCP tool call aborted")
        );
        let refused = Failure::JsonRpc {
            code: -32602,
            message: "Unknown tool: nope".into(),
        };
        assert_eq!(
            words(refused.into(), &open).as_deref(),
            Some("Unknown tool: nope")
        );
    }
}
