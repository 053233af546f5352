//! toolnexus: MCP servers for Node.js agents. This crate is the thin napi binding: conversions,
//! the AbortSignal bridge and callbacks. Everything here converts and wires; the work itself
//! lives in the engine (`crates/engine`, imported as `engine`), which has no napi dependency.

pub mod abort;
pub mod auth;
pub mod bounded;
pub mod callback;
pub mod convert;
pub mod load;
pub mod mcp_tools;
pub mod options;
pub mod progress;
pub mod search;
pub mod serve;
pub mod settle;
#[cfg(unix)]
pub mod stdout_reader;
pub mod surface;
pub mod telemetry;
#[cfg(unix)]
pub mod uv_reader;

use std::time::Duration;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use convert::{ErrorKind, Settle};
use engine::config;
use engine::connect::client::ClientSide;
use engine::connect::inventory::{self, Interrupted};
use engine::connect::reaper;

#[napi(module_exports)]
pub fn init(_exports: Object, env: Env) -> Result<()> {
    // Children still running when this environment goes away (Node exiting without close(), a
    // worker thread ending) are killed with their whole process group; other environments'
    // children are left alone.
    let owner = reaper::adopt_thread();
    env.add_env_cleanup_hook(owner, reaper::kill_owned)?;
    // Spans and metrics still queued for the collector are sent before the process goes.
    env.add_env_cleanup_hook((), |()| engine::telemetry::flush())?;
    Ok(())
}

/// Replaces every character outside `[A-Za-z0-9_-]` by `_` (one per UTF-16 code unit).
#[napi]
pub fn sanitize(value: String) -> String {
    config::sanitize::sanitize(&value)
}

/// Where `parseMcpConfig` finds the servers of a settings file.
#[napi(object)]
pub struct ParseOptions {
    /// The key path of the server map (`["mcp", "servers"]` in VS Code's settings.json,
    /// `["context_servers"]` in Zed's); only that part of the document is read, and a
    /// document without it holds no servers. Absent: the usual wrapper keys are looked for.
    pub at: Option<Vec<String>>,
}

/// Parses an mcp.json (file path, JSON/JSONC text, or object) into the normalised server map,
/// in config order, with variables left unexpanded. Throws on malformed input.
#[napi(
    ts_args_type = "input: string | object, opts?: ParseOptions",
    ts_return_type = "McpConfig"
)]
pub fn parse_mcp_config<'env>(
    env: &'env Env,
    input: Unknown,
    opts: Option<ParseOptions>,
) -> Result<Unknown<'env>> {
    convert::contain(|| {
        let input = convert::config_input(env, input)
            .map_err(|m| convert::js_error(env, ErrorKind::TypeError, &m))?;
        let at = opts.and_then(|o| o.at);
        let loaded = match &at {
            Some(at) => config::load_at(input, at),
            None => config::load(input),
        };
        match loaded {
            Ok(cfg) => {
                convert::emit_warnings(env, &cfg.warnings);
                // Through JSON.parse, so every number comes back a `number` (napi would make a
                // BigInt of anything above 2^32).
                convert::parse_json(env, &config::normalised_json(&cfg).to_string())
            }
            Err(e) => Err(Settle::<()>::config_error(e).into_result(env).unwrap_err()),
        }
    })
}

/// MCP content parts in words, one after the other: text as it is; images, audio and resources
/// summarised (`[image image/png, 1.2 kB]`) as a `ToolResult`'s `output` summarises them.
#[napi(ts_args_type = "content: ContentPart[]")]
pub fn describe_content(env: &Env, content: Unknown) -> Result<String> {
    let content = convert::json_value(env, content, "", "content")?;
    Ok(engine::connect::session::result::describe_content(Some(
        &content,
    )))
}

/// Expands `${VAR}`, `${VAR:-default}` and `${env:VAR}` in header values from the environment.
#[napi(
    ts_args_type = "headers?: Record<string, string>",
    ts_return_type = "Record<string, string> | undefined"
)]
pub fn expand_env_headers<'env>(env: &'env Env, headers: Option<Unknown>) -> Result<Unknown<'env>> {
    convert::contain(|| {
        let headers = match headers {
            Some(headers) => convert::json_value(env, headers, "", "headers")?,
            None => serde_json::Value::Null,
        };
        let serde_json::Value::Object(headers) = headers else {
            return ().into_unknown(env);
        };
        let mut missing = Vec::new();
        let out: serde_json::Map<String, serde_json::Value> = headers
            .into_iter()
            .map(|(k, v)| {
                let v = match v {
                    serde_json::Value::String(s) => {
                        serde_json::Value::String(config::vars::expand(&s, &mut missing))
                    }
                    other => other,
                };
                (k, v)
            })
            .collect();
        let warnings: Vec<String> = missing
            .iter()
            .map(|name| {
                format!(
                    "toolnexus: environment variable {} is not set; using \"\"",
                    config::quote::shorten(name, config::quote::QUOTE_CHARS)
                )
            })
            .collect();
        convert::emit_warnings(env, &warnings);
        convert::parse_json(env, &serde_json::Value::Object(out).to_string())
    })
}

/// Connects to every enabled server just long enough to list its tools, then disconnects.
/// (internal: the package's `listMcpTools` in lib/options.js checks the app's options first).
#[napi(
    ts_args_type = "input: string | object, opts?: CallOptions",
    ts_return_type = "Promise<McpInventory>"
)]
pub fn list_mcp_tools<'env>(
    env: &'env Env,
    input: Unknown,
    opts: Option<options::CallOptions>,
) -> Result<PromiseRaw<'env, Unknown<'env>>> {
    convert::contain(|| list(env, input, opts))
}

fn list<'env>(
    env: &'env Env,
    input: Unknown,
    opts: Option<options::CallOptions>,
) -> Result<PromiseRaw<'env, Unknown<'env>>> {
    let (watch, input, deadline) = match prepare(env, input, opts.as_ref()) {
        Ok((abort::Watch::Watching(watch), input, deadline)) => (watch, input, deadline),
        Ok((abort::Watch::AlreadyAborted(reason), ..)) => {
            return reject_now(env, Settle::Reject(reason));
        }
        Err(settle) => return reject_now(env, settle),
    };
    let trace = options::CallOptions::call_trace(opts.as_ref());
    let auth = match auth::auth_context(opts, &input) {
        Ok(auth) => auth,
        Err(e) => return reject_now(env, Settle::Reject(e)),
    };
    let token = watch.token().clone();
    let work = async move {
        let cfg = match load_config(input, &token).await {
            Ok(cfg) => cfg,
            Err(settle) => return settle,
        };
        match inventory::list_all(&cfg, &token, deadline, |_| {
            ClientSide::new(auth.clone(), None, false).traced(trace.clone())
        })
        .await
        {
            Ok(servers) => {
                let mut warnings = cfg.warnings.clone();
                for s in &servers {
                    warnings.extend(s.warnings.iter().cloned());
                }
                let listed = servers
                    .iter()
                    .map(|s| engine::connect::tool_info::bytes(&s.tools))
                    .sum();
                let json = inventory::json::inventory_json(servers);
                engine::connect::tool_info::release_freed(listed);
                Settle::Value((json, warnings))
            }
            Err(Interrupted::Deadline) => Settle::Fail(
                ErrorKind::Error,
                "toolnexus: MCP list deadline exceeded".to_string(),
            ),
            Err(Interrupted::Cancelled) => Settle::Aborted,
        }
    };
    let work = reaper::owned(reaper::thread_owner(), work);
    run_watched(env, watch, work, |env, (json, warnings)| {
        convert::emit_warnings(env, &warnings);
        convert::parse_json(env, &json)
    })
}

/// Runs `work` on the runtime and settles its promise on the JavaScript thread: the abort
/// listener is removed, and a value goes through `finish`.
///
/// This is the one place a watched request settles, so the abort contract is kept here for
/// every kind: when the caller's signal fired before the promise settled (its listener ran on
/// this thread first), the promise rejects with the captured `signal.reason` (the same value,
/// converted back on the thread that captured it), whatever the work ended with: its own
/// "aborted" words, a failure, or a value that raced the abort (handed to `discard` on the
/// runtime). Once settled, the listener is gone and a later abort changes nothing.
pub(crate) fn run_watched<'env, T, V, W, F>(
    env: &'env Env,
    watch: abort::AbortWatch,
    work: W,
    finish: F,
) -> Result<PromiseRaw<'env, V>>
where
    T: Send + 'static,
    V: ToNapiValue,
    W: std::future::Future<Output = Settle<T>> + Send + 'static,
    F: FnOnce(&'env Env, T) -> Result<V> + 'static,
{
    run_watched_or(env, watch, work, finish, drop)
}

/// [`run_watched`], with what to do with a value the abort overtook (`discard`, run on the
/// runtime, where it may spawn: a loaded source is closed).
pub(crate) fn run_watched_or<'env, T, V, W, F, D>(
    env: &'env Env,
    watch: abort::AbortWatch,
    work: W,
    finish: F,
    discard: D,
) -> Result<PromiseRaw<'env, V>>
where
    T: Send + 'static,
    V: ToNapiValue,
    W: std::future::Future<Output = Settle<T>> + Send + 'static,
    F: FnOnce(&'env Env, T) -> Result<V> + 'static,
    D: FnOnce(T) + Send + 'static,
{
    let work = async move {
        convert::contain_future(work)
            .await
            .unwrap_or_else(|message| Settle::Fail(ErrorKind::Error, message))
    };
    env.spawn_future_with_callback(async move { Ok(work.await) }, move |env, settle| {
        let reason = watch.take_reason();
        watch.release(env);
        let settle = match (settle, reason) {
            (Settle::Value(value), Some(reason)) => {
                napi::bindgen_prelude::spawn(async move { discard(value) });
                Settle::Reject(reason)
            }
            (_, Some(reason)) => Settle::Reject(reason),
            (settle, None) => settle,
        };
        convert::contain(|| finish(env, settle.into_result(env)?))
    })
}

/// Reads and parses the config on a blocking thread (a file read may stall, on a network file
/// system say), giving up as soon as the call is aborted.
pub(crate) async fn load_config<T>(
    input: config::ConfigInput,
    token: &tokio_util::sync::CancellationToken,
) -> std::result::Result<config::Config, Settle<T>> {
    let read = tokio::task::spawn_blocking(move || config::load(input));
    tokio::select! {
        read = read => match read {
            Ok(Ok(cfg)) => Ok(cfg),
            Ok(Err(e)) => Err(Settle::config_error(e)),
            Err(e) => Err(Settle::Fail(ErrorKind::Error, match e.try_into_panic() {
                Ok(panic) => convert::internal_error(&*panic),
                Err(_) => "toolnexus: reading the MCP config was cancelled".to_string(),
            })),
        },
        () = token.cancelled() => Err(Settle::Aborted),
    }
}

type Prepared = (abort::Watch, config::ConfigInput, Option<Duration>);

/// A call's signal watched, its config input read and its deadline, from options lib/options.js
/// checked (only a config the bounded reader refuses is still refused here).
pub(crate) fn prepare<T>(
    env: &Env,
    input: Unknown,
    opts: Option<&options::CallOptions>,
) -> std::result::Result<Prepared, Settle<T>> {
    let fail = |m: String| Settle::Fail(ErrorKind::TypeError, m);
    let deadline = opts
        .and_then(|o| o.deadline_ms)
        .map(|ms| Duration::from_millis(ms.into()));
    let watch = abort::watch(env, opts.and_then(|o| o.signal)).map_err(Settle::Reject)?;
    if let abort::Watch::AlreadyAborted(_) = watch {
        return Ok((
            watch,
            config::ConfigInput::Value(serde_json::Value::Null),
            deadline,
        ));
    }
    let input = convert::config_input(env, input).map_err(fail)?;
    Ok((watch, input, deadline))
}

/// A promise that settles with `settle` (a rejection, in practice) without starting any work.
pub(crate) fn reject_now<'env>(
    env: &'env Env,
    settle: Settle<String>,
) -> Result<PromiseRaw<'env, Unknown<'env>>> {
    env.spawn_future_with_callback(async move { Ok(settle) }, |env, settle| {
        convert::contain(|| {
            let json = settle.into_result(env)?;
            convert::parse_json(env, &json)
        })
    })
}
