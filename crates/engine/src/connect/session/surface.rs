//! A live server's surface beside tools: its resources, resource templates and prompts as last
//! listed, and the requests on them (`resources/read`, `prompts/get`, `completion/complete`,
//! resource subscriptions). Every one goes through rmcp's typed service, whatever the road of
//! its listings and calls.

use std::sync::{Arc, Weak};
use std::time::Duration;

use rmcp::model::{
    ArgumentInfo, ClientRequest, CompleteRequest, CompleteRequestParams, GetPromptRequest,
    GetPromptRequestParams, ReadResourceRequest, ReadResourceRequestParams, Reference,
    ServerCapabilities, ServerResult,
};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::failure::NoResult;
use super::service_call::MAX_INPUT_ROUNDS;
use super::{LiveServer, Session};
use crate::connect::relay::Front;
use crate::connect::updates::UpdateListener;
use crate::surface::{Hints, Kind, SurfaceError, SurfaceListing};

/// How one request on a server's surface runs.
pub struct Req<'a> {
    /// Overrides the server's timeout; each progress notification restarts it.
    pub timeout: Option<Duration>,
    /// Aborts the request (the server is told with `notifications/cancelled`).
    pub cancel: &'a CancellationToken,
    /// The session's closing.
    pub closed: &'a CancellationToken,
    /// When the request is forwarded for another client: it gets the server's progress, log
    /// messages and questions while the request runs.
    pub front: Option<Arc<dyn Front>>,
    /// The request's `_meta` (the caller's trace context); a forwarded request's front adds
    /// its own over it.
    pub meta: Option<Map<String, Value>>,
}

impl Req<'_> {
    /// The request's `_meta`, as it goes upstream.
    fn request_meta(&self) -> Option<rmcp::model::RequestMetaObject> {
        super::call_meta(self.meta.clone(), self.front.as_ref()).map(Into::into)
    }
}

/// One listener of one resource of one server; dropped, the listener is removed, and the last
/// one of its URI unsubscribes the server (in the background, bounded by its timeout).
pub struct UpstreamSub {
    pub(super) server: Weak<LiveServer>,
    pub(super) uri: String,
    pub(super) id: u64,
    /// Where the last listener's unsubscribe runs (a handle may be dropped on any thread).
    pub(super) runtime: tokio::runtime::Handle,
}

impl UpstreamSub {}

impl Drop for UpstreamSub {
    fn drop(&mut self) {
        let Some(server) = self.server.upgrade() else {
            return;
        };
        if server.updates.remove(&self.uri, self.id) {
            let uri = std::mem::take(&mut self.uri);
            self.runtime
                .spawn(async move { server.unsubscribe_upstream(&uri).await });
        }
    }
}

impl LiveServer {
    /// Its resources, resource templates and prompts as last listed (items shared, not copied).
    pub fn surface(&self) -> SurfaceListing {
        self.surface
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The caching hints of its last tool listing.
    pub(crate) fn tool_hints(&self) -> Hints {
        self.tool_hints.lock().unwrap_or_else(|e| e.into_inner()).0
    }

    /// Whether its tools' listing has outlived the `ttlMs` the server gave it.
    pub(crate) fn tools_expired(&self) -> bool {
        let (hints, at) = *self.tool_hints.lock().unwrap_or_else(|e| e.into_inner());
        hints
            .ttl_ms
            .is_some_and(|ttl| at.elapsed() >= Duration::from_millis(ttl))
    }

    /// What it declared at the handshake (or discovery).
    pub(crate) fn capabilities(&self) -> Option<&ServerCapabilities> {
        self.caps.as_ref()
    }

    /// `resources/read`: the server's `ReadResourceResult` JSON. A 2026-07-28 server that asks
    /// for input first is answered (by `r.front`, or the session's elicitor) and asked again.
    pub(crate) async fn read_resource(&self, uri: &str, r: Req<'_>) -> Result<Value, SurfaceError> {
        let mut params = ReadResourceRequestParams::new(uri);
        params.meta = r.request_meta();
        for _ in 0..=MAX_INPUT_ROUNDS {
            let request =
                ClientRequest::ReadResourceRequest(ReadResourceRequest::new(params.clone()));
            match self.surface_request(READ, request, &r).await? {
                ServerResult::ReadResourceResult(result) => return to_json(READ, &result),
                ServerResult::InputRequiredResult(asked) => {
                    let (responses, state) = self.answer(READ, asked, &r).await?;
                    params.input_responses = Some(responses);
                    params.request_state = state;
                }
                _ => return Err(unexpected(READ)),
            }
        }
        Err(too_many_rounds(READ))
    }

    /// `prompts/get`: the server's `GetPromptResult` JSON, input-required rounds answered as
    /// [`LiveServer::read_resource`] answers them.
    pub(crate) async fn get_prompt(
        &self,
        name: &str,
        args: Map<String, Value>,
        r: Req<'_>,
    ) -> Result<Value, SurfaceError> {
        let mut params = GetPromptRequestParams::new(name);
        params.meta = r.request_meta();
        if !args.is_empty() {
            params = params.with_arguments(args);
        }
        for _ in 0..=MAX_INPUT_ROUNDS {
            let request = ClientRequest::GetPromptRequest(GetPromptRequest::new(params.clone()));
            match self.surface_request(GET, request, &r).await? {
                ServerResult::GetPromptResult(result) => return to_json(GET, &result),
                ServerResult::InputRequiredResult(asked) => {
                    let (responses, state) = self.answer(GET, asked, &r).await?;
                    params.input_responses = Some(responses);
                    params.request_state = state;
                }
                _ => return Err(unexpected(GET)),
            }
        }
        Err(too_many_rounds(GET))
    }

    /// `completion/complete` with `reference` (`{type: "ref/prompt", name}` or
    /// `{type: "ref/resource", uri}`), `argument` (`{name, value}`) and `context`
    /// (`{arguments}`): the server's `CompleteResult` JSON. A malformed one is -32602.
    pub(crate) async fn complete(
        &self,
        reference: Value,
        argument: Value,
        context: Option<Value>,
        r: Req<'_>,
    ) -> Result<Value, SurfaceError> {
        let reference: Reference = parse("reference", reference)?;
        let argument: ArgumentInfo = parse("argument", argument)?;
        let mut params = CompleteRequestParams::new(reference, argument);
        params.meta = r.request_meta();
        if let Some(context) = context.filter(|c| !c.is_null()) {
            params.context = Some(parse("context", context)?);
        }
        let request = ClientRequest::CompleteRequest(CompleteRequest::new(params));
        match self.surface_request(COMPLETE, request, &r).await? {
            // At most MAX_COMPLETION_VALUES values reach the caller, as the protocol says a
            // server sends (the rest are counted in `total`).
            ServerResult::CompleteResult(mut result) => {
                let info = std::mem::take(&mut result.completion);
                result.completion =
                    crate::surface::completion(info.values, info.total, info.has_more);
                to_json(COMPLETE, &result)
            }
            _ => Err(unexpected(COMPLETE)),
        }
    }

    /// One request of the surface through rmcp's service; failures in words (`what` names it)
    /// or the server's own error.
    pub(super) async fn surface_request(
        &self,
        what: &str,
        request: ClientRequest,
        r: &Req<'_>,
    ) -> Result<ServerResult, SurfaceError> {
        if r.closed.is_cancelled() {
            return Err(SurfaceError::words("not connected (source closed)"));
        }
        let timeout = r.timeout.unwrap_or(self.timeout);
        let answered = self
            .request_once(request, timeout, (r.cancel, r.closed), r.front.clone())
            .await;
        match answered {
            Ok(result) => Ok(result),
            Err(NoResult::Refused(error)) => Err(error),
            Err(why) => Err(SurfaceError::words(
                self.explain_as(what, why, r.closed).await,
            )),
        }
    }

    /// Answers an input-required result's requests: the responses and the state to send back.
    async fn answer(
        &self,
        what: &str,
        asked: rmcp::model::InputRequiredResult,
        r: &Req<'_>,
    ) -> Result<(rmcp::model::InputResponses, Option<String>), SurfaceError> {
        let requests = asked.input_requests.unwrap_or_default();
        let responses = self
            .client
            .answer_input(requests, r.front.as_deref())
            .await
            .map_err(|why| SurfaceError::words(format!("{what} failed: {why}")))?;
        Ok((responses, asked.request_state))
    }

    /// Follows `uri`: `listener` is told of each update until the returned handle is dropped.
    /// The first listener of a URI subscribes the server (`resources/subscribe` in the
    /// handshake era, a `subscriptions/listen` stream in 2026-07-28).
    pub async fn subscribe(
        self: &Arc<Self>,
        uri: &str,
        listener: UpdateListener,
    ) -> Result<UpstreamSub, SurfaceError> {
        self.subscribe_upstream(uri, listener).await
    }

    /// When the listing of `kind` (`None`: its tools) has outlived its TTL, it is re-listed in
    /// the background, as a `list_changed` would have it (coalesced by the session's follower,
    /// so one re-list per kind at a time; none when nothing follows the session's changes).
    pub(crate) fn refresh_if_stale(self: &Arc<Self>, kind: Option<Kind>) {
        let (expired, changed) = match kind {
            None => (self.tools_expired(), &self.client.tools_changed),
            Some(kind) => {
                let expired = self
                    .surface
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get(kind)
                    .expired();
                let changed = match kind {
                    Kind::Prompts => &self.client.prompts_changed,
                    Kind::Resources | Kind::ResourceTemplates | Kind::Skills => {
                        &self.client.resources_changed
                    }
                };
                (expired, changed)
            }
        };
        if expired {
            changed.notify();
        }
    }
}

impl Session {
    /// How many changes of its servers' resources, templates or prompts it has seen.
    pub fn surface_generation(&self) -> u64 {
        self.surface_generation
            .load(std::sync::atomic::Ordering::Acquire)
    }

    /// Its connected server of this name.
    pub fn server(&self, name: &str) -> Option<&Arc<LiveServer>> {
        self.servers.iter().find(|s| s.name == name)
    }
}

const READ: &str = "resources/read";
const GET: &str = "prompts/get";
const COMPLETE: &str = "completion/complete";

/// A result as JSON, without the 2026-07-28 `resultType` discriminator (a complete result is
/// all a caller gets: input-required rounds are answered here).
pub(super) fn to_json<T: serde::Serialize>(what: &str, result: &T) -> Result<Value, SurfaceError> {
    let mut value = serde_json::to_value(result)
        .map_err(|e| SurfaceError::words(format!("{what} failed: its result is not JSON ({e})")))?;
    if let Value::Object(fields) = &mut value {
        fields.remove("resultType");
    }
    Ok(value)
}

fn unexpected(what: &str) -> SurfaceError {
    SurfaceError::words(format!(
        "{what} failed: the server's answer is not a {what} result"
    ))
}

fn too_many_rounds(what: &str) -> SurfaceError {
    SurfaceError::words(format!(
        "{what} failed: the server still asked for input after {MAX_INPUT_ROUNDS} rounds"
    ))
}

/// A request's part from its JSON; a malformed one is invalid params (-32602), named.
fn parse<T: serde::de::DeserializeOwned>(what: &str, value: Value) -> Result<T, SurfaceError> {
    serde_json::from_value(value)
        .map_err(|e| SurfaceError::invalid_params(format!("invalid completion {what}: {e}")))
}

/// One request on a server's surface, as a loadMcp source and a gateway make it.
pub enum SurfaceAsk {
    Read(String),
    /// Loads the skill whose `SKILL.md` is at this URI (SEP-2640), checked.
    LoadSkill(String),
    /// Reads a file (a path within the skill's folder) of the skill at the URI, checked.
    ReadSkill(String, String),
    /// `skills/get` of the URI, as the server answers it (a gateway relays it).
    GetSkill(String),
    /// `resources/directory/read` of the URI, as the server answers it.
    ReadDirectory(String),
    Prompt(String, Map<String, Value>),
    Complete(Value, Value, Option<Value>),
}

impl SurfaceAsk {
    pub async fn run(self, live: &LiveServer, r: Req<'_>) -> Result<Value, SurfaceError> {
        match self {
            SurfaceAsk::Read(uri) => live.read_resource(&uri, r).await,
            SurfaceAsk::LoadSkill(uri) => live.load_skill(&uri, r).await,
            SurfaceAsk::ReadSkill(uri, path) => live.read_skill_file(&uri, &path, r).await,
            SurfaceAsk::GetSkill(uri) => live.get_skill_json(&uri, r).await,
            SurfaceAsk::ReadDirectory(uri) => live.read_directory_json(&uri, r).await,
            SurfaceAsk::Prompt(name, args) => live.get_prompt(&name, args, r).await,
            SurfaceAsk::Complete(reference, argument, context) => {
                live.complete(reference, argument, context, r).await
            }
        }
    }
}
