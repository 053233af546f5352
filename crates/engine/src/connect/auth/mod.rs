//! OAuth for remote servers. Every streamable-HTTP connection without a static `Authorization`
//! header goes through [`ServerAuth`]: it sends a stored token when there is one (refreshed
//! when near expiry), and when the server answers 401, or 403 `insufficient_scope`, it refreshes
//! once, then runs the authorisation flow if the caller gave `authorize` — at most
//! [`MAX_AUTHORIZATIONS`] times per connection — or fails with the command that would
//! authorise it. Tokens and secrets never appear in a reason.

pub(crate) mod credentials;
pub(crate) mod dpop;
pub(crate) mod flow;
mod hint;
pub(crate) mod loopback;
mod machine;
pub(crate) mod oauth_http;
pub mod store;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use rmcp::transport::auth::AuthorizationManager;

use crate::config::auth::OAuthSettings;
use credentials::ServerCredentials;
use dpop::Dpop;
use hint::{Missing, quote_scope};
use oauth_http::OAuthHttp;
use store::TokenStore;

/// Authorisations one connection may run (the first and step-ups alike) before it gives up on a
/// server that keeps refusing.
pub(crate) const MAX_AUTHORIZATIONS: u32 = 3;

pub(crate) use crate::bounds::USER_WAIT;

pub use flow::Authorize;

/// What the caller of one listMcpTools / loadMcp / createToolkit supplies for all its servers.
#[derive(Clone, Default)]
pub struct AuthContext {
    pub authorize: Option<Authorize>,
    /// `None`: the default file store, opened when a server first needs it.
    pub store: Option<Arc<dyn TokenStore>>,
    /// The config as the `toolnexus auth` command names it (its path, or `<config>`).
    pub config: Option<String>,
}

impl AuthContext {
    fn store(&self) -> Option<Arc<dyn TokenStore>> {
        if let Some(store) = &self.store {
            return Some(store.clone());
        }
        store::FileStore::default_location().map(|s| Arc::new(Arc::new(s)) as Arc<dyn TokenStore>)
    }
}

/// One connection's OAuth state.
pub(crate) struct ServerAuth {
    url: String,
    name: String,
    settings: OAuthSettings,
    context: AuthContext,
    credentials: Option<ServerCredentials>,
    /// The server's DPoP key (`None` with `dpop: false`).
    dpop: Option<Arc<Dpop>>,
    /// Every OAuth request of this server's sign-in goes through it (with the DPoP key); made
    /// when the server first asks for OAuth.
    http: std::sync::OnceLock<Arc<OAuthHttp>>,
    state: tokio::sync::Mutex<State>,
    authorizations: AtomicU32,
    /// Until connected, an authorisation is not run inside the timed attempt to connect but
    /// left for [`ServerAuth::authorize_deferred`], after it.
    connecting: std::sync::atomic::AtomicBool,
    deferred: std::sync::Mutex<Option<Deferred>>,
    /// The reason the last recovery failed, in words, for the connection's failure reason.
    failure: std::sync::Mutex<Option<String>>,
}

/// An authorisation a connection attempt needs: the challenge and the scopes to ask for.
struct Deferred {
    challenge: String,
    scopes: Vec<String>,
}

#[derive(Default)]
struct State {
    loaded: bool,
    /// Stored credentials existed (so a missing token means it expired, not that none was ever got).
    had_stored: bool,
    /// The stored credentials: their access token is sent as it is while fresh, with no
    /// discovery (it is checked again on every request).
    stored: Option<rmcp::transport::auth::StoredCredentials>,
    /// Built from the store (discovery included) only once a refresh or a 401 needs it.
    manager: Option<Arc<AuthorizationManager>>,
    manager_tried: bool,
    /// Reading the store failed: that, not a missing token, is why there is none.
    store_error: Option<String>,
    /// A machine grant that was refused is not asked again by this connection.
    machine_failed: Option<String>,
}

impl ServerAuth {
    pub(crate) fn new(
        url: &str,
        name: &str,
        settings: OAuthSettings,
        context: AuthContext,
    ) -> Self {
        let dpop = (settings.dpop != Some(false)).then(|| Arc::new(Dpop::default()));
        let credentials = context.store().map(|store| {
            ServerCredentials::new(
                store::canonical_url(url),
                name.to_string(),
                store,
                dpop.clone(),
            )
        });
        Self {
            dpop,
            http: Default::default(),
            url: url.to_string(),
            name: name.to_string(),
            settings,
            context,
            credentials,
            state: Default::default(),
            authorizations: AtomicU32::new(0),
            connecting: std::sync::atomic::AtomicBool::new(true),
            deferred: Default::default(),
            failure: Default::default(),
        }
    }

    /// For a remote server without a static `Authorization` header; `entry.auth` is expanded
    /// here (a missing variable is a warning, as everywhere in a config).
    pub(crate) fn for_remote(
        entry: &crate::config::ServerEntry,
        url: &str,
        headers: &reqwest::header::HeaderMap,
        context: &AuthContext,
        warnings: &mut Vec<String>,
    ) -> Option<Arc<Self>> {
        if headers.contains_key(reqwest::header::AUTHORIZATION) {
            return None;
        }
        let mut missing = Vec::new();
        let settings = entry
            .auth
            .clone()
            .unwrap_or_default()
            .expanded(&mut |s| crate::config::vars::expand(s, &mut missing));
        for name in missing {
            warnings.push(format!(
                "toolnexus: environment variable {} is not set (server {}); using \"\"",
                crate::config::quote::shorten(&name, crate::config::quote::QUOTE_CHARS),
                crate::config::quote::quote(&entry.name, crate::config::quote::QUOTE_CHARS)
            ));
        }
        Some(Arc::new(Self::new(
            url,
            &entry.name,
            settings,
            context.clone(),
        )))
    }

    /// Why recovering authorisation failed, if it did.
    pub(crate) fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn fail(&self, reason: String) -> String {
        *self.failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(reason.clone());
        reason
    }

    /// The token to send, if any: the stored one on first use, refreshed when near expiry.
    pub(crate) async fn token(&self) -> Option<String> {
        let manager = {
            let mut state = self.state.lock().await;
            self.load(&mut state).await;
            if state.manager.is_none()
                && let Some(token) = state.stored.as_ref().and_then(fresh_access_token)
            {
                return Some(token);
            }
            // A machine's token that expired is asked for again when the server refuses it.
            if self.settings.grant.is_machine() {
                return None;
            }
            self.ensure_manager(&mut state).await;
            state.manager.clone()?
        };
        manager.get_access_token().await.ok()
    }

    /// The manager that refreshes the stored credentials (rmcp's discovery runs here).
    async fn ensure_manager(&self, state: &mut State) {
        if state.manager.is_some() || state.manager_tried || !state.had_stored {
            return;
        }
        state.manager_tried = true;
        state.stored = None;
        let Some(credentials) = &self.credentials else {
            return;
        };
        match flow::from_store(&self.url, &self.settings, credentials, self.http()).await {
            Ok(manager) => state.manager = manager.map(Arc::new),
            Err(e) => state.store_error = Some(format!("could not be used: {e}")),
        }
    }

    async fn load(&self, state: &mut State) {
        if state.loaded {
            return;
        }
        state.loaded = true;
        let Some(credentials) = &self.credentials else {
            return;
        };
        match credentials.stored().await {
            Ok(stored) => {
                state.had_stored = stored.is_some();
                state.stored = stored;
            }
            Err(e) => state.store_error = Some(format!("could not be read: {e}")),
        }
    }

    /// After a 401 (`insufficient` `None`) or a 403 asking for more scope: a token to retry
    /// with, or the reason there is none.
    pub(crate) async fn recover(
        &self,
        challenge: &str,
        sent: Option<&str>,
        insufficient: Option<&str>,
    ) -> Result<String, String> {
        let mut state = self.state.lock().await;
        self.load(&mut state).await;
        if self.settings.grant.is_machine() {
            return self
                .recover_machine(&mut state, challenge, sent, insufficient)
                .await;
        }
        self.ensure_manager(&mut state).await;
        if let Some(manager) = state.manager.clone() {
            // Another request of this connection recovered while this one waited.
            if let Ok(token) = manager.get_access_token().await
                && Some(token.as_str()) != sent
                && insufficient.is_none()
            {
                return Ok(token);
            }
            // A rejected token is refreshed once before asking the user.
            if insufficient.is_none()
                && sent.is_some()
                && manager.refresh_token().await.is_ok()
                && let Ok(fresh) = manager.get_access_token().await
                && Some(fresh.as_str()) != sent
            {
                return Ok(fresh);
            }
        }
        if let Some(e) = &state.store_error
            && self.context.authorize.is_none()
        {
            return Err(self.fail(format!(
                "authorization required, but the stored credentials {e}"
            )));
        }
        let missing = match insufficient {
            Some(scope) => Missing::Scope(scope.to_string()),
            None if state.had_stored || state.manager.is_some() => Missing::Expired,
            None => Missing::NoToken,
        };
        let Some(ask_user) = &self.context.authorize else {
            return Err(self.fail(self.required(&missing)));
        };
        if self.credentials.is_none() {
            return Err(self.fail(
                "authorization required, but there is no config directory to keep its tokens in (pass opts.tokenStore)".into(),
            ));
        }
        let waiting = "authorization required: waiting for the user";
        let pending = || {
            self.deferred
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .is_some()
        };
        if self.connecting.load(Ordering::SeqCst) && pending() {
            return Err(self.fail(waiting.into()));
        }
        if self.authorizations.fetch_add(1, Ordering::SeqCst) >= MAX_AUTHORIZATIONS {
            let tail = match &missing {
                Missing::Scope(scope) => format!(" (it asks for scope {})", quote_scope(scope)),
                _ => String::new(),
            };
            return Err(self.fail(format!(
                "authorization refused: the server still refuses after {MAX_AUTHORIZATIONS} authorizations{tail}"
            )));
        }
        let scopes = match (&missing, &state.manager) {
            (Missing::Scope(required), manager) => {
                let mut scopes = match manager {
                    Some(manager) => manager.get_current_scopes().await,
                    None => self.settings.scopes.clone(),
                };
                for scope in required.split_whitespace() {
                    if !scopes.iter().any(|s| s == scope) {
                        scopes.push(scope.to_string());
                    }
                }
                scopes
            }
            _ => self.settings.scopes.clone(),
        };
        if self.connecting.load(Ordering::SeqCst) {
            *self.deferred.lock().unwrap_or_else(|e| e.into_inner()) = Some(Deferred {
                challenge: challenge.to_string(),
                scopes,
            });
            return Err(self.fail(waiting.into()));
        }
        self.run_flow(&mut state, challenge, scopes, ask_user).await
    }

    /// The authorisation flow, its manager kept for the connection; the new access token.
    async fn run_flow(
        &self,
        state: &mut State,
        challenge: &str,
        scopes: Vec<String>,
        ask_user: &Authorize,
    ) -> Result<String, String> {
        let credentials = self.credentials.as_ref().ok_or("no token store")?;
        let authorized = flow::authorize(
            &self.url,
            &self.settings,
            credentials,
            Some(challenge),
            scopes,
            ask_user,
            self.http(),
        )
        .await
        .map_err(|reason| self.fail(reason))?;
        let token = authorized
            .get_access_token()
            .await
            .map_err(|e| self.fail(flow::words(&e)))?;
        // An authorisation server that answered the proof with a bearer token did not bind it.
        if let (Some(dpop), Ok((_, Some(response)))) =
            (&self.dpop, authorized.get_credentials().await)
            && !dpop::bound_token(&response)
        {
            dpop.deactivate();
        }
        state.manager = Some(Arc::new(authorized));
        state.had_stored = true;
        *self.failure.lock().unwrap_or_else(|e| e.into_inner()) = None;
        Ok(token)
    }

    /// A machine's sign-in (no person, so nothing is deferred): the grant runs once per refusal,
    /// at most [`MAX_AUTHORIZATIONS`] times; a refused grant is never asked again.
    async fn recover_machine(
        &self,
        state: &mut State,
        challenge: &str,
        sent: Option<&str>,
        insufficient: Option<&str>,
    ) -> Result<String, String> {
        if let Some(reason) = &state.machine_failed {
            return Err(reason.clone());
        }
        // Another request of this connection got a token while this one waited.
        if let Some(token) = state.stored.as_ref().and_then(fresh_access_token)
            && Some(token.as_str()) != sent
            && insufficient.is_none()
        {
            return Ok(token);
        }
        if self.authorizations.fetch_add(1, Ordering::SeqCst) >= MAX_AUTHORIZATIONS {
            return Err(self.fail(format!(
                "authorization refused: the server still refuses after {MAX_AUTHORIZATIONS} tokens"
            )));
        }
        let mut scopes = self.settings.scopes.clone();
        for scope in insufficient.unwrap_or_default().split_whitespace() {
            if !scopes.iter().any(|s| s == scope) {
                scopes.push(scope.to_string());
            }
        }
        let granted = machine::grant(
            &self.url,
            &self.settings,
            Some(challenge),
            &scopes,
            self.http(),
        )
        .await;
        let stored = match granted {
            Ok(stored) => stored,
            Err(reason) => {
                state.machine_failed = Some(reason.clone());
                return Err(self.fail(reason));
            }
        };
        // A token the server grants for less than the refresh margin is still used once.
        let token = access_token(&stored).unwrap_or_default();
        if let Some(credentials) = &self.credentials {
            use rmcp::transport::auth::CredentialStore;
            // A store that cannot keep it costs only the next run a new grant.
            let _ = credentials.save(stored.clone()).await;
        }
        state.stored = Some(stored);
        state.had_stored = true;
        *self.failure.lock().unwrap_or_else(|e| e.into_inner()) = None;
        Ok(token)
    }

    /// The DPoP key, when this server's tokens are bound to it.
    pub(crate) fn bound(&self) -> Option<&Dpop> {
        self.dpop.as_deref().filter(|d| d.active())
    }

    fn http(&self) -> &Arc<OAuthHttp> {
        self.http
            .get_or_init(|| Arc::new(OAuthHttp::new(&self.url, self.dpop.clone())))
    }

    /// Runs the authorisation a failed attempt to connect left pending, bounded by
    /// [`USER_WAIT`]; `None` when none is.
    pub(crate) async fn authorize_deferred(&self) -> Option<Result<(), String>> {
        let deferred = self
            .deferred
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()?;
        let ask_user = self.context.authorize.as_ref()?;
        let mut state = self.state.lock().await;
        let flow = self.run_flow(&mut state, &deferred.challenge, deferred.scopes, ask_user);
        Some(match tokio::time::timeout(USER_WAIT, flow).await {
            Ok(result) => result.map(|_| ()),
            Err(_) => Err(self.fail(format!(
                "authorization required: no authorization arrived within {} s",
                USER_WAIT.as_secs()
            ))),
        })
    }

    /// Connected: from now on an authorisation (a step-up) runs where it is needed.
    pub(crate) fn connected(&self) {
        self.connecting.store(false, Ordering::SeqCst);
    }

    /// `authorization required: run "toolnexus auth <config> <name>" (why)`.
    fn required(&self, missing: &Missing) -> String {
        hint::required(self.context.config.as_deref(), &self.name, missing)
    }
}

/// The stored access token, fresh or not.
fn access_token(stored: &rmcp::transport::auth::StoredCredentials) -> Option<String> {
    use oauth2::TokenResponse;
    Some(
        stored
            .token_response
            .as_ref()?
            .access_token()
            .secret()
            .clone(),
    )
}

/// Seconds before its expiry at which a token counts as stale (rmcp refreshes in the same
/// window: 30 s, or half the lifetime of a shorter-lived token).
const REFRESH_MARGIN_SECS: u64 = 30;

/// The stored access token, unless it expires within the margin (a token without an expiry
/// counts as fresh, as rmcp takes it).
fn fresh_access_token(stored: &rmcp::transport::auth::StoredCredentials) -> Option<String> {
    let token = serde_json::to_value(stored.token_response.as_ref()?).ok()?;
    let access = access_token(stored)?;
    let (Some(lifetime), Some(received)) = (
        token.get("expires_in").and_then(|v| v.as_u64()),
        stored.token_received_at,
    ) else {
        return Some(access);
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let margin = REFRESH_MARGIN_SECS.min(lifetime / 2).max(1);
    let remaining = (received + lifetime).saturating_sub(now);
    (remaining > margin).then_some(access)
}

#[cfg(test)]
mod tests;
