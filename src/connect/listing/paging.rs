//! Paging a listing: the cursors it has seen (a server that repeats one would be paged
//! forever), its page bound, and its pages' caching hints merged.

use super::reason;
use super::{ConnectError, Hints, MAX_LIST_PAGES};

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
