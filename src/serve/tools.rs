//! Served tools: a JavaScript tool's `execute` called through a thread-safe function, or, for a
//! tool from loadMcp, its live connection called directly in Rust; and the ToolResult ↔ MCP
//! result mappings of served calls.

use std::sync::Arc;

use futures::FutureExt;
use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::{Map, Value, json};

use engine::tool_result::ToolResult;

use super::context::CONTEXTS;
use crate::bounded::JsonValue;
use crate::callback::{JsCallback, js_callback};
use engine::gateway::tool::LoadedTool;
use engine::serve::{self, CallContext, ServedTool, ToolCaller};

/// A tool's `execute(call)` (lib/serve.js's wrapper of it). Weak, so serving alone does not
/// keep Node alive (a running HTTP server holds its own keep-alive).
pub(super) type Execute = JsCallback<Value, Promise<JsonValue>>;
/// Fires the AbortSignal of the served call with this id.
pub(super) type Abort = JsCallback<f64>;

/// A served JavaScript `execute`: a tool's, or a served resource's or prompt's.
pub(super) struct JsTool {
    pub(super) execute: Arc<Execute>,
    pub(super) abort: Arc<Abort>,
    /// What the served answer is made of what `execute` resolved (or why it failed): a
    /// tool's `CallToolResult`, or the `{result}`/`{error}` envelope of a surface entry.
    pub(super) map: fn(std::result::Result<Value, String>) -> Value,
    /// A task tool whose call becomes a task only when `run` says so (`deferTask`).
    pub(super) defer_task: bool,
}

/// A tool's answer: its `ToolResult` as MCP, or its failure as an error result.
fn tool_answer(outcome: std::result::Result<Value, String>) -> Value {
    match outcome {
        Ok(result) => tool_result_to_mcp(result),
        Err(message) => text_result(message, true),
    }
}

/// Ids of served JavaScript calls, to name the one to abort.
static NEXT_CALL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

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
        // Queued now, so the signal fires before anything the call's end fails afterwards
        // (an input request it waits on rejects once its run is dropped).
        let _ = self.abort.call_with_return_value(
            self.id,
            napi::threadsafe_function::ThreadsafeFunctionCallMode::NonBlocking,
            |_, _| Ok(()),
        );
    }
}

impl ToolCaller for JsTool {
    fn defers_task(&self) -> bool {
        self.defer_task
    }

    fn call(
        &self,
        arguments: Map<String, Value>,
        ctx: CallContext,
    ) -> futures::future::BoxFuture<'static, Value> {
        let (execute, map) = (self.execute.clone(), self.map);
        let principal = ctx.principal();
        let trace = ctx.trace_meta();
        // The engine made the call's SERVER span: JavaScript only runs `run` inside it.
        let spanned = ctx.spanned();
        let id = NEXT_CALL.fetch_add(1, std::sync::atomic::Ordering::Relaxed) as f64;
        CONTEXTS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id as u64, ctx.clone());
        let guard = AbortOnDrop {
            abort: self.abort.clone(),
            id,
            finished: false,
        };
        async move {
            // Moved whole into the future, so it drops with the future, not with this call.
            let mut guard = guard;
            let mut call = json!({ "id": id, "args": arguments });
            if let Some(principal) = principal {
                call["principal"] = principal.to_json();
            }
            if let Some(trace) = trace {
                call["trace"] = Value::Object(trace);
                if spanned {
                    call["spanned"] = Value::Bool(true);
                }
            }
            let outcome = match execute.call_async_catch(call).await {
                Ok(promise) => promise.await.map(|v| v.0).map_err(|e| e.reason.clone()),
                Err(e) => Err(e.reason.clone()),
            };
            guard.finished = true;
            if let Err(why) = &outcome {
                // Threw rather than answered: a task of this call ends `failed`.
                ctx.fail(why.clone());
            }
            map(outcome)
        }
        .boxed()
    }
}

fn text_result(text: String, is_error: bool) -> Value {
    ToolResult::text(text, is_error).into_mcp()
}

/// A `ToolResult` as an MCP `CallToolResult`: its `content` parts (and `structuredContent`)
/// as they are when it has them (a `run` that answered in MCP terms, or a loaded MCP tool),
/// else its `output` as one text part.
fn tool_result_to_mcp(result: Value) -> Value {
    ToolResult::from_js(result).into_mcp()
}

/// A tool as lib/serve.js's `servedTools` prepares it (internal): its listing, and either the
/// loadMcp connection it came from or its `execute` and `abort`.
#[napi(object, object_to_js = false)]
pub struct NativeTool<'a> {
    pub name: String,
    pub description: String,
    /// Where it came from (`native`, or its MCP server's name).
    pub source: String,
    /// A loadMcp tool's handle: a call stays in Rust, and its listing is the one served.
    #[napi(ts_type = "unknown")]
    pub mcp: Option<ExternalRef<Arc<LoadedTool>>>,
    #[napi(ts_type = "unknown")]
    pub input_schema: Option<Unknown<'a>>,
    #[napi(ts_type = "unknown")]
    pub title: Option<Unknown<'a>>,
    #[napi(ts_type = "unknown")]
    pub annotations: Option<Unknown<'a>>,
    #[napi(ts_type = "unknown")]
    pub output_schema: Option<Unknown<'a>>,
    #[napi(ts_type = "unknown")]
    pub icons: Option<Unknown<'a>>,
    #[napi(ts_type = "unknown")]
    pub execution: Option<Unknown<'a>>,
    #[napi(js_name = "_meta", ts_type = "unknown")]
    pub meta: Option<Unknown<'a>>,
    /// A task tool's call starts as an ordinary one and becomes a task when `run` calls
    /// `ctx.startTask()` (`defineTool`'s `deferTask`).
    pub defer_task: Option<bool>,
    /// `execute({ id, args })`, resolving the call's `ToolResult`.
    #[napi(ts_type = "(call: { id: number; args: Record<string, unknown> }) => Promise<unknown>")]
    pub execute: Function<'a, Value, Promise<JsonValue>>,
    /// `abort(id)` fires the AbortSignal of the call with this id.
    #[napi(ts_type = "(id: number) => void")]
    pub abort: Function<'a, f64, ()>,
    /// A loadMcp tool as curated (lib/curation.js): what its listing and calls change.
    pub curation: Option<NativeCuration<'a>>,
}

/// What curation changes of a loadMcp tool (lib/curation.js checked it).
#[napi(object, object_to_js = false)]
pub struct NativeCuration<'a> {
    pub title: Option<String>,
    pub description: Option<String>,
    #[napi(ts_type = "Record<string, unknown>")]
    pub preset: Option<Unknown<'a>>,
    #[napi(ts_type = "Record<string, unknown>")]
    pub defaults: Option<Unknown<'a>>,
}

fn curation_of(env: &Env, about: &str, c: NativeCuration) -> Result<serve::curate::Curation> {
    let object = |value: Option<Unknown>, key: &str| -> Result<Map<String, Value>> {
        match value {
            Some(value) => match crate::convert::json_value(env, value, about, key)? {
                Value::Object(map) => Ok(map),
                Value::Null => Ok(Map::new()),
                _ => Err(Error::from_reason(format!(
                    "toolnexus: {about}: curation {key} must be an object"
                ))),
            },
            None => Ok(Map::new()),
        }
    };
    Ok(serve::curate::Curation {
        title: c.title,
        description: c.description,
        preset: object(c.preset, "preset")?,
        defaults: object(c.defaults, "defaults")?,
    })
}

/// Problems of `values` (a curation's preset or defaults) as arguments of a tool whose input
/// schema is `schema`, in words; null when they fit (internal, for lib/curation.js).
#[napi(ts_args_type = "schema: unknown, values: Record<string, unknown>")]
pub fn check_tool_values(schema: JsonValue, values: JsonValue) -> Option<String> {
    let (Value::Object(schema), Value::Object(values)) = (schema.0, values.0) else {
        return Some("they must be an object of arguments".into());
    };
    serve::curate::check_values(&schema, &values).err()
}

/// One problem `checkJsonSchema` found: where in the document (a JSON pointer, `""` for the
/// whole document) and what is wrong, in words.
#[napi(object)]
pub struct SchemaProblem {
    pub path: String,
    pub message: String,
}

/// The problems of `value` against the JSON Schema `schema` (at most 50), empty when it fits;
/// throws, in words, when the schema does not compile (internal, for the CLI's `add`).
#[napi(ts_args_type = "schema: unknown, value: unknown")]
pub fn check_json_schema(schema: JsonValue, value: JsonValue) -> Result<Vec<SchemaProblem>> {
    let problems = engine::serve::schema_problems(&schema.0, &value.0, 50)
        .map_err(|e| Error::from_reason(format!("toolnexus: {e}")))?;
    Ok(problems
        .into_iter()
        .map(|(path, message)| SchemaProblem { path, message })
        .collect())
}

/// Each tool of lib/serve.js's `servedTools` array, as served.
pub(super) fn served_tools(env: &Env, tools: Vec<NativeTool>) -> Result<Vec<ServedTool>> {
    tools
        .into_iter()
        .map(|tool| served_tool(env, tool))
        .collect()
}

fn served_tool(env: &Env, tool: NativeTool) -> Result<ServedTool> {
    let NativeTool {
        name,
        description,
        source,
        mcp,
        input_schema: schema,
        title,
        annotations,
        output_schema,
        icons,
        execution,
        meta,
        defer_task,
        execute,
        abort,
        curation,
    } = tool;
    let about = format!("tool {name:?}");
    let mut extras = Map::new();
    // A loadMcp tool's schema is its listing's (not read from its object, which may be big).
    let mut input_schema = Value::Null;
    // A loadMcp tool is relayed by the gateway, served as its server listed it.
    if let Some(handle) = mcp {
        let served = engine::gateway::tool::relayed((*handle).clone(), (name, description), source)
            .map_err(Error::from_reason)?;
        return match curation {
            Some(curation) => Ok(serve::curate::curated(
                served,
                &curation_of(env, &about, curation)?,
            )),
            None => Ok(served),
        };
    }
    let caller: Arc<dyn ToolCaller> = {
        if let Some(schema) = schema {
            input_schema = crate::convert::json_value(env, schema, &about, "inputSchema")?;
        }
        let given = [title, annotations, output_schema, icons, execution, meta];
        for (key, value) in serve::LISTING_EXTRAS.into_iter().zip(given) {
            let Some(value) = value else { continue };
            if !matches!(value.get_type()?, ValueType::Undefined | ValueType::Null) {
                extras.insert(
                    key.to_string(),
                    crate::convert::json_value(env, value, &about, key)?,
                );
            }
        }
        let execute: Execute = js_callback(execute)?;
        let abort: Abort = js_callback(abort)?;
        Arc::new(JsTool {
            execute: Arc::new(execute),
            abort: Arc::new(abort),
            map: tool_answer,
            defer_task: defer_task.unwrap_or(false),
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

/// An MCP `CallToolResult` a `run` returned, as the `ToolResult` its tool's `execute` resolves
/// (internal): `output` mapped as for MCP tools, the parts kept as they are.
#[napi(
    ts_args_type = "result: { content: unknown[] }",
    ts_return_type = "ToolResult"
)]
pub fn tool_result_from_mcp(result: JsonValue) -> Value {
    // Its `_meta` stays out, as before.
    let mut result = ToolResult::from_mcp(result.0);
    result.meta = None;
    result.into()
}
