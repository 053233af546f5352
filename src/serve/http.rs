//! `toolkit.serve`'s HTTP server: its options (checked by lib/options.js) and the running
//! server's handle.

use std::sync::{Arc, Mutex};

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;

use serde_json::Value;

use crate::bounded::JsonValue;
use crate::callback::{JsCallback, js_callback};
use engine::serve::{self, auth};

/// Strong, unlike every [`crate::callback::JsCallback`]: holds the event loop open while an
/// HTTP server runs.
pub(super) type KeepAlive = ThreadsafeFunction<(), (), (), Status, false, false>;

/// `serve(addr, opts)` options that reach the native server (checked by lib/options.js).
#[napi(object, object_to_js = false)]
pub struct HttpServeOptions<'a> {
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
    /// Who may use the endpoint (absent: loopback only, as before).
    pub auth: Option<NativeAuth<'a>>,
    /// Gets each request's access-log entry.
    #[napi(ts_type = "(entry: import(\"./index\").AccessLogEntry) => void")]
    pub access_log: Option<Function<'a, Value, ()>>,
    /// Whether the servers behind the endpoint are connected, for `/readyz`.
    #[napi(ts_type = "() => { ready: boolean; servers: Record<string, string> }")]
    pub ready: Option<Function<'a, (), JsonValue>>,
    /// The keys replicas share (lib/serve-options.js makes each a Buffer; the first seals).
    /// Typed as `Uint8Array`, so the public types never need Node's.
    pub state_key: Option<Vec<Uint8Array>>,
    /// The URL other replicas reach this one at.
    pub replica_url: Option<String>,
    /// The store replicas share (`redis://` or `rediss://`); needs `state_key`.
    pub state_store: Option<String>,
    /// Serve Prometheus text at `/metrics`.
    pub metrics: Option<bool>,
    /// Rate and concurrency limits, as lib/serve-options.js checked them.
    pub limits: Option<NativeLimits>,
}

/// `opts.limits` as lib/serve-options.js normalises it.
#[napi(object)]
pub struct NativeLimits {
    pub caller: Option<NativeLimit>,
    pub overall: Option<NativeLimit>,
    pub tools: Option<Vec<NativeToolLimit>>,
}

#[napi(object)]
pub struct NativeLimit {
    pub calls_per_minute: Option<f64>,
    pub burst: Option<f64>,
    pub concurrent: Option<u32>,
}

/// The limit of the tools a glob names.
#[napi(object)]
pub struct NativeToolLimit {
    pub glob: String,
    pub limit: NativeLimit,
}

fn limit_of(limit: NativeLimit) -> serve::rate::Limit {
    serve::rate::Limit {
        per_minute: limit.calls_per_minute,
        burst: limit.burst,
        concurrent: limit.concurrent,
    }
}

pub(super) fn limits_of(limits: NativeLimits) -> serve::rate::RateLimits {
    serve::rate::RateLimits {
        caller: limits.caller.map(limit_of),
        overall: limits.overall.map(limit_of),
        tools: limits
            .tools
            .unwrap_or_default()
            .into_iter()
            .map(|t| (t.glob, limit_of(t.limit)))
            .collect(),
    }
}

/// `opts.auth` as lib/options.js normalises it.
#[napi(object, object_to_js = false)]
pub struct NativeAuth<'a> {
    /// `auth: "none"`: anyone who reaches the endpoint may use it.
    pub none: Option<bool>,
    pub tokens: Option<Vec<NativeStaticToken>>,
    /// Checks a presented token: resolves `{ subject, scopes, claims }` or null.
    #[napi(
        ts_type = "(token: string) => Promise<{ subject: string; scopes: string[]; claims: Record<string, unknown> } | null>"
    )]
    pub verify: Option<Function<'a, String, Promise<JsonValue>>>,
    pub oauth: Option<NativeOAuth>,
    pub tools: Option<Vec<NativeScopeRule>>,
    pub prompts: Option<Vec<NativeScopeRule>>,
    pub resources: Option<Vec<NativeScopeRule>>,
}

#[napi(object)]
pub struct NativeStaticToken {
    pub token: String,
    pub subject: String,
    pub scopes: Vec<String>,
}

#[napi(object)]
pub struct NativeOAuth {
    pub issuer: String,
    pub audience: Option<String>,
    pub required_scopes: Option<Vec<String>>,
    pub jwks_uri: Option<String>,
    pub introspection: Option<NativeIntrospection>,
    /// Seconds of leeway on `exp`/`nbf`/`iat` (lib/options.js checked 0..600).
    pub clock_skew: Option<f64>,
}

#[napi(object)]
pub struct NativeIntrospection {
    pub client_id: String,
    pub client_secret: String,
    pub endpoint: Option<String>,
}

/// Which names (globs) one scope may see.
#[napi(object)]
pub struct NativeScopeRule {
    pub scope: String,
    pub globs: Vec<String>,
}

/// A verifier in JavaScript, called for each token the static ones do not match.
struct JsVerifier(Arc<JsCallback<String, Promise<JsonValue>>>);

impl auth::TokenVerifier for JsVerifier {
    fn verify(
        &self,
        token: String,
    ) -> futures::future::BoxFuture<'static, std::result::Result<Option<auth::Principal>, String>>
    {
        let verify = self.0.clone();
        Box::pin(async move {
            let asked = async {
                match verify.call_async_catch(token).await {
                    Ok(promise) => promise.await.map(|v| v.0),
                    Err(e) => Err(e),
                }
            };
            let bound = engine::bounds::AUTH_VERIFY_TIMEOUT;
            let Ok(answered) = tokio::time::timeout(bound, asked).await else {
                return Err(format!(
                    "the token check did not answer within {} s",
                    bound.as_secs()
                ));
            };
            // The function's own words are not repeated: they could hold the token.
            let value = answered.map_err(|_| "the token check threw".to_string())?;
            if value.is_null() {
                return Ok(None);
            }
            let subject = value.get("subject").and_then(Value::as_str);
            let Some(subject) = subject.filter(|s| !s.is_empty()) else {
                return Err("the token check gave no subject".to_string());
            };
            let scopes = value
                .get("scopes")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            let claims = value
                .get("claims")
                .filter(|c| c.is_object())
                .cloned()
                .unwrap_or_else(|| serde_json::json!({}));
            Ok(Some(auth::Principal {
                subject: subject.to_string(),
                scopes,
                claims,
                issuer: None,
            }))
        })
    }
}

fn rules(rules: Option<Vec<NativeScopeRule>>) -> Option<Vec<(String, Vec<String>)>> {
    rules.map(|rules| rules.into_iter().map(|r| (r.scope, r.globs)).collect())
}

/// `opts.auth` for the native server (its functions made callable from the runtime).
pub(super) fn auth_of(auth: Option<NativeAuth>) -> Result<serve::http::Auth> {
    let Some(auth) = auth else {
        return Ok(serve::http::Auth::Unset);
    };
    if auth.none == Some(true) {
        return Ok(serve::http::Auth::Open);
    }
    let verifier: Option<Arc<dyn auth::TokenVerifier>> = match auth.verify {
        Some(f) => Some(Arc::new(JsVerifier(Arc::new(js_callback(f)?)))),
        None => None,
    };
    let oauth = auth.oauth.map(|o| auth::OAuthOptions {
        issuer: o.issuer,
        audience: o.audience,
        required_scopes: o.required_scopes.unwrap_or_default(),
        jwks_uri: o.jwks_uri,
        introspection: o.introspection.map(|i| auth::Introspection {
            client_id: i.client_id,
            client_secret: i.client_secret,
            endpoint: i.endpoint,
        }),
        clock_skew: std::time::Duration::from_secs_f64(o.clock_skew.unwrap_or(60.0)),
    });
    let tokens = auth
        .tokens
        .unwrap_or_default()
        .into_iter()
        .map(|t| auth::StaticToken {
            token: t.token,
            subject: t.subject,
            scopes: t.scopes,
        })
        .collect();
    Ok(serve::http::Auth::Required(Box::new(auth::AuthOptions {
        tokens,
        verifier,
        oauth,
        policy: auth::AccessPolicy::new(
            rules(auth.tools),
            rules(auth.prompts),
            rules(auth.resources),
        ),
    })))
}

/// The access log's JavaScript function, kept by the handle to flush it: entries are queued to
/// it without waiting, so `stop()` sends a `null` after the last one and waits for that to be
/// handled (the queue is in order), and every entry has reached the function when it resolves.
pub(super) type LogFlush = Arc<JsCallback<Value, ()>>;

/// `serve(addr, opts)`'s options for the native server, and the access log to flush on stop.
/// Runs on the JavaScript thread: its functions become thread-safe ones here.
pub(super) fn serve_options(
    o: Option<HttpServeOptions>,
) -> Result<(serve::http::ServeOptions, Option<LogFlush>)> {
    let Some(o) = o else {
        return Ok((serve::http::ServeOptions::default(), None));
    };
    let sessions = session_limits(&o);
    let mut flush = None;
    let access_log = match o.access_log {
        Some(f) => {
            let log: LogFlush = Arc::new(js_callback::<Value, ()>(f)?);
            flush = Some(log.clone());
            // Queued in order, as the requests ended (lib/serve-options.js guards the function,
            // so a throw in it never reaches Node as an uncaught exception).
            let sink: serve::http::AccessLog = Arc::new(move |entry| {
                let _ = log.call(entry, ThreadsafeFunctionCallMode::NonBlocking);
            });
            Some(sink)
        }
        None => None,
    };
    let ready = match o.ready {
        Some(f) => {
            let ready = Arc::new(js_callback::<(), JsonValue>(f)?);
            let probe: serve::http::Readiness = Arc::new(move || {
                let ready = ready.clone();
                Box::pin(async move { ready.call_async_catch(()).await.ok().map(|v| v.0) })
            });
            Some(probe)
        }
        None => None,
    };
    let state_key = match o.state_key {
        Some(keys) => {
            let secrets: Vec<Vec<u8>> = keys.iter().map(|k| k.to_vec()).collect();
            let key = serve::seal::StateKey::new(&secrets)
                .map_err(|e| Error::new(Status::InvalidArg, format!("toolnexus: {e}")))?;
            Some(Arc::new(key))
        }
        None => None,
    };
    let state_store = match (o.state_store, &state_key) {
        (Some(url), Some(key)) => Some(
            serve::store_redis::connect(&url, key.clone())
                .map_err(|e| Error::new(Status::InvalidArg, format!("toolnexus: {e}")))?,
        ),
        (Some(_), None) => {
            return Err(Error::new(
                Status::InvalidArg,
                "toolnexus: stateStore needs stateKey",
            ));
        }
        (None, _) => None,
    };
    let options = serve::http::ServeOptions {
        sessions,
        stateless: o.stateless.unwrap_or(false),
        allowed_hosts: o.allowed_hosts,
        allowed_origins: o.allowed_origins,
        auth: auth_of(o.auth)?,
        access_log,
        ready,
        state_key,
        state_store,
        replica_url: o.replica_url,
        metrics: o.metrics.unwrap_or(false),
        limits: o.limits.map(limits_of),
        endpoints: Vec::new(),
    };
    Ok((options, flush))
}

/// The session bounds `serve` was given (lib/options.js checked their ranges).
fn session_limits(o: &HttpServeOptions) -> serve::http::SessionLimits {
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
    pub(super) access_log: Option<LogFlush>,
}

#[napi]
impl HttpServer {
    /// The base URL, without a trailing slash; the endpoint is `url + "/mcp"`.
    #[napi(getter)]
    pub fn url(&self) -> String {
        self.url.clone()
    }

    /// Stops accepting, waits for in-flight requests (bounded), hands the access log its last
    /// entries, and lets Node exit again.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn stop<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        let handle = self.handle.clone();
        let keep_alive = self.keep_alive.clone();
        let access_log = self.access_log.clone();
        env.spawn_future(async move {
            let stopped = async {
                handle.stop().await;
                if let Some(log) = access_log {
                    let _ = log.call_async_catch(Value::Null).await;
                }
            };
            let _ = tokio::time::timeout(engine::bounds::SERVE_STOP_BOUND, stopped).await;
            keep_alive.lock().unwrap_or_else(|e| e.into_inner()).take();
            Ok(())
        })
    }
}
