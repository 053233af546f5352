//! Portable handshake-era sessions: what lets any replica sharing the endpoint's state key
//! carry on a session another replica opened, behind a load balancer without affinity.
//!
//! rmcp restores a session it does not know from a [`SessionStore`] (it replays the client's
//! `initialize` and `notifications/initialized` on a fresh worker). Here the store is the
//! session id itself: the id a client sees is sealed ([`Purpose::Session`]) and holds the local
//! id rmcp gave the session, the client's `initialize` parameters, its owner and when it was
//! issued. The HTTP front opens it on the way in (a request is then rmcp's with the local id,
//! and the opened state waits for [`SessionStore::load`]), and seals the local id of a fresh
//! session on the way out (the parameters wait there from [`SessionStore::store`]).
//!
//! A request the server sends the client on a session's stream gets a sealed id too
//! ([`Purpose::RequestId`]): which replica sent it, for which session, under which id. The
//! client's answer may reach any replica: the one that sent the request gets the original id
//! back, another forwards the client's POST there (once: a forwarded POST is never forwarded
//! again).
//!
//! An id that does not open, is older than the lifetime, or was ended by DELETE on this replica
//! is answered as an unknown session (404); one opened by another principal is refused (403).
//! Other replicas accept a DELETEd id until its lifetime ends.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Response, StatusCode};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use rmcp::model::{ClientJsonRpcMessage, InitializeRequestParams, RequestId};
use rmcp::transport::streamable_http_server::session::store::{
    SessionState, SessionStore, SessionStoreError,
};
use serde::{Deserialize, Serialize};

use crate::bounds;
use crate::serve::caller::Caller;
use crate::serve::seal::{Purpose, StateKey, now_secs};
use bounded::Bounded;

mod bounded;
mod requests;

type Body = BoxBody<Bytes, Infallible>;

const SESSION_HEADER: &str = "mcp-session-id";
/// Marks a client's POST one replica forwarded to another.
pub(crate) const FORWARDED_HEADER: &str = "x-toolnexus-forwarded";
/// The client's headers a forwarded POST carries.
const FORWARDED_HEADERS: [&str; 6] = [
    "mcp-session-id",
    "authorization",
    "mcp-protocol-version",
    "host",
    "content-type",
    "accept",
];

tokio::task_local! {
    /// The headers of the client's request being answered, as it sent them (for a forward).
    static CLIENT_HEADERS: HeaderMap;
}

/// `answer` run with the client's headers at hand for a forward.
pub(crate) async fn with_client_headers<F: Future>(headers: HeaderMap, answer: F) -> F::Output {
    CLIENT_HEADERS.scope(headers, answer).await
}

/// What a sealed session id holds.
#[derive(Serialize, Deserialize)]
struct SealedSession {
    /// The local id rmcp gave the session where it was opened.
    #[serde(rename = "l")]
    local: String,
    /// The client's `initialize` parameters (version, capabilities, clientInfo).
    #[serde(rename = "p")]
    params: InitializeRequestParams,
    /// The principal that opened it (its key), when opened with a token.
    #[serde(rename = "o")]
    owner: Option<String>,
    /// When it was issued (seconds since the epoch).
    #[serde(rename = "t")]
    issued: u64,
}

/// What a sealed request id holds.
#[derive(Serialize, Deserialize)]
struct SealedRequest {
    /// The URL of the replica that sent the request.
    #[serde(rename = "r")]
    replica: String,
    /// The local id of the session it was sent on.
    #[serde(rename = "s")]
    session: String,
    /// Its id there.
    #[serde(rename = "i")]
    id: RequestId,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The portable sessions of one endpoint (see the module's documentation).
pub(crate) struct Portable {
    key: Arc<StateKey>,
    /// This replica's URL (no trailing slash), named in the ids of its requests.
    replica: String,
    lifetime: Duration,
    /// Fresh sessions' `initialize` parameters by local id, from `store` to the front.
    fresh: Mutex<Bounded<InitializeRequestParams>>,
    /// Opened session states by local id, from the front to `load`.
    opened: Mutex<Bounded<SessionState>>,
    /// Local ids ended by DELETE here, with when (seconds since the epoch).
    denied: Mutex<Bounded<u64>>,
    /// How old an id may get before a request naming it is answered with it renewed.
    renew: Duration,
    client: reqwest::Client,
}

/// What becomes of a request, as far as its session id goes.
pub(crate) enum Inbound {
    /// It names no session.
    Plain,
    /// It named a sealed session, now its local id; `renewed` is its id issued anew when the
    /// one it named is getting old (for the answer's `Mcp-Session-Id`, see [`Portable::renew`]).
    Local {
        local: String,
        renewed: Option<HeaderValue>,
    },
    /// Answered here.
    Refused(Response<Body>),
}

/// What to do with a client's answer to a request of the server.
pub(crate) enum Answer {
    /// It answers a request of this replica's session: on to the session's worker.
    Here(ClientJsonRpcMessage),
    /// It answers a request of another replica: the client's POST goes there.
    Elsewhere(String, ClientJsonRpcMessage),
    /// Nothing to do with it.
    Drop,
}

impl Portable {
    pub(crate) fn new(key: Arc<StateKey>, replica: &str) -> Self {
        // Straight to the replica the sealed id names: never through an environment proxy
        // (the client's Authorization travels on), never to where a redirect points.
        let client = reqwest::Client::builder()
            .timeout(bounds::SERVE_FORWARD_TIMEOUT)
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_else(|_| {
                reqwest::Client::builder()
                    .no_proxy()
                    .build()
                    .unwrap_or_default()
            });
        Self {
            key,
            replica: replica.trim_end_matches('/').to_string(),
            lifetime: bounds::SERVE_PORTABLE_SESSION_LIFETIME,
            fresh: Mutex::new(Bounded::new(bounds::SERVE_PORTABLE_PENDING)),
            opened: Mutex::new(Bounded::new(bounds::SERVE_PORTABLE_PENDING)),
            denied: Mutex::new(Bounded::new(bounds::SERVE_PORTABLE_DENIED)),
            renew: bounds::SERVE_PORTABLE_SESSION_RENEW,
            client,
        }
    }

    /// The session store rmcp restores sessions from.
    pub(crate) fn store(self: &Arc<Self>) -> Arc<dyn SessionStore> {
        Arc::new(Store(self.clone()))
    }

    /// A request's sealed session id opened: its header rewritten to the local id, the state
    /// left for `load`. An id that does not open, has expired or was ended here is answered
    /// 404; a session of another principal 403.
    /// `caller` is the principal key the request came in as (None without auth).
    pub(crate) fn inbound(&self, headers: &mut HeaderMap, caller: Option<&str>) -> Inbound {
        let Some(value) = headers.get(SESSION_HEADER) else {
            return Inbound::Plain;
        };
        let sealed = value
            .to_str()
            .ok()
            .and_then(|v| self.key.open_json::<SealedSession>(Purpose::Session, v));
        let Some(sealed) = sealed else {
            return Inbound::Refused(session_not_found());
        };
        let now = now_secs();
        let age = now.saturating_sub(sealed.issued);
        let expired = age >= self.lifetime.as_secs();
        if expired || self.is_denied(&sealed.local, now) {
            return Inbound::Refused(session_not_found());
        }
        if let Some(owner) = &sealed.owner
            && caller != Some(owner.as_str())
        {
            let denial = crate::serve::auth::Denial::other_session();
            return Inbound::Refused(denial.response().map(|b| Full::new(b).boxed()));
        }
        let Ok(local) = HeaderValue::from_str(&sealed.local) else {
            return Inbound::Refused(session_not_found());
        };
        headers.insert(SESSION_HEADER, local);
        let local = sealed.local.clone();
        lock(&self.opened).insert(local.clone(), SessionState::new(sealed.params.clone()));
        let renewed = (age >= self.renew.as_secs())
            .then(|| {
                let fresh = SealedSession {
                    issued: now,
                    ..sealed
                };
                HeaderValue::from_str(&self.key.seal_json(Purpose::Session, &fresh)).ok()
            })
            .flatten();
        Inbound::Local { local, renewed }
    }

    /// An answer to a request whose session id was getting old carries the id issued anew, so
    /// a session in use never reaches the lifetime (clients take the newest `Mcp-Session-Id`).
    /// Not on a failure, nor on the answer to DELETE.
    pub(crate) fn renew(&self, reply: &mut Response<Body>, renewed: HeaderValue, deleted: bool) {
        if !deleted && reply.status().is_success() && !reply.headers().contains_key(SESSION_HEADER)
        {
            reply.headers_mut().insert(SESSION_HEADER, renewed);
        }
    }

    /// Whether `local` was ended by DELETE here within the lifetime.
    fn is_denied(&self, local: &str, now: u64) -> bool {
        let mut denied = lock(&self.denied);
        let lifetime = self.lifetime.as_secs();
        denied.forget_while(|&at| now.saturating_sub(at) >= lifetime);
        denied.contains(local)
    }

    /// The request that named `local` is answered: its state, if rmcp did not need it, goes.
    pub(crate) fn settled(&self, local: &str) {
        lock(&self.opened).take(local);
    }

    /// A fresh session's local id in `reply` replaced by its sealed id.
    pub(crate) fn outbound(&self, reply: &mut Response<Body>, owner: Option<String>) {
        let Some(local) = reply
            .headers()
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
        else {
            return;
        };
        let Some(params) = lock(&self.fresh).take(&local) else {
            return;
        };
        let sealed = SealedSession {
            local,
            params,
            owner,
            issued: now_secs(),
        };
        let sealed = self.key.seal_json(Purpose::Session, &sealed);
        if let Ok(value) = HeaderValue::from_str(&sealed) {
            reply.headers_mut().insert(SESSION_HEADER, value);
        }
    }

    #[cfg(test)]
    fn with_lifetime(mut self, lifetime: Duration) -> Self {
        self.lifetime = lifetime;
        self
    }

    #[cfg(test)]
    fn with_renew(mut self, renew: Duration) -> Self {
        self.renew = renew;
        self
    }
}

/// The principal key of the request's caller, when it came in with a token.
pub(crate) fn owner_of(extensions: &http::Extensions) -> Option<String> {
    extensions
        .get::<Arc<Caller>>()
        .map(|caller| caller.principal.key())
}

/// rmcp's own answer to a request naming an unknown session.
pub(crate) fn session_not_found() -> Response<Body> {
    let mut reply =
        Response::new(Full::new(Bytes::from_static(b"Not Found: Session not found")).boxed());
    *reply.status_mut() = StatusCode::NOT_FOUND;
    reply
}

/// The session store rmcp sees: the states the front opened, the handshakes it seals.
struct Store(Arc<Portable>);

#[async_trait::async_trait]
impl SessionStore for Store {
    async fn load(&self, session_id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        Ok(lock(&self.0.opened).take(session_id))
    }

    async fn store(&self, session_id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        lock(&self.0.fresh).insert(session_id.to_string(), state.initialize_params.clone());
        Ok(())
    }

    /// DELETE ended the session: this replica refuses its id from now on.
    async fn delete(&self, session_id: &str) -> Result<(), SessionStoreError> {
        lock(&self.0.denied).insert(session_id.to_string(), now_secs());
        Ok(())
    }
}

#[cfg(test)]
#[path = "portable_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "portable_tests_lifetime.rs"]
mod tests_lifetime;
