//! The one streamable-HTTP client of a remote connection: the process's reqwest client, with
//!
//! - every request and response stream of the connection ended when its `cancel` fires. rmcp's
//!   streamable-HTTP worker awaits its first POST (and reads that POST's response stream)
//!   without watching its own cancellation, so a server that never answers, or streams forever,
//!   would otherwise keep that socket open after toolnexus gave up on it at its timeout;
//! - the cause of a failure rmcp's worker only reports as a closed transport kept
//!   ([`LostCause`]: an answer over the size bound), so the reason can say it;
//! - OAuth: each request carries the server's current token, and a 401 or a 403
//!   `insufficient_scope` is recovered from ([`ServerAuth::recover`]) and the request sent
//!   again, so a step-up in the middle of a tool call is invisible to the caller;
//! - DPoP: a bound token goes as `Authorization: DPoP …` with a fresh proof of the request
//!   (GET and DELETE too), and a 401 `use_dpop_nonce` is answered once with a proof carrying the
//!   server's nonce, never by signing in again.

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
use tokio_util::sync::CancellationToken;

use super::LostCause;
use crate::connect::auth::dpop::{DPOP, DPOP_NONCE, asks_for_nonce};
use crate::connect::auth::{MAX_AUTHORIZATIONS, ServerAuth};

type Error = StreamableHttpError<reqwest::Error>;
type SseStream = futures::stream::BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>;
type Headers = HashMap<HeaderName, HeaderValue>;

#[derive(Clone)]
pub(crate) struct RemoteClient {
    inner: reqwest::Client,
    cancel: CancellationToken,
    cause: LostCause,
    /// `None` for a server without OAuth (a static `Authorization` header, or none): requests
    /// pass through.
    auth: Option<Arc<ServerAuth>>,
}

impl RemoteClient {
    pub(crate) fn new(
        cancel: CancellationToken,
        cause: LostCause,
        auth: Option<Arc<ServerAuth>>,
    ) -> Self {
        Self {
            inner: super::client(),
            cancel,
            cause,
            auth,
        }
    }

    /// The server's current token, without asking the user for one.
    async fn token(&self) -> Option<String> {
        match &self.auth {
            Some(auth) => auth.token().await,
            None => None,
        }
    }

    /// The token as a request carries it: a bearer token for rmcp to send, or, for a token
    /// bound by DPoP, `Authorization: DPoP …` and a fresh proof of `method` to `uri` in the
    /// headers.
    fn present(
        &self,
        method: &str,
        uri: &str,
        token: Option<String>,
        mut headers: Headers,
    ) -> (Option<String>, Headers) {
        let dpop = self.auth.as_ref().and_then(|auth| auth.bound());
        let (Some(dpop), Some(token)) = (dpop, token.as_deref()) else {
            return (token, headers);
        };
        let scheme = HeaderValue::from_str(&format!("DPoP {token}"));
        let proof = HeaderValue::from_str(&dpop.proof(method, uri, Some(token)));
        if let (Ok(scheme), Ok(proof)) = (scheme, proof) {
            headers.insert(reqwest::header::AUTHORIZATION, scheme);
            headers.insert(HeaderName::from_static(DPOP), proof);
        }
        (None, headers)
    }

    /// The nonce a server's `401 use_dpop_nonce` gave. rmcp keeps only a 401's
    /// `WWW-Authenticate`, so the nonce is asked for again with a request that cannot act (an
    /// empty JSON-RPC batch, invalid by definition), whose refusal carries it.
    async fn learn_nonce(&self, target: &Target<'_>, token: Option<&str>) -> Result<(), Error> {
        let refused = dpop_refused;
        let (Some(dpop), Some(token)) = (self.auth.as_ref().and_then(|a| a.bound()), token) else {
            return Err(refused(
                "the server asks for a nonce, but no token is bound",
            ));
        };
        let uri = target.uri;
        let mut probe = self.inner.post(uri);
        // The entry's own headers (an API key, a gateway's routing) and the session, as the
        // refused request had them.
        for (name, value) in target.headers {
            probe = probe.header(name, value);
        }
        if let Some(session) = target.session {
            probe = probe.header("mcp-session-id", session);
        }
        let probe = probe
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(
                reqwest::header::ACCEPT,
                "application/json, text/event-stream",
            )
            .header(reqwest::header::AUTHORIZATION, format!("DPoP {token}"))
            .header(DPOP, dpop.proof("POST", uri, Some(token)))
            .body("[]")
            .send();
        let response = self
            .guard(async { probe.await.map_err(StreamableHttpError::Client) })
            .await?;
        match response
            .headers()
            .get(DPOP_NONCE)
            .and_then(|v| v.to_str().ok())
        {
            Some(nonce) => {
                dpop.remember_nonce(uri, nonce);
                Ok(())
            }
            None => Err(refused("the server asks for a nonce and gives none")),
        }
    }

    /// One request, ended by `cancel`, its lost cause noted.
    async fn guard<T>(&self, work: impl Future<Output = Result<T, Error>>) -> Result<T, Error> {
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

    /// `call` with the current token as the request carries it ([`RemoteClient::present`]) and
    /// the target's headers (guarded); a refused token is recovered from and `call` made again
    /// with the fresh one.
    async fn send<T, F, Fut>(&self, target: &Target<'_>, call: F) -> Result<T, Error>
    where
        F: Fn(Option<String>, Headers) -> Fut,
        Fut: Future<Output = Result<T, Error>>,
    {
        let call = |token: Option<String>| {
            let (bearer, headers) = self.present("POST", target.uri, token, target.headers.clone());
            call(bearer, headers)
        };
        let Some(auth) = &self.auth else {
            return self.guard(call(None)).await;
        };
        let mut token = auth.token().await;
        let mut nonce_asked = false;
        // Each recovery either authorises (bounded per connection) or fails; the bound here only
        // guards against a server that keeps rejecting fresh tokens.
        for _ in 0..=MAX_AUTHORIZATIONS + 1 {
            let (challenge, insufficient) = match self.guard(call(token.clone())).await {
                // A nonce is not a reason to sign in again: one more proof, with it; a server
                // that asks again, or refuses the proof, fails the request in words.
                Err(StreamableHttpError::AuthRequired(e)) if auth.bound().is_some() => {
                    let challenge = &e.www_authenticate_header;
                    if challenge.contains("invalid_dpop_proof") {
                        return Err(dpop_refused("the server refused the proof"));
                    }
                    if asks_for_nonce(challenge) {
                        if nonce_asked {
                            return Err(dpop_refused("the server keeps asking for a nonce"));
                        }
                        nonce_asked = true;
                        self.learn_nonce(target, token.as_deref()).await?;
                        continue;
                    }
                    (e.www_authenticate_header, None)
                }
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

    /// A POST: sent with [`RemoteClient::send`]; its event stream ends with the connection.
    async fn post<F, Fut>(
        &self,
        target: Target<'_>,
        message: &ClientJsonRpcMessage,
        call: F,
    ) -> Result<StreamableHttpPostResponse, Error>
    where
        F: Fn(Option<String>, Headers) -> Fut,
        Fut: Future<Output = Result<StreamableHttpPostResponse, Error>>,
    {
        match self.send(&target, call).await {
            Ok(StreamableHttpPostResponse::Sse(stream, session)) => Ok(
                StreamableHttpPostResponse::Sse(self.until_cancelled(stream), session),
            ),
            Ok(other) => Ok(other),
            Err(error) => answer_refusal(message, error),
        }
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
                    if let Some(tucked) = event
                        .data
                        .as_deref()
                        .and_then(crate::compat::execution::tuck)
                    {
                        event.data = Some(tucked);
                    }
                    event
                })
            });
        Box::pin(stream.take_until(self.cancel.clone().cancelled_owned()))
    }
}

/// What one POST is sent to: its URI, the entry's headers and the session (the nonce probe
/// carries them too).
struct Target<'a> {
    uri: &'a str,
    headers: &'a Headers,
    session: Option<&'a str>,
}

impl<'a> Target<'a> {
    fn new(uri: &'a str, headers: &'a Headers, session: Option<&'a str>) -> Self {
        Self {
            uri,
            headers,
            session,
        }
    }
}

fn dpop_refused(why: &str) -> Error {
    StreamableHttpError::Auth(AuthError::AuthorizationFailed(format!(
        "DPoP proof rejected: {why}"
    )))
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

impl StreamableHttpClient for RemoteClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let target = Target::new(&uri, &custom_headers, session_id.as_deref());
        self.post(target, &message, |bearer, headers| {
            self.inner.post_message(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                bearer,
                headers,
            )
        })
        .await
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
        let target = Target::new(&uri, &custom_headers, session_id.as_deref());
        self.post(target, &message, |bearer, headers| {
            self.inner.post_message_with_max_sse_event_size(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                bearer,
                headers,
                max_sse_event_size,
            )
        })
        .await
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
        let target = Target::new(&uri, &custom_headers, session_id.as_deref());
        self.post(target, &message, |bearer, headers| {
            self.inner.post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                bearer,
                headers,
                limits,
            )
        })
        .await
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
        let (bearer, headers) = self.present("DELETE", &uri, token, custom_headers);
        let delete = self.inner.delete_session(uri, session_id, bearer, headers);
        self.guard(delete).await
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
        let (bearer, headers) = self.present("GET", &uri, token, custom_headers);
        let get = self
            .inner
            .get_stream(uri, session_id, last_event_id, bearer, headers);
        self.guard(get).await.map(|s| self.until_cancelled(s))
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
        let (bearer, headers) = self.present("GET", &uri, token, custom_headers);
        let get = self.inner.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            bearer,
            headers,
            max_sse_event_size,
        );
        self.guard(get).await.map(|s| self.until_cancelled(s))
    }
}
