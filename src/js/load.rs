//! loadMcp: connecting, the source object (its live `tools`, status, `close()`), and the
//! callbacks it takes (`waitFor`, `onToolsChanged`).

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunction;
use napi_derive::napi;
use serde_json::{Map, Value, json};

use super::abort::Watch;
use super::bounded::JsonValue;
use super::convert::{self, ErrorKind, Settle};
use super::mcp_tools::{NAMED_BY_TOOLKIT_KEY, SourceNames, named_tools, tool_objects};
use crate::connect::client::{ClientSide, Elicitor};
use crate::connect::elicit;
use crate::connect::inventory::{self, Interrupted};
use crate::connect::session::{Session, ToolsHook};
use crate::connect::tool_info::ToolInfo;

/// The `waitFor` callback, callable from any thread; weak, so it never keeps Node alive. Its
/// answer is read with the bounded converter, like every value from JavaScript.
type WaitFor = ThreadsafeFunction<Value, Promise<JsonValue>, Value, Status, false, true>;

struct Loaded {
    session: Arc<Session>,
    /// `{ tools: [], status, errors, info }` as JSON text (`tools` filled in by `build_source`).
    json: String,
    warnings: Vec<String>,
    names: SourceNames,
    /// Its servers' stdouts, to be read by `reader`.
    #[cfg(unix)]
    stdouts: Vec<crate::connect::stdio::handoff::Taken>,
    #[cfg(unix)]
    reader: Reader,
}

/// A guarded callback (`onToolsChanged`, `ctx.onProgress`), callable from any thread; weak, so
/// it never keeps Node alive.
pub(super) type OnToolsChanged = ThreadsafeFunction<Value, (), Value, Status, false, true>;

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
    let on_tools_changed = match opts
        .as_ref()
        .map(|o| on_tools_changed_option(env, o))
        .transpose()
    {
        Ok(hook) => hook.flatten(),
        Err(e) => return super::reject_now(env, Settle::Fail(ErrorKind::TypeError, e)),
    };
    // A toolkit names the tools of all its sources together, and warns about names then.
    let warn_names = !opts
        .as_ref()
        .is_some_and(|o| o.has_named_property(NAMED_BY_TOOLKIT_KEY).unwrap_or(false));
    let auth = match super::auth::auth_context(opts.as_ref(), &input) {
        Ok(auth) => auth,
        Err(e) => return super::reject_now(env, Settle::Fail(ErrorKind::TypeError, e)),
    };
    // A toolkit's sources relay elicitation and sampling to the clients of the gateway it may serve.
    let relay_input = opts
        .as_ref()
        .and_then(|o| o.get::<bool>("relayInput").ok().flatten())
        .unwrap_or(false);
    // The toolkit's sources are called from its tasks: their answers are read there.
    #[cfg(unix)]
    let read_here = warn_names.then(|| stdout_reader(env)).flatten();
    let token = watch.token().clone();
    let future = async move {
        let cfg = match super::load_config(input, &token).await {
            Ok(cfg) => cfg,
            Err(settle) => return settle,
        };
        let handler = |server: &str| ClientSide {
            relay_input,
            auth: auth.clone(),
            ..ClientSide::with_elicitor(wait_for.clone().map(|w| elicitor(w, server.to_string())))
        };
        match inventory::load_all(&cfg, &token, deadline, handler).await {
            Ok(loaded) => {
                #[allow(unused_mut)]
                let mut loaded = describe(loaded, warn_names);
                #[cfg(unix)]
                if let Some(reader) = read_here {
                    loaded.stdouts = stdouts_to_read_here(&loaded.session).await;
                    loaded.reader = reader;
                }
                loaded.session.follow_tool_changes(on_tools_changed);
                Settle::Value(loaded)
            }
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

/// `opts.onToolsChanged`, called with `{ server, tools }` after a server's tools were re-listed
/// (`source.tools` already shows them); a throw in it becomes a `ToolnexusWarning`.
fn on_tools_changed_option(
    env: &Env,
    opts: &Object,
) -> std::result::Result<Option<ToolsHook>, String> {
    let value: Unknown = opts
        .get_named_property("onToolsChanged")
        .map_err(|e| e.reason.clone())?;
    match value.get_type().map_err(|e| e.reason.clone())? {
        ValueType::Undefined | ValueType::Null => Ok(None),
        ValueType::Function => {
            let tsfn: OnToolsChanged = guarded_callback(env, value, "onToolsChanged")?;
            let tsfn = Arc::new(tsfn);
            let hook: ToolsHook = Arc::new(move |server: &str, tools: &[ToolInfo]| {
                let tsfn = tsfn.clone();
                let change = json!({ "server": server, "tools": tools });
                tokio::spawn(async move {
                    let _ = tsfn.call_async_catch(change).await;
                });
            });
            Ok(Some(hook))
        }
        _ => Err("toolnexus: opts.onToolsChanged must be a function".to_string()),
    }
}

/// `value` (a function) wrapped so that a throw in it is a `ToolnexusWarning` naming `name`,
/// callable from any thread, weak (it never keeps Node alive).
pub(super) fn guarded_callback(
    env: &Env,
    value: Unknown,
    name: &str,
) -> std::result::Result<OnToolsChanged, String> {
    let name = name.into_unknown(env).map_err(|e| e.reason.clone())?;
    let nothing = ().into_unknown(env).map_err(|e| e.reason.clone())?;
    let guarded = super::glue::call(env, "guardCallback", (value, name, nothing))
        .map_err(|e| e.reason.clone())?;
    // SAFETY: guardCallback returns a function (an arrow function around `value`).
    let f: Function<Value, ()> = unsafe { guarded.cast() }.map_err(|e| e.reason.clone())?;
    f.build_threadsafe_function()
        .weak::<true>()
        .callee_handled::<false>()
        .build()
        .map_err(|e| e.reason.clone())
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
    let json = json!({ "tools": [], "status": status, "errors": errors, "info": info }).to_string();
    Loaded {
        session,
        json,
        warnings,
        names,
        #[cfg(unix)]
        stdouts: Vec::new(),
        #[cfg(unix)]
        reader: Reader::default(),
    }
}

/// Who reads a loadMcp source's stdio servers once their handshake is done.
#[cfg(unix)]
#[derive(Clone, Copy, Default, PartialEq)]
enum Reader {
    /// The JavaScript thread's event loop (Node only, see [`super::uv_reader::chosen`]).
    #[default]
    EventLoop,
    /// A thread of its own per server (anywhere else).
    Thread,
}

/// The reader this load's stdouts get, or None for the runtime's (the transport's own).
/// The process's default is decided once ([`super::uv_reader::chosen`]);
/// `TOOLNEXUS_STDOUT_READER` (`runtime`, `thread`) overrides it, a debugging aid read per load
/// (tests switch it between loads) on the JavaScript thread, where `process.env` writes it.
#[cfg(unix)]
fn stdout_reader(env: &Env) -> Option<Reader> {
    match std::env::var("TOOLNEXUS_STDOUT_READER").as_deref() {
        Ok("runtime") => None,
        Ok("thread") => Some(Reader::Thread),
        _ if super::uv_reader::chosen(env) => Some(Reader::EventLoop),
        _ => Some(Reader::Thread),
    }
}

/// The stdouts of the session's direct-path servers, handed over to be read on the
/// JavaScript thread (see [`super::uv_reader`]) or a thread of their own.
#[cfg(unix)]
async fn stdouts_to_read_here(session: &Session) -> Vec<crate::connect::stdio::handoff::Taken> {
    let mut stdouts = Vec::new();
    for stdout in session.servers.iter().filter_map(|s| s.stdout()) {
        // The transport answers from its next read; a bound in case it is stuck elsewhere
        // (giving up, the stdout it hands over is read on the runtime).
        let taken = tokio::time::timeout(std::time::Duration::from_secs(1), stdout.take());
        if let Ok(Some(taken)) = taken.await {
            stdouts.push(taken);
        }
    }
    stdouts
}

/// The `McpSource` object: `tools` (a getter that follows list changes), status, errors,
/// info, and `close`.
fn build_source<'env>(env: &'env Env, mut loaded: Loaded) -> Result<Unknown<'env>> {
    #[cfg(unix)]
    for taken in std::mem::take(&mut loaded.stdouts) {
        let owner = Arc::as_ptr(&loaded.session) as usize;
        let taken = match loaded.reader {
            Reader::EventLoop => super::uv_reader::start(env, taken, owner),
            Reader::Thread => Err(taken),
        };
        if let Err(taken) = taken {
            crate::connect::stdio::handoff::read_on_thread(taken);
        }
    }
    let source = convert::parse_json(env, &loaded.json)?;
    let mut source_obj: Object = unsafe { source.cast() }?;
    source_obj.set_named_property("tools", tool_objects(env, &loaded.session, &loaded.names)?)?;
    let generation = {
        let session = loaded.session.clone();
        env.create_function_from_closure::<(), _, _>("generation", move |_| {
            Ok(session.generation() as f64)
        })?
    };
    let rebuild = {
        let session = loaded.session.clone();
        let names = loaded.names.clone();
        env.create_function_from_closure::<(), _, _>("rebuild", move |ctx| {
            let tools = tool_objects(ctx.env, &session, &names)?;
            // SAFETY: handed to JavaScript as this call's return value at once.
            Ok(unsafe { std::mem::transmute::<Unknown<'_>, Unknown<'static>>(tools) })
        })?
    };
    super::glue::call(
        env,
        "followTools",
        (source, generation.to_unknown(), rebuild.to_unknown()),
    )?;
    let session = loaded.session;
    let close = env.create_function_from_closure::<(), _, _>("close", move |ctx| {
        let session = session.clone();
        #[cfg(unix)]
        let owner = Arc::as_ptr(&session) as usize;
        let closing = async move {
            session.close().await;
            Ok(())
        };
        // Its stdout readers on this thread stop once the servers are gone.
        let promise = ctx.env.spawn_future_with_callback(closing, move |_, ()| {
            #[cfg(unix)]
            super::uv_reader::close_owned(owner);
            Ok(())
        })?;
        // SAFETY: the promise is handed to JavaScript as this call's return value at once.
        Ok(unsafe { std::mem::transmute::<PromiseRaw<'_, ()>, PromiseRaw<'static, ()>>(promise) })
    })?;
    source_obj.set_named_property("close", close)?;
    Ok(source)
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
