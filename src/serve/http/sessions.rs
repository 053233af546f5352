//! How long a session lives and how many may: every session's last activity, so a session no
//! request has named for `idle_timeout` expires (answered 404 from then on, like one ended by
//! DELETE), and opening a session beyond `max_sessions` ends the idlest one.
//!
//! A session is busy while a request of it is in flight (a call that runs for an hour, a GET
//! stream a client holds open): busy sessions never expire, and the cap ends them only when
//! every session is busy. Its idle time counts from the end of its last request.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::{Stream, StreamExt};
use rmcp::transport::streamable_http_server::session::SessionId;

/// A session no request has named for this long expires.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(5 * 60);
/// Live sessions never exceed this; a new one ends the idlest.
pub const DEFAULT_MAX_SESSIONS: usize = 500;

/// The bounds on the sessions of one endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLimits {
    pub idle_timeout: Duration,
    pub max_sessions: usize,
}

impl SessionLimits {
    /// How often to look for expired sessions: often enough that their memory comes back soon
    /// after they expire (a request to one is answered 404 at once regardless).
    pub fn sweep_period(&self) -> Duration {
        (self.idle_timeout / 4).clamp(Duration::from_millis(10), Duration::from_secs(15))
    }
}

impl Default for SessionLimits {
    fn default() -> Self {
        Self {
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_sessions: DEFAULT_MAX_SESSIONS,
        }
    }
}

/// After this many sessions ended, freed memory is handed back to the system...
const TRIM_AFTER: usize = 256;
/// ...at most this often.
const MIN_TRIM_GAP: Duration = Duration::from_secs(1);

/// What the sweeps of one endpoint remember: how many sessions ended since the last trim,
/// and when that was.
#[derive(Default)]
pub struct SweepState {
    ended: usize,
    last_trim: Option<Instant>,
}

impl SweepState {
    /// `n` more sessions ended (expired or evicted).
    pub fn ended(&mut self, n: usize) {
        self.ended += n;
    }

    /// Whether to trim now (and if so, counting starts again).
    pub fn trim_due(&mut self) -> bool {
        let due = self.last_trim.is_none_or(|at| at.elapsed() >= MIN_TRIM_GAP);
        if self.ended < TRIM_AFTER || !due {
            return false;
        }
        self.ended = 0;
        self.last_trim = Some(Instant::now());
        true
    }
}

use super::limits::now_ms;

/// Where a session sits in the idle order: when it was last active, then a sequence number.
type Key = (u64, u64);

struct Entry {
    key: Key,
    busy: u32,
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
        }
    }

    fn expired(&self, entry: &Entry, idle: Duration) -> bool {
        entry.busy == 0 && now_ms().saturating_sub(entry.key.0) >= idle.as_millis() as u64
    }
}

/// The sessions of one endpoint and when each was last active.
pub struct Ledger {
    limits: SessionLimits,
    table: Mutex<Table>,
}

impl Ledger {
    pub fn new(limits: SessionLimits) -> Self {
        Self {
            limits,
            table: Mutex::default(),
        }
    }

    pub fn limits(&self) -> SessionLimits {
        self.limits
    }

    fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records a new session; returns the sessions to end to stay within the cap (the idlest:
    /// the first that is not busy, or the idlest of all when every one is).
    pub fn open(&self, id: &SessionId) -> Vec<SessionId> {
        let mut table = self.table();
        let key = table.next_key();
        table.by_id.insert(id.clone(), Entry { key, busy: 0 });
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
    pub fn touch(&self, id: &SessionId) {
        self.table().touch(id);
    }

    /// A request of `id` is in flight until the guard drops; None for a session not recorded.
    pub fn begin(self: &Arc<Self>, id: &SessionId) -> Option<Busy> {
        let mut table = self.table();
        let entry = table.by_id.get_mut(id)?;
        entry.busy += 1;
        table.touch(id);
        Some(Busy {
            ledger: self.clone(),
            id: id.clone(),
        })
    }

    /// `stream` (the answer to a request of `id`), keeping the session busy while it lives.
    pub fn hold<S>(
        self: &Arc<Self>,
        id: &SessionId,
        stream: S,
    ) -> impl Stream<Item = S::Item> + Send + Sync + use<S>
    where
        S: Stream + Send + Sync + 'static,
    {
        let busy = self.begin(id);
        stream.map(move |item| {
            let _ = &busy;
            item
        })
    }

    /// Whether `id` has been idle past the timeout (it is then forgotten: the caller ends it).
    /// A session that has not expired is touched: a request naming it has just arrived, so the
    /// sweep cannot end it between this check and the request's handling.
    pub fn take_expired(&self, id: &SessionId) -> bool {
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
    pub fn take_all_expired(&self) -> Vec<SessionId> {
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
    pub fn close(&self, id: &SessionId) {
        self.table().remove(id);
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.table().by_id.len()
    }
}

/// A request in flight for a session; its end counts as the session's last activity.
pub struct Busy {
    ledger: Arc<Ledger>,
    id: SessionId,
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

    #[test]
    fn memory_is_trimmed_after_many_sessions_ended_and_not_more_than_once_a_second() {
        let mut state = SweepState::default();
        state.ended(TRIM_AFTER - 1);
        assert!(!state.trim_due());
        state.ended(1);
        assert!(state.trim_due());
        assert!(!state.trim_due(), "counting starts again");
        state.ended(TRIM_AFTER);
        assert!(!state.trim_due(), "a second trim waits for the gap");
    }
}
