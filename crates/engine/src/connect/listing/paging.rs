//! Paging a listing: the cursors it has seen (a server that repeats one would be paged
//! forever), its page bound, its pages' caching hints merged, and what each page request sends.

use rmcp::model::PaginatedRequestParams;
use serde_json::{Map, Value};

use crate::bounds::{MAX_LIST_BYTES, MAX_LIST_ITEMS, MAX_LIST_PAGES};
use crate::connect::error::ConnectError;
use crate::connect::reason::{self, Cause};
use crate::connect::stdio::direct::Failure;
use crate::surface::{Hints, Truncated};

/// The cursors a listing has seen so far: a server that repeats one would be paged forever.
pub(crate) struct Cursors {
    seen: std::collections::HashSet<String>,
    method: &'static str,
}

impl Cursors {
    pub(crate) fn of(method: &'static str) -> Self {
        Self {
            seen: Default::default(),
            method,
        }
    }

    pub(crate) fn check(&mut self, next: String) -> Result<String, ConnectError> {
        if self.seen.insert(next.clone()) {
            Ok(next)
        } else {
            Err(ConnectError::Protocol(format!(
                "{} repeated cursor {:?}; stopped paging",
                self.method,
                reason::bounded(&next)
            )))
        }
    }
}

pub(crate) fn too_many_pages(method: &str) -> ConnectError {
    ConnectError::Protocol(format!(
        "{method} returned more than {MAX_LIST_PAGES} pages"
    ))
}

/// The hints of a listing's pages, merged (none before its first page).
#[derive(Default)]
pub(super) struct Merged(Option<Hints>);

impl Merged {
    pub(super) fn add(&mut self, page: Hints) {
        self.0 = Some(self.0.map_or(page, |h| h.merge(page)));
    }

    pub(super) fn get(&self) -> Hints {
        self.0.unwrap_or_default()
    }
}

/// How much of one listing is kept: its first items, up to [`MAX_LIST_ITEMS`] and
/// [`MAX_LIST_BYTES`] of their JSON. Past that every item is dropped (counted, never read), and
/// the listing stops paging.
#[derive(Debug, Default)]
pub(crate) struct Budget {
    items: usize,
    bytes: usize,
    dropped: usize,
}

impl Budget {
    /// Whether an item of `bytes` of JSON is kept (once one is not, none after it is).
    pub(crate) fn keep(&mut self, bytes: usize) -> bool {
        if self.dropped == 0
            && self.items < MAX_LIST_ITEMS
            && self.bytes.saturating_add(bytes) <= MAX_LIST_BYTES
        {
            self.items += 1;
            self.bytes += bytes;
            true
        } else {
            self.dropped += 1;
            false
        }
    }

    /// Whether it is spent: the listing reads no more pages.
    pub(crate) fn spent(&self) -> bool {
        self.dropped > 0
    }

    /// What was left out, once spent; `unread`: the server had more pages.
    pub(crate) fn truncated(&self, unread: bool) -> Option<Truncated> {
        self.spent().then_some(Truncated {
            kept: self.items,
            dropped: self.dropped,
            unread,
        })
    }
}

/// A direct request's failure as the cause [`reason::service_error`] gives rmcp's.
pub(crate) fn failed(failure: &Failure) -> Cause {
    match failure {
        Failure::JsonRpc { code, message } => Cause::Words(format!(
            "server answered with error {code}: {}",
            reason::bounded(message)
        )),
        Failure::TimedOut(after) => {
            Cause::Words(format!("timed out after {} ms", after.as_millis()))
        }
        Failure::Aborted => Cause::Words("cancelled".into()),
        Failure::Closed => Cause::closed(),
    }
}

/// A page request's params, direct: its cursor, and the listing's trace context in `_meta`
/// while one is traced.
pub(crate) fn page_params(cursor: Option<String>) -> Map<String, Value> {
    let mut params = Map::new();
    if let Some(cursor) = cursor {
        params.insert("cursor".into(), Value::String(cursor));
    }
    if let Some(meta) = crate::telemetry::page_meta() {
        params.insert("_meta".into(), Value::Object(meta));
    }
    params
}

/// [`page_params`] as rmcp's typed params.
pub(crate) fn typed_page_params(cursor: Option<String>) -> PaginatedRequestParams {
    let mut params = PaginatedRequestParams::default().with_cursor(cursor);
    params.meta = crate::telemetry::page_meta().map(Into::into);
    params
}
