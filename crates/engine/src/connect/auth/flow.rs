//! The authorisation-code flow on rmcp's `auth`: discovery (protected-resource metadata, then
//! authorisation-server metadata or OpenID discovery), client identity (pre-registered, then a
//! Client ID Metadata Document, then dynamic registration), PKCE S256, `resource`, the `iss`
//! check, and the token exchange; plus picking stored credentials back up.

use std::sync::Arc;

use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationRequest, AuthorizationSession, OAuthClientConfig,
};

use super::credentials::ServerCredentials;
use super::loopback::{Listener, Redirect};
use super::oauth_http::OAuthHttp;
use crate::config::auth::OAuthSettings;

/// The app's `authorize(url)`: show, open or fetch the authorisation URL. Settles when it has.
pub type Authorize = std::sync::Arc<
    dyn Fn(String) -> futures::future::BoxFuture<'static, Result<(), String>> + Send + Sync,
>;

/// The name dynamic registration gives the client.
const CLIENT_NAME: &str = "toolnexus";

/// An rmcp auth failure in words (rmcp's own messages are sentences; they are only cut short).
pub(crate) fn words(error: &AuthError) -> String {
    let text = match error {
        AuthError::AuthorizationRequired => "authorization required".to_string(),
        AuthError::NoAuthorizationSupport => {
            "the server asks for authorization but publishes no OAuth metadata".to_string()
        }
        AuthError::AuthorizationServerMismatch {
            expected_issuer,
            received_issuer,
        } => format!(
            "the authorization response names issuer {received_issuer}, not {expected_issuer}; refused"
        ),
        AuthError::AuthorizationServerMissingIssuer { expected_issuer } => format!(
            "the authorization response lacks the issuer {expected_issuer} it promised; refused"
        ),
        other => other.to_string(),
    };
    format!("OAuth: {}", crate::config::quote::shorten(&text, 400))
}

/// Credentials already in the store, ready to use (and refresh); `None` when there are none or
/// they belong to an authorisation server the resource no longer names.
pub(crate) async fn from_store(
    url: &str,
    settings: &OAuthSettings,
    credentials: &ServerCredentials,
    http: &Arc<OAuthHttp>,
) -> Result<Option<AuthorizationManager>, String> {
    let Some(stored) = credentials.stored().await? else {
        return Ok(None);
    };
    if stored.token_response.is_none() {
        return Ok(None);
    }
    let mut manager = AuthorizationManager::new_with_oauth_http_client(url, http.clone())
        .await
        .map_err(|e| words(&e))?;
    manager.set_credential_store(credentials.clone());
    if !manager
        .initialize_from_store()
        .await
        .map_err(|e| words(&e))?
    {
        return Ok(None);
    }
    // A confidential pre-registered client needs its secret to refresh.
    if let (Some(id), Some(secret)) = (&settings.client_id, &settings.client_secret)
        && *id == stored.client_id
    {
        let config = OAuthClientConfig::new(id.clone(), url.to_string()).with_client_secret(secret);
        manager.configure_client(config).map_err(|e| words(&e))?;
    }
    Ok(Some(manager))
}

/// Runs the flow once: the app's `authorize` gets the URL, the redirect listener the answer.
/// `scopes` empty lets rmcp choose (the challenge's, then the resource's, else none).
pub(crate) async fn authorize(
    url: &str,
    settings: &OAuthSettings,
    credentials: &ServerCredentials,
    challenge: Option<&str>,
    scopes: Vec<String>,
    ask_user: &Authorize,
    http: &Arc<OAuthHttp>,
) -> Result<AuthorizationManager, String> {
    let listener = Listener::bind(settings.redirect_port.unwrap_or(0)).await?;
    let mut manager = AuthorizationManager::new_with_oauth_http_client(url, http.clone())
        .await
        .map_err(|e| words(&e))?;
    manager.set_credential_store(credentials.clone());
    let resolution = manager
        .resolve_metadata_from_challenge(challenge)
        .await
        .map_err(|e| words(&e))?;
    let userinfo = resolution
        .metadata
        .additional_fields
        .get("userinfo_endpoint")
        .and_then(|v| v.as_str())
        .map(String::from);
    http.bind_if_supported(settings.dpop, &resolution.metadata, challenge);
    manager.set_metadata(resolution.metadata);
    let mut request =
        AuthorizationRequest::new(listener.redirect_uri.clone()).with_client_name(CLIENT_NAME);
    request = if scopes.is_empty() {
        request.with_initial_scope_selection()
    } else {
        request.with_scopes(scopes)
    };
    if let Some(id) = &settings.client_id {
        request = request.with_preregistered_client(id);
        if let Some(secret) = &settings.client_secret {
            request = request.with_client_secret(secret);
        }
    }
    if let Some(document) = &settings.client_metadata_url {
        request = request.with_client_metadata_url(document);
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| words(&e))?;
    let authorization_url = session.get_authorization_url().to_string();
    let state = reqwest::Url::parse(&authorization_url).ok().and_then(|u| {
        u.query_pairs()
            .find(|(k, _)| k == "state")
            .map(|(_, v)| v.into_owned())
    });
    listener.expect_state(state);
    let redirect = listener.redirect();
    tokio::pin!(redirect);
    // The app may settle `authorize` before the redirect (it opened a browser) or after it (it
    // fetched the URL and followed the redirect).
    let redirect = tokio::select! {
        redirect = &mut redirect => redirect?,
        asked = ask_user(authorization_url) => {
            asked.map_err(|e| format!("opts.authorize failed: {e}"))?;
            redirect.await?
        }
    };
    match redirect {
        Redirect::Refused(words) => Err(words),
        Redirect::Code(callback) => {
            session
                .handle_callback_with_issuer(
                    &callback.code,
                    &callback.csrf_token,
                    callback.issuer.as_deref(),
                )
                .await
                .map_err(|e| words(&e))?;
            let manager = session.auth_manager;
            if let Some(endpoint) = userinfo
                && let Ok(token) = manager.get_access_token().await
                && let Some(subject) = userinfo_subject(&endpoint, &token).await
            {
                // Only for saying whom the server was authorised as: a failure costs nothing.
                let _ = credentials.note_subject(&subject).await;
            }
            Ok(manager)
        }
    }
}

/// Who the token belongs to, as the OpenID `userinfo` endpoint says (`email`, else
/// `preferred_username`, `name` or `sub`); `None` when it does not answer in time or at all.
async fn userinfo_subject(endpoint: &str, token: &str) -> Option<String> {
    let request = crate::connect::http::client()
        .get(endpoint)
        .bearer_auth(token)
        .timeout(crate::bounds::OAUTH_REQUEST_TIMEOUT);
    let claims: serde_json::Value = request
        .send()
        .await
        .ok()?
        .error_for_status()
        .ok()?
        .json()
        .await
        .ok()?;
    ["email", "preferred_username", "name", "sub"]
        .iter()
        .find_map(|k| claims.get(*k).and_then(|v| v.as_str()))
        .map(|s| crate::config::quote::shorten(s, 200))
}
