//! Who may use a served toolkit: a guard that checks each HTTP request's bearer token (static
//! tokens, a token check of the embedder's, or an OAuth issuer's JWTs and introspection) before
//! rmcp sees the request, and the policy of which tools, prompts and resources each caller sees.

mod denial;
mod fetch;
mod introspect;
mod issuer;
mod jwt;
mod policy;
mod principal;

#[cfg(test)]
mod test_issuer;
#[cfg(test)]
mod test_keys;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_jwt;
#[cfg(test)]
mod tests_oauth;

use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;
use http::{HeaderMap, HeaderValue, Response, StatusCode, header};
use serde_json::json;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

pub(crate) use denial::Denial;
pub use issuer::{Introspection, OAuthOptions};
pub(crate) use policy::glob_matches;
pub use policy::{AccessPolicy, Kind};
pub use principal::Principal;

use crate::bounds::AUTH_MAX_TOKEN_BYTES;
use denial::Challenge;
use denial::Refusal;
use issuer::{Issuer, Timing};

/// The embedder's check of a presented token: Some principal, None (not accepted), or Err (the
/// check itself failed: a 500).
pub trait TokenVerifier: Send + Sync + 'static {
    fn verify(&self, token: String) -> BoxFuture<'static, Result<Option<Principal>, String>>;
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaticToken {
    pub token: String,
    pub subject: String,
    pub scopes: Vec<String>,
}

pub struct AuthOptions {
    pub tokens: Vec<StaticToken>,
    pub verifier: Option<Arc<dyn TokenVerifier>>,
    pub oauth: Option<OAuthOptions>,
    pub policy: AccessPolicy,
}

/// Checks requests against the configured tokens; answers the protected resource metadata.
pub(crate) struct Guard {
    /// SHA-256 of each static token, with its principal.
    tokens: Vec<([u8; 32], Arc<Principal>)>,
    verifier: Option<Arc<dyn TokenVerifier>>,
    oauth: Option<Issuer>,
    required_scopes: Vec<String>,
    policy: AccessPolicy,
    challenge: Challenge,
    /// The PRM document (RFC 9728), when serving with OAuth.
    metadata: Option<Bytes>,
}

impl Guard {
    /// Discovers the issuer (RFC 8414 then OpenID), fetches its JWKS; Err(words) when it cannot.
    pub(crate) async fn new(options: AuthOptions, endpoint_url: &str) -> Result<Guard, String> {
        Self::with_timing(options, endpoint_url, Timing::default()).await
    }

    pub(crate) async fn with_timing(
        options: AuthOptions,
        endpoint_url: &str,
        timing: Timing,
    ) -> Result<Guard, String> {
        let AuthOptions {
            tokens,
            verifier,
            oauth,
            policy,
        } = options;
        if tokens.is_empty() && verifier.is_none() && oauth.is_none() {
            return Err("auth needs tokens, a token check or oauth".into());
        }
        if tokens.iter().any(|t| t.token.is_empty()) {
            return Err("an auth token is empty".into());
        }
        let tokens = tokens
            .into_iter()
            .map(|t| {
                let principal = Principal {
                    subject: t.subject,
                    scopes: t.scopes,
                    claims: json!({}),
                    issuer: None,
                };
                (digest(&t.token), Arc::new(principal))
            })
            .collect();
        let mut challenge = Challenge::default();
        let (mut issuer, mut metadata, mut required_scopes) = (None, None, Vec::new());
        if let Some(options) = oauth {
            let audience = options
                .audience
                .clone()
                .unwrap_or_else(|| endpoint_url.to_string());
            let found = Issuer::discover(&options, audience.clone(), timing).await?;
            challenge.resource_metadata = Some(metadata_url(&audience, endpoint_url));
            if !options.required_scopes.is_empty() {
                challenge.scope = Some(options.required_scopes.join(" "));
            }
            let mut supported = options.required_scopes.clone();
            for scope in policy.scopes() {
                if !supported.contains(&scope) {
                    supported.push(scope);
                }
            }
            let mut document = json!({
                "resource": audience,
                "authorization_servers": [found.issuer],
                "bearer_methods_supported": ["header"],
                "resource_name": "toolnexus",
            });
            if !supported.is_empty() {
                document["scopes_supported"] = json!(supported);
            }
            metadata = Some(Bytes::from(document.to_string()));
            required_scopes = options.required_scopes;
            issuer = Some(found);
        }
        Ok(Guard {
            tokens,
            verifier,
            oauth: issuer,
            required_scopes,
            policy,
            challenge,
            metadata,
        })
    }

    /// The caller of a request with these headers, or why it is refused.
    pub(crate) async fn check(&self, headers: &HeaderMap) -> Result<Arc<Principal>, Denial> {
        let token = self.bearer(headers)?;
        if token.len() > AUTH_MAX_TOKEN_BYTES {
            let kib = AUTH_MAX_TOKEN_BYTES / 1024;
            let why = format!("the token is longer than {kib} KiB");
            return Err(self.challenge.invalid_token(why));
        }
        if let Some(principal) = self.static_token(token) {
            return Ok(principal);
        }
        let mut failed_check = None;
        if let Some(verifier) = &self.verifier {
            match verifier.verify(token.to_string()).await {
                Ok(Some(principal)) => return Ok(Arc::new(principal)),
                Ok(None) => {}
                Err(why) => failed_check = Some(why.replace(token, "<token>")),
            }
        }
        let refusal = match &self.oauth {
            Some(issuer) => match issuer.verify(token).await {
                Ok(principal) => return self.with_required_scopes(principal),
                Err(refusal) => refusal,
            },
            None => Refusal::Invalid("the token is not one this server accepts".into()),
        };
        match (failed_check, refusal) {
            (Some(why), _) => Err(Denial::server_error(format!(
                "the token check failed: {why}"
            ))),
            (None, Refusal::Unchecked(why)) => Err(Denial::server_error(why)),
            (None, Refusal::Invalid(why)) => Err(self.challenge.invalid_token(why)),
        }
    }

    /// The token of `Authorization: Bearer <token>`.
    fn bearer<'h>(&self, headers: &'h HeaderMap) -> Result<&'h str, Denial> {
        let mut values = headers.get_all(header::AUTHORIZATION).iter();
        let (Some(value), None) = (values.next(), values.next()) else {
            return Err(match headers.contains_key(header::AUTHORIZATION) {
                true => self
                    .challenge
                    .invalid_request("the request has more than one Authorization header".into()),
                false => self.challenge.missing(),
            });
        };
        let not_bearer = || {
            self.challenge
                .invalid_request("the Authorization header is not Bearer <token>".into())
        };
        let text = value.to_str().map_err(|_| not_bearer())?;
        let (scheme, token) = text.trim().split_once(' ').ok_or_else(not_bearer)?;
        let token = token.trim_start_matches(' ');
        if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() || token.contains([' ', '\t'])
        {
            return Err(not_bearer());
        }
        Ok(token)
    }

    /// The static token's principal: every digest compared, in constant time.
    fn static_token(&self, token: &str) -> Option<Arc<Principal>> {
        let presented = digest(token);
        let mut found = None;
        for (stored, principal) in &self.tokens {
            if bool::from(stored.ct_eq(&presented)) {
                found = Some(principal.clone());
            }
        }
        found
    }

    fn with_required_scopes(&self, principal: Principal) -> Result<Arc<Principal>, Denial> {
        let missing: Vec<&str> = self
            .required_scopes
            .iter()
            .filter(|s| !principal.scopes.contains(s))
            .map(String::as_str)
            .collect();
        match missing.is_empty() {
            true => Ok(Arc::new(principal)),
            false => Err(self
                .challenge
                .insufficient_scope(&missing)
                .of_subject(&principal.subject)),
        }
    }

    /// The PRM document response when `path` is one of its paths (oauth only), else None.
    pub(crate) fn metadata_response(&self, path: &str) -> Option<Response<Bytes>> {
        let document = self.metadata.as_ref()?;
        let rest = path.strip_prefix("/.well-known/oauth-protected-resource")?;
        if !(rest.is_empty() || rest.starts_with('/')) {
            return None;
        }
        let mut response = Response::new(document.clone());
        *response.status_mut() = StatusCode::OK;
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_ORIGIN,
            HeaderValue::from_static("*"),
        );
        Some(response)
    }

    pub(crate) fn policy(&self) -> &AccessPolicy {
        &self.policy
    }
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// RFC 9728's URL: origin of `resource` + `/.well-known/oauth-protected-resource` + its path
/// (of the endpoint's URL when the resource is not an http(s) URL).
fn metadata_url(resource: &str, endpoint_url: &str) -> String {
    let parsed = [resource, endpoint_url]
        .into_iter()
        .filter_map(|u| reqwest::Url::parse(u).ok())
        .find(|u| matches!(u.scheme(), "http" | "https"));
    let Some(url) = parsed else {
        return "/.well-known/oauth-protected-resource".into();
    };
    let path = url.path().trim_end_matches('/');
    format!(
        "{}/.well-known/oauth-protected-resource{path}",
        url.origin().ascii_serialization()
    )
}
