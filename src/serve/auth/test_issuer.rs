//! A real OAuth issuer's HTTP side on loopback, for the guard's tests: metadata (RFC 8414 and
//! OpenID paths), a JWKS that tests can rotate, and an RFC 7662 introspection endpoint.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpListener;

#[derive(Default)]
pub struct State {
    /// Served at `/.well-known/oauth-authorization-server<path>`; None: 404.
    pub rfc8414: Option<Value>,
    /// Served at `<path>/.well-known/openid-configuration`; None: 404.
    pub openid: Option<Value>,
    pub jwks: Value,
    /// Introspection answers by token; a token not here is `{"active": false}`.
    pub introspection: HashMap<String, Value>,
    /// Every path asked for, in order.
    pub requests: Vec<String>,
    /// The Authorization and body of each introspection request.
    pub introspected: Vec<(String, String)>,
}

pub struct TestIssuer {
    /// The issuer identifier: `http://127.0.0.1:<port><path>`.
    pub issuer: String,
    pub origin: String,
    pub state: Arc<Mutex<State>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for TestIssuer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl TestIssuer {
    /// An issuer at `path` ("" for the origin) publishing RFC 8414 metadata with `jwks`.
    pub async fn start(path: &str, jwks: Value) -> TestIssuer {
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

    pub fn set_jwks(&self, jwks: Value) {
        self.state.lock().unwrap().jwks = jwks;
    }

    pub fn requests(&self) -> Vec<String> {
        self.state.lock().unwrap().requests.clone()
    }

    pub fn jwks_fetches(&self) -> usize {
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
