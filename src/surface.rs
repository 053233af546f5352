//! A loadMcp source's surface beside tools: its servers' resources, resource templates and
//! prompts as last listed, and the requests on them (`resources/read`, `prompts/get`,
//! `completion/complete`, resource subscriptions). lib/source.js builds the `McpSource`'s items
//! and methods around these; lib/options.js has checked what the app passed.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use napi_derive::napi;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::abort::{self, Watch};
use super::callback::{JsCallback, js_callback};
use super::convert::{self, ErrorKind, Settle};
use super::load::NativeSource;
use super::options::SurfaceRequestOptions;
use engine::connect::session::surface::{Req, SurfaceAsk as Ask, UpstreamSub};
use engine::connect::session::{LiveServer, Session};
use engine::surface::{Kind, SurfaceError};

/// A loadMcp source's session as a gateway holds it (`NativeSource.upstream()`): a served
/// toolkit relays its servers' resources, prompts and completions through it, in Rust.
pub type SessionHandle = External<Arc<Session>>;

/// A rejection carrying the server's JSON-RPC error: `message`, and `code`/`data` when it sent
/// them.
fn request_error(env: &Env, e: &SurfaceError) -> Error {
    let build = || -> Result<Error> {
        let ctor: Function<&str, Unknown> = env.get_global()?.get_named_property("Error")?;
        let value = ctor.new_instance(e.message.as_str())?;
        let mut obj = Object::from_unknown(value)?;
        if let Some(code) = e.code {
            obj.set_named_property("code", code)?;
        }
        if let Some(data) = &e.data {
            obj.set_named_property("data", convert::parse_json(env, &data.to_string())?)?;
        }
        Ok(Error::from_unknown_without_coercion(value))
    };
    build().unwrap_or_else(|_| Error::from_reason(e.message.clone()))
}

/// `toolnexus: no connected server "x" (servers: a, b)`.
fn no_server(session: &Session, server: &str) -> String {
    let names: Vec<&str> = session.servers.iter().map(|s| s.name.as_str()).collect();
    let names = if names.is_empty() {
        "none is connected".to_string()
    } else {
        format!("servers: {}", names.join(", "))
    };
    format!(
        "toolnexus: no connected server {:?} ({names})",
        engine::config::quote::shorten(server, engine::config::quote::QUOTE_CHARS)
    )
}

impl NativeSource {
    fn live(&self, server: &str) -> std::result::Result<Arc<LiveServer>, String> {
        self.session
            .server(server)
            .cloned()
            .ok_or_else(|| no_server(&self.session, server))
    }

    /// Runs `ask` on `server` under `opts`: resolves its result's JSON, rejects with the
    /// server's error (or our words), or with `signal.reason` at once when aborted (the server
    /// is still told, by the request's own cancellation).
    fn ask<'env>(
        &self,
        env: &'env Env,
        server: &str,
        ask: Ask,
        opts: Option<SurfaceRequestOptions>,
    ) -> Result<PromiseRaw<'env, Unknown<'env>>> {
        let (timeout_ms, signal, meta) =
            opts.map_or((None, None, None), |o| (o.timeout_ms, o.signal, o.meta));
        let meta = meta.map(super::telemetry::meta_object);
        let live = match self.live(server) {
            Ok(live) => live,
            Err(m) => return super::reject_now(env, Settle::Fail(ErrorKind::TypeError, m)),
        };
        let watch = match abort::watch(env, signal) {
            Ok(Watch::Watching(watch)) => watch,
            Ok(Watch::AlreadyAborted(reason)) => {
                return super::reject_now(env, Settle::Reject(reason));
            }
            Err(e) => return super::reject_now(env, Settle::Reject(e)),
        };
        let cancel = watch.token().clone();
        let closed = self.session.closed_token().clone();
        let timeout = timeout_ms.map(|ms| Duration::from_millis(ms.into()));
        let token = cancel.clone();
        let work = until_aborted(token, async move {
            let r = Req {
                timeout,
                cancel: &cancel,
                closed: &closed,
                front: None,
                meta,
            };
            ask.run(&live, r).await
        });
        super::run_watched(env, watch, work, |env, result| match result {
            Ok(value) => convert::parse_json(env, &value.to_string()),
            Err(e) => Err(request_error(env, &e)),
        })
    }
}

/// Runs `request` in a task of its own and settles with its outcome, or as aborted as soon as
/// `token` fires: the request goes on to its end (telling the server, by its own cancellation)
/// and what it ends with is dropped. Which of the two wins a race does not matter: an abort the
/// caller's signal made rejects with its reason either way (see `run_watched`).
async fn until_aborted<T: Send + 'static>(
    token: CancellationToken,
    request: impl std::future::Future<Output = T> + Send + 'static,
) -> Settle<T> {
    let request = tokio::spawn(request);
    tokio::select! {
        done = request => match done {
            Ok(result) => Settle::Value(result),
            Err(e) => Settle::Fail(ErrorKind::Error, join_failure(e)),
        },
        () = token.cancelled() => Settle::Aborted,
    }
}

/// The words for a request's task that did not end with its outcome.
fn join_failure(e: tokio::task::JoinError) -> String {
    match e.try_into_panic() {
        Ok(panic) => convert::internal_error(&*panic),
        Err(_) => "toolnexus: the request was cancelled".to_string(),
    }
}

/// One subscription of a loadMcp source to a resource (internal: lib/source.js hands the app
/// its `unsubscribe` as the function `subscribe` resolves).
#[napi]
pub struct NativeSubscription {
    sub: Mutex<Option<UpstreamSub>>,
}

#[napi]
impl NativeSubscription {
    /// Stops the updates; the server is unsubscribed when this was its URI's last listener.
    /// Idempotent.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn unsubscribe<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        let sub = self.sub.lock().unwrap_or_else(|e| e.into_inner()).take();
        // Dropped on the runtime: the last listener's unsubscribe is spawned there.
        env.spawn_future(async move {
            drop(sub);
            Ok(())
        })
    }
}

#[napi]
impl NativeSource {
    /// The session, for a gateway serving this source's resources and prompts.
    #[napi(ts_return_type = "SessionHandle")]
    pub fn upstream(&self) -> SessionHandle {
        External::new(self.session.clone())
    }

    /// Moves on each time a server's resources, templates or prompts were re-listed and changed.
    #[napi]
    pub fn surface_generation(&self) -> f64 {
        self.session.surface_generation() as f64
    }

    /// Every connected server's resources, resource templates and prompts as last listed, in
    /// config order, each item with `server` added.
    #[napi(
        ts_return_type = "{ resources: Array<ResourceInfo & { server: string }>; resourceTemplates: Array<ResourceTemplateInfo & { server: string }>; prompts: Array<PromptInfo & { server: string }>; skills: Array<SkillInfo & { server: string }> }"
    )]
    pub fn surface<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        convert::contain(|| {
            let mut out = Map::new();
            for kind in Kind::ALL {
                let mut items = Vec::new();
                for live in &self.session.servers {
                    let listing = live.surface();
                    for item in listing.get(kind).items.iter() {
                        let mut item = match kind {
                            Kind::Skills => engine::skills::described(item),
                            _ => Value::Object(item.clone()),
                        };
                        item["server"] = Value::String(live.name.clone());
                        items.push(item);
                    }
                }
                out.insert(kind.key().into(), Value::Array(items));
            }
            convert::parse_json(env, &Value::Object(out).to_string())
        })
    }

    /// What telemetry says of `server` (internal: lib/telemetry.js): `transport` (`pipe` or
    /// `tcp`), a remote server's `address` and `port`, and the `protocolVersion` it speaks;
    /// null for a server the source does not have.
    #[napi(
        ts_return_type = "{ transport: string; address?: string; port?: number; protocolVersion?: string } | null"
    )]
    pub fn server_peer(&self, server: String) -> Result<Value> {
        match self.session.server(&server) {
            Some(live) => serde_json::to_value(live.peer_attributes())
                .map_err(|e| Error::from_reason(e.to_string())),
            None => Ok(Value::Null),
        }
    }

    /// `resources/read` of `uri` on `server`: its `ReadResourceResult`.
    #[napi(
        ts_args_type = "server: string, uri: string, opts?: SurfaceRequestOptions",
        ts_return_type = "Promise<ReadResourceResult>"
    )]
    pub fn read_resource<'env>(
        &self,
        env: &'env Env,
        server: String,
        uri: String,
        opts: Option<SurfaceRequestOptions>,
    ) -> Result<PromiseRaw<'env, Unknown<'env>>> {
        convert::contain(|| self.ask(env, &server, Ask::Read(uri), opts))
    }

    /// Loads the skill whose `SKILL.md` is `uri` on `server` (SEP-2640): its `SKILL.md` read
    /// and checked against the skill's entry (listed, else `skills/get`).
    #[napi(
        ts_args_type = "server: string, uri: string, opts?: SurfaceRequestOptions",
        ts_return_type = "Promise<Omit<LoadedSkill, \"read\">>"
    )]
    pub fn load_skill<'env>(
        &self,
        env: &'env Env,
        server: String,
        uri: String,
        opts: Option<SurfaceRequestOptions>,
    ) -> Result<PromiseRaw<'env, Unknown<'env>>> {
        convert::contain(|| self.ask(env, &server, Ask::LoadSkill(uri), opts))
    }

    /// Reads the file at `path` of the skill whose `SKILL.md` is `uri` on `server`, checked
    /// against the skill's entry.
    #[napi(
        ts_args_type = "server: string, uri: string, path: string, opts?: SurfaceRequestOptions",
        ts_return_type = "Promise<SkillFileContents>"
    )]
    pub fn read_skill_file<'env>(
        &self,
        env: &'env Env,
        server: String,
        uri: String,
        path: String,
        opts: Option<SurfaceRequestOptions>,
    ) -> Result<PromiseRaw<'env, Unknown<'env>>> {
        convert::contain(|| self.ask(env, &server, Ask::ReadSkill(uri, path), opts))
    }

    /// `prompts/get` of `name` on `server` with `args` (strings, checked by lib/options.js): its
    /// `GetPromptResult`.
    #[napi(
        ts_args_type = "server: string, name: string, args?: Record<string, string>, opts?: SurfaceRequestOptions",
        ts_return_type = "Promise<GetPromptResult>"
    )]
    pub fn get_prompt<'env>(
        &self,
        env: &'env Env,
        server: String,
        name: String,
        args: Option<Unknown>,
        opts: Option<SurfaceRequestOptions>,
    ) -> Result<PromiseRaw<'env, Unknown<'env>>> {
        convert::contain(|| {
            let args = match args {
                Some(args) => convert::json_value(env, args, "", "args")?,
                None => Value::Null,
            };
            let args = match args {
                Value::Object(args) => args,
                _ => Map::new(),
            };
            self.ask(env, &server, Ask::Prompt(name, args), opts)
        })
    }

    /// `completion/complete` on `server`: its `CompleteResult` (`{ completion: { values, … } }`).
    #[napi(
        ts_args_type = "server: string, reference: CompletionRef, argument: { name: string; value: string }, context?: { arguments?: Record<string, string> } | null, opts?: SurfaceRequestOptions",
        ts_return_type = "Promise<{ completion: Completion }>"
    )]
    pub fn complete<'env>(
        &self,
        env: &'env Env,
        server: String,
        reference: Unknown,
        argument: Unknown,
        context: Option<Unknown>,
        opts: Option<SurfaceRequestOptions>,
    ) -> Result<PromiseRaw<'env, Unknown<'env>>> {
        convert::contain(|| {
            let reference = convert::json_value(env, reference, "", "ref")?;
            let argument = convert::json_value(env, argument, "", "argument")?;
            let context = match context {
                Some(context) => match convert::json_value(env, context, "", "context")? {
                    Value::Null => None,
                    context => Some(context),
                },
                None => None,
            };
            self.ask(
                env,
                &server,
                Ask::Complete(reference, argument, context),
                opts,
            )
        })
    }

    /// Follows `uri` on `server`: `onUpdated(uri)` is called for each
    /// `notifications/resources/updated` until the subscription is unsubscribed or the source
    /// closed. The callback never keeps Node alive; lib/source.js has guarded it. An abort
    /// before it resolves rejects with `signal.reason` and leaves nothing subscribed.
    #[napi(
        ts_args_type = "server: string, uri: string, onUpdated: (uri: string) => void, opts?: SurfaceRequestOptions",
        ts_return_type = "Promise<NativeSubscription>"
    )]
    pub fn subscribe<'env>(
        &self,
        env: &'env Env,
        server: String,
        uri: String,
        on_updated: Function<String, ()>,
        opts: Option<SurfaceRequestOptions>,
    ) -> Result<PromiseRaw<'env, NativeSubscription>> {
        convert::contain(|| {
            let (timeout_ms, signal) = opts.map_or((None, None), |o| (o.timeout_ms, o.signal));
            let watch = match abort::watch(env, signal)? {
                Watch::Watching(watch) => watch,
                Watch::AlreadyAborted(reason) => {
                    return env.spawn_future_with_callback(async { Ok(()) }, move |_, ()| {
                        Err::<NativeSubscription, _>(reason)
                    });
                }
            };
            let live = self.live(&server);
            let tsfn: JsCallback<String> = js_callback(on_updated)?;
            let listener = Arc::new(move |uri: &str| {
                tsfn.call(uri.to_string(), ThreadsafeFunctionCallMode::NonBlocking);
            });
            let closed: CancellationToken = self.session.closed_token().clone();
            let timeout = timeout_ms.map(|ms| Duration::from_millis(ms.into()));
            let work = until_aborted(watch.token().clone(), async move {
                let live = live.map_err(|m| (ErrorKind::TypeError, SurfaceError::words(m)))?;
                if closed.is_cancelled() {
                    let e = SurfaceError::words("not connected (source closed)");
                    return Err((ErrorKind::Error, e));
                }
                // Subscribing is not cancel-safe (it holds the server's table): a timeout stops
                // waiting for it, and the subscription it still makes is dropped, unsubscribing.
                let subscribing = tokio::spawn(async move { live.subscribe(&uri, listener).await });
                let subscribed = match timeout {
                    None => subscribing.await,
                    Some(timeout) => match tokio::time::timeout(timeout, subscribing).await {
                        Ok(done) => done,
                        Err(_) => Ok(Err(SurfaceError::words(format!(
                            "resources/subscribe timed out after {} ms",
                            timeout.as_millis()
                        )))),
                    },
                };
                match subscribed {
                    Ok(subscribed) => subscribed.map_err(|e| (ErrorKind::Error, e)),
                    Err(e) => Err((ErrorKind::Error, SurfaceError::words(join_failure(e)))),
                }
            });
            // A subscription the abort overtook is dropped, which unsubscribes it.
            super::run_watched(env, watch, work, |env, subscribed| match subscribed {
                Ok(sub) => Ok(NativeSubscription {
                    sub: Mutex::new(Some(sub)),
                }),
                Err((ErrorKind::TypeError, e)) => {
                    Err(convert::js_error(env, ErrorKind::TypeError, &e.message))
                }
                Err((_, e)) => Err(request_error(env, &e)),
            })
        })
    }
}

/// A URI template expanded with `vars` (RFC 6570, levels 1–3), as `template.read(vars)` asks.
#[napi(ts_args_type = "template: string, vars: Record<string, unknown>")]
pub fn expand_uri_template(env: &Env, template: String, vars: Unknown) -> Result<String> {
    convert::contain(|| {
        let vars = match convert::json_value(env, vars, "", "vars")? {
            Value::Object(vars) => vars,
            _ => Map::new(),
        };
        Ok(engine::surface::uri_template::expand(&template, &vars))
    })
}
