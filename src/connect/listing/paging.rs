//! Paging a listing: the cursors it has seen (a server that repeats one would be paged
//! forever), its page bound, and its pages' caching hints merged.

use super::reason;
use super::{ConnectError, Hints, MAX_LIST_PAGES};
use crate::bounds::{MAX_LIST_BYTES, MAX_LIST_ITEMS};

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

/// What a listing over its budget left out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Truncated {
    pub kept: usize,
    /// Items of the pages read that were dropped.
    pub dropped: usize,
    /// Whether the server had more pages, not read.
    pub unread: bool,
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

impl Truncated {
    /// The warning naming `server`, the kind (`what`: "tools", "resources", …) and how much was
    /// dropped.
    pub fn warning(&self, server: &str, what: &str) -> String {
        let unread = if self.unread {
            ", and its later pages were not read"
        } else {
            ""
        };
        format!(
            "toolnexus: server {server:?} listed more {what} than are kept ({MAX_LIST_ITEMS} at most, {} MiB of JSON): the first {} are kept, {} more were dropped{unread}",
            MAX_LIST_BYTES >> 20,
            self.kept,
            self.dropped
        )
    }
}
