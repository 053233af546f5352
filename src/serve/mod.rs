//! The native half of serving: JavaScript tools become `ServedTool`s (`tools`), served over
//! streamable HTTP (`http`), stdio, or an SDK transport via `bridge`; a served call's requests
//! to its client go through `context`.

mod context;
mod hooks;
mod http;
pub mod skills;
mod surface;
mod tools;

use std::sync::{Arc, Mutex};

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::bounded::JsonValue;
use super::callback::{JsCallback, js_callback};
pub use context::call_context;
use engine::serve::{self, CallRecord, ServerIdentity, ToolServer};
pub use http::{HttpServeOptions, HttpServer};
use http::{KeepAlive, serve_options};
use tools::served_tools;
pub use tools::{SchemaProblem, check_json_schema, check_tool_values, tool_result_from_mcp};

/// The native server of `tools` as lib/serve.js's `servedTools` prepares them (internal).
#[napi(
    ts_args_type = "tools: NativeTool[], name: string, version: string, onCall?: (call: CallRecord) => void, search?: NativeSearchMode, skills?: NativeSkills, policy?: NativePolicy"
)]
// Positional, as lib/serve.js's internal `serviceFor` passes them.
#[allow(clippy::too_many_arguments)]
pub fn create_service(
    env: &Env,
    tools: Vec<tools::NativeTool>,
    name: String,
    version: String,
    on_call: Option<Function<Value, ()>>,
    search: Option<NativeSearchMode>,
    skills: Option<&skills::NativeSkills>,
    policy: Option<hooks::NativePolicy>,
) -> Result<NativeService> {
    let served = served_tools(env, tools)?;
    let on_call = match on_call {
        Some(f) => {
            let tsfn: JsCallback<Value> = js_callback(f)?;
            let tsfn = Arc::new(tsfn);
            let hook: serve::OnCall = Arc::new(move |record: CallRecord| {
                let tsfn = tsfn.clone();
                let mut value = json!({
                    "name": record.name, "source": record.source, "ms": record.ms, "isError": record.is_error,
                });
                if let Some(principal) = &record.principal {
                    value["principal"] = principal.to_json();
                }
                // A throwing onCall is the caller's bug; it must not take the server down.
                tokio::spawn(async move {
                    let _ = tsfn.call_async_catch(value).await;
                });
            });
            Some(hook)
        }
        None => None,
    };
    let server = ToolServer::builder(ServerIdentity { name, version }, served)
        .on_call(on_call)
        .search(search.map(|mode| serve::search::SearchMode {
            limit: mode.limit as usize,
            always: mode.always,
        }))
        .skills(skills.map(|s| s.skills.clone()))
        .result_limits(policy.as_ref().and_then(hooks::result_limits))
        .hooks(policy.map(hooks::call_hooks).transpose()?.flatten())
        .build();
    Ok(NativeService {
        server,
        stopped: CancellationToken::new(),
        endpoints: Mutex::default(),
    })
}

/// A toolkit's `toolSearch`, checked by lib/search.js: matches per search, tools kept listed.
#[napi(object)]
pub struct NativeSearchMode {
    pub limit: u32,
    pub always: Vec<String>,
}

/// The native server behind `buildMcpServer` and `toolkit.serve`; created by them (internal).
#[napi]
pub struct NativeService {
    server: ToolServer,
    stopped: CancellationToken,
    /// Endpoints its next `serveHttp` serves beside it, at `/mcp/<name>` (`addEndpoint`).
    endpoints: Mutex<Vec<serve::http::NamedEndpoint>>,
}

#[napi]
impl NativeService {
    /// A session over messages handed in one at a time (an SDK `Transport`); `send` gets every
    /// message the server sends.
    #[napi(ts_args_type = "send: (message: unknown) => void")]
    pub fn bridge(&self, send: Function<Value, ()>) -> Result<NativeBridge> {
        // Outgoing messages of the bridged session, handed to the SDK transport's `send`.
        let send: JsCallback<Value> = js_callback(send)?;
        let send = Arc::new(send);
        let out: Arc<dyn Fn(Value) + Send + Sync> = Arc::new(move |message| {
            let send = send.clone();
            tokio::spawn(async move {
                let _ = send.call_async_catch(message).await;
            });
        });
        // Bridge::start spawns onto the runtime, so enter it from this JavaScript thread.
        let bridge = napi::bindgen_prelude::within_runtime_if_available(|| {
            serve::bridge::Bridge::start(self.server.clone(), out)
        });
        Ok(NativeBridge {
            bridge: Mutex::new(bridge),
        })
    }

    /// Serves `other` at `/mcp/<name>` beside this one when this one next serves HTTP, with
    /// `auth` (absent: this one's) and `limits` (lib/serve-options.js checked both).
    #[napi]
    pub fn add_endpoint(
        &self,
        name: String,
        other: &NativeService,
        auth: Option<http::NativeAuth>,
        limits: Option<http::NativeLimits>,
    ) -> Result<()> {
        let endpoint = serve::http::NamedEndpoint {
            name,
            server: other.server.clone(),
            auth: http::auth_of(auth)?,
            limits: limits.map(http::limits_of),
        };
        self.endpoints
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(endpoint);
        Ok(())
    }

    /// Serves this process's stdin/stdout; resolves at end of input, or on close() once the
    /// calls already in flight have been answered.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn serve_stdio<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        let server = self.server.clone();
        let stopped = self.stopped.clone();
        env.spawn_future(async move {
            // close() ends the input the server sees, so it finishes like at a real end of input.
            let (mut input, served_input) = tokio::io::duplex(64 * 1024);
            let pump = async move {
                let mut stdin = tokio::io::stdin();
                tokio::select! {
                    _ = tokio::io::copy(&mut stdin, &mut input) => {}
                    _ = stopped.cancelled() => {}
                }
            };
            let serving = serve::stdio::serve_lines(server, served_input, tokio::io::stdout());
            let ((), result) = tokio::join!(pump, serving);
            result.map_err(|e| Error::from_reason(format!("toolnexus: stdio serving failed: {e}")))
        })
    }

    /// Serves streamable HTTP at `/mcp` on `addr` (e.g. "127.0.0.1:0").
    #[napi(ts_return_type = "Promise<HttpServer>")]
    pub fn serve_http<'env>(
        &self,
        env: &'env Env,
        addr: String,
        options: Option<HttpServeOptions>,
    ) -> Result<PromiseRaw<'env, HttpServer>> {
        let server = self.server.clone();
        let (mut options, access_log) = serve_options(options)?;
        options.endpoints =
            std::mem::take(&mut *self.endpoints.lock().unwrap_or_else(|e| e.into_inner()));
        // Like a Node HTTP server, a running one keeps the process alive until stop().
        let noop =
            env.create_function_from_closure::<(), _, _>("toolnexusKeepAlive", |_| Ok(()))?;
        let keep_alive: KeepAlive = noop
            .build_threadsafe_function()
            .callee_handled::<false>()
            .build()?;
        let keep_alive = Some(keep_alive);
        env.spawn_future(async move {
            let handle = serve::http::serve_http(&addr, server, options)
                .await
                .map_err(|e| Error::from_reason(format!("toolnexus: {e}")))?;
            Ok(HttpServer {
                url: handle.url().to_string(),
                handle: Arc::new(handle),
                keep_alive: Arc::new(Mutex::new(keep_alive)),
                access_log,
            })
        })
    }

    /// Serves `tools` (as lib/serve.js's `servedTools` prepares them) from now on and tells every
    /// connected client with `notifications/tools/list_changed`, unless `quiet` (the listing is
    /// the same; only what serves it changed).
    #[napi(ts_args_type = "tools: NativeTool[], quiet?: boolean")]
    pub fn set_tools(
        &self,
        env: &Env,
        tools: Vec<tools::NativeTool>,
        quiet: Option<bool>,
    ) -> Result<()> {
        let served = served_tools(env, tools)?;
        let announce = quiet != Some(true);
        napi::bindgen_prelude::within_runtime_if_available(|| {
            self.server.replace_tools(served, announce)
        });
        Ok(())
    }

    /// Serves `own` resources, templates and prompts (as lib/surface.js's `servedSurface`
    /// prepares them) plus those of the `upstreams` sessions, in config order, from now on;
    /// tells connected clients of the listings that changed. See `surface.rs` for the shapes.
    #[napi(
        ts_args_type = "own: NativeSurfaceEntry[], upstreams: unknown[], cache?: NativeCacheHints | undefined | null"
    )]
    pub fn set_surface(
        &self,
        env: &Env,
        own: Vec<surface::NativeSurfaceEntry>,
        upstreams: Vec<ExternalRef<Arc<engine::connect::session::Session>>>,
        cache: Option<surface::NativeCacheHints>,
    ) -> Result<surface::SurfaceSet> {
        let sessions: Vec<&Arc<engine::connect::session::Session>> =
            upstreams.iter().map(|handle| &**handle).collect();
        let (own, upstreams, cache) = surface::surface_parts(env, own, sessions, cache)?;
        let warnings = napi::bindgen_prelude::within_runtime_if_available(|| {
            self.server.set_surface(own, upstreams, cache)
        });
        Ok(surface::SurfaceSet { warnings })
    }

    /// Tells the subscribers of `uri` that it changed (`notifications/resources/updated`).
    #[napi]
    pub fn resource_updated(&self, uri: String) {
        napi::bindgen_prelude::within_runtime_if_available(|| self.server.resource_updated(&uri));
    }

    /// Ends stdio serving, and the runs parked for a 2026-07-28 retry that can no longer come
    /// (their pending ctx promises would otherwise keep Node alive for their whole wait).
    #[napi]
    pub fn close(&self) {
        self.stopped.cancel();
        self.server.end_parked();
    }
}

/// One bridged session of a `NativeService` (internal).
#[napi]
pub struct NativeBridge {
    bridge: Mutex<serve::bridge::Bridge>,
}

#[napi]
impl NativeBridge {
    /// One message from the client.
    #[napi(ts_args_type = "message: unknown")]
    pub fn push(&self, message: JsonValue) {
        self.bridge
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(message.0);
    }

    /// No more messages; the calls in flight are still answered.
    #[napi]
    pub fn close(&self) {
        self.bridge
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .close();
    }
}
