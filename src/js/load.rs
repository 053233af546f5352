//! loadMcp: live tools whose `execute` calls into Rust, and `close()`.

use std::sync::Arc;
use std::time::Duration;

use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunction;
use napi_derive::napi;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::abort::{self, Watch};
use super::bounded::JsonValue;
use super::convert::{self, ErrorKind, Settle};
use crate::connect::client::{ClientSide, Elicitor};
use crate::connect::elicit;
use crate::connect::inventory::{self, Interrupted};
use crate::connect::session::{LiveServer, Session};

/// The `waitFor` callback, callable from any thread; weak, so it never keeps Node alive. Its
/// answer is read with the bounded converter, like every value from JavaScript.
type WaitFor = ThreadsafeFunction<Value, Promise<JsonValue>, Value, Status, false, true>;

/// A tool that came from loadMcp: which live server serves it, under which original name.
/// Attached (non-enumerable) to each tool object so a gateway can call it inside Rust.
pub struct McpToolRef {
    pub session: Arc<Session>,
    pub server: Arc<LiveServer>,
    /// The original name.
    pub tool: String,
    /// The tool as its server listed it (`ToolInfo`), so a gateway re-serves it unchanged.
    pub listing: Value,
}

pub const TOOL_REF_KEY: &str = "__toolnexusMcpTool";

struct Loaded {
    session: Arc<Session>,
    json: String,
    /// Each tool's live server and listing, in tool order.
    tools: Vec<(Arc<LiveServer>, Value)>,
    warnings: Vec<String>,
}

/// Connects to every enabled server and returns live, callable tools. Connections stay open
/// until `source.close()`.
#[napi(
    ts_args_type = "input: string | object, opts?: LoadOptions",
    ts_return_type = "Promise<McpSource>"
)]
pub fn load_mcp<'env>(
    env: &'env Env,
    input: Unknown,
    opts: Option<Object>,
) -> Result<PromiseRaw<'env, Unknown<'env>>> {
    convert::contain(|| load(env, input, opts))
}

fn load<'env>(
    env: &'env Env,
    input: Unknown,
    opts: Option<Object>,
) -> Result<PromiseRaw<'env, Unknown<'env>>> {
    let (watch, input, deadline) = match super::prepare::<String>(env, input, opts.as_ref()) {
        Ok((Watch::Watching(watch), input, deadline)) => (watch, input, deadline),
        Ok((Watch::AlreadyAborted(reason), ..)) => {
            return super::reject_now(env, Settle::Reject(reason));
        }
        Err(settle) => return super::reject_now(env, settle),
    };
    let wait_for = match opts.as_ref().map(wait_for_option).transpose() {
        Ok(w) => w.flatten().map(Arc::new),
        Err(e) => return super::reject_now(env, Settle::Fail(ErrorKind::TypeError, e)),
    };
    let token = watch.token().clone();
    let future = async move {
        let cfg = match super::load_config(input, &token).await {
            Ok(cfg) => cfg,
            Err(settle) => return settle,
        };
        let handler = |server: &str| {
            ClientSide::with_elicitor(wait_for.clone().map(|w| elicitor(w, server.to_string())))
        };
        match inventory::load_all(&cfg, &token, deadline, handler).await {
            Ok(loaded) => Settle::Value(describe(loaded)),
            Err(Interrupted::Deadline) => Settle::Fail(
                ErrorKind::Error,
                "toolnexus: MCP load deadline exceeded".to_string(),
            ),
            Err(Interrupted::Cancelled) => Settle::Aborted,
        }
    };
    let future = crate::connect::reaper::owned(crate::connect::reaper::thread_owner(), future);
    super::run_watched(env, watch, future, |env, loaded| {
        convert::emit_warnings(env, &loaded.warnings);
        build_source(env, loaded)
    })
}

fn wait_for_option(opts: &Object) -> std::result::Result<Option<WaitFor>, String> {
    let value: Unknown = opts
        .get_named_property("waitFor")
        .map_err(|e| e.reason.clone())?;
    match value.get_type().map_err(|e| e.reason.clone())? {
        ValueType::Undefined | ValueType::Null => Ok(None),
        ValueType::Function => {
            let f: Function<Value, Promise<JsonValue>> =
                unsafe { value.cast() }.map_err(|e| e.reason.clone())?;
            let tsfn = f
                .build_threadsafe_function()
                .weak::<true>()
                .callee_handled::<false>()
                .build()
                .map_err(|e| e.reason.clone())?;
            Ok(Some(tsfn))
        }
        _ => Err("toolnexus: opts.waitFor must be a function".to_string()),
    }
}

/// Bridges `elicitation/create` to `waitFor(request)`; a throw, a rejection or an unreadable
/// answer cancels the elicitation.
fn elicitor(wait_for: Arc<WaitFor>, server: String) -> Elicitor {
    Arc::new(move |params| {
        let wait_for = wait_for.clone();
        let server = server.clone();
        Box::pin(async move {
            let cancel = rmcp::model::ElicitResult::new(rmcp::model::ElicitationAction::Cancel);
            let params = serde_json::to_value(&params).unwrap_or(Value::Null);
            let mut request = elicit::elicitation_to_request(&params);
            if let Some(obj) = request.as_object_mut() {
                obj.insert("server".into(), Value::String(server));
            }
            let Ok(promise) = wait_for.call_async_catch(request).await else {
                return cancel;
            };
            let Ok(answer) = promise.await else {
                return cancel;
            };
            let mut result = elicit::answer_to_elicit_result(&answer.0);
            elicit::apply_defaults(&params, &mut result);
            serde_json::from_value(result).unwrap_or(cancel)
        })
    })
}

fn describe(loaded: inventory::Loaded) -> Loaded {
    let inventory::Loaded {
        session,
        servers,
        mut warnings,
    } = loaded;
    let mut status = Map::new();
    let mut errors = Map::new();
    let mut info = Map::new();
    let mut pairs = Vec::new();
    let mut tools = Vec::new();
    for server in &servers {
        status.insert(server.name.clone(), json!(server.status));
        if let Some(error) = &server.error {
            errors.insert(server.name.clone(), json!(error));
        }
        if let Some(server_info) = &server.info {
            info.insert(server.name.clone(), server_info.clone());
        }
        let live = session.servers.iter().find(|s| s.name == server.name);
        for tool in &server.tools {
            if let Some(live) = live {
                let original = tool.get("name").and_then(Value::as_str).unwrap_or("");
                pairs.push((server.name.clone(), original.to_string()));
                tools.push((live.clone(), tool));
            }
        }
    }
    let pair_refs: Vec<(&str, &str)> = pairs
        .iter()
        .map(|(s, t)| (s.as_str(), t.as_str()))
        .collect();
    let (names, naming_warnings) = crate::connect::naming::assign(&pair_refs);
    warnings.extend(naming_warnings);
    let mut tool_objects = Vec::with_capacity(tools.len());
    let mut refs = Vec::with_capacity(tools.len());
    for ((live, info), name) in tools.into_iter().zip(names) {
        let mut schema = info
            .get("inputSchema")
            .cloned()
            .unwrap_or_else(|| json!({}));
        if let Some(obj) = schema.as_object_mut() {
            obj.insert("additionalProperties".into(), Value::Bool(false));
        }
        let mut tool = json!({
            "name": name,
            "description": info.get("description").cloned().unwrap_or_else(|| json!("")),
            "inputSchema": schema,
            "source": "mcp",
        });
        for key in crate::serve::LISTING_EXTRAS {
            if let Some(value) = info.get(key) {
                tool[key] = value.clone();
            }
        }
        tool_objects.push(tool);
        refs.push((live, info.clone()));
    }
    let json = json!({ "tools": tool_objects, "status": status, "errors": errors, "info": info })
        .to_string();
    Loaded {
        session: Arc::new(session),
        json,
        tools: refs,
        warnings,
    }
}

/// The `McpSource` object: parsed JSON plus an `execute` per tool (made by the glue around
/// [`call_mcp_tool`]) and `close`.
fn build_source<'env>(env: &'env Env, loaded: Loaded) -> Result<Unknown<'env>> {
    let source = convert::parse_json(env, &loaded.json)?;
    let mut source_obj: Object = unsafe { source.cast() }?;
    let tools: Object = source_obj.get_named_property("tools")?;
    let bind: Function<Unknown, Unknown> = super::glue::function(env, "mcpExecute")?;
    for (i, (server, listing)) in loaded.tools.into_iter().enumerate() {
        let mut tool_obj: Object = tools.get_element(i as u32)?;
        let tool = listing
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let tool_ref = Arc::new(McpToolRef {
            session: loaded.session.clone(),
            server,
            tool,
            listing,
        });
        let external = External::new(tool_ref.clone()).into_unknown(env)?;
        tool_obj.set_named_property("execute", bind.call(external)?)?;
        convert::define_hidden(env, &tool_obj, TOOL_REF_KEY, External::new(tool_ref))?;
    }
    let session = loaded.session;
    let close = env.create_function_from_closure::<(), _, _>("close", move |ctx| {
        let session = session.clone();
        let promise = ctx.env.spawn_future(async move {
            session.close().await;
            Ok(())
        })?;
        // SAFETY: the promise is handed to JavaScript as this call's return value at once.
        Ok(unsafe { std::mem::transmute::<PromiseRaw<'_, ()>, PromiseRaw<'static, ()>>(promise) })
    })?;
    source_obj.set_named_property("close", close)?;
    Ok(source)
}

/// `native.callMcpTool(ref, args, ctx)`, behind a loadMcp tool's `execute`: starts the call and
/// returns its number; its result `{output, isError, content?, structuredContent?, metadata:
/// {server}}` arrives through [`super::settle`] (a call never rejects).
pub fn call_mcp_tool(
    env: &Env,
    tool: &Arc<McpToolRef>,
    args: Option<Unknown>,
    call_ctx: Option<Unknown>,
) -> Result<u32> {
    let call_ctx: Option<Object> = call_ctx
        .filter(|v| v.get_type().ok() == Some(ValueType::Object))
        .and_then(|v| unsafe { v.cast() }.ok());
    let arguments = match args {
        Some(v) if matches!(v.get_type(), Ok(ValueType::Undefined | ValueType::Null)) => {
            Ok(Map::new())
        }
        None => Ok(Map::new()),
        Some(v) => match convert::json_value(env, v, "", "arguments") {
            Ok(Value::Object(arguments)) => Ok(arguments),
            Ok(_) => Err("toolnexus: tool arguments must be an object".to_string()),
            Err(e) => Err(e.reason.clone()),
        },
    };
    // A bad `ctx.timeout` is this call's error, like bad arguments: a call never rejects.
    let timeout = match call_ctx.as_ref() {
        Some(c) => convert::millis_option(c, "ctx", &["timeout"]),
        None => Ok(None),
    };
    let arguments =
        arguments.and_then(|arguments| timeout.map(|t| (arguments, t.map(Duration::from_millis))));
    let signal = call_ctx
        .as_ref()
        .and_then(|c| c.get_named_property::<Unknown>("signal").ok())
        .filter(|v| v.get_type().ok() == Some(ValueType::Object))
        .and_then(|v| unsafe { v.cast::<Object>() }.ok());
    let (watch, cancel) = match abort::watch(env, signal)? {
        Watch::Watching(w) => {
            let token = w.token().clone();
            (Some(w), token)
        }
        Watch::AlreadyAborted(_) => {
            let token = CancellationToken::new();
            token.cancel();
            (None, token)
        }
    };
    let completion = super::settle::begin(env, watch)?;
    let id = completion.id();
    let tool = tool.clone();
    napi::bindgen_prelude::spawn(async move {
        let result = match arguments {
            Err(message) => result_json(&tool.server.name, message, true, None),
            Ok((arguments, timeout)) => {
                let closed = tool.session.closed_token().clone();
                let call = tool
                    .server
                    .call(&tool.tool, arguments, timeout, &cancel, &closed, None);
                // A call never rejects: even a panic is an error result.
                match convert::contain_future(call).await {
                    Ok(out) => result_json(&tool.server.name, out.output, out.is_error, out.raw),
                    Err(message) => result_json(&tool.server.name, message, true, None),
                }
            }
        };
        completion.deliver(result);
    });
    Ok(id)
}

/// A call's result as the JSON text JavaScript parses: the server's parts as it sent them.
fn result_json(server: &str, output: String, is_error: bool, raw: Option<Value>) -> String {
    let mut result = Map::new();
    result.insert("output".into(), Value::String(output));
    result.insert("isError".into(), Value::Bool(is_error));
    if let Some(Value::Object(mut raw)) = raw {
        for key in ["content", "structuredContent"] {
            if let Some(value) = raw.remove(key) {
                result.insert(key.into(), value);
            }
        }
    }
    result.insert("metadata".into(), json!({ "server": server }));
    Value::Object(result).to_string()
}

/// Maps an MCP `elicitation/create` params object to the agent's `Request`.
#[napi(
    ts_args_type = "params: ElicitParams",
    ts_return_type = "ElicitationRequest"
)]
pub fn elicitation_to_request<'env>(env: &'env Env, params: Unknown) -> Result<Unknown<'env>> {
    convert::contain(|| {
        let params = convert::json_value(env, params, "", "params")?;
        convert::parse_json(env, &elicit::elicitation_to_request(&params).to_string())
    })
}

/// Maps the agent's `Answer` to an MCP `ElicitResult`.
#[napi(ts_args_type = "answer: Answer", ts_return_type = "ElicitResult")]
pub fn answer_to_elicit_result<'env>(env: &'env Env, answer: Unknown) -> Result<Unknown<'env>> {
    convert::contain(|| {
        let answer = convert::json_value(env, answer, "", "answer")?;
        convert::parse_json(env, &elicit::answer_to_elicit_result(&answer).to_string())
    })
}
