//! loadMcp: connecting, the source object (its live `tools`, status, `close()`), and the
//! callbacks it takes (`waitFor`, `onToolsChanged`, `onSurfaceChanged`). Its resources, prompts
//! and their requests are in `surface.rs`.

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::{Map, Value, json};

use super::abort::Watch;
use super::bounded::JsonValue;
use super::callback::{JsCallback, js_callback};
use super::convert::{self, ErrorKind, Settle};
use super::mcp_tools::{SourceNames, named_tools, tool_objects};
use super::options::{CallOptions, LoadHooks};
#[cfg(unix)]
use super::stdout_reader::StdoutReader;
use engine::connect::client::{ClientSide, Elicitor};
use engine::connect::elicit;
use engine::connect::inventory::{self, Interrupted};
use engine::connect::session::Session;
use engine::connect::session::follow::{SurfaceHook, ToolsHook};
use engine::connect::tool_info::ToolInfo;
use engine::surface::{Kind, Listed};

/// The `waitFor` callback, callable from any thread; weak, so it never keeps Node alive. Its
/// answer is read with the bounded converter, like every value from JavaScript.
type WaitFor = JsCallback<Value, Promise<JsonValue>>;

struct Loaded {
    session: Arc<Session>,
    /// `{ status, errors, info }` as JSON text.
    json: String,
    warnings: Vec<String>,
    names: SourceNames,
    /// Its servers' stdouts, to be read by `reader`.
    #[cfg(unix)]
    stdouts: Vec<engine::connect::stdio::handoff::Taken>,
    #[cfg(unix)]
    reader: StdoutReader,
}

/// Connects to every enabled server and returns live, callable tools. Connections stay open
/// until `source.close()`.
/// (internal: the package's `loadMcp` in lib/source.js wraps it; lib/options.js checks the
/// app's options).
#[napi(
    ts_args_type = "input: string | object, opts?: CallOptions, hooks?: LoadHooks",
    ts_return_type = "Promise<{ handle: NativeSource; status: Record<string, McpStatus>; errors: Record<string, string>; info: Record<string, ServerInfo> }>"
)]
pub fn load_mcp<'env>(
    env: &'env Env,
    input: Unknown,
    opts: Option<CallOptions>,
    hooks: Option<LoadHooks>,
) -> Result<PromiseRaw<'env, Unknown<'env>>> {
    convert::contain(|| load(env, input, opts, hooks))
}

fn load<'env>(
    env: &'env Env,
    input: Unknown,
    opts: Option<CallOptions>,
    hooks: Option<LoadHooks>,
) -> Result<PromiseRaw<'env, Unknown<'env>>> {
    let (watch, input, deadline) = match super::prepare::<String>(env, input, opts.as_ref()) {
        Ok((Watch::Watching(watch), input, deadline)) => (watch, input, deadline),
        Ok((Watch::AlreadyAborted(reason), ..)) => {
            return super::reject_now(env, Settle::Reject(reason));
        }
        Err(settle) => return super::reject_now(env, settle),
    };
    let LoadHooks {
        wait_for,
        on_tools_changed,
        on_surface_changed,
        relay_input,
        named_by_toolkit,
    } = hooks.unwrap_or(LoadHooks {
        wait_for: None,
        on_tools_changed: None,
        on_surface_changed: None,
        relay_input: None,
        named_by_toolkit: None,
    });
    let (relay_input, named_by_toolkit) = (
        relay_input.unwrap_or(false),
        named_by_toolkit.unwrap_or(false),
    );
    let trace = CallOptions::call_trace(opts.as_ref());
    let callbacks = || -> Result<_> {
        let wait_for: Option<WaitFor> = wait_for.map(js_callback).transpose()?;
        let on_tools_changed = on_tools_changed.map(tools_hook).transpose()?;
        let on_surface_changed = on_surface_changed.map(surface_hook).transpose()?;
        let auth = super::auth::auth_context(opts, &input)?;
        Ok((
            wait_for.map(Arc::new),
            on_tools_changed,
            on_surface_changed,
            auth,
        ))
    };
    let (wait_for, on_tools_changed, on_surface_changed, auth) = match callbacks() {
        Ok(callbacks) => callbacks,
        Err(e) => return super::reject_now(env, Settle::Reject(e)),
    };
    let warn_names = !named_by_toolkit;
    #[cfg(unix)]
    let reader = StdoutReader::for_load(env, named_by_toolkit);
    let token = watch.token().clone();
    let future = async move {
        let cfg = match super::load_config(input, &token).await {
            Ok(cfg) => cfg,
            Err(settle) => return settle,
        };
        let handler = |server: &str| {
            let elicitor = wait_for.clone().map(|w| elicitor(w, server.to_string()));
            ClientSide::new(auth.clone(), elicitor, relay_input).traced(trace.clone())
        };
        match inventory::load_all(&cfg, &token, deadline, handler).await {
            Ok(loaded) => {
                #[allow(unused_mut)]
                let mut loaded = describe(loaded, warn_names);
                #[cfg(unix)]
                if reader.takes() {
                    loaded.stdouts = super::stdout_reader::take_stdouts(&loaded.session).await;
                }
                #[cfg(unix)]
                {
                    loaded.reader = reader;
                }
                loaded
                    .session
                    .follow_changes(on_tools_changed, on_surface_changed);
                Settle::Value(loaded)
            }
            Err(Interrupted::Deadline) => Settle::Fail(
                ErrorKind::Error,
                "toolnexus: MCP load deadline exceeded".to_string(),
            ),
            Err(Interrupted::Cancelled) => Settle::Aborted,
        }
    };
    let future = engine::connect::reaper::owned(engine::connect::reaper::thread_owner(), future);
    // A source the abort overtook is closed: its children are gone as after `close()`.
    let discard = |loaded: Loaded| {
        tokio::spawn(async move { loaded.session.close().await });
    };
    super::run_watched_or(
        env,
        watch,
        future,
        |env, loaded| {
            convert::emit_warnings(env, &loaded.warnings);
            build_source(env, loaded)
        },
        discard,
    )
}

/// `opts.onToolsChanged`, called with `{ server, tools }` after a server's tools were re-listed
/// (`source.tools` already shows them); lib/options.js has guarded it (a throw is a warning).
fn tools_hook(f: Function<Value, ()>) -> Result<ToolsHook> {
    let tsfn: JsCallback<Value> = js_callback(f)?;
    let tsfn = Arc::new(tsfn);
    Ok(Arc::new(move |server: &str, tools: &[ToolInfo]| {
        let tsfn = tsfn.clone();
        let change = json!({ "server": server, "tools": tools });
        tokio::spawn(async move {
            let _ = tsfn.call_async_catch(change).await;
        });
    }))
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

fn describe(loaded: inventory::Loaded, warn_names: bool) -> Loaded {
    let inventory::Loaded {
        session,
        servers,
        mut warnings,
    } = loaded;
    let mut status = Map::new();
    let mut errors = Map::new();
    let mut info = Map::new();
    for server in &servers {
        status.insert(server.name.clone(), json!(server.status));
        if let Some(error) = &server.error {
            errors.insert(server.name.clone(), json!(error));
        }
        if let Some(server_info) = &server.info {
            info.insert(server.name.clone(), server_info.clone());
        }
    }
    let session = Arc::new(session);
    let names = SourceNames::default();
    let naming_warnings = named_tools(&session, &names).2;
    if warn_names {
        warnings.extend(naming_warnings);
    }
    let json = json!({ "status": status, "errors": errors, "info": info }).to_string();
    Loaded {
        session,
        json,
        warnings,
        names,
        #[cfg(unix)]
        stdouts: Vec::new(),
        #[cfg(unix)]
        reader: StdoutReader::Runtime,
    }
}

/// What the native load resolves: `{ status, errors, info, handle }`, `handle` a
/// [`NativeSource`] that lib/source.js builds the `McpSource` around.
fn build_source<'env>(env: &'env Env, loaded: Loaded) -> Result<Unknown<'env>> {
    #[cfg(unix)]
    let mut loaded = loaded;
    #[cfg(unix)]
    for taken in std::mem::take(&mut loaded.stdouts) {
        let owner = Arc::as_ptr(&loaded.session) as usize;
        loaded.reader.read(env, taken, owner);
    }
    let source = convert::parse_json(env, &loaded.json)?;
    let mut source_obj = Object::from_unknown(source)?;
    let handle = NativeSource {
        session: loaded.session,
        names: loaded.names,
    };
    source_obj.set_named_property("handle", handle)?;
    Ok(source)
}

/// A loadMcp source's live session (internal: lib/source.js makes the `McpSource` of it).
#[napi]
pub struct NativeSource {
    pub(super) session: Arc<Session>,
    names: SourceNames,
}

#[napi]
impl NativeSource {
    /// Moves on each time a server's tools were re-listed.
    #[napi]
    pub fn generation(&self) -> f64 {
        self.session.generation() as f64
    }

    /// The tools as they are now: `[tools, refs]`, each tool's object (without `execute`) and
    /// the handle its calls go through.
    #[napi(ts_return_type = "[Array<Omit<Tool, 'execute'>>, unknown[]]")]
    pub fn tools<'env>(&self, env: &'env Env) -> Result<Array<'env>> {
        tool_objects(env, &self.session, &self.names)
    }

    /// Closes every connection; its stdout readers on this thread stop once the servers are gone.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        let session = self.session.clone();
        #[cfg(unix)]
        let owner = Arc::as_ptr(&session) as usize;
        let closing = async move {
            session.close().await;
            Ok(())
        };
        env.spawn_future_with_callback(closing, move |_, ()| {
            #[cfg(unix)]
            super::uv_reader::close_owned(owner);
            Ok(())
        })
    }
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

/// `onSurfaceChanged`, called with `{ server, kind, items }` after a server's resources,
/// resource templates or prompts were re-listed and changed (the source already shows them);
/// lib/options.js has guarded it (a throw is a warning).
fn surface_hook(f: Function<Value, ()>) -> Result<SurfaceHook> {
    let tsfn: Arc<JsCallback<Value>> = Arc::new(js_callback(f)?);
    Ok(Arc::new(
        move |server: &str, kind: Kind, listed: &Listed| {
            let tsfn = tsfn.clone();
            let change = json!({ "server": server, "kind": kind.key(), "items": &*listed.items });
            tokio::spawn(async move {
                let _ = tsfn.call_async_catch(change).await;
            });
        },
    ))
}
