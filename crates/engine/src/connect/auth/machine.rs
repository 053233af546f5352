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
use super::http::OAuthHttp;
use crate::config::auth::{Grant, OAuthSettings};

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
    http.bind_if_supported(settings.dpop, &metadata, challenge);
    let issuer = metadata.issuer.clone();
    let resource = http
        .resource()
        .unwrap_or_else(|| super::store::canonical_url(url));
    let client_id = settings.client_id.clone().unwrap_or_default();
    let token = match settings.grant {
        Grant::ClientCredentials => {
            supports(&metadata, "client_credentials", "client_credentials")?;
            match &settings.private_key {
                None => client_secret(manager, metadata, settings, scopes, resource).await?,
                Some(_) => private_key_jwt(http, &metadata, settings, scopes, &resource).await?,
            }
        }
        Grant::JwtBearer => {
            supports(&metadata, JWT_BEARER, "jwt-bearer")?;
            jwt_bearer(http, &metadata, settings, scopes, &resource).await?
        }
        Grant::Enterprise => {
            supports(&metadata, JWT_BEARER, "jwt-bearer (for the ID-JAG)")?;
            enterprise(http, &metadata, settings, scopes, &resource).await?
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

async fn client_secret(
    mut manager: AuthorizationManager,
    metadata: AuthorizationMetadata,
    settings: &OAuthSettings,
    scopes: &[String],
    resource: String,
) -> Result<Value, String> {
    manager.set_metadata(metadata);
    let config = ClientCredentialsConfig::ClientSecret {
        client_id: settings.client_id.clone().unwrap_or_default(),
        client_secret: settings.client_secret.clone().unwrap_or_default(),
        scopes: scopes.to_vec(),
        resource: Some(resource),
    };
    manager
        .validate_client_credentials_metadata(&config)
        .map_err(|_| {
            "OAuth: the authorization server takes no client secret (client_secret_basic or client_secret_post)".to_string()
        })?;
    manager
        .configure_client_credentials(&config)
        .map_err(|e| words(&e))?;
    let token = manager
        .exchange_client_credentials(&config)
        .await
        .map_err(|e| refused("client_credentials", server_error(&words(&e))))?;
    serde_json::to_value(token).map_err(|e| e.to_string())
}

/// An RFC 7523 §2.2 client assertion: iss = sub = the client, aud = the issuer.
fn client_assertion(
    settings: &OAuthSettings,
    metadata: &AuthorizationMetadata,
) -> Result<String, String> {
    let pem = settings
        .private_key
        .as_ref()
        .ok_or("no private key")?
        .read("the private key")?;
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

async fn private_key_jwt(
    http: &OAuthHttp,
    metadata: &AuthorizationMetadata,
    settings: &OAuthSettings,
    scopes: &[String],
    resource: &str,
) -> Result<Value, String> {
    if let Some(methods) = metadata
        .additional_fields
        .get("token_endpoint_auth_methods_supported")
        .and_then(Value::as_array)
        && !methods
            .iter()
            .any(|m| m.as_str() == Some("private_key_jwt"))
    {
        return Err("OAuth: the authorization server does not take private_key_jwt".into());
    }
    let assertion = client_assertion(settings, metadata).map_err(|e| format!("OAuth: {e}"))?;
    let mut form = vec![
        ("grant_type", "client_credentials".to_string()),
        ("client_assertion_type", CLIENT_ASSERTION_TYPE.to_string()),
        ("client_assertion", assertion),
        ("resource", resource.to_string()),
    ];
    if !scopes.is_empty() {
        form.push(("scope", scopes.join(" ")));
    }
    token_request(
        http,
        &metadata.token_endpoint,
        &form,
        None,
        "client_credentials",
    )
    .await
}

async fn jwt_bearer(
    http: &OAuthHttp,
    metadata: &AuthorizationMetadata,
    settings: &OAuthSettings,
    scopes: &[String],
    resource: &str,
) -> Result<Value, String> {
    let assertion = settings
        .assertion
        .as_ref()
        .ok_or("no assertion")?
        .read("the workload token")
        .map_err(|e| format!("OAuth: {e}"))?;
    let mut form = vec![
        ("grant_type", JWT_BEARER.to_string()),
        ("assertion", assertion),
        ("resource", resource.to_string()),
    ];
    if !scopes.is_empty() {
        form.push(("scope", scopes.join(" ")));
    }
    let basic = match (&settings.client_id, &settings.client_secret) {
        (Some(id), Some(secret)) => Some((id.as_str(), secret.as_str())),
        (Some(id), None) => {
            form.push(("client_id", id.clone()));
            None
        }
        _ => None,
    };
    token_request(http, &metadata.token_endpoint, &form, basic, "jwt-bearer").await
}

/// A form POST to the token endpoint; the token response, or the refusal in words.
async fn token_request(
    http: &OAuthHttp,
    endpoint: &str,
    form: &[(&str, String)],
    basic: Option<(&str, &str)>,
    grant: &str,
) -> Result<Value, String> {
    let body = form
        .iter()
        .map(|(k, v)| format!("{k}={}", form_encode(v)))
        .collect::<Vec<_>>()
        .join("&");
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
    let request = request
        .body(body.into_bytes())
        .map_err(|_| "OAuth: the token endpoint is not a valid URL".to_string())?;
    let response = http
        .send(request, false, crate::bounds::OAUTH_REQUEST_TIMEOUT)
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

async fn enterprise(
    http: &Arc<OAuthHttp>,
    metadata: &AuthorizationMetadata,
    settings: &OAuthSettings,
    scopes: &[String],
    resource: &str,
) -> Result<Value, String> {
    let e = settings
        .enterprise
        .as_ref()
        .ok_or("no enterprise settings")?;
    let id_token = e
        .id_token
        .read("the ID token")
        .map_err(|e| format!("OAuth: {e}"))?;
    let basic = |secret: &Option<String>| match secret {
        Some(s) => EmaClientAuthentication::ClientSecretBasic(oauth2::ClientSecret::new(s.clone())),
        None => EmaClientAuthentication::None,
    };
    let idp = EmaAuthorizationServer::new(
        e.idp_issuer.clone(),
        e.idp_token_endpoint.clone(),
        e.idp_client_id.clone(),
    )
    .with_client_authentication(basic(&e.idp_client_secret));
    let server = EmaAuthorizationServer::new(
        metadata.issuer.clone().unwrap_or_default(),
        metadata.token_endpoint.clone(),
        settings.client_id.clone().unwrap_or_default(),
    )
    .with_client_authentication(basic(&settings.client_secret));
    let token = EmaExchangeRequest::new_with_id_token(idp, server, resource, &id_token)
        .with_scopes(scopes.iter().cloned())
        .exchange(http.as_ref(), http.as_ref())
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
