//! Remote servers: streamable HTTP (rmcp's transport over reqwest with rustls), and the legacy
//! HTTP+SSE transport tried when streamable HTTP fails on the same URL.

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use std::sync::OnceLock;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

/// One reqwest client for the process: connection pools and TLS roots are built once.
pub fn client() -> reqwest::Client {
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
pub fn header_map(headers: &[(String, String)]) -> Result<HeaderMap, String> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let key = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("header name {name:?} is not a valid HTTP header name"))?;
        let value = HeaderValue::from_str(value)
            .map_err(|_| format!("header {name:?} has a value that is not valid in HTTP"))?;
        map.insert(key, value);
    }
    Ok(map)
}

pub fn header_hash_map(map: &HeaderMap) -> HashMap<HeaderName, HeaderValue> {
    map.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// The URL without query string or userinfo, which may carry secrets, and cut to a length a
/// reason can quote (a config may hold a megabyte-long URL).
pub fn redact_url(url: &str) -> String {
    match without_secrets(url) {
        Some(parsed) => {
            crate::config::quote::shorten(parsed.as_str(), crate::config::quote::QUOTE_CHARS)
        }
        None => "<invalid URL>".to_string(),
    }
}

/// `url` parsed, without userinfo, query or fragment (the parts that may carry secrets); the
/// parser also lower-cases scheme and host and drops a default port. None if it does not parse.
pub fn without_secrets(url: &str) -> Option<reqwest::Url> {
    let mut parsed = reqwest::Url::parse(url).ok()?;
    let _ = parsed.set_username("");
    let _ = parsed.set_password(None);
    parsed.set_query(None);
    parsed.set_fragment(None);
    Some(parsed)
}

/// The process's reqwest client, with every request and response stream of one connection
/// ended when `cancel` fires. rmcp's streamable-HTTP worker awaits its first POST (and reads
/// that POST's response stream) without watching its own cancellation, so a server that never
/// answers, or streams forever, would otherwise keep that socket open after toolnexus gave up
/// on it at its timeout.
/// It also keeps the cause of a failure rmcp's worker only reports as a closed transport (an
/// answer over the size bound), so the reason can say it.
#[derive(Clone)]
pub struct Cancellable {
    inner: reqwest::Client,
    cancel: tokio_util::sync::CancellationToken,
    cause: LostCause,
}

/// What went wrong under rmcp's transport, when rmcp itself only says "connection closed".
#[derive(Clone, Default)]
pub struct LostCause(Arc<std::sync::Mutex<Option<String>>>);

impl LostCause {
    pub fn get(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn note(&self, error: &StreamableHttpError<reqwest::Error>) {
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
    fn note_stream(&self, error: &sse_stream::Error) {
        let text = crate::config::quote::shorten(&error.to_string(), 200);
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(text);
    }
}

impl Cancellable {
    pub fn new(cancel: tokio_util::sync::CancellationToken, cause: LostCause) -> Self {
        Self {
            inner: client(),
            cancel,
            cause,
        }
    }

    async fn guard<T>(
        &self,
        work: impl std::future::Future<Output = Result<T, StreamableHttpError<reqwest::Error>>>,
    ) -> Result<T, StreamableHttpError<reqwest::Error>> {
        let result = tokio::select! {
            biased;
            _ = self.cancel.cancelled() => Err(StreamableHttpError::TransportChannelClosed),
            result = work => result,
        };
        if let Err(error) = &result {
            self.cause.note(error);
        }
        result
    }

    fn until_cancelled(&self, stream: SseStream) -> SseStream {
        use futures::StreamExt;
        let cause = self.cause.clone();
        let stream = stream
            .inspect(move |item| {
                if let Err(error) = item {
                    cause.note_stream(error);
                }
            })
            // rmcp would drop a listed tool's `execution`: it travels in `_meta` instead.
            .map(|item| {
                item.map(|mut event| {
                    if let Some(tucked) = event.data.as_deref().and_then(super::execution::tuck) {
                        event.data = Some(tucked);
                    }
                    event
                })
            });
        Box::pin(stream.take_until(self.cancel.clone().cancelled_owned()))
    }

    fn response(&self, response: StreamableHttpPostResponse) -> StreamableHttpPostResponse {
        match response {
            StreamableHttpPostResponse::Sse(stream, session) => {
                StreamableHttpPostResponse::Sse(self.until_cancelled(stream), session)
            }
            other => other,
        }
    }
}

type SseStream = futures::stream::BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>;

impl StreamableHttpClient for Cancellable {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let post = self
            .inner
            .post_message(uri, message, session_id, auth_header, custom_headers);
        self.guard(post).await.map(|r| self.response(r))
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let post = self.inner.post_message_with_max_sse_event_size(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            max_sse_event_size,
        );
        self.guard(post).await.map(|r| self.response(r))
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let post = self.inner.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        );
        self.guard(post).await.map(|r| self.response(r))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        let delete = self
            .inner
            .delete_session(uri, session_id, auth_header, custom_headers);
        self.guard(delete).await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<SseStream, StreamableHttpError<Self::Error>> {
        let get =
            self.inner
                .get_stream(uri, session_id, last_event_id, auth_header, custom_headers);
        self.guard(get).await.map(|s| self.until_cancelled(s))
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<SseStream, StreamableHttpError<Self::Error>> {
        let get = self.inner.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            max_sse_event_size,
        );
        self.guard(get).await.map(|s| self.until_cancelled(s))
    }
}
