//! Signing in with no person: the grants of an entry's `auth` other than the authorisation code.
//!
//! Discovery is rmcp's (the challenge's protected-resource metadata, then the authorisation
//! server's). Then one token request, never retried and never another grant after a refusal:
//!
//! - `client_credentials` with a client secret: rmcp's `exchange_client_credentials` (HTTP Basic
//!   when the server takes only that, else the secret in the body);
//! - `client_credentials` with a private key: an RFC 7523 §2.2 client assertion signed here with
//!   jsonwebtoken (rmcp's `auth-client-credentials-jwt` feature would add a second jsonwebtoken);
//! - `jwt-bearer` (workload identity, RFC 7523 §2.1): the workload's token as the `assertion`,
//!   re-read from its file each time; rmcp has no such grant;
//! - enterprise-managed authorisation (SEP-990): rmcp's `EmaExchangeRequest`, the ID token
//!   exchanged at the IdP for an ID-JAG, redeemed at the authorisation server.
//!
//! Every request goes through the server's [`OAuthHttp`], so a bound token's proofs ride along.

use std::sync::Arc;

use rmcp::transport::auth::enterprise::{
    EmaAuthorizationServer, EmaClientAuthentication, EmaError, EmaExchangeRequest, EmaExchangeStage,
};
use rmcp::transport::auth::{
    AuthorizationManager, AuthorizationMetadata, ClientCredentialsConfig, StoredCredentials,
};
use serde_json::{Value, json};

use super::flow::words;
use super::oauth_http::OAuthHttp;
use crate::config::auth::{Grant, OAuthSettings, Secret};

const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const CLIENT_ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/// A client assertion is good for this long.
const ASSERTION_SECS: u64 = 300;

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Runs the entry's grant once; the credentials to keep (the token, its issuer and scopes).
pub(crate) async fn grant(
    url: &str,
    settings: &OAuthSettings,
    challenge: Option<&str>,
    scopes: &[String],
    http: &Arc<OAuthHttp>,
) -> Result<StoredCredentials, String> {
    let manager = AuthorizationManager::new_with_oauth_http_client(url, http.clone())
        .await
        .map_err(|e| words(&e))?;
    let metadata = manager
        .resolve_metadata_from_challenge(challenge)
        .await
        .map_err(|e| words(&e))?
        .metadata;
    // rmcp's enterprise exchange takes only bearer tokens, and a proof must not go to the IdP.
    if settings.grant != Grant::Enterprise {
        http.bind_if_supported(settings.dpop, &metadata, challenge);
    }
    let issuer = metadata.issuer.clone();
    let resource = http
        .resource()
        .unwrap_or_else(|| super::store::canonical_url(url));
    let client_id = settings.client_id.clone().unwrap_or_default();
    let request = TokenRequest {
        http,
        metadata: &metadata,
        settings,
        scopes,
        resource: &resource,
    };
    let token = match settings.grant {
        Grant::ClientCredentials => {
            supports(&metadata, "client_credentials", "client_credentials")?;
            match &settings.private_key {
                None => request.client_secret(manager).await?,
                Some(_) => request.private_key_jwt().await?,
            }
        }
        Grant::JwtBearer => {
            supports(&metadata, JWT_BEARER, "jwt-bearer")?;
            request.jwt_bearer().await?
        }
        Grant::Enterprise => {
            supports(&metadata, JWT_BEARER, "jwt-bearer (for the ID-JAG)")?;
            request.enterprise().await?
        }
        Grant::AuthorizationCode => return Err("not a machine grant".into()),
    };
    // A server that answered a proof with a plain bearer token did not bind it (RFC 9449 §5).
    if let Some(dpop) = &http.dpop
        && dpop.active()
        && !token
            .get("token_type")
            .and_then(Value::as_str)
            .is_some_and(|t| t.eq_ignore_ascii_case("dpop"))
    {
        dpop.deactivate();
    }
    let granted: Vec<String> = token
        .get("scope")
        .and_then(Value::as_str)
        .map(|s| s.split_whitespace().map(String::from).collect())
        .unwrap_or_else(|| scopes.to_vec());
    serde_json::from_value(json!({
        "client_id": client_id,
        "token_response": token,
        "granted_scopes": granted,
        "token_received_at": now(),
        "issuer": issuer,
    }))
    .map_err(|_| "OAuth: the token response has no usable access_token".to_string())
}

/// Refuses a grant the authorisation server says it does not support (when it says).
fn supports(metadata: &AuthorizationMetadata, grant: &str, name: &str) -> Result<(), String> {
    let listed = metadata
        .additional_fields
        .get("grant_types_supported")
        .and_then(Value::as_array);
    match listed {
        Some(grants) if !grants.iter().any(|g| g.as_str() == Some(grant)) => Err(format!(
            "OAuth: the authorization server does not support {name}"
        )),
        _ => Ok(()),
    }
}

type Form = Vec<(&'static str, String)>;

/// What every grant's token request is made of.
struct TokenRequest<'a> {
    http: &'a Arc<OAuthHttp>,
    metadata: &'a AuthorizationMetadata,
    settings: &'a OAuthSettings,
    scopes: &'a [String],
    resource: &'a str,
}

impl TokenRequest<'_> {
    /// A grant's form: its own fields, then `resource` and, when asked for, `scope`.
    fn form(&self, fields: Vec<(&'static str, String)>) -> Form {
        let mut form = fields;
        form.push(("resource", self.resource.to_string()));
        if !self.scopes.is_empty() {
            form.push(("scope", self.scopes.join(" ")));
        }
        form
    }

    /// A secret of the config, read now; `what` names it in a failure.
    fn read(secret: Option<&Secret>, what: &str) -> Result<String, String> {
        secret
            .ok_or_else(|| format!("OAuth: no {what} is configured"))?
            .read(what)
            .map_err(|e| format!("OAuth: {e}"))
    }

    /// `client_credentials` with a client secret, on rmcp's exchange.
    async fn client_secret(&self, mut manager: AuthorizationManager) -> Result<Value, String> {
        manager.set_metadata(self.metadata.clone());
        let config = ClientCredentialsConfig::ClientSecret {
            client_id: self.settings.client_id.clone().unwrap_or_default(),
            client_secret: self.settings.client_secret.clone().unwrap_or_default(),
            scopes: self.scopes.to_vec(),
            resource: Some(self.resource.to_string()),
        };
        manager
            .validate_client_credentials_metadata(&config)
            .map_err(|_| {
                "OAuth: the authorization server takes no client secret (client_secret_basic or client_secret_post)".to_string()
            })?;
        manager
            .configure_client_credentials(&config)
            .map_err(|e| words(&e))?;
        let token =
            manager
                .exchange_client_credentials(&config)
                .await
                .map_err(|e| match words(&e) {
                    text if text.contains("Request failed") => {
                        "OAuth: the token request to the authorization server failed".to_string()
                    }
                    text => refused("client_credentials", server_error(&text)),
                })?;
        serde_json::to_value(token).map_err(|e| e.to_string())
    }

    /// `client_credentials` authenticated by an RFC 7523 §2.2 client assertion: iss = sub =
    /// the client, aud = the issuer, signed with the configured key.
    async fn private_key_jwt(&self) -> Result<Value, String> {
        if let Some(methods) = self
            .metadata
            .additional_fields
            .get("token_endpoint_auth_methods_supported")
            .and_then(Value::as_array)
            && !methods
                .iter()
                .any(|m| m.as_str() == Some("private_key_jwt"))
        {
            return Err("OAuth: the authorization server does not take private_key_jwt".into());
        }
        let pem = Self::read(self.settings.private_key.as_ref(), "the private key")?;
        // A new assertion (a new jti) for each request, the nonce retry's too.
        let form = || {
            let assertion = client_assertion(&pem, self.settings, self.metadata)
                .map_err(|e| format!("OAuth: {e}"))?;
            Ok(self.form(vec![
                ("grant_type", "client_credentials".to_string()),
                ("client_assertion_type", CLIENT_ASSERTION_TYPE.to_string()),
                ("client_assertion", assertion),
            ]))
        };
        token_request(
            self.http,
            &self.metadata.token_endpoint,
            &form,
            None,
            "client_credentials",
        )
        .await
    }

    /// Workload identity (RFC 7523 §2.1): the workload's token as the assertion.
    async fn jwt_bearer(&self) -> Result<Value, String> {
        let assertion = Self::read(self.settings.assertion.as_ref(), "the workload token")?;
        let mut fields = vec![
            ("grant_type", JWT_BEARER.to_string()),
            ("assertion", assertion),
        ];
        let basic = match (&self.settings.client_id, &self.settings.client_secret) {
            (Some(id), Some(secret)) => Some((id.as_str(), secret.as_str())),
            (Some(id), None) => {
                fields.push(("client_id", id.clone()));
                None
            }
            _ => None,
        };
        let form = self.form(fields);
        let form = || Ok(form.clone());
        token_request(
            self.http,
            &self.metadata.token_endpoint,
            &form,
            basic,
            "jwt-bearer",
        )
        .await
    }

    /// Enterprise-managed: rmcp's exchange of the ID token for an ID-JAG, then its redemption.
    async fn enterprise(&self) -> Result<Value, String> {
        let e = self
            .settings
            .enterprise
            .as_ref()
            .ok_or("OAuth: no enterprise settings")?;
        let id_token = Self::read(Some(&e.id_token), "the ID token")?;
        let basic = |secret: &Option<String>| match secret {
            Some(s) => {
                EmaClientAuthentication::ClientSecretBasic(oauth2::ClientSecret::new(s.clone()))
            }
            None => EmaClientAuthentication::None,
        };
        let idp = EmaAuthorizationServer::new(
            e.idp_issuer.clone(),
            e.idp_token_endpoint.clone(),
            e.idp_client_id.clone(),
        )
        .with_client_authentication(basic(&e.idp_client_secret));
        let server = EmaAuthorizationServer::new(
            self.metadata.issuer.clone().unwrap_or_default(),
            self.metadata.token_endpoint.clone(),
            self.settings.client_id.clone().unwrap_or_default(),
        )
        .with_client_authentication(basic(&self.settings.client_secret));
        let token = EmaExchangeRequest::new_with_id_token(idp, server, self.resource, &id_token)
            .with_scopes(self.scopes.iter().cloned())
            .exchange(self.http.as_ref(), self.http.as_ref())
            .await
            .map_err(|e| ema_words(&e))?;
        let mut answer = json!({
            "access_token": oauth2::AccessToken::secret(&token.access_token),
            "token_type": "Bearer",
        });
        if let Some(within) = token.expires_in {
            answer["expires_in"] = within.as_secs().into();
        }
        if !token.scopes.is_empty() {
            let mut granted: Vec<&str> = token.scopes.iter().map(String::as_str).collect();
            granted.sort_unstable();
            answer["scope"] = granted.join(" ").into();
        }
        Ok(answer)
    }
}

/// An RFC 7523 §2.2 client assertion signed with `pem`.
fn client_assertion(
    pem: &str,
    settings: &OAuthSettings,
    metadata: &AuthorizationMetadata,
) -> Result<String, String> {
    let alg = settings.signing_algorithm.as_deref().unwrap_or("ES256");
    let algorithm: jsonwebtoken::Algorithm = alg
        .parse()
        .map_err(|_| format!("signing algorithm {alg} is not supported"))?;
    let key = match alg {
        "ES256" | "ES384" => jsonwebtoken::EncodingKey::from_ec_pem(pem.as_bytes()),
        _ => jsonwebtoken::EncodingKey::from_rsa_pem(pem.as_bytes()),
    }
    .map_err(|_| format!("the private key is not a PEM {alg} key"))?;
    let client = settings.client_id.clone().unwrap_or_default();
    let audience = metadata
        .issuer
        .clone()
        .unwrap_or_else(|| metadata.token_endpoint.clone());
    let mut jti = [0u8; 16];
    let _ = getrandom::fill(&mut jti);
    let claims = json!({
        "iss": client,
        "sub": client,
        "aud": audience,
        "iat": now(),
        "exp": now() + ASSERTION_SECS,
        "jti": jti.iter().map(|b| format!("{b:02x}")).collect::<String>(),
    });
    jsonwebtoken::encode(&jsonwebtoken::Header::new(algorithm), &claims, &key)
        .map_err(|_| format!("the private key cannot sign {alg}"))
}

/// A form POST to the token endpoint; the token response, or the refusal in words.
async fn token_request(
    http: &OAuthHttp,
    endpoint: &str,
    form: &(dyn Fn() -> Result<Form, String> + Sync),
    basic: Option<(&str, &str)>,
    grant: &str,
) -> Result<Value, String> {
    let mut request = http::Request::post(endpoint)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("accept", "application/json");
    if let Some((id, secret)) = basic {
        use base64::Engine;
        // RFC 6749 §2.3.1: each part form-encoded before Basic encoding.
        let pair = format!("{}:{}", form_encode(id), form_encode(secret));
        let encoded = base64::engine::general_purpose::STANDARD.encode(pair);
        request = request.header("authorization", format!("Basic {encoded}"));
    }
    let (parts, ()) = request
        .body(())
        .map_err(|_| "OAuth: the token endpoint is not a valid URL".to_string())?
        .into_parts();
    let body = || {
        Ok(form()?
            .iter()
            .map(|(k, v)| format!("{k}={}", form_encode(v)))
            .collect::<Vec<_>>()
            .join("&")
            .into_bytes())
    };
    let response = http
        .send_with(parts, &body, false, crate::bounds::OAUTH_REQUEST_TIMEOUT)
        .await
        .map_err(|e| format!("OAuth: {e}"))?;
    let status = response.status();
    let answer: Value = serde_json::from_slice(response.body()).unwrap_or(Value::Null);
    if status.is_success() && answer.get("access_token").and_then(Value::as_str).is_some() {
        return Ok(answer);
    }
    let code = answer.get("error").and_then(Value::as_str);
    let description = answer.get("error_description").and_then(Value::as_str);
    let why = match (code, description) {
        (Some(code), Some(d)) => format!("{code}: {}", crate::config::quote::shorten(d, 200)),
        (Some(code), None) => code.to_string(),
        _ if status.is_success() => "the answer has no access_token".to_string(),
        _ => format!("HTTP {}", status.as_u16()),
    };
    Err(refused(grant, &why))
}

/// The server's own error in rmcp's words for a refused exchange, past rmcp's prefixes.
fn server_error(text: &str) -> &str {
    [
        "Server returned error response: ",
        "Token exchange failed: ",
        "Client credentials error: ",
    ]
    .iter()
    .find_map(|prefix| text.rsplit_once(prefix).map(|(_, tail)| tail))
    .unwrap_or(text)
}

fn refused(grant: &str, why: &str) -> String {
    let why = why.strip_prefix("OAuth: ").unwrap_or(why);
    format!("OAuth: the authorization server refused the {grant} grant: {why}")
}

fn form_encode(value: &str) -> String {
    percent_encoding::utf8_percent_encode(value, percent_encoding::NON_ALPHANUMERIC)
        .to_string()
        .replace("%20", "+")
}

/// rmcp's EMA failure, in words naming the server that refused.
fn ema_words(error: &EmaError) -> String {
    let at = |stage: &EmaExchangeStage| match stage {
        EmaExchangeStage::IdentityProvider => "the IdP refused the token exchange",
        _ => "the authorization server refused the ID-JAG",
    };
    let why = match error {
        EmaError::InvalidRequest(why) => return format!("OAuth: enterprise sign-in: {why}"),
        EmaError::InvalidResponse { stage, message } => {
            return format!(
                "OAuth: enterprise sign-in: {} answered badly: {message}",
                match stage {
                    EmaExchangeStage::IdentityProvider => "the IdP",
                    _ => "the authorization server",
                }
            );
        }
        EmaError::RequestFailed(stage) => format!("{}: the request failed", at(stage)),
        EmaError::InvalidGrant(stage) => format!("{}: invalid_grant", at(stage)),
        EmaError::InsufficientUserAuthentication(stage) => {
            format!("{}: insufficient_user_authentication", at(stage))
        }
        EmaError::OAuthRejected {
            stage,
            status,
            code,
        } => format!("{}: HTTP {status} {code}", at(stage)),
        other => format!("enterprise sign-in failed: {other}"),
    };
    format!("OAuth: {why}")
}
