//! The upstream servers a gateway relays ([`Upstream`]), and the live servers of a loadMcp
//! source as such ([`Live`]): their last listings, and the requests on them through
//! `connect::session`, with the calling client as the front (its progress, logs and
//! questions) and cancelled when the served request is.

use std::future::Future;
use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use rmcp::ErrorData;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::connect::relay::Front;
use crate::connect::session::surface::{Req, SurfaceAsk};
use crate::connect::session::{LiveServer, Session};
use crate::connect::updates::UpdateListener;
use crate::serve::context::CallContext;
use crate::surface::Hints;
use crate::surface::SurfaceError;
use crate::telemetry::{Named, Op};

/// Which listing: the tools, or one of the three kinds of the surface.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ListKind {
    Tools = 0,
    Resources = 1,
    Templates = 2,
    Prompts = 3,
}

impl ListKind {
    /// The surface kind it is (None: the tools).
    pub(crate) fn surface_kind(self) -> Option<crate::surface::Kind> {
        use crate::surface::Kind;
        match self {
            Self::Tools => None,
            Self::Resources => Some(Kind::Resources),
            Self::Templates => Some(Kind::ResourceTemplates),
            Self::Prompts => Some(Kind::Prompts),
        }
    }
}

/// What an upstream server lists now, and what it declares.
#[derive(Clone, Default)]
pub struct UpstreamListing {
    pub(crate) resources: Vec<Map<String, Value>>,
    pub(crate) templates: Vec<Map<String, Value>>,
    pub(crate) prompts: Vec<Map<String, Value>>,
    pub(crate) declares_resources: bool,
    pub(crate) declares_prompts: bool,
    pub(crate) declares_completions: bool,
    /// The skills extension (SEP-2640): its skills' URIs are re-rooted under its name.
    pub(crate) declares_skills: bool,
}

/// An upstream server a gateway relays (a live server of a loadMcp source).
pub trait Upstream: Send + Sync + 'static {
    fn name(&self) -> &str;
    /// Which server this is: two upstreams of the same running server are the same one (a
    /// restarted server is another).
    fn identity(&self) -> usize {
        self as *const Self as *const () as usize
    }
    fn listing(&self) -> UpstreamListing;
    /// The caching hints of its `kind` listing now.
    fn hints(&self, kind: ListKind) -> Hints;
    /// Whether its `kind` listing outlived its `ttlMs`.
    fn expired(&self, kind: ListKind) -> bool;
    /// Starts one re-list of `kind` when it expired (none when one is in flight).
    fn refresh_if_stale(&self, kind: ListKind);
    /// `resources/read` (its ReadResourceResult JSON); progress, logs and input requests of
    /// the upstream go to the client of `ctx`.
    fn read(&self, uri: String, ctx: CallContext) -> BoxFuture<'static, Result<Value, ErrorData>>;
    /// `prompts/get` of its own prompt name (its GetPromptResult JSON).
    fn get_prompt(
        &self,
        name: String,
        arguments: Map<String, Value>,
        ctx: CallContext,
    ) -> BoxFuture<'static, Result<Value, ErrorData>>;
    /// `completion/complete` with its own names (its CompleteResult JSON).
    fn complete(
        &self,
        reference: Value,
        argument: Value,
        context: Option<Value>,
        ctx: CallContext,
    ) -> BoxFuture<'static, Result<Value, ErrorData>>;
    /// Whether it offers skills (it declared the skills extension, SEP-2640).
    fn offers_skills(&self) -> bool {
        false
    }
    /// Its skills as last listed (none when it does not offer the extension).
    fn skills(&self) -> Vec<Map<String, Value>> {
        Vec::new()
    }
    /// `skills/get` of its own `uri` (its GetSkillResult JSON).
    fn get_skill(
        &self,
        uri: String,
        ctx: CallContext,
    ) -> BoxFuture<'static, Result<Value, ErrorData>> {
        let _ = (uri, ctx);
        async {
            Err(ErrorData::method_not_found::<
                rmcp::model::GetSkillRequestMethod,
            >())
        }
        .boxed()
    }
    /// `resources/directory/read` of its own `uri` (its result JSON).
    fn read_directory(
        &self,
        uri: String,
        ctx: CallContext,
    ) -> BoxFuture<'static, Result<Value, ErrorData>> {
        let _ = (uri, ctx);
        async {
            Err(ErrorData::method_not_found::<
                rmcp::model::ReadResourceDirectoryRequestMethod,
            >())
        }
        .boxed()
    }
    /// Follows `uri`'s updates until the returned guard is dropped.
    fn subscribe(
        &self,
        uri: String,
        listener: UpdateListener,
    ) -> BoxFuture<'static, Result<Box<dyn Send + Sync>, ErrorData>>;
}

/// One live server of a session.
pub struct Live {
    server: Arc<LiveServer>,
    session: Arc<Session>,
}

impl Live {
    /// Every connected server of `session`, in config order.
    pub fn all(session: &Arc<Session>) -> Vec<Arc<dyn Upstream>> {
        session
            .servers
            .iter()
            .map(|server| {
                Arc::new(Live {
                    server: server.clone(),
                    session: session.clone(),
                }) as Arc<dyn Upstream>
            })
            .collect()
    }
}

/// Runs an upstream request with the client of `ctx` as its front, on a task of its own that
/// is cancelled (the upstream told) when the served request is dropped; then waits, bounded,
/// for what the upstream reported meanwhile to reach the client before the answer does.
fn relay<F, Fut>(
    ctx: CallContext,
    op: Option<Op>,
    request: F,
) -> BoxFuture<'static, Result<Value, ErrorData>>
where
    F: FnOnce(Arc<dyn Front>, CancellationToken) -> Fut + Send + 'static,
    Fut: Future<Output = Result<Value, SurfaceError>> + Send + 'static,
{
    let (front, relayed) = ctx.relay(op.as_ref().and_then(Op::meta));
    async move {
        let cancel = CancellationToken::new();
        let _cancel_on_drop = cancel.clone().drop_guard();
        let result = match tokio::spawn(request(front, cancel)).await {
            Ok(result) => {
                if let Some(op) = op {
                    let code = result.as_ref().err().map(|e| match e.code {
                        Some(code) => code.to_string(),
                        None => crate::connect::session::OTHER_ERROR.to_string(),
                    });
                    op.end(code.as_deref());
                }
                result.map_err(|e| e.to_error_data())
            }
            Err(_) => Err(ErrorData::internal_error(
                "the upstream request failed",
                None,
            )),
        };
        let _ = tokio::time::timeout(crate::bounds::SERVE_RELAY_FLUSH, relayed).await;
        result
    }
    .boxed()
}

impl Live {
    /// One request of the front client's on this server, relayed (see [`relay`]).
    fn ask(
        &self,
        ctx: CallContext,
        ask: SurfaceAsk,
    ) -> BoxFuture<'static, Result<Value, ErrorData>> {
        let (server, closed) = (self.server.clone(), self.session.closed_token().clone());
        // The upstream request is a CLIENT span, a child of the served request's SERVER span.
        let (method, named) = match &ask {
            SurfaceAsk::Read(uri) | SurfaceAsk::LoadSkill(uri) | SurfaceAsk::ReadSkill(uri, _) => {
                ("resources/read", Named::Resource(uri))
            }
            SurfaceAsk::GetSkill(uri) => ("skills/get", Named::Resource(uri)),
            SurfaceAsk::ReadDirectory(uri) => ("resources/directory/read", Named::Resource(uri)),
            SurfaceAsk::Prompt(name, _) => ("prompts/get", Named::Prompt(name)),
            SurfaceAsk::Complete(..) => ("completion/complete", Named::Nothing),
        };
        let op = Op::client(
            method,
            named,
            ctx.span_cx().as_ref(),
            server.peer_attributes().telemetry(),
        );
        relay(ctx, op, move |front, cancel| async move {
            let req = Req {
                timeout: None,
                cancel: &cancel,
                closed: &closed,
                front: Some(front),
                meta: None,
            };
            ask.run(&server, req).await
        })
    }
}

impl Upstream for Live {
    fn name(&self) -> &str {
        &self.server.name
    }

    fn identity(&self) -> usize {
        Arc::as_ptr(&self.server) as usize
    }

    fn listing(&self) -> UpstreamListing {
        let listing = self.server.surface();
        let caps = self.server.capabilities();
        UpstreamListing {
            resources: listing.resources.items.to_vec(),
            templates: listing.templates.items.to_vec(),
            prompts: listing.prompts.items.to_vec(),
            declares_resources: caps.is_some_and(|c| c.resources.is_some()),
            declares_prompts: caps.is_some_and(|c| c.prompts.is_some()),
            declares_completions: caps.is_some_and(|c| c.completions.is_some()),
            declares_skills: self.offers_skills(),
        }
    }

    fn hints(&self, kind: ListKind) -> Hints {
        match kind.surface_kind() {
            None => self.server.tool_hints(),
            Some(kind) => self.server.surface().get(kind).hints,
        }
    }

    fn expired(&self, kind: ListKind) -> bool {
        match kind.surface_kind() {
            None => self.server.tools_expired(),
            Some(kind) => self.server.surface().get(kind).expired(),
        }
    }

    fn refresh_if_stale(&self, kind: ListKind) {
        self.server.refresh_if_stale(kind.surface_kind());
    }

    fn read(&self, uri: String, ctx: CallContext) -> BoxFuture<'static, Result<Value, ErrorData>> {
        self.ask(ctx, SurfaceAsk::Read(uri))
    }

    fn get_prompt(
        &self,
        name: String,
        arguments: Map<String, Value>,
        ctx: CallContext,
    ) -> BoxFuture<'static, Result<Value, ErrorData>> {
        self.ask(ctx, SurfaceAsk::Prompt(name, arguments))
    }

    fn complete(
        &self,
        reference: Value,
        argument: Value,
        context: Option<Value>,
        ctx: CallContext,
    ) -> BoxFuture<'static, Result<Value, ErrorData>> {
        self.ask(ctx, SurfaceAsk::Complete(reference, argument, context))
    }

    fn offers_skills(&self) -> bool {
        self.server
            .capabilities()
            .is_some_and(|caps| caps.supports_skills())
    }

    fn skills(&self) -> Vec<Map<String, Value>> {
        let listing = self.server.surface();
        listing.get(crate::surface::Kind::Skills).items.to_vec()
    }

    fn get_skill(
        &self,
        uri: String,
        ctx: CallContext,
    ) -> BoxFuture<'static, Result<Value, ErrorData>> {
        self.ask(ctx, SurfaceAsk::GetSkill(uri))
    }

    fn read_directory(
        &self,
        uri: String,
        ctx: CallContext,
    ) -> BoxFuture<'static, Result<Value, ErrorData>> {
        self.ask(ctx, SurfaceAsk::ReadDirectory(uri))
    }

    fn subscribe(
        &self,
        uri: String,
        listener: UpdateListener,
    ) -> BoxFuture<'static, Result<Box<dyn Send + Sync>, ErrorData>> {
        let server = self.server.clone();
        async move {
            match server.subscribe(&uri, listener).await {
                Ok(held) => Ok(Box::new(held) as Box<dyn Send + Sync>),
                Err(e) => Err(e.to_error_data()),
            }
        }
        .boxed()
    }
}
