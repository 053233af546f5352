//! Remote servers: streamable HTTP (rmcp's transport over reqwest with rustls), and the legacy
//! HTTP+SSE transport tried when streamable HTTP fails on the same URL.

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::transport::streamable_http_client::StreamableHttpError;
use std::sync::OnceLock;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use super::error::ConnectError;

pub(super) mod streamable;
pub(crate) use super::reason::redact_url;

/// One reqwest client for the process: connection pools and TLS roots are built once.
pub(crate) fn client() -> reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            reqwest::Client::builder()
                .user_agent(concat!("toolnexus/", env!("CARGO_PKG_VERSION")))
                .build()
                .unwrap_or_default()
        })
        .clone()
}

/// Builds a header map; a header that is not valid HTTP is a reason naming it (never its value).
pub(crate) fn header_map(headers: &[(String, String)]) -> Result<HeaderMap, ConnectError> {
    let start = |words: String| ConnectError::Start(words);
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let key = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
            start(format!(
                "header name {name:?} is not a valid HTTP header name"
            ))
        })?;
        let value = HeaderValue::from_str(value).map_err(|_| {
            start(format!(
                "header {name:?} has a value that is not valid in HTTP"
            ))
        })?;
        map.insert(key, value);
    }
    Ok(map)
}

pub(crate) fn header_hash_map(map: &HeaderMap) -> HashMap<HeaderName, HeaderValue> {
    map.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// What went wrong under rmcp's transport, when rmcp itself only says "connection closed".
#[derive(Clone, Default)]
pub(crate) struct LostCause(Arc<std::sync::Mutex<Option<String>>>);

impl LostCause {
    pub(crate) fn get(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(super) fn note(&self, error: &StreamableHttpError<reqwest::Error>) {
        if let StreamableHttpError::ResponseBodyTooLarge { max_size } = error {
            *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(format!(
                "the server's answer was larger than the {} MiB a message may be",
                max_size / (1024 * 1024)
            ));
        }
    }
}

impl LostCause {
    /// A response stream that broke (an event over the size bound, a cut connection).
    pub(super) fn note_stream(&self, error: &sse_stream::Error) {
        let text = crate::config::quote::shorten(&error.to_string(), 200);
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(text);
    }
}
