//! The native half of serving: JavaScript tools become `ServedTool`s (their `execute` called
//! through a thread-safe function, or, for tools from loadMcp, their live connection called
//! directly in Rust), served over streamable HTTP, stdio, or an SDK transport via `handle`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunction;
use napi_derive::napi;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::bounded::JsonValue;
use super::mcp_tools::McpToolRef;
use crate::serve::context::{InputAsk, InputKind};
use crate::serve::{
    self, CallContext, CallRecord, ServedTool, ServerIdentity, ToolCaller, ToolServer,
};
use crate::tool_result::ToolResult;

/// A tool's `execute(args)`, callable from any thread; weak, so serving alone does not keep
/// Node alive (a running HTTP server holds its own keep-alive).
type Execute = ThreadsafeFunction<Value, Promise<JsonValue>, Value, Status, false, true>;
type OnCallFn = ThreadsafeFunction<Value, (), Value, Status, false, true>;
/// Strong: holds the event loop open while an HTTP server runs.
type KeepAlive = ThreadsafeFunction<(), (), (), Status, false, false>;

type Abort = ThreadsafeFunction<f64, (), f64, Status, false, true>;

struct JsTool {
    execute: Arc<Execute>,
    abort: Arc<Abort>,
}

/// Ids of served JavaScript calls, to name the one to abort.
static NEXT_CALL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// The contexts of served JavaScript calls in flight, by call id, for `ctx.progress/log/elicit/
/// sample` to reach their client.
static CONTEXTS: std::sync::LazyLock<Mutex<std::collections::HashMap<u64, CallContext>>> =
    std::sync::LazyLock::new(Default::default);

/// Fires the call's AbortSignal if the call is dropped (the client cancelled or went away)
/// before it finished; either way the call's context is forgotten.
struct AbortOnDrop {
    abort: Arc<Abort>,
    id: f64,
    finished: bool,
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        CONTEXTS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&(self.id as u64));
        if self.finished {
            return;
        }
        let (abort, id) = (self.abort.clone(), self.id);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = abort.call_async_catch(id).await;
            });
        }
    }
}

impl ToolCaller for JsTool {
    fn call(
        &self,
        arguments: Map<String, Value>,
        ctx: CallContext,
    ) -> futures::future::BoxFuture<'static, Value> {
        let execute = self.execute.clone();
        let id = NEXT_CALL.fetch_add(1, std::sync::atomic::Ordering::Relaxed) as f64;
        CONTEXTS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id as u64, ctx);
        let guard = AbortOnDrop {
            abort: self.abort.clone(),
            id,
            finished: false,
        };
        async move {
            // Moved whole into the future, so it drops with the future, not with this call.
            let mut guard = guard;
            let call = json!({ "id": id, "args": arguments });
            let outcome = match execute.call_async_catch(call).await {
                Ok(promise) => promise.await.map(|v| v.0).map_err(|e| e.reason.clone()),
                Err(e) => Err(e.reason.clone()),
            };
            guard.finished = true;
            match outcome {
                Ok(result) => tool_result_to_mcp(&result),
                Err(message) => text_result(message, true),
            }
        }
        .boxed()
    }
}

/// A tool of a loadMcp source, served again: the call goes straight down its connection.
struct Forward(Arc<McpToolRef>);

impl ToolCaller for Forward {
    fn call(
        &self,
        arguments: Map<String, Value>,
        ctx: CallContext,
    ) -> futures::future::BoxFuture<'static, Value> {
        let tool = self.0.clone();
        if tool.task_required {
            let reason = crate::connect::execution::task_required_reason(&tool.tool);
            return futures::future::ready(text_result(reason, true)).boxed();
        }
        // Progress, log messages and elicitations of the upstream reach the calling client.
        let (front, relayed) = ctx.relay();
        async move {
            // The call runs on its own task: if this future is dropped (the client cancelled or
            // went away), the token tells the upstream server with notifications/cancelled.
            let cancel = CancellationToken::new();
            let _cancel_on_drop = cancel.clone().drop_guard();
            let call = tokio::spawn(async move {
                let closed = tool.session.closed_token().clone();
                tool.server
                    .call(&tool.tool, arguments, None, &cancel, &closed, Some(front))
                    .await
            });
            let result = match call.await {
                // The server's own result travels on untouched; a failure to get one is text.
                Ok(out) => out.raw.unwrap_or_else(|| text_result(out.output, true)),
                Err(_) => text_result("MCP tool call failed".to_string(), true),
            };
            // What the upstream reported before its result reaches the client before it too
            // (bounded, so a client that stopped reading cannot hold the result back).
            let _ = tokio::time::timeout(Duration::from_secs(5), relayed).await;
            result
        }
        .boxed()
    }
}

fn text_result(text: String, is_error: bool) -> Value {
    ToolResult::text(text, is_error).to_mcp()
}

/// A `ToolResult` as an MCP `CallToolResult`: its `content` parts (and `structuredContent`)
/// as they are when it has them (a `run` that answered in MCP terms, or a loaded MCP tool),
/// else its `output` as one text part.
fn tool_result_to_mcp(result: &Value) -> Value {
    ToolResult::from_js(result).to_mcp()
}

/// `ctx.progress/log/elicit/sample` of a served JavaScript call (internal): what the call asks
/// of its client. Resolves with the client's answer (elicit, sample) or whether anything was
/// sent (progress, log); rejects with a reason in words.
pub fn call_context<'env>(
    env: &'env Env,
    id: f64,
    op: String,
    payload: Value,
) -> Result<PromiseRaw<'env, Value>> {
    let ctx = CONTEXTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&(id as u64))
        .cloned();
    env.spawn_future(async move {
        let ctx = ctx
            .ok_or_else(|| Error::from_reason("toolnexus: this tool call has already finished"))?;
        let text = |key: &str| payload.get(key).and_then(Value::as_str).map(str::to_string);
        let number = |key: &str| payload.get(key).and_then(Value::as_f64);
        let outcome = match op.as_str() {
            "progress" => match number("progress") {
                Some(progress) => ctx
                    .progress(progress, number("total"), text("message"))
                    .await
                    .map(Value::Bool),
                None => Err("ctx.progress(progress, total?, message?) needs a number".into()),
            },
            "log" => {
                let level = text("level").unwrap_or_default();
                let data = payload.get("data").cloned().unwrap_or(Value::Null);
                ctx.log(&level, data, text("logger")).await.map(Value::Bool)
            }
            "input" => input(&ctx, &payload).await,
            other => Err(format!("unknown call context operation {other:?}")),
        };
        outcome.map_err(|m| Error::from_reason(format!("toolnexus: {m}")))
    })
}

/// `ctx.elicit/sample/listRoots` of one tick, asked together: `{ asks: [{ kind, request,
/// key? }] }`, answered with one `{ ok: true, value } | { ok: false, error }` per ask.
async fn input(ctx: &CallContext, payload: &Value) -> std::result::Result<Value, String> {
    let mut asks = Vec::new();
    for ask in payload
        .get("asks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let kind = ask.get("kind").and_then(Value::as_str).unwrap_or_default();
        let kind =
            InputKind::parse(kind).ok_or_else(|| format!("unknown input request {kind:?}"))?;
        asks.push(InputAsk {
            kind,
            params: ask.get("request").cloned().unwrap_or_else(|| json!({})),
            key: ask.get("key").and_then(Value::as_str).map(str::to_string),
        });
    }
    let answers = ctx.ask(asks).await.into_iter().map(|answer| match answer {
        Ok(value) => json!({ "ok": true, "value": value }),
        Err(error) => json!({ "ok": false, "error": error }),
    });
    Ok(Value::Array(answers.collect()))
}

/// `createService(tools, name, version, onCall)` from the glue.
pub fn create_service(ctx: FunctionCallContext) -> Result<NativeService> {
    let env = &*ctx.env;
    let tools: Array = ctx.get(0)?;
    let name: String = ctx.get(1)?;
    let version: String = ctx.get(2)?;
    let on_call: Option<Function<Value, ()>> = ctx
        .get::<Unknown>(3)
        .ok()
        .filter(|v| v.get_type().ok() == Some(ValueType::Function))
        .and_then(|v| unsafe { v.cast() }.ok());
    let served = served_tools(env, &tools)?;
    let on_call = match on_call {
        Some(f) => {
            let tsfn: OnCallFn = f
                .build_threadsafe_function()
                .weak::<true>()
                .callee_handled::<false>()
                .build()?;
            let tsfn = Arc::new(tsfn);
            let hook: serve::OnCall = Arc::new(move |record: CallRecord| {
                let tsfn = tsfn.clone();
                let value = json!({
                    "name": record.name, "source": record.source, "ms": record.ms, "isError": record.is_error,
                });
                // A throwing onCall is the caller's bug; it must not take the server down.
                tokio::spawn(async move {
                    let _ = tsfn.call_async_catch(value).await;
                });
            });
            Some(hook)
        }
        None => None,
    };
    Ok(NativeService {
        server: ToolServer::new(ServerIdentity { name, version }, served, on_call),
        stopped: CancellationToken::new(),
    })
}

/// Each tool of the glue's `servedTools` array, as served.
fn served_tools(env: &Env, tools: &Array) -> Result<Vec<ServedTool>> {
    (0..tools.len())
        .map(|i| {
            let tool: Object = tools
                .get(i)?
                .ok_or_else(|| Error::from_reason("missing tool"))?;
            served_tool(env, &tool)
        })
        .collect()
}

fn served_tool(env: &Env, tool: &Object) -> Result<ServedTool> {
    let name: String = tool.get_named_property("name")?;
    let mut description: String = tool.get_named_property("description")?;
    let about = format!("tool {name:?}");
    let source: String = tool.get_named_property("source")?;
    let mcp: Unknown = tool.get_named_property("mcp")?;
    let mut extras = Map::new();
    // A loadMcp tool's schema is its listing's (not read from its object, which may be big).
    let mut input_schema = Value::Null;
    if mcp.get_type()? != ValueType::External {
        input_schema = super::convert::json_value(
            env,
            tool.get_named_property("inputSchema")?,
            &about,
            "inputSchema",
        )?;
    }
    let caller: Arc<dyn ToolCaller> = if mcp.get_type()? == ValueType::External {
        let external = unsafe {
            <External<Arc<McpToolRef>> as FromNapiRef>::from_napi_ref(env.raw(), mcp.raw())?
        };
        let tool_ref: Arc<McpToolRef> = (**external).clone();
        // A gateway relays the tool as its server listed it, under the served name.
        // Read from the listing's text, once: the one value of its schema is the one served.
        let Value::Object(mut listing) = tool_ref.listing.to_value() else {
            return Err(Error::from_reason(
                "toolnexus: a listed tool is not an object",
            ));
        };
        if let Some(Value::String(d)) = listing.remove("description") {
            description = d;
        }
        if let Some(schema) = listing.remove("inputSchema") {
            input_schema = schema;
        }
        for key in serve::LISTING_EXTRAS {
            if let Some(value) = listing.remove(key) {
                extras.insert(key.to_string(), value);
            }
        }
        Arc::new(Forward(tool_ref))
    } else {
        for key in serve::LISTING_EXTRAS {
            let value: Unknown = tool.get_named_property(key)?;
            if !matches!(value.get_type()?, ValueType::Undefined | ValueType::Null) {
                extras.insert(
                    key.to_string(),
                    super::convert::json_value(env, value, &about, key)?,
                );
            }
        }
        let execute: Function<Value, Promise<JsonValue>> = tool.get_named_property("execute")?;
        let execute: Execute = execute
            .build_threadsafe_function()
            .weak::<true>()
            .callee_handled::<false>()
            .build()?;
        let abort: Function<f64, ()> = tool.get_named_property("abort")?;
        let abort: Abort = abort
            .build_threadsafe_function()
            .weak::<true>()
            .callee_handled::<false>()
            .build()?;
        Arc::new(JsTool {
            execute: Arc::new(execute),
            abort: Arc::new(abort),
        })
    };
    Ok(ServedTool {
        name,
        description,
        input_schema: serve::object_schema(input_schema),
        extras,
        source,
        caller,
    })
}

/// The native server behind `buildMcpServer` and `toolkit.serve`; created by them (internal).
#[napi]
pub struct NativeService {
    server: ToolServer,
    stopped: CancellationToken,
}

/// `serve(addr, opts)` options that reach the native server.
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

/// A number as JavaScript prints it (`Infinity`, not Rust's `inf`).
fn js_number(n: f64) -> String {
    match n {
        n if n.is_nan() => "NaN".into(),
        f64::INFINITY => "Infinity".into(),
        f64::NEG_INFINITY => "-Infinity".into(),
        n => n.to_string(),
    }
}

/// The session bounds `serve` was given, checked.
fn session_limits(o: &HttpServeOptions) -> Result<serve::http::SessionLimits> {
    let mut limits = serve::http::SessionLimits::default();
    if let Some(ms) = o.session_idle_timeout {
        if !(1.0..=1e12).contains(&ms) {
            return Err(Error::from_reason(format!(
                "toolnexus: sessionIdleTimeout must be a number of milliseconds from 1 to 1e12, got {}",
                js_number(ms)
            )));
        }
        limits.idle_timeout = std::time::Duration::from_millis(ms as u64);
    }
    if let Some(n) = o.max_sessions {
        if !((1.0..=1e9).contains(&n) && n.fract() == 0.0) {
            return Err(Error::from_reason(format!(
                "toolnexus: maxSessions must be a whole number from 1 to 1e9, got {}",
                js_number(n)
            )));
        }
        limits.max_sessions = n as usize;
    }
    Ok(limits)
}

/// Outgoing messages of a bridged session, handed to the SDK transport's `send`.
type SendFn = ThreadsafeFunction<Value, (), Value, Status, false, true>;

#[napi]
impl NativeService {
    /// A session over messages handed in one at a time (an SDK `Transport`); `send` gets every
    /// message the server sends.
    #[napi(ts_args_type = "send: (message: unknown) => void")]
    pub fn bridge(&self, send: Function<Value, ()>) -> Result<NativeBridge> {
        let send: SendFn = send
            .build_threadsafe_function()
            .weak::<true>()
            .callee_handled::<false>()
            .build()?;
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
        let options = match options {
            None => serve::http::ServeOptions::default(),
            Some(o) => serve::http::ServeOptions {
                sessions: session_limits(&o)?,
                stateless: o.stateless.unwrap_or(false),
                allowed_hosts: o.allowed_hosts,
                allowed_origins: o.allowed_origins,
            },
        };
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
            })
        })
    }

    /// Serves `tools` (as the glue's `servedTools` prepares them) from now on and tells every
    /// connected client with `notifications/tools/list_changed`.
    #[napi(ts_args_type = "tools: unknown[]")]
    pub fn set_tools(&self, env: &Env, tools: Array) -> Result<()> {
        let served = served_tools(env, &tools)?;
        napi::bindgen_prelude::within_runtime_if_available(|| self.server.set_tools(served));
        Ok(())
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

/// A running streamable-HTTP server, wrapped by `toolkit.serve`'s handle (internal).
#[napi]
pub struct HttpServer {
    url: String,
    handle: Arc<serve::http::ServeHandle>,
    keep_alive: Arc<Mutex<Option<KeepAlive>>>,
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
            let _ = tokio::time::timeout(Duration::from_secs(10), handle.stop()).await;
            keep_alive.lock().unwrap_or_else(|e| e.into_inner()).take();
            Ok(())
        })
    }
}

/// An MCP `CallToolResult` a `run` returned, as the `ToolResult` its tool's `execute` resolves
/// (internal): `output` mapped as for MCP tools, the parts kept as they are.
pub fn tool_result_from_mcp(result: Value) -> Value {
    // Its `_meta` stays out, as before.
    let mut result = ToolResult::from_mcp(result);
    result.meta = None;
    result.into()
}
