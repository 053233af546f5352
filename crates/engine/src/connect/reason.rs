//! Failure reasons in words: the cause first, never a Rust type name, URLs without their
//! userinfo and query, and anything quoted from a server cut to a length a reason can carry.

use std::error::Error as StdError;
use std::fmt;

use rmcp::service::{ClientInitializeError, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpError;

/// The most characters of a server's own text (a message, a body, a version) a reason quotes.
pub(crate) const QUOTE_CHARS: usize = 300;

/// `text` on one line, cut to [`QUOTE_CHARS`] characters (an ellipsis marks the cut).
pub(crate) fn bounded(text: &str) -> String {
    let one_line: String = text
        .trim()
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if one_line.chars().count() <= QUOTE_CHARS {
        return one_line;
    }
    let mut cut: String = one_line.chars().take(QUOTE_CHARS).collect();
    cut.push('…');
    cut
}

/// The URL without query string or userinfo, which may carry secrets, and cut to a length a
/// reason can quote (a config may hold a megabyte-long URL).
pub(crate) fn redact_url(url: &str) -> String {
    match without_secrets(url) {
        Some(parsed) => {
            crate::config::quote::shorten(parsed.as_str(), crate::config::quote::QUOTE_CHARS)
        }
        None => "<invalid URL>".to_string(),
    }
}

/// `url` parsed, without userinfo, query or fragment (the parts that may carry secrets); the
/// parser also lower-cases scheme and host and drops a default port. None if it does not parse.
pub(crate) fn without_secrets(url: &str) -> Option<reqwest::Url> {
    let mut parsed = reqwest::Url::parse(url).ok()?;
    let _ = parsed.set_username("");
    let _ = parsed.set_password(None);
    parsed.set_query(None);
    parsed.set_fragment(None);
    Some(parsed)
}

/// Why a request to a server failed, before it is placed at its URL.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cause {
    /// The server could not be reached, or the connection broke: "connection refused".
    Network(String),
    /// An HTTP answer that is not an MCP one.
    Http {
        status: u16,
        content_type: Option<String>,
        /// The first line of a plain-text body, when it may say why.
        detail: Option<String>,
    },
    /// A successful HTTP answer of a type MCP never sends (an HTML page, say).
    NotMcp { content_type: Option<String> },
    /// The connection ended before the answer came (said "connection closed", or what was
    /// found to have closed it, `instead`).
    Closed {
        waiting_for: Option<String>,
        instead: Option<String>,
    },
    /// Anything else, already in words (and naming its URL itself when that helps).
    Words(String),
}

/// A legacy SSE transport's failure: its cause, which the reason reads back (see [`transport`]).
#[derive(Debug)]
pub(crate) struct SseError(pub Cause);

impl fmt::Display for SseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl StdError for SseError {}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cause::Network(words) | Cause::Words(words) => f.write_str(words),
            Cause::Closed {
                waiting_for,
                instead,
            } => {
                f.write_str(instead.as_deref().unwrap_or("connection closed"))?;
                match waiting_for {
                    Some(what) => write!(f, " while waiting for the {what}"),
                    None => Ok(()),
                }
            }
            Cause::Http {
                status,
                content_type,
                detail,
            } => {
                let name = http::StatusCode::from_u16(*status)
                    .ok()
                    .and_then(|s| s.canonical_reason())
                    .map_or(String::new(), |r| format!(" {r}"));
                let foreign = content_type.as_deref().filter(|ct| !is_mcp_media_type(ct));
                match (status, foreign, detail) {
                    (401 | 403, ..) => write!(f, "HTTP {status}{name}"),
                    (404 | 405, Some(ct), _) => {
                        write!(f, "not an MCP endpoint (HTTP {status}, {ct})")
                    }
                    (404 | 405, None, _) => write!(f, "not an MCP endpoint (HTTP {status}{name})"),
                    (_, _, Some(detail)) => write!(f, "HTTP {status}{name}: {detail}"),
                    (_, _, None) => write!(f, "HTTP {status}{name}"),
                }
            }
            Cause::NotMcp {
                content_type: Some(ct),
            } => write!(f, "not an MCP endpoint (it answered with {ct})"),
            Cause::NotMcp { content_type: None } => {
                f.write_str("not an MCP endpoint (its answer has no content type)")
            }
        }
    }
}

impl Cause {
    /// The reason as a user reads it: the cause, then where (for causes about one URL).
    pub(crate) fn at(&self, url: &str) -> String {
        match self {
            Cause::Words(words) => words.clone(),
            other => format!("{other} at {}", redact_url(url)),
        }
    }

    /// "connection closed".
    pub(crate) fn closed() -> Cause {
        Cause::Closed {
            waiting_for: None,
            instead: None,
        }
    }
}

/// JSON and event streams are what MCP answers in; anything else is someone else's page.
fn is_mcp_media_type(content_type: &str) -> bool {
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json" || essence == "text/event-stream"
}

/// Why starting a session failed (the handshake, `server/discover`, or the transport under them).
pub(crate) fn init_error(error: &ClientInitializeError) -> Cause {
    use ClientInitializeError as E;
    match error {
        E::TransportError { error, .. } => transport(error.error.as_ref()),
        E::LegacyFallbackFailed { fallback, .. } => init_error(fallback),
        E::ConnectionClosed(waiting_for) => Cause::Closed {
            waiting_for: Some(bounded(waiting_for)),
            instead: None,
        },
        E::JsonRpcError(data) => Cause::Words(format!(
            "server answered with error {}: {}",
            data.code.0,
            bounded(&data.message)
        )),
        E::ExpectedInitResponse(_) | E::ExpectedInitResult(_) => {
            Cause::Words("server answered with something other than the expected result".into())
        }
        E::ConflictInitResponseId(..) | E::UncorrelatedErrorResponse { .. } => {
            Cause::Words("server answered a request it was not sent".into())
        }
        E::NoCompatibleProtocolVersion {
            server_supported, ..
        } => {
            let versions: Vec<&str> = server_supported.iter().map(|v| v.as_str()).collect();
            Cause::Words(format!(
                "server supports protocol versions {}, none of which toolnexus speaks",
                bounded(&versions.join(", "))
            ))
        }
        E::Cancelled => Cause::Words("cancelled".into()),
        _ => Cause::Words("the MCP session could not be started".into()),
    }
}

/// Why a request on an open session failed.
pub(crate) fn service_error(error: &ServiceError) -> Cause {
    match error {
        ServiceError::McpError(data) => Cause::Words(format!(
            "server answered with error {}: {}",
            data.code.0,
            bounded(&data.message)
        )),
        ServiceError::TransportSend(error) => transport(error.error.as_ref()),
        ServiceError::TransportClosed => Cause::closed(),
        ServiceError::UnexpectedResponse => {
            Cause::Words("server answered with an unexpected result".into())
        }
        ServiceError::Timeout { timeout } => {
            Cause::Words(format!("timed out after {} ms", timeout.as_millis()))
        }
        ServiceError::Cancelled { .. } => Cause::Words("cancelled".into()),
        other => Cause::Words(bounded(&other.to_string())),
    }
}

/// The cause inside a transport's error, found by walking its chain to a type we know.
fn transport(error: &(dyn StdError + Send + Sync + 'static)) -> Cause {
    let mut current: Option<&(dyn StdError + 'static)> = Some(error);
    while let Some(e) = current {
        if let Some(e) = e.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            return streamable(e);
        }
        if let Some(e) = e.downcast_ref::<reqwest::Error>() {
            return network(e);
        }
        if let Some(SseError(cause)) = e.downcast_ref::<SseError>() {
            return cause.clone();
        }
        if let Some(e) = e.downcast_ref::<std::io::Error>() {
            return io(e);
        }
        current = e.source();
    }
    Cause::Words(bounded(&innermost(error)))
}

fn streamable(error: &StreamableHttpError<reqwest::Error>) -> Cause {
    use StreamableHttpError as E;
    match error {
        E::Client(e) => network(e),
        E::HttpStatus(status) => Cause::Http {
            status: status.status,
            content_type: None,
            detail: None,
        },
        // rmcp keeps "HTTP <status> <reason>: <body>" for a failure that is not JSON-RPC.
        E::UnexpectedServerResponse(message) => match status_line(message) {
            Some((status, body)) => Cause::Http {
                status,
                content_type: None,
                detail: plain_detail(body),
            },
            None => Cause::Words("server sent an answer that is not a JSON-RPC message".into()),
        },
        E::UnexpectedContentType(content_type) => Cause::NotMcp {
            content_type: content_type.as_deref().map(bounded),
        },
        E::AuthRequired(_) => Cause::Http {
            status: 401,
            content_type: None,
            detail: None,
        },
        E::InsufficientScope(_) => Cause::Http {
            status: 403,
            content_type: None,
            detail: None,
        },
        E::SessionExpired => Cause::Words("session expired (HTTP 404)".into()),
        // OAuth recovery failed: its reason is already in words (`authorization required: …`).
        E::Auth(rmcp::transport::auth::AuthError::AuthorizationFailed(words)) => {
            Cause::Words(words.clone())
        }
        E::Io(e) => io(e),
        E::Sse(e) => Cause::Network(format!("event stream broke: {}", bounded(&e.to_string()))),
        E::Deserialize(e) => Cause::Words(format!(
            "server sent invalid JSON: {}",
            bounded(&e.to_string())
        )),
        E::TransportChannelClosed | E::UnexpectedEndOfStream => Cause::closed(),
        E::TokioJoinError(_) => Cause::Words("internal error in the HTTP transport".into()),
        other => Cause::Words(bounded(&other.to_string())),
    }
}

/// `"HTTP 404 Not Found: <body>"` as (404, "<body>").
fn status_line(message: &str) -> Option<(u16, &str)> {
    let rest = message.strip_prefix("HTTP ")?;
    let code: u16 = rest.get(..3)?.parse().ok()?;
    let body = rest.split_once(": ").map_or("", |(_, body)| body);
    Some((code, body))
}

/// A body's first line, when it reads like a message rather than a page or nothing at all.
fn plain_detail(body: &str) -> Option<String> {
    let first = body.trim().lines().next()?.trim();
    if first.is_empty() || first.starts_with('<') || first == "<empty>" {
        return None;
    }
    Some(bounded(first))
}

/// A reqwest failure in words. reqwest's own text names the full URL (query included), so only
/// its sources are read.
pub(crate) fn network(error: &reqwest::Error) -> Cause {
    if error.is_timeout() {
        return Cause::Network("timed out".into());
    }
    let mut current: Option<&(dyn StdError + 'static)> = error.source();
    let mut texts = Vec::new();
    while let Some(e) = current {
        if let Some(e) = e.downcast_ref::<std::io::Error>()
            && io_kind(e).is_some()
        {
            return io(e);
        }
        texts.push(e.to_string());
        current = e.source();
    }
    let innermost = texts.last().map(String::as_str).unwrap_or("");
    if texts.iter().any(|t| t.contains("dns error")) {
        return Cause::Network(format!(
            "cannot resolve the host name ({})",
            bounded(innermost)
        ));
    }
    // rustls's own words for a failed handshake.
    let lower = innermost.to_ascii_lowercase();
    let tls_words = [
        "certificate",
        "tls",
        "handshake",
        "corrupt message",
        "alert",
        "incompatible",
    ];
    if tls_words.iter().any(|w| lower.contains(w)) {
        return Cause::Network(format!("TLS handshake failed: {}", bounded(innermost)));
    }
    if error.is_connect() {
        return Cause::Network(format!("cannot connect: {}", bounded(innermost)));
    }
    if innermost.is_empty() {
        return Cause::Network("request failed".into());
    }
    Cause::Network(format!("request failed: {}", bounded(innermost)))
}

fn io(error: &std::io::Error) -> Cause {
    match io_kind(error) {
        Some(CLOSED) => Cause::closed(),
        Some(words) => Cause::Network(words.into()),
        None => Cause::Network(bounded(&strip_os_error(&error.to_string()))),
    }
}

const CLOSED: &str = "connection closed";

fn io_kind(error: &std::io::Error) -> Option<&'static str> {
    use std::io::ErrorKind as K;
    Some(match error.kind() {
        K::ConnectionRefused => "connection refused",
        K::ConnectionReset => "connection reset by the server",
        K::ConnectionAborted => "connection aborted",
        K::BrokenPipe => CLOSED,
        K::TimedOut => "timed out",
        K::HostUnreachable => "host unreachable",
        K::NetworkUnreachable => "network unreachable",
        K::AddrNotAvailable => "address not available",
        K::UnexpectedEof => CLOSED,
        _ => return None,
    })
}

/// "Connection refused (os error 111)" reads better without its errno.
fn strip_os_error(text: &str) -> String {
    match text.rfind(" (os error ") {
        Some(i) if text.ends_with(')') => text[..i].to_string(),
        _ => text.to_string(),
    }
}

fn innermost(error: &(dyn StdError + 'static)) -> String {
    let mut current = error;
    while let Some(next) = current.source() {
        current = next;
    }
    strip_os_error(&current.to_string())
}

#[cfg(test)]
#[path = "tests_reason.rs"]
mod tests;
