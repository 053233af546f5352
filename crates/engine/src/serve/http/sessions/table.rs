//! The one table of an endpoint's sessions: for each, when it was last active, how many of its
//! requests are in flight, and (once its handshake is done) its [`Link`] for the direct road.
//! A session no request has named for `idle_timeout` expires (answered 404 from then on, like
//! one ended by DELETE), and opening a session beyond `max_sessions` ends the idlest one.
//!
//! A session is busy while a request of it is in flight (a call that runs for an hour, a GET
//! stream a client holds open): busy sessions never expire, and the cap ends them only when
//! every session is busy. Its idle time counts from the end of its last request.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{Stream, StreamExt};
use rmcp::transport::streamable_http_server::session::SessionId;

use super::limits::SessionLimits;
use super::link::Link;
use crate::serve::http::limits::now_ms;

/// Where a session sits in the idle order: when it was last active, then a sequence number.
type Key = (u64, u64);

struct Entry {
    key: Key,
    busy: u32,
    link: Option<Arc<Link>>,
    /// The principal that opened it (serving with auth): the only one it answers.
    owner: Option<Arc<str>>,
    /// When it opened, for `mcp.server.session.duration`.
    opened: std::time::Instant,
}

#[derive(Default)]
struct Table {
    by_id: HashMap<SessionId, Entry>,
    /// Every session by last activity, the idlest first.
    order: BTreeMap<Key, SessionId>,
    seq: u64,
}

impl Table {
    fn next_key(&mut self) -> Key {
        self.seq += 1;
        (now_ms(), self.seq)
    }

    fn touch(&mut self, id: &SessionId) {
        let key = self.next_key();
        if let Some(entry) = self.by_id.get_mut(id) {
            self.order.remove(&entry.key);
            entry.key = key;
            self.order.insert(key, id.clone());
        }
    }

    fn remove(&mut self, id: &SessionId) {
        if let Some(entry) = self.by_id.remove(id) {
            self.order.remove(&entry.key);
            crate::telemetry::session_ended(true, entry.opened.elapsed().as_secs_f64(), "tcp");
        }
    }

    fn expired(&self, entry: &Entry, idle: Duration) -> bool {
        entry.busy == 0 && now_ms().saturating_sub(entry.key.0) >= idle.as_millis() as u64
    }
}

/// The sessions of one endpoint and when each was last active.
pub(crate) struct Ledger {
    limits: SessionLimits,
    table: Mutex<Table>,
}

impl Ledger {
    pub(crate) fn new(limits: SessionLimits) -> Self {
        Self {
            limits,
            table: Mutex::default(),
        }
    }

    pub(crate) fn limits(&self) -> SessionLimits {
        self.limits
    }

    fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records a new session; returns the sessions to end to stay within the cap (the idlest:
    /// the first that is not busy, or the idlest of all when every one is).
    pub(crate) fn open(&self, id: &SessionId) -> Vec<SessionId> {
        let mut table = self.table();
        let key = table.next_key();
        let entry = Entry {
            key,
            busy: 0,
            link: None,
            owner: None,
            opened: std::time::Instant::now(),
        };
        table.by_id.insert(id.clone(), entry);
        table.order.insert(key, id.clone());
        let mut evicted = Vec::new();
        // One session came in, so at most one goes (the cap is at least 1).
        if table.by_id.len() > self.limits.max_sessions.max(1) {
            let victim = table
                .order
                .values()
                .find(|other| *other != id && table.by_id.get(*other).is_some_and(|e| e.busy == 0))
                .or_else(|| table.order.values().find(|other| *other != id))
                .cloned();
            if let Some(victim) = victim {
                table.remove(&victim);
                evicted.push(victim);
            }
        }
        evicted
    }

    /// A request naming `id` arrived (one that holds nothing open, like a notification).
    pub(crate) fn touch(&self, id: &SessionId) {
        self.table().touch(id);
    }

    /// A request of `id` is in flight until the guard drops; None for a session not recorded.
    pub(crate) fn begin(self: &Arc<Self>, id: &SessionId) -> Option<Busy> {
        let mut table = self.table();
        let entry = table.by_id.get_mut(id)?;
        entry.busy += 1;
        let link = entry.link.clone();
        table.touch(id);
        Some(Busy {
            ledger: self.clone(),
            id: id.clone(),
            link,
        })
    }

    /// The session's handshake is done: calls of it may take the direct road through `link`.
    /// False when the session is no longer here.
    pub(crate) fn link(&self, id: &SessionId, link: Arc<Link>) -> bool {
        let mut table = self.table();
        let Some(entry) = table.by_id.get_mut(id) else {
            return false;
        };
        entry.link = Some(link);
        true
    }

    /// The session was opened by `owner` (a principal's key).
    pub(crate) fn own(&self, id: &SessionId, owner: &str) {
        if let Some(entry) = self.table().by_id.get_mut(id) {
            entry.owner = Some(owner.into());
        }
    }

    /// Who opened the session `id`, when it is here and was opened with a token.
    pub(crate) fn owner(&self, id: &str) -> Option<Arc<str>> {
        self.table().by_id.get(id)?.owner.clone()
    }

    /// The session's service is gone: no call of it takes the direct road any more.
    pub(crate) fn unlink(&self, id: &SessionId) {
        if let Some(entry) = self.table().by_id.get_mut(id) {
            entry.link = None;
        }
    }

    /// `stream` (the answer to a request), keeping its session busy (`busy`) while it lives.
    pub(crate) fn hold<S>(
        busy: Option<Busy>,
        stream: S,
    ) -> impl Stream<Item = S::Item> + Send + Sync + use<S>
    where
        S: Stream + Send + Sync + 'static,
    {
        stream.map(move |item| {
            let _ = &busy;
            item
        })
    }

    /// Whether `id` has been idle past the timeout (it is then forgotten: the caller ends it).
    /// A session that has not expired is touched: a request naming it has just arrived, so the
    /// sweep cannot end it between this check and the request's handling.
    pub(crate) fn take_expired(&self, id: &SessionId) -> bool {
        let mut table = self.table();
        let expired = table
            .by_id
            .get(id)
            .is_some_and(|entry| table.expired(entry, self.limits.idle_timeout));
        if expired {
            table.remove(id);
        } else {
            table.touch(id);
        }
        expired
    }

    /// Forgets the sessions idle past the timeout and returns them, for the caller to end.
    pub(crate) fn take_all_expired(&self) -> Vec<SessionId> {
        let mut table = self.table();
        let Some(cutoff) = now_ms().checked_sub(self.limits.idle_timeout.as_millis() as u64) else {
            return Vec::new();
        };
        let idle: Vec<SessionId> = table
            .order
            .range(..(cutoff + 1, 0))
            .filter(|(_, id)| table.by_id.get(*id).is_some_and(|e| e.busy == 0))
            .map(|(_, id)| id.clone())
            .collect();
        for id in &idle {
            table.remove(id);
        }
        idle
    }

    /// A session that ended (DELETE, eviction, its service gone).
    pub(crate) fn close(&self, id: &SessionId) {
        self.table().remove(id);
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.table().by_id.len()
    }
}

/// A request in flight for a session; its end counts as the session's last activity.
pub(crate) struct Busy {
    ledger: Arc<Ledger>,
    id: SessionId,
    link: Option<Arc<Link>>,
}

impl Busy {
    /// The session's link, when its handshake was done as the request arrived.
    pub(crate) fn link(&self) -> Option<&Arc<Link>> {
        self.link.as_ref()
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let mut table = self.ledger.table();
        if let Some(entry) = table.by_id.get_mut(&self.id) {
            entry.busy = entry.busy.saturating_sub(1);
            table.touch(&self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> SessionId {
        SessionId::from(s.to_string())
    }

    fn ledger(idle_ms: u64, max_sessions: usize) -> Arc<Ledger> {
        Arc::new(Ledger::new(SessionLimits {
            idle_timeout: Duration::from_millis(idle_ms),
            max_sessions,
        }))
    }

    #[test]
    fn the_cap_ends_the_idlest_session_that_is_not_busy() {
        let ledger = ledger(60_000, 2);
        assert!(ledger.open(&id("a")).is_empty());
        assert!(ledger.open(&id("b")).is_empty());
        ledger.touch(&id("a"));
        assert_eq!(ledger.open(&id("c")), vec![id("b")]);
        let _busy = ledger.begin(&id("a")).unwrap();
        // `a` was used after `c` opened but is busy: `c` goes.
        assert_eq!(ledger.open(&id("d")), vec![id("c")]);
        assert_eq!(ledger.len(), 2);
    }

    #[test]
    fn when_every_session_is_busy_the_cap_still_holds() {
        let ledger = ledger(60_000, 1);
        ledger.open(&id("a"));
        let _busy = ledger.begin(&id("a")).unwrap();
        assert_eq!(ledger.open(&id("b")), vec![id("a")]);
        assert_eq!(ledger.len(), 1);
    }

    #[test]
    fn busy_sessions_do_not_expire_and_idle_ones_do() {
        let ledger = ledger(0, 10);
        ledger.open(&id("a"));
        ledger.open(&id("b"));
        let busy = ledger.begin(&id("a")).unwrap();
        assert!(!ledger.take_expired(&id("a")));
        assert_eq!(ledger.take_all_expired(), vec![id("b")]);
        drop(busy);
        assert!(ledger.take_expired(&id("a")));
        assert_eq!(ledger.len(), 0);
        assert!(ledger.begin(&id("a")).is_none());
    }

    #[test]
    fn a_recent_session_is_not_expired() {
        let ledger = ledger(60_000, 10);
        ledger.open(&id("a"));
        assert!(!ledger.take_expired(&id("a")));
        assert!(ledger.take_all_expired().is_empty());
        ledger.close(&id("a"));
        assert_eq!(ledger.len(), 0);
    }
}
