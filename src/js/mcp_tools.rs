//! The `Tool` objects of a loadMcp source: built from the session's current listings (again
//! after a server's tools changed), each with an `execute` that calls into Rust.

use std::sync::Arc;
use std::time::Duration;

use napi::bindgen_prelude::*;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::abort::{self, Watch};
use super::convert;
use crate::connect::session::{Done, LiveServer, Session};

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

/// A loadMcp option the toolkit sets on its one-server sources: it names their tools itself.
pub const NAMED_BY_TOOLKIT_KEY: &str = "__toolnexusNamedByToolkit";

/// Each tool's live server and its listing (`ToolInfo`), in tool order.
type ToolRefs = Vec<(Arc<LiveServer>, Value)>;

/// The names a source gave its tools, kept while its servers re-list (see `naming::Namer`).
pub(super) type SourceNames = Arc<std::sync::Mutex<crate::connect::naming::Namer>>;

/// The session's tools as they are now: the `Tool` objects' JSON (in config order, then each
/// server's listing order), each tool's live server and listing, and warnings for new names.
pub(super) fn tool_set(session: &Session, names: &SourceNames) -> (String, ToolRefs, Vec<String>) {
    let mut pairs = Vec::new();
    let mut tools = Vec::new();
    for live in &session.servers {
        for tool in live.listing() {
            let original = tool.get("name").and_then(Value::as_str).unwrap_or("");
            pairs.push((live.name.clone(), original.to_string()));
            tools.push((live.clone(), tool));
        }
    }
    let pair_refs: Vec<(&str, &str)> = pairs
        .iter()
        .map(|(s, t)| (s.as_str(), t.as_str()))
        .collect();
    let (names, warnings) = names
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .assign(&pair_refs);
    let mut tool_objects = Vec::with_capacity(tools.len());
    for ((_, info), name) in tools.iter().zip(names) {
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
    }
    (Value::Array(tool_objects).to_string(), tools, warnings)
}

/// The session's current tools as an array of `Tool` objects with their `execute`.
pub(super) fn tool_objects<'env>(
    env: &'env Env,
    session: &Arc<Session>,
    names: &SourceNames,
) -> Result<Unknown<'env>> {
    let (json, refs, _) = tool_set(session, names);
    let array = convert::parse_json(env, &json)?;
    let tools: Object = unsafe { array.cast() }?;
    // `execute` is made by the glue around [`call_mcp_tool`], whose results settle in batches.
    let bind: Function<Unknown, Unknown> = super::glue::function(env, "mcpExecute")?;
    for (i, (server, listing)) in refs.into_iter().enumerate() {
        let mut tool_obj: Object = tools.get_element(i as u32)?;
        let tool = listing
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let tool_ref = Arc::new(McpToolRef {
            session: session.clone(),
            server,
            tool,
            listing,
        });
        let external = External::new(tool_ref.clone()).into_unknown(env)?;
        tool_obj.set_named_property("execute", bind.call(external)?)?;
        convert::define_hidden(env, &tool_obj, TOOL_REF_KEY, External::new(tool_ref))?;
    }
    Ok(array)
}

/// `native.callMcpTool(ref, args, ctx)`, behind a loadMcp tool's `execute`: starts the call and
/// returns its number; its result `{output, isError, content?, structuredContent?, _meta?,
/// metadata: {server}}` (the parts and `_meta` as the server sent them) arrives through [`super::settle`] (a call never rejects).
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
    let on_abort = watch.as_ref().map(|w| w.on_abort());
    let completion = super::settle::begin(env, watch)?;
    let id = completion.id();
    let server = &tool.server;
    let (arguments, timeout) = match arguments {
        Err(message) => {
            completion.deliver(result_json(&server.name, message, true, None));
            return Ok(id);
        }
        Ok(call) => call,
    };
    // rmcp 3.11's client has no tasks API: say so instead of calling.
    if crate::connect::execution::task_required(&tool.listing) {
        let reason = crate::connect::execution::task_required_reason(&tool.tool);
        completion.deliver(result_json(&server.name, reason, true, None));
        return Ok(id);
    }
    if cancel.is_cancelled() {
        completion.deliver(result_json(
            &server.name,
            "MCP tool call aborted".into(),
            true,
            None,
        ));
        return Ok(id);
    }
    // The direct path: the request is written here, on the JavaScript thread, and the reader
    // delivers the result; no task runs for the call.
    let name = server.name.clone();
    let done: Done = Box::new(move |out| {
        completion.deliver(result_json(&name, out.output, out.is_error, out.raw));
    });
    let closed = tool.session.closed_token().clone();
    let (done, arguments) = match server.start_call(&tool.tool, arguments, timeout, &closed, done) {
        Ok(call) => {
            if let Some(on_abort) = on_abort {
                *on_abort.lock().unwrap_or_else(|e| e.into_inner()) =
                    Some(Box::new(move || call.abort()));
            }
            return Ok(id);
        }
        Err(not_direct) => not_direct,
    };
    let tool = tool.clone();
    napi::bindgen_prelude::spawn(async move {
        let call = tool
            .server
            .call(&tool.tool, arguments, timeout, &cancel, &closed, None);
        // A call never rejects: even a panic is an error result.
        let out = match convert::contain_future(call).await {
            Ok(out) => out,
            Err(message) => crate::connect::session::CallOutcome {
                output: message,
                is_error: true,
                raw: None,
                elapsed: Duration::ZERO,
            },
        };
        done(out);
    });
    Ok(id)
}

/// A call's result as the JSON text JavaScript parses: the server's parts as it sent them.
fn result_json(server: &str, output: String, is_error: bool, raw: Option<Value>) -> String {
    let mut result = Map::new();
    result.insert("output".into(), Value::String(output));
    result.insert("isError".into(), Value::Bool(is_error));
    if let Some(Value::Object(mut raw)) = raw {
        for key in ["content", "structuredContent", "_meta"] {
            if let Some(value) = raw.remove(key) {
                result.insert(key.into(), value);
            }
        }
    }
    result.insert("metadata".into(), json!({ "server": server }));
    Value::Object(result).to_string()
}

/// A toolkit's `nameTools(tools)`: `{ names, warnings }`, naming the loadMcp tools among `tools`
/// (one source per server, in config order) as one loadMcp of all their servers would, and
/// keeping each tool's name while other servers restart or re-list (see `naming::Namer`).
/// Tools that did not come from loadMcp get `null`; warnings are for new names only.
pub(super) fn toolkit_namer(env: &Env) -> Result<Function<'_, Unknown<'_>, Unknown<'_>>> {
    let namer = std::sync::Mutex::new(crate::connect::naming::Namer::default());
    env.create_function_from_closure::<Unknown, _, _>("nameTools", move |ctx| {
        let tools: Array = ctx.get(0)?;
        let mut pairs = Vec::with_capacity(tools.len() as usize);
        for i in 0..tools.len() {
            let tool: Object = tools
                .get(i)?
                .ok_or_else(|| Error::from_reason("toolnexus: a tool is missing"))?;
            let mcp: Unknown = tool.get_named_property(TOOL_REF_KEY)?;
            pairs.push(if mcp.get_type()? == ValueType::External {
                let external = unsafe {
                    <External<Arc<McpToolRef>> as FromNapiRef>::from_napi_ref(
                        ctx.env.raw(),
                        mcp.raw(),
                    )?
                };
                Some((external.server.name.clone(), external.tool.clone()))
            } else {
                None
            });
        }
        let named: Vec<(&str, &str)> = pairs
            .iter()
            .flatten()
            .map(|(server, tool)| (server.as_str(), tool.as_str()))
            .collect();
        let (names, warnings) = namer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .assign(&named);
        let mut names = names.into_iter();
        let names: Vec<Option<String>> = pairs
            .iter()
            .map(|p| p.as_ref().and_then(|_| names.next()))
            .collect();
        let json = json!({ "names": names, "warnings": warnings }).to_string();
        let result = convert::parse_json(ctx.env, &json)?;
        // SAFETY: handed to JavaScript as this call's return value at once.
        Ok(unsafe { std::mem::transmute::<Unknown<'_>, Unknown<'static>>(result) })
    })
}
