//! The `Tool` objects of a loadMcp source: built from the session's current listings (again
//! after a server's tools changed), each with an `execute` that calls into Rust.

use std::sync::Arc;
use std::time::Duration;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::abort::{self, Watch};
use super::convert;
use super::options::McpCallOptions;
use engine::connect::session::direct_call::Done;
use engine::connect::session::{CallOutcome, LiveServer, Session};
use engine::connect::tool_info::{ToolInfo, object_fields, object_text, text_of};

pub use engine::gateway::tool::LoadedTool;

/// A tool's handle as JavaScript holds it (lib/source.js keeps it on the tool, not enumerable).
pub type ToolHandle = External<Arc<LoadedTool>>;

/// Each tool's live server and its listing (`ToolInfo`), in tool order.
type ToolRefs = Vec<(Arc<LiveServer>, ToolInfo)>;

/// The names a source gave its tools, kept while its servers re-list (see `naming::Namer`).
pub(super) type SourceNames = Arc<std::sync::Mutex<engine::connect::naming::Namer>>;

/// The session's tools as they are now (in config order, then each server's listing order),
/// their names, and warnings for new names.
pub(super) fn named_tools(
    session: &Session,
    names: &SourceNames,
) -> (ToolRefs, Vec<String>, Vec<String>) {
    let mut tools = Vec::new();
    for live in &session.servers {
        for tool in live.listing() {
            tools.push((live.clone(), tool));
        }
    }
    let pairs: Vec<(&str, &str)> = tools
        .iter()
        .map(|(live, tool)| (live.name.as_str(), tool.name()))
        .collect();
    let (names, warnings) = names
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .assign(&pairs);
    (tools, names, warnings)
}

/// A `Tool` object's JSON text, without `execute`: its source name, the listing's
/// description, its input schema with `additionalProperties: false`, and the listing's other
/// fields. Written from the listing's text: a wide schema is copied once, as text. And whether
/// the listing says the tool can only be called as a task, or may be.
fn tool_object_json(info: &ToolInfo, name: &str) -> (String, (bool, bool)) {
    let fields = info.fields();
    let field = |key: &str| fields.iter().find_map(|(k, v)| (k == key).then(|| v.get()));
    let schema = match field("inputSchema") {
        None => object_text(&[("additionalProperties", "false")]),
        Some(schema) => match object_fields(schema) {
            Some(members) => {
                let mut members: Vec<(&str, &str)> =
                    members.iter().map(|(k, v)| (k.as_str(), v.get())).collect();
                match members
                    .iter_mut()
                    .find(|(k, _)| *k == "additionalProperties")
                {
                    Some(member) => member.1 = "false",
                    None => members.push(("additionalProperties", "false")),
                }
                object_text(&members)
            }
            None => schema.to_string(),
        },
    };
    let name = text_of(&name);
    let mut tool: Vec<(&str, &str)> = vec![
        ("name", &name),
        ("description", field("description").unwrap_or("\"\"")),
        ("inputSchema", &schema),
        ("source", "\"mcp\""),
    ];
    for key in engine::serve::LISTING_EXTRAS {
        if let Some(value) = field(key) {
            tool.push((key, value));
        }
    }
    let support = field("execution")
        .and_then(|execution| serde_json::from_str::<Value>(execution).ok())
        .and_then(|execution| {
            execution
                .get("taskSupport")
                .and_then(Value::as_str)
                .map(str::to_string)
        });
    let tasks = (
        support.as_deref() == Some("required"),
        support.as_deref() == Some("optional"),
    );
    (object_text(&tool), tasks)
}

/// The session's current tools: `[objects, handles]`, each tool's object (lib/source.js gives it
/// its `execute`) and the handle its calls go through.
pub(super) fn tool_objects<'env>(
    env: &'env Env,
    session: &Arc<Session>,
    names: &SourceNames,
) -> Result<Array<'env>> {
    let (refs, names, _) = named_tools(session, names);
    let (objects, tasks): (Vec<String>, Vec<(bool, bool)>) = refs
        .iter()
        .zip(&names)
        .map(|((_, info), name)| tool_object_json(info, name))
        .unzip();
    let json = format!("[{}]", objects.join(","));
    drop(objects);
    let tools = convert::parse_json(env, &json)?;
    drop(json);
    engine::connect::tool_info::release_freed(refs.iter().map(|(_, t)| t.json().get().len()).sum());
    let mut handles = env.create_array(refs.len() as u32)?;
    for (i, ((server, listing), (task_required, task_optional))) in
        refs.into_iter().zip(tasks).enumerate()
    {
        let tool_ref = Arc::new(LoadedTool {
            session: session.clone(),
            server,
            tool: listing.name().to_string(),
            listing,
            task_required,
            task_optional,
        });
        handles.set(i as u32, ToolHandle::new(tool_ref))?;
    }
    let mut pair = env.create_array(2)?;
    pair.set(0, tools)?;
    pair.set(1, handles)?;
    Ok(pair)
}

/// `callMcpTool(ref, args, ctx)` (internal), behind a loadMcp tool's `execute`: starts the
/// call and returns its number; its result `{output, isError, content?, structuredContent?,
/// _meta?, metadata: {server}}` (the parts and `_meta` as the server sent them) arrives through
/// [`super::settle`] (a call never rejects). `ctx` is the call's, checked by lib/options.js.
#[napi(ts_args_type = "tool: unknown, args?: Record<string, unknown>, ctx?: McpCallOptions")]
pub fn call_mcp_tool(
    env: &Env,
    tool: &ToolHandle,
    args: Option<Unknown>,
    ctx: Option<McpCallOptions>,
) -> Result<u32> {
    convert::contain(|| start_call(env, tool, args, ctx))
}

fn start_call(
    env: &Env,
    tool: &Arc<LoadedTool>,
    args: Option<Unknown>,
    ctx: Option<McpCallOptions>,
) -> Result<u32> {
    let McpCallOptions {
        timeout_ms,
        signal,
        on_progress,
        on_status,
        task,
        refusal,
        meta,
    } = ctx.unwrap_or(McpCallOptions {
        timeout_ms: None,
        signal: None,
        on_progress: None,
        on_status: None,
        task: None,
        refusal: None,
        meta: None,
    });
    let meta = meta.map(super::telemetry::meta_object);
    let task = task.unwrap_or(false);
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
    // A bad `ctx` is this call's error, after bad arguments: a call never rejects.
    let arguments = arguments.and_then(|arguments| match refusal {
        Some(refusal) => Err(refusal),
        None => Ok((
            arguments,
            timeout_ms.map(|ms| Duration::from_millis(ms.into())),
        )),
    });
    let front = super::progress::on_progress(on_progress, on_status)?;
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
            let failed = failed(message, engine::connect::session::OTHER_ERROR);
            completion.deliver(result_json(&server.name, failed));
            return Ok(id);
        }
        Ok(call) => call,
    };
    if cancel.is_cancelled() {
        let aborted = failed("MCP tool call aborted".into(), "cancelled");
        completion.deliver(result_json(&server.name, aborted));
        return Ok(id);
    }
    // The session starts a plain call on the direct road when it can (the request is written
    // here, on the JavaScript thread, and the reader delivers the result; no task runs for the
    // call); any other call runs on a task of its own.
    let name = server.name.clone();
    let done: Done = Box::new(move |out| {
        completion.deliver(result_json(&name, out));
    });
    let closed = tool.session.closed_token().clone();
    let opts = engine::connect::session::CallOpts {
        timeout,
        task,
        meta,
    };
    let started = server.start_plain_call(
        &tool.tool,
        arguments,
        (&opts, front.is_some()),
        &closed,
        done,
    );
    let (done, arguments) = match started {
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
        let call = tool.server.call_with(
            &tool.tool,
            arguments,
            opts,
            &cancel,
            &closed,
            front.clone().map(|f| f as _),
        );
        // A call never rejects: even a panic is an error result.
        let out = match convert::contain_future(call).await {
            Ok(out) => out,
            Err(message) => failed(message, engine::connect::session::OTHER_ERROR),
        };
        if let Some(front) = &front {
            front.flush().await;
        }
        done(out);
    });
    Ok(id)
}

/// A call that failed before it was sent: why, and its `error.type`.
fn failed(output: String, error_type: &str) -> CallOutcome {
    CallOutcome {
        output,
        is_error: true,
        raw: None,
        elapsed: Duration::ZERO,
        task_failed: false,
        error_type: Some(error_type.to_string()),
    }
}

/// A call's result as the JSON text JavaScript parses: the server's parts as it sent them, and
/// `metadata`: its server, and for an error its `errorType` as telemetry says it (`tool_error`
/// when the server answered with an error result; see [`CallOutcome::error_type`]).
fn result_json(server: &str, out: CallOutcome) -> String {
    let mut result = engine::tool_result::ToolResult::text(out.output, out.is_error);
    let answered = out.raw.is_some();
    if let Some(raw) = out.raw {
        result = result.with_parts_of(raw);
    }
    let mut result = result.into_js();
    let mut metadata = json!({ "server": server });
    if out.is_error {
        let error_type = match out.error_type {
            Some(error_type) if !answered => error_type,
            _ => "tool_error".to_string(),
        };
        metadata["errorType"] = Value::String(error_type);
    }
    result.insert("metadata".into(), metadata);
    Value::Object(result).to_string()
}

/// For each name, whether it is the first of its name (internal: lib/toolkit.js keeps the first
/// tool of each name, by the rule a served tool set keeps: `tools::first_wins`).
#[napi]
pub fn first_of_name(names: Vec<String>) -> Vec<bool> {
    engine::tools::first_wins(&names, String::as_str)
}

/// A toolkit's namer (internal: lib/toolkit.js): names the loadMcp tools of all its sources (one
/// per server, in config order) as one loadMcp of all their servers would, and keeps each
/// tool's name while other servers restart or re-list (see `naming::Namer`).
#[napi]
pub struct ToolkitNamer {
    namer: std::sync::Mutex<engine::connect::naming::Namer>,
}

#[napi]
impl ToolkitNamer {
    #[napi(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        ToolkitNamer {
            namer: Default::default(),
        }
    }

    /// `{ names, origins, warnings }` for the tools whose handles are `refs` (`undefined` for a
    /// tool that did not come from loadMcp, which gets `null`): each one's name, the server and
    /// name it came from; warnings are for new names only.
    #[napi(
        ts_args_type = "refs: unknown[]",
        ts_return_type = "{ names: Array<string | null>; origins: Array<{ server: string; tool: string } | null>; warnings: string[] }"
    )]
    pub fn name<'env>(
        &self,
        env: &'env Env,
        refs: Vec<Option<&ToolHandle>>,
    ) -> Result<Unknown<'env>> {
        let pairs: Vec<Option<(String, String)>> = refs
            .iter()
            .map(|r| r.map(|r| (r.server.name.clone(), r.tool.clone())))
            .collect();
        let named: Vec<(&str, &str)> = pairs
            .iter()
            .flatten()
            .map(|(server, tool)| (server.as_str(), tool.as_str()))
            .collect();
        let (names, warnings) = self
            .namer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .assign(&named);
        let mut names = names.into_iter();
        let names: Vec<Option<String>> = pairs
            .iter()
            .map(|p| p.as_ref().and_then(|_| names.next()))
            .collect();
        let origins: Vec<Value> = pairs
            .iter()
            .map(|p| {
                p.as_ref().map_or(
                    Value::Null,
                    |(server, tool)| json!({ "server": server, "tool": tool }),
                )
            })
            .collect();
        let json = json!({ "names": names, "origins": origins, "warnings": warnings }).to_string();
        convert::parse_json(env, &json)
    }
}
