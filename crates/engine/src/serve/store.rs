//! A state store replicas share (`stateStore`, beside `stateKey`): what must hold once per
//! fleet rather than once per replica. So far, the sealed `requestState` handles already retried
//! (a replayed last retry runs its call at most once across the fleet) and the portable
//! sessions ended by DELETE (refused on every replica), and tasks (any replica answers for a
//! task another runs; see [`super::store_tasks`]). Rate limits are next.
//!
//! Without a store nothing changes: each replica keeps its own record, as before. With one, the
//! replica still keeps its own record and asks the store too. The store learns nothing and can
//! forge nothing: its key names are keyed digests made with the state key
//! ([`StateKey::name`]), and what it holds is sealed with the state key for the key name it is
//! kept under. Every key expires with what it holds.
//!
//! Every operation is bounded by [`TIMEOUT`]; a store that does not answer in time is an error
//! naming it (its URL without credentials) and the cause in words, and the request that needed
//! it fails with those words while everything else keeps working.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use std::time::Duration;

use async_trait::async_trait;

use super::seal::{self, StateKey};
use super::store_tasks::MemoryTasks;
pub use super::store_tasks::{Sent, TaskWrite};
pub(crate) use crate::bounds::SERVE_STORE_TIMEOUT as TIMEOUT;

// The Redis store is `super::store_redis` (it builds on this module).

/// Why a store operation failed: the store (its URL without credentials) and the cause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreError {
    pub store: String,
    pub cause: String,
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.store, self.cause)
    }
}

impl std::error::Error for StoreError {}

/// What replicas share. Each operation is bounded (the caller need not add a timeout).
#[async_trait]
pub trait StateStore: Send + Sync {
    /// What to call it in messages and `/readyz`: its URL without credentials.
    fn describe(&self) -> String;
    /// Whether it answers.
    async fn ping(&self) -> Result<(), StoreError>;
    /// Records the sealed state `handle` retried, until `until_ms` (ms since the epoch): false
    /// when some replica already had (the retry is then a replay).
    async fn mark_spent(&self, handle: &str, until_ms: u64) -> Result<bool, StoreError>;
    /// Records the portable session `session` (its local id) ended, for `ttl`.
    async fn revoke(&self, session: &str, ttl: Duration) -> Result<(), StoreError>;
    /// Whether some replica ended the session `session`.
    async fn is_revoked(&self, session: &str) -> Result<bool, StoreError>;

    // Tasks (see `super::store_tasks`): `id` is the task's id, `write` what is written of it
    // (opaque here), `scope` whose it is.

    /// Records the new task `id` of `scope`, kept for `ttl`, its runner's lease for `lease`.
    async fn task_create(
        &self,
        id: &str,
        scope: &str,
        write: TaskWrite<'_>,
        ttl: Duration,
        lease: Duration,
    ) -> Result<(), StoreError>;
    /// A running task's record and summary replaced: false when it ended (or expired).
    async fn task_update(&self, id: &str, write: TaskWrite<'_>) -> Result<bool, StoreError>;
    /// Ends task `id` with `write`: false when it had ended (or expired) already. (Done again
    /// after a lost answer, it answers true again.)
    async fn task_end(&self, id: &str, write: TaskWrite<'_>) -> Result<bool, StoreError>;
    /// The runner's tick: its lease renewed (for `lease`, when given), and the messages sent
    /// to the task after the first `handed` (the store forgets those), each None when it does
    /// not open; None when the task ended or expired (the run stops). Asked again with the
    /// same `handed`, it answers the same.
    async fn task_tick(
        &self,
        id: &str,
        lease: Option<Duration>,
        handed: usize,
    ) -> Result<Option<Vec<Option<Vec<u8>>>>, StoreError>;
    /// Task `id`'s record, and whether its runner's lease holds.
    async fn task_read(&self, id: &str) -> Result<Option<(Vec<u8>, bool)>, StoreError>;
    /// The summaries of `scope`'s tasks, in no order, each with whether its runner's lease
    /// holds.
    async fn task_list(&self, scope: &str) -> Result<Vec<(Vec<u8>, bool)>, StoreError>;
    /// `message` for task `id`'s runner.
    async fn task_send(&self, id: &str, message: &[u8]) -> Result<Sent, StoreError>;

    /// Takes one token from each of `buckets` together, or from none: None when taken, else
    /// which bucket had none and how long until it has one.
    async fn take_tokens(
        &self,
        buckets: &[Bucket],
    ) -> Result<Option<(usize, Duration)>, StoreError>;
}

/// A token bucket replicas share (a rate limit): its name, its size, and how many tokens it
/// gains a minute.
#[derive(Debug, Clone, PartialEq)]
pub struct Bucket {
    pub name: String,
    pub capacity: f64,
    pub per_minute: f64,
}

/// How a store reaches the handlers: in the request's extensions, beside the state key.
#[derive(Clone)]
pub struct SharedStore(pub Arc<dyn StateStore>);

/// The store of the endpoint the request `context` answers came through, if it has one.
pub(crate) fn of(
    context: &rmcp::service::RequestContext<rmcp::service::RoleServer>,
) -> Option<Arc<dyn StateStore>> {
    super::caller::from_front::<SharedStore>(context).map(|s| s.0)
}

/// The name a spent handle is kept under.
pub(crate) fn spent_name(key: &StateKey, handle: &str) -> String {
    format!("toolnexus:spent:{}", key.name(&format!("spent\0{handle}")))
}

/// The name an ended session is kept under.
pub(crate) fn revoked_name(key: &StateKey, session: &str) -> String {
    format!(
        "toolnexus:revoked:{}",
        key.name(&format!("revoked\0{session}"))
    )
}

/// A store in this process: what each replica does without a shared one, behind the same
/// trait (for embedding and tests). Bounded as the per-replica records are.
pub struct MemoryStore {
    entries: Mutex<Entries>,
    tasks: Mutex<MemoryTasks>,
    buckets: Mutex<HashMap<String, (f64, std::time::Instant)>>,
    max: usize,
}

#[derive(Default)]
struct Entries {
    until: HashMap<String, u64>,
    order: VecDeque<(String, u64)>,
}

impl Entries {
    /// Forgets what expired, and the oldest beyond `max`.
    fn trim(&mut self, now: u64, max: usize) {
        while let Some((old, until)) = self.order.front().cloned() {
            if until > now && self.until.len() < max {
                break;
            }
            self.order.pop_front();
            if self.until.get(&old) == Some(&until) {
                self.until.remove(&old);
            }
        }
    }

    fn live(&mut self, name: &str, now: u64, max: usize) -> bool {
        self.trim(now, max.saturating_add(1));
        self.until.get(name).is_some_and(|&until| until > now)
    }

    fn insert(&mut self, name: String, until: u64, max: usize) {
        self.until.insert(name.clone(), until);
        self.order.push_back((name, until));
        self.trim(seal::now_millis(), max.saturating_add(1));
    }
}

impl Default for MemoryStore {
    fn default() -> Self {
        Self::new(crate::bounds::SERVE_MAX_SPENT_STATES)
    }
}

impl MemoryStore {
    /// A store keeping at most `max` entries (the oldest forgotten first).
    pub fn new(max: usize) -> Self {
        Self {
            entries: Mutex::default(),
            tasks: Mutex::new(MemoryTasks::new(max)),
            buckets: Mutex::default(),
            max: max.max(1),
        }
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, Entries> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn tasks(&self) -> std::sync::MutexGuard<'_, MemoryTasks> {
        self.tasks.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[async_trait]
impl StateStore for MemoryStore {
    fn describe(&self) -> String {
        "memory".into()
    }

    async fn ping(&self) -> Result<(), StoreError> {
        Ok(())
    }

    async fn mark_spent(&self, handle: &str, until_ms: u64) -> Result<bool, StoreError> {
        let name = format!("spent\0{handle}");
        let now = seal::now_millis();
        let mut entries = self.entries();
        if entries.live(&name, now, self.max) {
            return Ok(false);
        }
        entries.insert(name, until_ms.max(now + 1), self.max);
        Ok(true)
    }

    async fn revoke(&self, session: &str, ttl: Duration) -> Result<(), StoreError> {
        let until = seal::now_millis() + (ttl.as_millis() as u64).max(1);
        self.entries()
            .insert(format!("revoked\0{session}"), until, self.max);
        Ok(())
    }

    async fn is_revoked(&self, session: &str) -> Result<bool, StoreError> {
        let now = seal::now_millis();
        Ok(self
            .entries()
            .live(&format!("revoked\0{session}"), now, self.max))
    }

    async fn task_create(
        &self,
        id: &str,
        scope: &str,
        write: TaskWrite<'_>,
        ttl: Duration,
        lease: Duration,
    ) -> Result<(), StoreError> {
        self.tasks().create(id, scope, write, ttl, lease);
        Ok(())
    }

    async fn task_update(&self, id: &str, write: TaskWrite<'_>) -> Result<bool, StoreError> {
        Ok(self.tasks().update(id, write))
    }

    async fn task_end(&self, id: &str, write: TaskWrite<'_>) -> Result<bool, StoreError> {
        Ok(self.tasks().end(id, write))
    }

    async fn task_tick(
        &self,
        id: &str,
        lease: Option<Duration>,
        handed: usize,
    ) -> Result<Option<Vec<Option<Vec<u8>>>>, StoreError> {
        Ok(self
            .tasks()
            .tick(id, lease, handed)
            .map(|messages| messages.into_iter().map(Some).collect()))
    }

    async fn task_read(&self, id: &str) -> Result<Option<(Vec<u8>, bool)>, StoreError> {
        Ok(self.tasks().read(id))
    }

    async fn task_list(&self, scope: &str) -> Result<Vec<(Vec<u8>, bool)>, StoreError> {
        Ok(self.tasks().list(scope))
    }

    async fn task_send(&self, id: &str, message: &[u8]) -> Result<Sent, StoreError> {
        Ok(self.tasks().send(id, message))
    }

    async fn take_tokens(
        &self,
        buckets: &[Bucket],
    ) -> Result<Option<(usize, Duration)>, StoreError> {
        let now = std::time::Instant::now();
        let mut kept = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if kept.len() >= self.max {
            // Full buckets hold nothing worth keeping.
            kept.retain(|name, (tokens, at)| {
                let capacity = buckets
                    .iter()
                    .find(|b| &b.name == name)
                    .map_or(f64::INFINITY, |b| b.capacity);
                *tokens < capacity && now.saturating_duration_since(*at).as_secs() < 3600
            });
        }
        let mut after = Vec::with_capacity(buckets.len());
        for (i, bucket) in buckets.iter().enumerate() {
            let (tokens, at) = kept
                .get(&bucket.name)
                .copied()
                .unwrap_or((bucket.capacity, now));
            let gained = now.saturating_duration_since(at).as_secs_f64() * bucket.per_minute / 60.0;
            let tokens = (tokens + gained).min(bucket.capacity);
            if tokens < 1.0 {
                return Ok(Some((i, wait_for_token(tokens, bucket.per_minute))));
            }
            after.push(tokens - 1.0);
        }
        for (bucket, tokens) in buckets.iter().zip(after) {
            kept.insert(bucket.name.clone(), (tokens, now));
        }
        Ok(None)
    }
}

/// How long a bucket holding `tokens` (under 1) takes to hold one at `per_minute` (a day at
/// most).
pub(crate) fn wait_for_token(tokens: f64, per_minute: f64) -> Duration {
    const DAY: f64 = 86_400.0;
    let seconds = if per_minute > 0.0 {
        (1.0 - tokens) * 60.0 / per_minute
    } else {
        DAY
    };
    Duration::from_secs_f64(seconds.clamp(0.0, DAY))
}

/// How many ms from now until `until_ms` (at least 1: a key that expires at once).
pub(crate) fn ms_until(until_ms: u64) -> u64 {
    until_ms.saturating_sub(seal::now_millis()).max(1)
}

/// `op`, bounded by [`TIMEOUT`]: its error, or "no answer within 2 s", naming `store`.
pub(crate) async fn bounded<T>(
    store: &str,
    op: impl std::future::Future<Output = Result<T, String>>,
) -> Result<T, StoreError> {
    match tokio::time::timeout(TIMEOUT, op).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(cause)) => Err(StoreError {
            store: store.to_string(),
            cause,
        }),
        Err(_) => Err(StoreError {
            store: store.to_string(),
            cause: format!("no answer within {}", seconds(TIMEOUT)),
        }),
    }
}

/// `d` in words: "2 s", "1.5 s".
fn seconds(d: Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{} s", ms as f64 / 1000.0)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn key(secret: &str) -> StateKey {
        StateKey::new(&[secret.as_bytes().to_vec()]).unwrap()
    }

    /// A name no earlier run of the contract used (a shared store outlives a test run).
    fn unique() -> String {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        seal::digest(format!("{n} {:?}", std::time::SystemTime::now()).as_bytes())
    }

    /// What every store must do: the contract a shared one is held to.
    pub(crate) async fn contract(store: &dyn StateStore) {
        store.ping().await.unwrap();
        let until = seal::now_millis() + 60_000;
        let handle = unique();
        assert!(store.mark_spent(&handle, until).await.unwrap());
        assert!(!store.mark_spent(&handle, until).await.unwrap(), "once");
        let other = unique();
        assert!(store.mark_spent(&other, until).await.unwrap());
        // An entry expires with what it holds.
        let brief = unique();
        assert!(
            store
                .mark_spent(&brief, seal::now_millis() + 50)
                .await
                .unwrap()
        );
        tokio::time::sleep(Duration::from_millis(120)).await;
        assert!(store.mark_spent(&brief, until).await.unwrap(), "expired");

        let session = unique();
        assert!(!store.is_revoked(&session).await.unwrap());
        store
            .revoke(&session, Duration::from_secs(60))
            .await
            .unwrap();
        assert!(store.is_revoked(&session).await.unwrap());
        assert!(!store.is_revoked(&other).await.unwrap());
        let brief = unique();
        store
            .revoke(&brief, Duration::from_millis(50))
            .await
            .unwrap();
        assert!(store.is_revoked(&brief).await.unwrap());
        tokio::time::sleep(Duration::from_millis(120)).await;
        assert!(!store.is_revoked(&brief).await.unwrap(), "expired");
        tasks_contract(store).await;
        tokens_contract(store).await;
    }

    /// What every store must do with token buckets.
    async fn tokens_contract(store: &dyn StateStore) {
        let bucket = |name: &str, capacity: f64, per_minute: f64| Bucket {
            name: name.to_string(),
            capacity,
            per_minute,
        };
        let (caller, overall) = (unique(), unique());
        // Two a minute, bursts of 2: two taken, the third refused for about 30 s.
        let both = [bucket(&caller, 2.0, 2.0), bucket(&overall, 3.0, 60.0)];
        assert_eq!(store.take_tokens(&both).await.unwrap(), None);
        assert_eq!(store.take_tokens(&both).await.unwrap(), None);
        let (at, wait) = store.take_tokens(&both).await.unwrap().unwrap();
        assert_eq!(at, 0, "the caller's bucket is empty");
        assert!(
            wait > Duration::from_secs(29) && wait <= Duration::from_secs(30),
            "{wait:?}"
        );
        // None was taken from the overall bucket by the refused request: one is left.
        let overall_only = [bucket(&overall, 3.0, 60.0)];
        assert_eq!(store.take_tokens(&overall_only).await.unwrap(), None);
        let (at, wait) = store.take_tokens(&overall_only).await.unwrap().unwrap();
        assert_eq!(at, 0);
        assert!(wait <= Duration::from_secs(1), "{wait:?}");
        // A bucket that gains nothing says a day.
        let never = [bucket(&unique(), 0.0, 0.0)];
        assert_eq!(
            store.take_tokens(&never).await.unwrap(),
            Some((0, Duration::from_secs(86_400)))
        );
    }

    /// What every store must do with tasks.
    async fn tasks_contract(store: &dyn StateStore) {
        let (id, scope, other) = (unique(), unique(), unique());
        let minute = Duration::from_secs(60);
        let w = |record: &'static [u8]| TaskWrite {
            record,
            summary: record,
        };
        assert_eq!(store.task_read(&id).await.unwrap(), None);
        assert!(
            !store.task_update(&id, w(b"x")).await.unwrap(),
            "no such task"
        );
        store
            .task_create(&id, &scope, w(b"working"), minute, minute)
            .await
            .unwrap();
        assert_eq!(
            store.task_read(&id).await.unwrap(),
            Some((b"working".to_vec(), true))
        );
        // A record as large as a task's may be (its result) is kept whole; the summary apart.
        let large = vec![b'r'; crate::bounds::SERVE_STORE_TASK_BYTES];
        let write = TaskWrite {
            record: &large,
            summary: b"large",
        };
        assert!(store.task_update(&id, write).await.unwrap());
        assert_eq!(store.task_read(&id).await.unwrap(), Some((large, true)));
        assert_eq!(
            store.task_list(&scope).await.unwrap(),
            vec![(b"large".to_vec(), true)]
        );
        assert!(store.task_update(&id, w(b"waiting")).await.unwrap());
        assert_eq!(
            store.task_send(&id, b"answer 1").await.unwrap(),
            Sent::Queued
        );
        assert_eq!(
            store.task_send(&id, b"answer 2").await.unwrap(),
            Sent::Queued
        );
        // The runner's ticks read what was sent after what it was handed (the same again, when
        // asked again), and the store forgets what it was handed.
        let both = Some(vec![Some(b"answer 1".to_vec()), Some(b"answer 2".to_vec())]);
        assert_eq!(store.task_tick(&id, Some(minute), 0).await.unwrap(), both);
        assert_eq!(store.task_tick(&id, None, 0).await.unwrap(), both);
        assert_eq!(
            store.task_tick(&id, None, 1).await.unwrap(),
            Some(vec![Some(b"answer 2".to_vec())])
        );
        assert_eq!(store.task_tick(&id, None, 2).await.unwrap(), Some(vec![]));
        assert_eq!(
            store.task_list(&scope).await.unwrap(),
            vec![(b"waiting".to_vec(), true)]
        );
        assert!(store.task_list(&other).await.unwrap().is_empty());
        // At most so many wait for the runner; taken, they make room.
        let most = crate::bounds::SERVE_STORE_TASK_INBOX;
        for _ in 0..most {
            assert_eq!(store.task_send(&id, b"more").await.unwrap(), Sent::Queued);
        }
        assert_eq!(store.task_send(&id, b"more").await.unwrap(), Sent::Full);
        let waiting = store.task_tick(&id, None, 2).await.unwrap().unwrap();
        assert_eq!(waiting.len(), most);
        assert_eq!(
            store.task_tick(&id, None, 2 + most).await.unwrap(),
            Some(vec![])
        );
        assert_eq!(store.task_send(&id, b"after").await.unwrap(), Sent::Queued);
        // The end is claimed once; after it nothing changes the record.
        assert!(store.task_end(&id, w(b"cancelled")).await.unwrap());
        assert!(!store.task_end(&id, w(b"completed")).await.unwrap(), "once");
        assert!(!store.task_update(&id, w(b"working")).await.unwrap());
        assert_eq!(store.task_send(&id, b"late").await.unwrap(), Sent::Ended);
        assert_eq!(store.task_tick(&id, Some(minute), 0).await.unwrap(), None);
        assert_eq!(
            store.task_read(&id).await.unwrap(),
            Some((b"cancelled".to_vec(), false))
        );
        // A lease lapses unless renewed; a task expires with its ttl, all of it.
        let brief = unique();
        store
            .task_create(
                &brief,
                &scope,
                w(b"w"),
                Duration::from_millis(300),
                Duration::from_millis(60),
            )
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(120)).await;
        assert_eq!(
            store.task_read(&brief).await.unwrap(),
            Some((b"w".to_vec(), false))
        );
        let mut listed = store.task_list(&scope).await.unwrap();
        listed.sort();
        assert_eq!(
            listed,
            vec![(b"cancelled".to_vec(), false), (b"w".to_vec(), false)]
        );
        assert_eq!(
            store.task_tick(&brief, Some(minute), 0).await.unwrap(),
            Some(vec![])
        );
        assert_eq!(
            store.task_read(&brief).await.unwrap(),
            Some((b"w".to_vec(), true)),
            "renewed"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(store.task_read(&brief).await.unwrap(), None);
        assert_eq!(
            store.task_list(&scope).await.unwrap(),
            vec![(b"cancelled".to_vec(), false)]
        );
        assert!(!store.task_end(&brief, w(b"x")).await.unwrap(), "expired");
    }

    #[tokio::test]
    async fn the_memory_store_keeps_the_contract() {
        contract(&MemoryStore::default()).await;
    }

    #[tokio::test]
    async fn the_memory_store_is_bounded() {
        let store = MemoryStore::new(2);
        let until = seal::now_millis() + 60_000;
        for h in ["a", "b", "c"] {
            assert!(store.mark_spent(h, until).await.unwrap());
        }
        // "a", the oldest, was forgotten to keep the bound.
        assert!(store.mark_spent("a", until).await.unwrap());
        assert!(!store.mark_spent("c", until).await.unwrap());
    }

    #[test]
    fn names_are_keyed_and_namespaced() {
        let k = key("0123456789abcdef0123456789abcdef");
        let name = spent_name(&k, "h");
        assert!(name.starts_with("toolnexus:spent:"));
        assert_eq!(name.len(), "toolnexus:spent:".len() + 64);
        let revoked = revoked_name(&k, "h");
        assert!(revoked.starts_with("toolnexus:revoked:"));
        // A handle and a session of the same text are kept apart.
        assert_ne!(
            name["toolnexus:spent:".len()..],
            revoked["toolnexus:revoked:".len()..]
        );
        assert_eq!(seconds(Duration::from_secs(2)), "2 s");
    }
}
