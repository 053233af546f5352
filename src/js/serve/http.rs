//! `toolkit.serve`'s HTTP server: its options (checked by lib/options.js) and the running
//! server's handle.

use std::sync::{Arc, Mutex};

use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunction;
use napi_derive::napi;

use crate::serve;

/// Strong, unlike every [`crate::js::callback::JsCallback`]: holds the event loop open while an
/// HTTP server runs.
pub(super) type KeepAlive = ThreadsafeFunction<(), (), (), Status, false, false>;

/// `serve(addr, opts)` options that reach the native server (checked by lib/options.js).
#[napi(object)]
pub struct HttpServeOptions {
    /// Serve handshake-era clients without sessions too (for replicas behind a load balancer).
    pub stateless: Option<bool>,
    /// `Host` values accepted besides the loopback names; required for a non-loopback bind.
    pub allowed_hosts: Option<Vec<String>>,
    /// Browser origins accepted besides the loopback ones.
    pub allowed_origins: Option<Vec<String>>,
    /// A session no request names for this many ms expires (404 from then on); default 300000.
    pub session_idle_timeout: Option<f64>,
    /// Live sessions at most; a new one beyond it ends the idlest. Default 500.
    pub max_sessions: Option<f64>,
}

/// The session bounds `serve` was given (lib/options.js checked their ranges).
pub(super) fn session_limits(o: &HttpServeOptions) -> serve::http::SessionLimits {
    let mut limits = serve::http::SessionLimits::default();
    if let Some(ms) = o.session_idle_timeout {
        limits.idle_timeout = std::time::Duration::from_millis(ms as u64);
    }
    if let Some(n) = o.max_sessions {
        limits.max_sessions = n as usize;
    }
    limits
}

/// A running streamable-HTTP server, wrapped by `toolkit.serve`'s handle (internal).
#[napi]
pub struct HttpServer {
    pub(super) url: String,
    pub(super) handle: Arc<serve::http::ServeHandle>,
    pub(super) keep_alive: Arc<Mutex<Option<KeepAlive>>>,
}

#[napi]
impl HttpServer {
    /// The base URL, without a trailing slash; the endpoint is `url + "/mcp"`.
    #[napi(getter)]
    pub fn url(&self) -> String {
        self.url.clone()
    }

    /// Stops accepting, waits for in-flight requests (bounded), and lets Node exit again.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn stop<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        let handle = self.handle.clone();
        let keep_alive = self.keep_alive.clone();
        env.spawn_future(async move {
            let _ = tokio::time::timeout(crate::bounds::SERVE_STOP_BOUND, handle.stop()).await;
            keep_alive.lock().unwrap_or_else(|e| e.into_inner()).take();
            Ok(())
        })
    }
}
