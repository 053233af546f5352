//! Legacy HTTP+SSE client transport (MCP 2024-11-05), which rmcp 3.x does not ship.
//!
//! A GET opens the event stream; its first `endpoint` event names the URL that every client
//! message is POSTed to; server messages arrive as `message` events on the stream.

use futures::StreamExt;
use reqwest::header::{ACCEPT, HeaderMap};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::RoleClient;
use rmcp::transport::Transport;
use sse_stream::SseStream;
use tokio::sync::mpsc;

use super::http::redact_url;
use super::reason::{self, Cause, SseError};

pub(crate) struct SseTransport {
    client: reqwest::Client,
    headers: HeaderMap,
    endpoint: String,
    inbound: mpsc::Receiver<ServerJsonRpcMessage>,
    reader: tokio::task::JoinHandle<()>,
}

impl SseTransport {
    /// Opens the event stream and waits for the `endpoint` event.
    pub(crate) async fn connect(
        client: reqwest::Client,
        url: &str,
        headers: HeaderMap,
    ) -> Result<Self, Cause> {
        let response = client
            .get(url)
            .headers(headers.clone())
            .header(ACCEPT, "text/event-stream")
            .send()
            .await
            .map_err(|e| reason::network(&e))?;
        if !response.status().is_success() {
            return Err(status_cause(&response));
        }
        let content_type = content_type(&response);
        if !content_type
            .as_deref()
            .is_some_and(|ct| ct.to_ascii_lowercase().starts_with("text/event-stream"))
        {
            return Err(Cause::NotMcp { content_type });
        }
        let base = response.url().clone();
        let mut events = SseStream::from_bytes_stream(response.bytes_stream());
        let endpoint = loop {
            match events.next().await {
                Some(Ok(event)) if event.event.as_deref() == Some("endpoint") => {
                    let data = event.data.unwrap_or_default();
                    let joined = base.join(data.trim()).map_err(|e| {
                        Cause::Words(format!("SSE endpoint event carried an invalid URL ({e})"))
                    })?;
                    // Our headers (often credentials) must not be sent to another origin.
                    if joined.origin() != base.origin() {
                        return Err(Cause::Words(format!(
                            "SSE endpoint event points to another origin ({}); refused",
                            redact_url(joined.as_str())
                        )));
                    }
                    break joined.to_string();
                }
                Some(Ok(_)) => continue,
                Some(Err(e)) => {
                    return Err(Cause::Network(format!(
                        "SSE stream broke: {}",
                        reason::bounded(&e.to_string())
                    )));
                }
                None => {
                    return Err(Cause::Words(format!(
                        "SSE stream from {} ended before its endpoint event",
                        redact_url(url)
                    )));
                }
            }
        };
        let (tx, inbound) = mpsc::channel(256);
        let reader = tokio::spawn(async move {
            while let Some(Ok(event)) = events.next().await {
                let is_message = matches!(event.event.as_deref(), None | Some("message"));
                let Some(data) = event.data.filter(|_| is_message) else {
                    continue;
                };
                // A message that is not JSON-RPC is dropped, as a stdio line would be.
                let data = crate::compat::execution::tuck(&data).unwrap_or(data);
                if let Ok(message) = serde_json::from_str::<ServerJsonRpcMessage>(&data)
                    && tx.send(message).await.is_err()
                {
                    break;
                }
            }
        });
        Ok(Self {
            client,
            headers,
            endpoint,
            inbound,
            reader,
        })
    }
}

impl Transport<RoleClient> for SseTransport {
    type Error = SseError;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let request = self
            .client
            .post(&self.endpoint)
            .headers(self.headers.clone())
            .timeout(crate::bounds::SSE_POST_TIMEOUT)
            .json(&item);
        async move {
            let response = request
                .send()
                .await
                .map_err(|e| SseError(reason::network(&e)))?;
            if response.status().is_success() {
                Ok(())
            } else {
                Err(SseError(status_cause(&response)))
            }
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<ServerJsonRpcMessage>> + Send {
        self.inbound.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.reader.abort();
        Ok(())
    }
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// An HTTP answer that is not the event stream (or the 2xx to a POST) we asked for.
fn status_cause(response: &reqwest::Response) -> Cause {
    Cause::Http {
        status: response.status().as_u16(),
        content_type: content_type(response),
        detail: None,
    }
}

fn content_type(response: &reqwest::Response) -> Option<String> {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(reason::bounded)
}
