//! The redirect listener: a one-shot HTTP endpoint on 127.0.0.1 that receives the
//! authorisation server's redirect (`/callback?code=…&state=…[&iss=…]`) from the user's
//! browser, or from whatever the app's `authorize` did with the URL.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::Full;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::transport::auth::AuthorizationCallback;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

pub(crate) const CALLBACK_PATH: &str = "/callback";

/// What the redirect carried.
pub(crate) enum Redirect {
    Code(AuthorizationCallback),
    /// The authorisation server refused (`error=access_denied`, say), in words.
    Refused(String),
}

pub(crate) struct Listener {
    pub(crate) redirect_uri: String,
    /// The `state` of the authorisation this listener waits for: a redirect with another one
    /// (a stale tab, another local program) is refused without ending the wait.
    expected: Expected,
    received: oneshot::Receiver<Redirect>,
    /// Ends the accept loop when the flow is over, whatever its outcome.
    stop: tokio_util::sync::DropGuard,
}

impl Listener {
    /// Binds 127.0.0.1 on `port` (0: any free port).
    pub(crate) async fn bind(port: u16) -> Result<Self, String> {
        let listener = TcpListener::bind(("127.0.0.1", port))
            .await
            .map_err(|e| match port {
                0 => format!("cannot open a loopback port for the OAuth redirect: {e}"),
                _ => format!("cannot listen on 127.0.0.1:{port} for the OAuth redirect (auth.redirectPort): {e}"),
            })?;
        let port = listener.local_addr().map_err(|e| e.to_string())?.port();
        let (sender, received) = oneshot::channel();
        let sender = Arc::new(Mutex::new(Some(sender)));
        let expected = Expected::default();
        let wanted = expected.clone();
        let stop = tokio_util::sync::CancellationToken::new();
        let stopped = stop.clone();
        tokio::spawn(async move {
            loop {
                let accepted = tokio::select! {
                    _ = stopped.cancelled() => return,
                    accepted = listener.accept() => accepted,
                };
                let Ok((socket, _)) = accepted else { continue };
                let sender = sender.clone();
                let wanted = wanted.clone();
                let service = service_fn(move |request| {
                    let (sender, wanted) = (sender.clone(), wanted.clone());
                    async move { Ok::<_, Infallible>(answer(&request, &sender, &wanted)) }
                });
                let stopped = stopped.clone();
                tokio::spawn(async move {
                    let connection = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(socket), service);
                    tokio::select! {
                        _ = stopped.cancelled() => {}
                        _ = connection => {}
                    }
                });
            }
        });
        Ok(Self {
            redirect_uri: format!("http://127.0.0.1:{port}{CALLBACK_PATH}"),
            expected,
            received,
            stop: stop.drop_guard(),
        })
    }

    /// Accept only redirects carrying `state` (taken from the authorisation URL).
    pub(crate) fn expect_state(&self, state: Option<String>) {
        *self.expected.lock().unwrap_or_else(|e| e.into_inner()) = state;
    }

    /// The first redirect that reaches the callback path with the expected state.
    pub(crate) async fn redirect(self) -> Result<Redirect, String> {
        let _stop = self.stop;
        self.received
            .await
            .map_err(|_| "the OAuth redirect listener stopped".to_string())
    }
}

type Sender = Arc<Mutex<Option<oneshot::Sender<Redirect>>>>;
type Expected = Arc<Mutex<Option<String>>>;

fn answer<B>(request: &Request<B>, sender: &Sender, expected: &Expected) -> Response<Full<Bytes>> {
    let page = |status: StatusCode, text: &str| {
        Response::builder()
            .status(status)
            .header("content-type", "text/html; charset=utf-8")
            .header("cache-control", "no-store")
            .body(Full::new(Bytes::from(format!(
                "<!doctype html><title>toolnexus</title><p>{text}</p>"
            ))))
            .unwrap_or_default()
    };
    if request.uri().path() != CALLBACK_PATH {
        return page(StatusCode::NOT_FOUND, "Not found.");
    }
    let url = format!("http://127.0.0.1{}", request.uri());
    let query: Vec<(String, String)> = reqwest::Url::parse(&url)
        .map(|u| u.query_pairs().into_owned().collect())
        .unwrap_or_default();
    let field = |name: &str| {
        query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let wanted = expected.lock().unwrap_or_else(|e| e.into_inner()).clone();
    if wanted.is_some() && field("state") != wanted {
        return page(
            StatusCode::BAD_REQUEST,
            "This answer is not for the authorisation in progress.",
        );
    }
    let redirect = if let Some(error) = field("error") {
        let description = field("error_description")
            .map(|d| format!(": {}", crate::config::quote::shorten(&d, 200)))
            .unwrap_or_default();
        Redirect::Refused(format!(
            "the authorisation server refused ({}{description})",
            crate::config::quote::shorten(&error, 60)
        ))
    } else {
        match AuthorizationCallback::from_redirect_url(&url) {
            Ok(callback) => Redirect::Code(callback),
            Err(_) => {
                return page(
                    StatusCode::BAD_REQUEST,
                    "This is not an authorisation response.",
                );
            }
        }
    };
    let refused = matches!(redirect, Redirect::Refused(_));
    match sender.lock().unwrap_or_else(|e| e.into_inner()).take() {
        Some(sender) => {
            let _ = sender.send(redirect);
            if refused {
                page(
                    StatusCode::OK,
                    "Authorisation was refused. You can close this tab.",
                )
            } else {
                page(
                    StatusCode::OK,
                    "toolnexus is authorised. You can close this tab.",
                )
            }
        }
        None => page(StatusCode::GONE, "This authorisation is already complete."),
    }
}
