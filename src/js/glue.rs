//! Loads `glue.js` once per JavaScript environment and forwards the exports it implements.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::Value;

use std::sync::Arc;

use super::bounded::JsonValue;
use super::mcp_tools::McpToolRef;

const GLUE: &str = include_str!("glue.js");

/// The glue's API object, kept per environment (workers each have their own).
struct Glue {
    api: ObjectRef<false>,
}

/// Evaluates the glue with the native functions it needs. Called from the module init.
pub fn install(env: &Env) -> Result<()> {
    let factory: Function<Object, Object> = env.run_script(GLUE)?;
    let mut native = Object::new(env)?;
    native.set_named_property("mcpToolRefKey", super::mcp_tools::TOOL_REF_KEY)?;
    native.set_named_property("namedByToolkitKey", super::mcp_tools::NAMED_BY_TOOLKIT_KEY)?;
    let create_service = env
        .create_function_from_closure::<FnArgs<(Unknown, Unknown, Unknown, Unknown)>, _, _>(
            "createService",
            super::serve::create_service,
        )?;
    native.set_named_property("createService", create_service)?;
    let call_context = env.create_function_from_closure::<FnArgs<(f64, String, Unknown)>, _, _>(
        "callContext",
        |ctx| {
            let (id, op, payload): (f64, String, JsonValue) =
                (ctx.get(0)?, ctx.get(1)?, ctx.get(2)?);
            let promise = super::serve::call_context(ctx.env, id, op, payload.0)?;
            // SAFETY: handed to JavaScript as this call's return value at once.
            Ok(unsafe {
                std::mem::transmute::<PromiseRaw<'_, Value>, PromiseRaw<'static, Value>>(promise)
            })
        },
    )?;
    native.set_named_property("callContext", call_context)?;
    let from_mcp =
        env.create_function_from_closure::<Unknown, _, _>("toolResultFromMcp", |ctx| {
            Ok(super::serve::tool_result_from_mcp(
                ctx.get::<JsonValue>(0)?.0,
            ))
        })?;
    native.set_named_property("toolResultFromMcp", from_mcp)?;
    let load =
        env.create_function_from_closure::<FnArgs<(Unknown, Unknown)>, _, _>("loadMcp", |ctx| {
            let input: Unknown = ctx.get(0)?;
            let opts: Option<Object> = ctx
                .get::<Unknown>(1)
                .ok()
                .filter(|v| v.get_type().ok() == Some(ValueType::Object))
                .and_then(|v| unsafe { v.cast() }.ok());
            let promise = super::load::load_mcp(ctx.env, input, opts)?;
            // SAFETY: handed to JavaScript as this call's return value at once.
            Ok(unsafe {
                std::mem::transmute::<
                    PromiseRaw<'_, Unknown<'_>>,
                    PromiseRaw<'static, Unknown<'static>>,
                >(promise)
            })
        })?;
    native.set_named_property("loadMcp", load)?;
    let parse = env.create_function_from_closure::<Unknown, _, _>("parseMcpConfig", |ctx| {
        let parsed = super::parse_mcp_config(ctx.env, ctx.get(0)?, None)?;
        // SAFETY: handed to JavaScript as this call's return value at once.
        Ok(unsafe { std::mem::transmute::<Unknown<'_>, Unknown<'static>>(parsed) })
    })?;
    native.set_named_property("parseMcpConfig", parse)?;
    let call_mcp_tool = env
        .create_function_from_closure::<FnArgs<(Unknown, Unknown, Unknown)>, _, _>(
            "callMcpTool",
            |ctx| {
                super::convert::contain(|| {
                    let tool: Unknown = ctx.get(0)?;
                    // SAFETY: the glue passes the External that build_source made.
                    let tool = unsafe {
                        <External<Arc<McpToolRef>> as FromNapiRef>::from_napi_ref(
                            ctx.env.raw(),
                            tool.raw(),
                        )?
                    };
                    let (args, call_ctx) = (ctx.get(1).ok(), ctx.get(2).ok());
                    super::mcp_tools::call_mcp_tool(ctx.env, tool, args, call_ctx)
                })
            },
        )?;
    native.set_named_property("callMcpTool", call_mcp_tool)?;
    // Each toolkit gets its own namer: the names it gave are what it keeps.
    let namer = env.create_function_from_closure::<(), _, _>("toolkitNamer", |ctx| {
        let name_tools = super::mcp_tools::toolkit_namer(ctx.env)?;
        // SAFETY: handed to JavaScript as this call's return value at once.
        Ok(unsafe {
            std::mem::transmute::<
                Function<'_, Unknown<'_>, Unknown<'_>>,
                Function<'static, Unknown<'static>, Unknown<'static>>,
            >(name_tools)
        })
    })?;
    native.set_named_property("toolkitNamer", namer)?;
    let api = factory.call(native)?;
    super::settle::install(api.get_named_property("settleCalls")?)?;
    env.set_instance_data(
        Glue {
            api: api.create_ref()?,
        },
        (),
        |_| {},
    )?;
    Ok(())
}

/// One of the glue's functions, by name.
pub(crate) fn function<'env, Args: JsValuesTupleIntoVec, Return: FromNapiValue>(
    env: &'env Env,
    name: &str,
) -> Result<Function<'env, Args, Return>> {
    let glue = env
        .get_instance_data::<Glue>()?
        .ok_or_else(|| Error::from_reason("toolnexus: not initialised"))?;
    glue.api.get_value(env)?.get_named_property(name)
}

pub(super) fn call<'env>(
    env: &'env Env,
    name: &str,
    args: (Unknown, Unknown, Unknown),
) -> Result<Unknown<'env>> {
    let glue = env
        .get_instance_data::<Glue>()?
        .ok_or_else(|| Error::from_reason("toolnexus: not initialised"))?;
    let api = glue.api.get_value(env)?;
    let f: Function<FnArgs<(Unknown, Unknown, Unknown)>, Unknown> = api.get_named_property(name)?;
    f.call(args.into())
}

fn undefined(env: &Env) -> Result<Unknown<'_>> {
    ().into_unknown(env)
}

/// Defines a tool from a `run` function. `run` may return a string (kept), a `ToolResult`
/// (kept) or any other value (JSON-stringified; `undefined` gives `""`); a throw or rejection
/// becomes `{ output: message, isError: true }`.
#[napi(ts_args_type = "opts: DefineToolOptions", ts_return_type = "Tool")]
pub fn define_tool<'env>(env: &'env Env, opts: Unknown) -> Result<Unknown<'env>> {
    call(env, "defineTool", (opts, undefined(env)?, undefined(env)?))
}

/// The tools an MCP server would expose: `cfg.tools` names narrow the set (unknown names are
/// ignored); absent, every tool.
#[napi(
    ts_args_type = "tools: Tool[], cfg?: { tools?: string[] }",
    ts_return_type = "Tool[]"
)]
pub fn exposed_mcp_tools<'env>(
    env: &'env Env,
    tools: Unknown,
    cfg: Option<Unknown>,
) -> Result<Unknown<'env>> {
    let cfg = match cfg {
        Some(cfg) => cfg,
        None => undefined(env)?,
    };
    call(env, "exposedMcpTools", (tools, cfg, undefined(env)?))
}

/// An MCP server for `tools`. `connect(transport)` takes any `@modelcontextprotocol/sdk`
/// `Transport`; `connect()` with no argument serves this process's stdin/stdout (so nothing else
/// may write to stdout: no `console.log`).
#[napi(
    ts_args_type = "tools: Tool[], cfg?: McpServerOptions, onCall?: (call: CallRecord) => void",
    ts_return_type = "McpServer"
)]
pub fn build_mcp_server<'env>(
    env: &'env Env,
    tools: Unknown,
    cfg: Option<Unknown>,
    on_call: Option<Unknown>,
) -> Result<Unknown<'env>> {
    let cfg = match cfg {
        Some(cfg) => cfg,
        None => undefined(env)?,
    };
    let on_call = match on_call {
        Some(f) => f,
        None => undefined(env)?,
    };
    call(env, "buildMcpServer", (tools, cfg, on_call))
}

/// A toolkit: MCP tools from `mcpConfig` first, then `extraTools` (first name wins, with a
/// warning), callable by name and servable over streamable HTTP.
#[napi(
    ts_args_type = "opts?: ToolkitOptions",
    ts_return_type = "Promise<Toolkit>"
)]
pub fn create_toolkit<'env>(env: &'env Env, opts: Option<Unknown>) -> Result<Unknown<'env>> {
    let opts = match opts {
        Some(opts) => opts,
        None => undefined(env)?,
    };
    call(
        env,
        "createToolkit",
        (opts, undefined(env)?, undefined(env)?),
    )
}
