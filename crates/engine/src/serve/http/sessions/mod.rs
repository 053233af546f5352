//! The one session manager of a served HTTP endpoint.
//!
//! [`Sessions`] is rmcp's `SessionManager` for the endpoint: rmcp's `LocalSessionManager` keeps
//! each session's worker (its service loop, streams and event ids), and [`table::Ledger`] is
//! the one table of what this crate knows of each session (its last activity, its requests in
//! flight, its link to the direct road). Each request is answered on one of two roads, chosen in
//! one place ([`Road::for_request`]): rmcp's session worker, or [`direct`], which answers a plain
//! handshake-era `tools/call` on the request's own task as JSON. Both go through the same
//! handler, the same checks before it and the same bookkeeping around it.
//!
//! When a session ends is decided here too, not by rmcp's worker (whose idle timer is off: it
//! sees none of the calls answered directly): the ledger counts every request of every session,
//! a session idle past the timeout is answered 404 and ended, and one opened beyond the cap
//! ends the idlest.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::{Stream, StreamExt};
use rmcp::model::ClientRequest;
use rmcp::model::{ClientJsonRpcMessage, GetExtensions, JsonRpcRequest, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, SessionConfig,
};
use rmcp::transport::streamable_http_server::session::{
    RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};
use tokio_util::sync::CancellationToken;

use super::portable::{Answer, Portable};
use crate::serve::ToolServer;
use crate::serve::caller::Caller;
use crate::serve::tasks::fleet;
use direct::{JsonAnswer, SessionTag};
use link::Link;
use table::{Busy, Ledger};

pub(crate) mod direct;
mod limits;
mod link;
mod table;

pub use limits::SessionLimits;
use limits::SweepState;

/// How one request of a session is answered.
enum Road {
    /// rmcp's session worker, on an SSE stream.
    Worker(ClientJsonRpcMessage),
    /// On the request's own task, as JSON, through the session's link.
    Direct(JsonRpcRequest<ClientRequest>, Arc<Link>, JsonAnswer),
}

impl Road {
    /// The one place the road is chosen: the direct one for a call it can answer (see
    /// [`direct::answerable`]) of a session whose handshake is done, rmcp's for the rest.
    ///
    /// A portable session (`portable`) whose client can be asked for input takes rmcp's road
    /// for every call: what a call asks rides the call's own stream, which reaches the client
    /// whichever replica answers it (the GET stream may be held by another).
    fn for_request(message: ClientJsonRpcMessage, busy: Option<&Busy>, portable: bool) -> Self {
        let link = busy
            .and_then(Busy::link)
            .filter(|link| link.open_for_calls())
            .filter(|link| !(portable && link.client_can_be_asked()));
        match (link, direct::answerable(&message), message) {
            (Some(link), Some(answer), ClientJsonRpcMessage::Request(request)) => {
                Road::Direct(request, link.clone(), answer)
            }
            (_, _, message) => Road::Worker(message),
        }
    }
}

/// The sessions of one endpoint (see the module's documentation).
pub(crate) struct Sessions {
    worker: LocalSessionManager,
    server: ToolServer,
    ledger: Arc<Ledger>,
    /// Sessions ended (expired or evicted) since the last sweep.
    ended: AtomicUsize,
    /// Serving with a state key: sessions any replica can carry on.
    portable: Option<Arc<Portable>>,
    /// The store replicas share, when they share one: a session's stream here hears of its
    /// tasks running elsewhere.
    store: Option<Arc<dyn crate::serve::store::StateStore>>,
}

impl Sessions {
    pub(crate) fn new(server: ToolServer, limits: SessionLimits) -> Self {
        let mut worker = LocalSessionManager::default();
        let mut config = SessionConfig::default();
        // The ledger decides when a session is idle: rmcp's worker sees none of the calls
        // answered on the direct road.
        config.keep_alive = None;
        worker.session_config = config;
        Self {
            worker,
            server,
            ledger: Arc::new(Ledger::new(limits)),
            ended: AtomicUsize::new(0),
            portable: None,
            store: None,
        }
    }

    /// Its sessions' tasks in the store replicas share (see `serve::tasks::fleet`).
    pub(crate) fn with_store(mut self, store: Arc<dyn crate::serve::store::StateStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// `stream`, a session's own stream (its GET), with the status notifications of the
    /// session's tasks that run on other replicas added (see [`fleet::news`]); it ends with
    /// `stream`.
    fn with_task_news<S>(
        &self,
        id: &SessionId,
        stream: S,
    ) -> impl Stream<Item = ServerSseMessage> + Send + Sync + use<S>
    where
        S: Stream<Item = ServerSseMessage> + Send + Sync + 'static,
    {
        let news = self
            .store
            .clone()
            .filter(|_| self.server.serves_tasks())
            .map(|store| {
                let scope = fleet::shared_scope(Some(id), self.ledger.owner(id).as_deref());
                let server = self.server.clone();
                fleet::news(store, scope, move |task| server.runs_task(task)).map(|task| {
                    Some(ServerSseMessage::from_message(
                        crate::serve::task_legacy::status_notification(&task),
                    ))
                })
            });
        let own = stream
            .map(Some)
            .chain(futures::stream::once(async { None }));
        match news {
            Some(news) => futures::stream::select(own, news)
                .take_while(|sse| futures::future::ready(sse.is_some()))
                .filter_map(futures::future::ready)
                .left_stream(),
            None => own.filter_map(futures::future::ready).right_stream(),
        }
    }

    /// Its sessions made portable (see `http::portable`).
    pub(crate) fn with_portable(mut self, portable: Arc<Portable>) -> Self {
        self.portable = Some(portable);
        self
    }

    /// `stream` with the ids of the server's requests on it sealed, when portable.
    fn sealing<S>(
        &self,
        id: &SessionId,
        stream: S,
    ) -> impl Stream<Item = ServerSseMessage> + Send + Sync + use<S>
    where
        S: Stream<Item = ServerSseMessage> + Send + Sync + 'static,
    {
        let portable = self.portable.clone();
        let id = id.clone();
        stream.map(move |mut sse| {
            if let Some(portable) = &portable {
                sse.message = sse.message.map(|m| portable.seal_request(&id, m));
            }
            sse
        })
    }

    /// The handler of a new session, which links itself into the table once the client's
    /// handshake is done.
    pub(crate) fn handler(&self) -> ToolServer {
        let ledger = self.ledger.clone();
        self.server
            .for_session_with(|session| Arc::new(direct::SessionLinker::new(ledger, session)))
    }

    /// Who opened the session `id` (a principal's key), when it was opened with a token.
    pub(crate) fn owner(&self, id: &str) -> Option<Arc<str>> {
        self.ledger.owner(id)
    }

    /// Ends expired sessions until `stopping` is cancelled.
    pub(crate) async fn sweep_until(self: Arc<Self>, stopping: CancellationToken) {
        let period = self.ledger.limits().sweep_period();
        let mut state = SweepState::default();
        loop {
            tokio::select! {
                _ = stopping.cancelled() => return,
                _ = tokio::time::sleep(period) => self.sweep(&mut state).await,
            }
        }
    }

    /// Ends the sessions idle past the timeout. After many ended (here or by the cap), forgets
    /// their peers and hands the freed memory back to the system: the sessions' tasks have
    /// finished by the next sweep, so that sweep does it (at most once a second: a trim walks
    /// every arena, and a flood of sessions would otherwise trim at every sweep).
    async fn sweep(&self, state: &mut SweepState) {
        if state.trim_due() {
            self.server.forget_closed_peers();
            super::limits::release_memory();
        }
        for id in self.ledger.take_all_expired() {
            self.end(&id).await;
        }
        // Sessions ended by DELETE, expiry or eviction release their upstream subscriptions.
        self.server.forget_closed_followers();
        state.ended(self.ended.swap(0, Ordering::Relaxed));
    }

    /// Ends a session the ledger already forgot (expired or evicted), as DELETE would.
    async fn end(&self, id: &SessionId) {
        let _ = self.worker.close_session(id).await;
        self.ended.fetch_add(1, Ordering::Relaxed);
    }
}

impl SessionManager for Sessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, transport) = self.worker.create_session().await?;
        for idlest in self.ledger.open(&id) {
            self.end(&idlest).await;
        }
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        mut message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        if let ClientJsonRpcMessage::Request(request) = &mut message {
            let extensions = request.request.extensions_mut();
            // The principal the HTTP gate let this `initialize` in as owns the session.
            let caller = extensions
                .get::<http::request::Parts>()
                .and_then(|parts| parts.extensions.get::<Arc<Caller>>());
            if let Some(caller) = caller {
                self.ledger.own(id, &caller.principal.key());
            }
            extensions.insert(SessionTag(id.clone()));
        }
        let _busy = self.ledger.begin(id);
        let answer = self.worker.initialize_session(id, message).await?;
        // A session's front speaks the handshake era's tasks (see `serve::task_legacy`).
        Ok(self.server.announce_tasks(answer))
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        if self.ledger.take_expired(id) {
            self.end(id).await;
            return Ok(false);
        }
        self.worker.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.ledger.close(id);
        self.worker.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let busy = self.ledger.begin(id);
        match Road::for_request(message, busy.as_ref(), self.portable.is_some()) {
            Road::Direct(request, link, answer) => {
                direct::answer(&self.server, request, link, answer).await;
                // With no answer left, what rmcp gives then: a stream that ends without one.
                Ok(futures::stream::empty().left_stream())
            }
            Road::Worker(message) => {
                let (listing, calling) = match &message {
                    ClientJsonRpcMessage::Request(r) => (
                        matches!(r.request, ClientRequest::ListToolsRequest(_)),
                        matches!(r.request, ClientRequest::CallToolRequest(_)),
                    ),
                    _ => (false, false),
                };
                let stream = self.worker.create_stream(id, message).await?;
                // rmcp's typed answer to tools/list has no `execution`: put back (serve::wire);
                // a created handshake-era task goes out as `{task}` (serve::task_legacy).
                let server = listing.then(|| self.server.clone());
                let stream = stream.map(move |mut sse| {
                    if let Some(server) = &server {
                        sse.message = sse.message.map(|m| server.message_with_executions(m));
                    }
                    if calling {
                        sse.message = sse.message.map(ToolServer::message_with_created);
                    }
                    sse
                });
                let stream = self.sealing(id, stream);
                Ok(Ledger::hold(busy, stream).right_stream())
            }
        }
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.ledger.touch(id);
        let Some(portable) = &self.portable else {
            return self.worker.accept_message(id, message).await;
        };
        match portable.answer(id, message) {
            Answer::Here(message) => self.worker.accept_message(id, message).await,
            Answer::Elsewhere(replica, message) => {
                portable.forward(&replica, &message).await;
                Ok(())
            }
            Answer::Drop => Ok(()),
        }
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let stream = self.worker.create_standalone_stream(id).await?;
        let stream = self.with_task_news(id, self.sealing(id, stream));
        Ok(Ledger::hold(self.ledger.begin(id), stream))
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        // The session's own stream's events are numbered alone; a request's, `n/request`.
        let own = !last_event_id.contains('/');
        let stream = self.worker.resume(id, last_event_id).await?;
        let stream = self.sealing(id, stream);
        let stream = if own {
            self.with_task_news(id, stream).left_stream()
        } else {
            stream.right_stream()
        };
        Ok(Ledger::hold(self.ledger.begin(id), stream))
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        // Another replica's session, carried on here (rmcp then replays its handshake): in the
        // ledger like a session opened here.
        let outcome = self.worker.restore_session(id.clone()).await?;
        if let RestoreOutcome::Restored(_) = &outcome {
            for idlest in self.ledger.open(&id) {
                self.end(&idlest).await;
            }
        }
        Ok(outcome)
    }
}
