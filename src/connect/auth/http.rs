//! The streamable-HTTP client with OAuth: each request carries the server's current token, and
//! a 401 or a 403 `insufficient_scope` is recovered from ([`ServerAuth::recover`]) and the
//! request sent again, so a step-up in the middle of a tool call is invisible to the caller.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, ErrorCode, ErrorData, JsonRpcError, JsonRpcMessage,
};
use rmcp::transport::auth::AuthError;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};

use super::{MAX_AUTHORIZATIONS, ServerAuth};
use crate::connect::http::Cancellable;

type Error = StreamableHttpError<reqwest::Error>;
type SseStream = futures::stream::BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>;
type Headers = HashMap<HeaderName, HeaderValue>;

#[derive(Clone)]
pub struct Authorized {
    inner: Cancellable,
    /// `None` for a server with a static `Authorization` header: requests pass through.
    auth: Option<Arc<ServerAuth>>,
}

impl Authorized {
    pub fn new(inner: Cancellable, auth: Option<Arc<ServerAuth>>) -> Self {
        Self { inner, auth }
    }

    async fn token(&self) -> Option<String> {
        match &self.auth {
            Some(auth) => auth.token().await,
            None => None,
        }
    }

    async fn send<T, F, Fut>(&self, call: F) -> Result<T, Error>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = Result<T, Error>>,
    {
        let Some(auth) = &self.auth else {
            return call(None).await;
        };
        let mut token = auth.token().await;
        // Each recovery either authorises (bounded per connection) or fails; the bound here only
        // guards against a server that keeps rejecting fresh tokens.
        for _ in 0..=MAX_AUTHORIZATIONS + 1 {
            let (challenge, insufficient) = match call(token.clone()).await {
                Err(StreamableHttpError::AuthRequired(e)) => (e.www_authenticate_header, None),
                Err(StreamableHttpError::InsufficientScope(e)) => {
                    let scope = e.required_scope.unwrap_or_default();
                    (e.www_authenticate_header, Some(scope))
                }
                other => return other,
            };
            let recovered = auth
                .recover(&challenge, token.as_deref(), insufficient.as_deref())
                .await;
            match recovered {
                Ok(fresh) => token = Some(fresh),
                Err(reason) => {
                    return Err(StreamableHttpError::Auth(AuthError::AuthorizationFailed(
                        reason,
                    )));
                }
            }
        }
        Err(StreamableHttpError::Auth(AuthError::AuthorizationFailed(
            "authorization refused: the server rejects every token it is given".into(),
        )))
    }
}

/// A tool call whose authorisation could not be recovered gets that reason as its JSON-RPC
/// error, so the connection (and the server's other tools) stays usable; any other request
/// fails the transport with it (the reason of a failed connection).
fn answer_refusal(
    message: &ClientJsonRpcMessage,
    error: Error,
) -> Result<StreamableHttpPostResponse, Error> {
    let StreamableHttpError::Auth(AuthError::AuthorizationFailed(reason)) = &error else {
        return Err(error);
    };
    match message {
        JsonRpcMessage::Request(request)
            if matches!(request.request, ClientRequest::CallToolRequest(_)) =>
        {
            let refusal = ErrorData::new(ErrorCode(-32001), reason.clone(), None);
            let answer =
                JsonRpcMessage::Error(JsonRpcError::new(Some(request.id.clone()), refusal));
            Ok(StreamableHttpPostResponse::Json(answer, None))
        }
        _ => Err(error),
    }
}

impl StreamableHttpClient for Authorized {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<StreamableHttpPostResponse, Error> {
        self.send(|token| {
            self.inner.post_message(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
            )
        })
        .await
        .or_else(|error| answer_refusal(&message, error))
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, Error> {
        self.send(|token| {
            self.inner.post_message_with_max_sse_event_size(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
        .or_else(|error| answer_refusal(&message, error))
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: Headers,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Error> {
        self.send(|token| {
            self.inner.post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
                limits,
            )
        })
        .await
        .or_else(|error| answer_refusal(&message, error))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<(), Error> {
        // Closing never asks the user: a session the server no longer accepts is gone anyway.
        let token = self.token().await;
        self.inner
            .delete_session(uri, session_id, token, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<SseStream, Error> {
        let token = self.token().await;
        self.inner
            .get_stream(uri, session_id, last_event_id, token, custom_headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> Result<SseStream, Error> {
        let token = self.token().await;
        self.inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                token,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}
