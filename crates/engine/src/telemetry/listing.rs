//! The listings a source makes while it connects (`loadMcp`, `listMcpTools`): each a CLIENT
//! span (`tools/list`, `resources/list`, …), a child of the app's context active when the call
//! was made, with that span's context in the `_meta` of each of its pages. One span covers a
//! listing's pages.
//!
//! The context and the server are scoped to the connecting task ([`connecting`]), so the
//! listing code below it asks for neither: [`listing`] makes the span when there is a
//! connecting scope (and spans are made), and [`page_meta`] is what a page request carries.
//! A listing outside such a scope (a live source re-listing after `list_changed`) has none.

use std::future::Future;

use opentelemetry::Context;
use opentelemetry::trace::TraceContextExt;
use serde_json::{Map, Value};

use super::op::{Named, Op, PeerAttributes};

/// The trace context a call's listings are children of: the app's context when the call was
/// made, as its propagator wrote it; without a valid `traceparent` they are roots.
#[derive(Clone, Default)]
pub struct CallTrace(Context);

impl CallTrace {
    pub fn from_carrier(carrier: &Map<String, Value>) -> CallTrace {
        CallTrace(match super::propagate::extract(carrier) {
            Some(span) => Context::new().with_remote_span_context(span),
            None => Context::new(),
        })
    }
}

/// The context a connection's listings are children of, and where its server is.
struct Connecting {
    parent: Context,
    peer: PeerAttributes,
}

tokio::task_local! {
    static CONNECTING: Connecting;
    static PAGE_META: Map<String, Value>;
}

/// Runs `work` (a server's listings once it is connected) with its listings traced under
/// `trace`, the server being `peer`; without a trace, `work` as it is.
pub(crate) async fn connecting<F: Future>(
    trace: Option<&CallTrace>,
    peer: PeerAttributes,
    work: F,
) -> F::Output {
    let Some(CallTrace(parent)) = trace else {
        return work.await;
    };
    let scope = Connecting {
        parent: parent.clone(),
        peer,
    };
    CONNECTING.scope(scope, work).await
}

/// Runs one listing (`method`, every page of it) inside its CLIENT span when it is made while
/// connecting; a failure ends the span with `error.type` as `error_type` names it.
pub(crate) async fn listing<T, E>(
    method: &'static str,
    work: impl Future<Output = Result<T, E>>,
    error_type: impl Fn(&E) -> &'static str,
) -> Result<T, E> {
    let op = CONNECTING
        .try_with(|c| Op::client(method, Named::Nothing, Some(&c.parent), c.peer.telemetry()))
        .ok()
        .flatten();
    let Some(op) = op else {
        return work.await;
    };
    let result = match op.meta() {
        Some(meta) => PAGE_META.scope(meta, work).await,
        None => work.await,
    };
    op.end(result.as_ref().err().map(error_type));
    result
}

/// The `_meta` a page request of the listing in progress carries (its span's context).
pub(crate) fn page_meta() -> Option<Map<String, Value>> {
    PAGE_META.try_with(Map::clone).ok()
}
