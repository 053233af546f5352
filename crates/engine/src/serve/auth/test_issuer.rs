//! A real OAuth issuer's HTTP side on loopback, for the guard's tests: metadata (RFC 8414 and
//! OpenID paths), a JWKS that tests can rotate, and an RFC 7662 introspection endpoint; and the
//! tests' tokens, signed with its keys, and a guard that trusts it.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, header};
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use serde_json::{Value, json};
use tokio::net::TcpListener;

use super::test_keys::*;
use super::{AccessPolicy, AuthOptions, Guard, OAuthOptions};

#[derive(Default)]
pub(crate) struct State {
    /// Served at `/.well-known/oauth-authorization-server<path>`; None: 404.
    pub(crate) rfc8414: Option<Value>,
    /// Served at `<path>/.well-known/openid-configuration`; None: 404.
    pub(crate) openid: Option<Value>,
    pub(crate) jwks: Value,
    /// Introspection answers by token; a token not here is `{"active": false}`.
    pub(crate) introspection: HashMap<String, Value>,
    /// Every path asked for, in order.
    pub(crate) requests: Vec<String>,
    /// The Authorization and body of each introspection request.
    pub(crate) introspected: Vec<(String, String)>,
}

pub(crate) struct TestIssuer {
    /// The issuer identifier: `http://127.0.0.1:<port><path>`.
    pub(crate) issuer: String,
    pub(crate) origin: String,
    pub(crate) state: Arc<Mutex<State>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for TestIssuer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl TestIssuer {
    /// An issuer at `path` ("" for the origin) publishing RFC 8414 metadata with `jwks`.
    pub(crate) async fn start(path: &str, jwks: Value) -> TestIssuer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        let issuer = format!("{origin}{path}");
        let state = Arc::new(Mutex::new(State {
            rfc8414: Some(json!({
                "issuer": issuer,
                "jwks_uri": format!("{origin}/jwks"),
                "introspection_endpoint": format!("{origin}/introspect"),
            })),
            jwks,
            ..State::default()
        }));
        let served = state.clone();
        let path = path.to_string();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let (state, path) = (served.clone(), path.clone());
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        let (state, path) = (state.clone(), path.clone());
                        async move { Ok::<_, Infallible>(answer(&state, &path, request).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        TestIssuer {
            issuer,
            origin,
            state,
            task,
        }
    }

    pub(crate) fn set_jwks(&self, jwks: Value) {
        self.state.lock().unwrap().jwks = jwks;
    }

    pub(crate) fn requests(&self) -> Vec<String> {
        self.state.lock().unwrap().requests.clone()
    }

    pub(crate) fn jwks_fetches(&self) -> usize {
        self.requests().iter().filter(|p| *p == "/jwks").count()
    }
}

async fn answer(
    state: &Mutex<State>,
    path: &str,
    request: Request<hyper::body::Incoming>,
) -> Response<Full<Bytes>> {
    let asked = request.uri().path().to_string();
    let authorization = request
        .headers()
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let body = request.into_body().collect().await.unwrap().to_bytes();
    let mut state = state.lock().unwrap();
    state.requests.push(asked.clone());
    let found = if asked == format!("/.well-known/oauth-authorization-server{path}") {
        state.rfc8414.clone()
    } else if asked == format!("{path}/.well-known/openid-configuration") {
        state.openid.clone()
    } else if asked == "/jwks" {
        Some(state.jwks.clone())
    } else if asked == "/big" {
        Some(json!({ "padding": "x".repeat(300 * 1024) }))
    } else if asked == "/introspect" {
        let form = String::from_utf8_lossy(&body).to_string();
        state.introspected.push((authorization, form.clone()));
        let token = form
            .split('&')
            .find_map(|pair| pair.strip_prefix("token="))
            .map(|t| {
                percent_encoding::percent_decode_str(t)
                    .decode_utf8_lossy()
                    .to_string()
            })
            .unwrap_or_default();
        Some(
            state
                .introspection
                .get(&token)
                .cloned()
                .unwrap_or(json!({ "active": false })),
        )
    } else {
        None
    };
    let mut response = match found {
        Some(document) => Response::new(Full::new(Bytes::from(document.to_string()))),
        None => {
            let mut response = Response::new(Full::new(Bytes::from_static(b"not found")));
            *response.status_mut() = StatusCode::NOT_FOUND;
            response
        }
    };
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

// The tests' tokens and guards.

/// The guard's endpoint, and its protected resource metadata URL.
pub(crate) const ENDPOINT: &str = "http://127.0.0.1:9/mcp";
pub(crate) const PRM: &str = "http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp";

pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

pub(crate) fn rsa_jwk(kid: &str, n: &str) -> Value {
    json!({"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256", "n": n, "e": "AQAB"})
}

pub(crate) fn keys() -> Value {
    json!({"keys": [
        rsa_jwk("rsa1", RSA1_N),
        {"kty": "EC", "kid": "ec", "crv": "P-256", "x": EC_X, "y": EC_Y},
        {"kty": "OKP", "kid": "ed", "crv": "Ed25519", "x": ED_X},
        // An encryption key is never used to check signatures.
        {"kty": "RSA", "kid": "enc", "use": "enc", "n": RSA2_N, "e": "AQAB"},
    ]})
}

pub(crate) fn sign(alg: Algorithm, kid: Option<&str>, pem: &str, claims: &Value) -> String {
    let key = match alg {
        Algorithm::ES256 | Algorithm::ES384 => EncodingKey::from_ec_pem(pem.as_bytes()),
        Algorithm::EdDSA => EncodingKey::from_ed_pem(pem.as_bytes()),
        _ => EncodingKey::from_rsa_pem(pem.as_bytes()),
    }
    .unwrap();
    let mut header = Header::new(alg);
    header.kid = kid.map(str::to_string);
    encode(&header, claims, &key).unwrap()
}

/// `claims` signed with RS256 by the issuer's key `rsa1`.
pub(crate) fn signed(claims: &Value) -> String {
    sign(Algorithm::RS256, Some("rsa1"), RSA1_PRIVATE, claims)
}

/// Good claims for a token of `issuer` for the guard's endpoint: alice, scopes read and write.
pub(crate) fn claims(issuer: &str) -> Value {
    json!({
        "iss": issuer, "aud": ENDPOINT, "sub": "alice", "scope": "read write",
        "exp": now() + 600, "iat": now(), "team": "a",
    })
}

pub(crate) fn oauth(issuer: &TestIssuer) -> OAuthOptions {
    OAuthOptions {
        issuer: issuer.issuer.clone(),
        audience: None,
        required_scopes: vec![],
        jwks_uri: None,
        introspection: None,
        clock_skew: Duration::from_secs(60),
    }
}

pub(crate) fn with_oauth(oauth: OAuthOptions) -> AuthOptions {
    AuthOptions {
        tokens: vec![],
        verifier: None,
        oauth: Some(oauth),
        policy: AccessPolicy::default(),
    }
}

/// A guard trusting `issuer` (discovered from its metadata).
pub(crate) async fn guard(issuer: &TestIssuer) -> Guard {
    Guard::new(with_oauth(oauth(issuer)), ENDPOINT)
        .await
        .unwrap()
}

pub(crate) fn bearer(token: &str) -> HeaderMap {
    let mut map = HeaderMap::new();
    let value = HeaderValue::from_str(&format!("Bearer {token}")).unwrap();
    map.insert(header::AUTHORIZATION, value);
    map
}

/// The words of the 401 that refuses `token`.
pub(crate) async fn refused(guard: &Guard, token: &str) -> String {
    let denial = guard.check(&bearer(token)).await.unwrap_err();
    assert_eq!(denial.status(), StatusCode::UNAUTHORIZED);
    denial.description().to_string()
}
