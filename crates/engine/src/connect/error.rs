//! Why connecting to a server failed, as a type: control flow asks the variant (a timeout, a
//! closed connection, a broken framing), and the words a user reads are made once, by
//! `Display`, at the edge ([`super::inventory`] turns them into each server's `error`).

use std::fmt;
use std::time::Duration;

use super::reason::Cause;

/// A failure of one server's start, handshake or listing.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum ConnectError {
    /// A phase ran past the server's timeout; the server may well still be running.
    #[error("timed out after {} ms during {phase}", after.as_millis())]
    Timeout {
        phase: &'static str,
        after: Duration,
    },
    /// A request to a stdio server (or one over rmcp) failed; `doing` names what was asked
    /// ("tools/list failed: "), empty for the session's start.
    #[error("{doing}{cause}")]
    Request { doing: &'static str, cause: Cause },
    /// A remote server's failure at its URL.
    #[error("{0}")]
    Remote(AtUrl),
    /// The server broke the stdio framing: the detail after "sent an invalid message: ".
    #[error("server sent an invalid message: {0}")]
    Violation(String),
    /// The server could not be started or addressed (command, working directory, URL, headers).
    #[error("{0}")]
    Start(String),
    /// The server answered, but not as MCP asks (a version toolnexus does not speak, a listing
    /// it cannot read), in words.
    #[error("{0}")]
    Protocol(String),
    /// Authorising the server failed, in words.
    #[error("{0}")]
    Auth(String),
    /// Something toolnexus did not expect (a task that panicked), in words.
    #[error("{0}")]
    Internal(String),
}

impl ConnectError {
    /// The connection ended under the request: a server's exit then says more.
    pub(crate) fn is_closed(&self) -> bool {
        match self {
            ConnectError::Request { cause, .. } => matches!(cause, Cause::Closed { .. }),
            ConnectError::Remote(at) => at.shown.iter().any(|c| matches!(c, Cause::Closed { .. })),
            _ => false,
        }
    }

    /// Gave up waiting: the server is most likely still running.
    /// What telemetry's `error.type` says of it: `timeout`, `closed`, else `_OTHER`.
    pub(crate) fn error_type(&self) -> &'static str {
        if self.is_timeout() {
            "timeout"
        } else if self.is_closed() {
            "closed"
        } else {
            "_OTHER"
        }
    }

    pub(crate) fn is_timeout(&self) -> bool {
        matches!(self, ConnectError::Timeout { .. })
    }

    /// An HTTP failure rmcp only saw as a closed connection: its cause, found under rmcp's
    /// transport, stands where "connection closed" would (the first place it would be said).
    pub(crate) fn with_lost_cause(mut self, lost: Option<String>) -> Self {
        let Some(lost) = lost else {
            return self;
        };
        let first_closed = match &mut self {
            ConnectError::Request { cause, .. } => Some(cause),
            ConnectError::Remote(at) => at
                .shown
                .iter_mut()
                .find(|c| matches!(c, Cause::Closed { .. })),
            _ => None,
        };
        if let Some(Cause::Closed { instead, .. }) = first_closed {
            *instead = Some(lost);
        }
        self
    }
}

/// A request's failure on a connection that ends with its server: `doing` is what was asked.
pub(crate) fn request(doing: &'static str, cause: Cause) -> ConnectError {
    ConnectError::Request { doing, cause }
}

/// The causes a remote failure shows at its URL: one, or (streamable HTTP, then legacy SSE) two
/// when they differ.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AtUrl {
    url: String,
    shown: Vec<Cause>,
}

impl AtUrl {
    pub(crate) fn one(cause: Cause, url: &str) -> Self {
        Self {
            url: url.to_string(),
            shown: vec![cause],
        }
    }

    /// Two attempts at the same URL: said once when both failed alike, keeping the more telling
    /// of the two.
    pub(crate) fn both(first: Cause, fallback: Cause, url: &str) -> Self {
        let richer = |c: &Cause| {
            matches!(
                c,
                Cause::Http {
                    content_type: Some(_),
                    ..
                }
            )
        };
        let shown = match (&first, &fallback) {
            (a, b) if a == b => vec![first],
            (Cause::Http { status: a, .. }, Cause::Http { status: b, .. }) if a == b => {
                if richer(&fallback) && !richer(&first) {
                    vec![fallback]
                } else {
                    vec![first]
                }
            }
            _ => vec![first, fallback],
        };
        Self {
            url: url.to_string(),
            shown,
        }
    }
}

impl fmt::Display for AtUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, cause) in self.shown.iter().enumerate() {
            if i > 0 {
                f.write_str("; legacy SSE fallback: ")?;
            }
            f.write_str(&cause.at(&self.url))?;
        }
        Ok(())
    }
}

/// How a stdio child ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Exit {
    Code(i32),
    Signal(i32),
    /// Ended, with neither a code nor a signal to say.
    Unknown,
}

impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Exit::Code(code) => write!(f, "exited (code {code})"),
            Exit::Signal(signal) => write!(f, "was killed by signal {signal}"),
            Exit::Unknown => f.write_str("exited"),
        }
    }
}

/// A server's failure with what its process showed: how it exited, the tail of its stderr, and
/// what it printed to stdout that was not a message. Its `Display` is the server's `error`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Explained {
    pub(crate) error: ConnectError,
    pub(crate) exit: Option<Exit>,
    pub(crate) stderr: String,
    pub(crate) stdout: String,
}

impl From<ConnectError> for Explained {
    fn from(error: ConnectError) -> Self {
        Self {
            error,
            exit: None,
            stderr: String::new(),
            stdout: String::new(),
        }
    }
}

impl fmt::Display for Explained {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.exit {
            // The exit is the real cause; "connection closed" adds nothing.
            Some(exit) if self.error.is_closed() => write!(f, "{exit}")?,
            Some(exit) => write!(f, "{} ({exit})", self.error)?,
            None => write!(f, "{}", self.error)?,
        }
        if !self.stderr.is_empty() {
            write!(f, "; stderr: {}", self.stderr)?;
        }
        if !self.stdout.is_empty() {
            write!(f, "; stdout (not JSON-RPC): {}", self.stdout)?;
        }
        Ok(())
    }
}

/// How a configured server ended up: the status words of an inventory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Connected,
    Disabled,
    Failed,
}

impl Status {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Status::Connected => "connected",
            Status::Disabled => "disabled",
            Status::Failed => "failed",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Runs one phase of a server's life under its timeout.
pub(crate) async fn phase<T>(
    name: &'static str,
    timeout: Duration,
    work: impl std::future::Future<Output = Result<T, ConnectError>>,
) -> Result<T, ConnectError> {
    match tokio::time::timeout(timeout, work).await {
        Ok(result) => result,
        Err(_) => Err(ConnectError::Timeout {
            phase: name,
            after: timeout,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_made_at_the_edge() {
        let timeout = ConnectError::Timeout {
            phase: "initialize",
            after: Duration::from_millis(1500),
        };
        assert_eq!(
            timeout.to_string(),
            "timed out after 1500 ms during initialize"
        );
        assert!(timeout.is_timeout() && !timeout.is_closed());
        let closed = request("tools/list failed: ", Cause::closed());
        assert_eq!(closed.to_string(), "tools/list failed: connection closed");
        let explained = Explained {
            error: closed.clone(),
            exit: Some(Exit::Code(3)),
            stderr: "boom".into(),
            stdout: String::new(),
        };
        assert_eq!(explained.to_string(), "exited (code 3); stderr: boom");
        let lost = closed.with_lost_cause(Some("too big".into()));
        assert_eq!(lost.to_string(), "tools/list failed: too big");
        let both = AtUrl::both(Cause::Network("x".into()), Cause::closed(), "http://h/");
        let lost = ConnectError::Remote(both).with_lost_cause(Some("gone".into()));
        assert_eq!(
            lost.to_string(),
            "x at http://h/; legacy SSE fallback: gone at http://h/"
        );
        assert_eq!(
            serde_json::to_string(&Status::Disabled).unwrap(),
            "\"disabled\""
        );
    }
}
