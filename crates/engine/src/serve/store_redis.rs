//! The Redis state store: one `redis-rs` `ConnectionManager` (a multiplexed connection that
//! reconnects by itself), made on first use, with connection and response timeouts, at most
//! [`MAX_IN_FLIGHT`] operations at once, and every operation bounded by [`super::store::TIMEOUT`].
//! `rediss://` is TLS through rustls (aws-lc-rs, as the rest of the tree).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use tokio::sync::{OnceCell, Semaphore};

use super::store::{
    Bucket, StateStore, StoreError, bounded, ms_until, revoked_name, spent_name, wait_for_token,
};
use super::store_tasks::{LEASE_PREFIX, SUMMARY_PREFIX, Sent, TaskNames, TaskWrite, scope_name};
use crate::serve::seal::StateKey;

/// How many store operations one replica has in flight at once (the rest wait their turn,
/// within the operation's bound).
const MAX_IN_FLIGHT: usize = 64;
/// How long a connection attempt may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);
/// The longest pause between reconnection attempts.
const MAX_RECONNECT_DELAY: Duration = Duration::from_millis(500);

/// What the values say (sealed for their key names).
const SPENT: &[u8] = b"spent";
const REVOKED: &[u8] = b"revoked";
const ENDED: &[u8] = b"ended";

// A task's parts move together in scripts (see `super::store_tasks`): each runs whole, so a
// task's end is claimed once, and nothing changes a task after it. Each may run twice (a retry
// after a lost answer) without harm. Scripts answer arrays of plain values (never nil or
// false, which RESP3 would answer otherwise), and read the time from Redis.

/// KEYS: record, lease, scope set, summary. ARGV: record, ttl ms, lease ms, member, summary.
const CREATE: &str = "\
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('SET', KEYS[4], ARGV[5], 'PX', ARGV[2])
redis.call('SET', KEYS[2], '1', 'PX', ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
redis.call('ZADD', KEYS[3], now + tonumber(ARGV[2]), ARGV[4])
if redis.call('PTTL', KEYS[3]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[3], ARGV[2]) end
return 1";
/// KEYS: record, end, summary. ARGV: record, summary.
const UPDATE: &str = "\
if redis.call('EXISTS', KEYS[2]) == 1 or redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'KEEPTTL')
redis.call('SET', KEYS[3], ARGV[2], 'KEEPTTL')
return 1";
/// KEYS: record, end, lease, summary. ARGV: record, end marker (this claim's own), summary.
const END: &str = "\
local ttl = redis.call('PTTL', KEYS[1])
if ttl <= 0 then return 0 end
if not redis.call('SET', KEYS[2], ARGV[2], 'NX', 'PX', ttl) then
  if redis.call('GET', KEYS[2]) == ARGV[2] then return 1 end
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'KEEPTTL')
redis.call('SET', KEYS[4], ARGV[3], 'KEEPTTL')
redis.call('DEL', KEYS[3])
return 1";
/// KEYS: end, lease, inbox, record, inbox base. ARGV: lease ms (0: not renewed), how many
/// messages the run was handed in all. The inbox keeps those not handed yet (its base counts
/// the others), so asking again with the same count reads the same. {0, {}} once ended, else
/// {1, messages}.
const TICK: &str = "\
if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[4]) == 0 then return {0, {}} end
if ARGV[1] ~= '0' then redis.call('SET', KEYS[2], '1', 'PX', ARGV[1]) end
local base = tonumber(redis.call('GET', KEYS[5]) or '0')
local handed = tonumber(ARGV[2])
if handed > base then
  redis.call('LTRIM', KEYS[3], handed - base, -1)
  redis.call('SET', KEYS[5], handed, 'PX', math.max(redis.call('PTTL', KEYS[4]), 1))
end
return {1, redis.call('LRANGE', KEYS[3], 0, -1)}";
/// KEYS: record, lease. {0, '', 0} when there is none, else {1, record, leased}.
const READ: &str = "\
local r = redis.call('GET', KEYS[1])
if not r then return {0, '', 0} end
return {1, r, redis.call('EXISTS', KEYS[2])}";
/// KEYS: inbox, end, record. ARGV: message, the most kept. 1 queued, 0 ended, -1 full.
const SEND: &str = "\
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
local ttl = redis.call('PTTL', KEYS[3])
if ttl <= 0 then return 0 end
if redis.call('LLEN', KEYS[1]) >= tonumber(ARGV[2]) then return -1 end
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ttl)
return 1";
/// KEYS: scope set. ARGV: the most read, the summaries' and leases' name prefixes. Each live
/// task's member, summary and whether its lease holds ('1' or '0'), flat.
const LIST: &str = "\
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local out = {}
for _, m in ipairs(redis.call('ZREVRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1)) do
  local s = redis.call('GET', ARGV[2] .. m)
  if s then
    out[#out + 1] = m
    out[#out + 1] = s
    out[#out + 1] = tostring(redis.call('EXISTS', ARGV[3] .. m))
  end
end
return out";
/// A token from each bucket (KEYS), or none. ARGV: each bucket's size and tokens a ms. {0, ""}
/// when taken, else {the empty bucket's place (from 1), its tokens}. The store's clock counts.
const TAKE: &str = "\
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local left = {}
for i, key in ipairs(KEYS) do
  local cap, rate = tonumber(ARGV[2 * i - 1]), tonumber(ARGV[2 * i])
  local b = redis.call('HMGET', key, 't', 'at')
  local tokens, at = tonumber(b[1]) or cap, tonumber(b[2]) or now
  if now > at then tokens = math.min(cap, tokens + (now - at) * rate) end
  if tokens < 1 then return {i, tostring(tokens)} end
  left[i] = tokens - 1
end
for i, key in ipairs(KEYS) do
  local cap, rate = tonumber(ARGV[2 * i - 1]), tonumber(ARGV[2 * i])
  redis.call('HSET', key, 't', tostring(left[i]), 'at', tostring(now))
  local full = 86400000
  if rate > 0 then full = math.ceil((cap - left[i]) / rate) end
  redis.call('PEXPIRE', key, full + 1000)
end
return {0, ''}";

/// The store of `url` (`redis://` or `rediss://`), its key names and values made with `key`.
/// Refused in words for another scheme, a malformed URL, or one the client cannot use; the
/// store is not reached yet (it connects on first use, and again whenever it has to).
pub fn connect(url: &str, key: Arc<StateKey>) -> Result<Arc<dyn StateStore>, String> {
    Ok(Arc::new(RedisStore::new(url, key)?))
}

/// A Redis (`redis://`, `rediss://`) as the store replicas share.
pub struct RedisStore {
    client: redis::Client,
    /// Its URL without credentials.
    url: String,
    key: Arc<StateKey>,
    manager: OnceCell<ConnectionManager>,
    in_flight: Semaphore,
}

impl RedisStore {
    /// The store at `url` (`redis://` or `rediss://`); not reached until first used.
    pub fn new(url: &str, key: Arc<StateKey>) -> Result<Self, String> {
        let described = describe(url)?;
        if url.starts_with("rediss://") {
            // redis-rs builds its rustls configuration with the process's default provider.
            let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
        }
        let client = redis::Client::open(url)
            .map_err(|e| format!("stateStore {described} cannot be used: {}", words(&e)))?;
        Ok(Self {
            client,
            url: described,
            key,
            manager: OnceCell::new(),
            in_flight: Semaphore::new(MAX_IN_FLIGHT),
        })
    }

    /// The connection, made the first time (and again after a failed first attempt).
    async fn manager(&self) -> Result<ConnectionManager, String> {
        let manager = self
            .manager
            .get_or_try_init(|| async {
                let config = ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(CONNECT_TIMEOUT))
                    .set_response_timeout(Some(super::store::TIMEOUT))
                    .set_number_of_retries(2)
                    .set_max_delay(MAX_RECONNECT_DELAY);
                ConnectionManager::new_with_config(self.client.clone(), config)
                    .await
                    .map_err(|e| words(&e))
            })
            .await?;
        Ok(manager.clone())
    }

    /// `cmd`'s answer, bounded, at most [`MAX_IN_FLIGHT`] at once.
    async fn query<T: redis::FromRedisValue + Send>(
        &self,
        cmd: redis::Cmd,
    ) -> Result<T, StoreError> {
        bounded(&self.url, async {
            let _permit = self
                .in_flight
                .acquire()
                .await
                .map_err(|_| "the store is closed".to_string())?;
            let mut manager = self.manager().await?;
            match cmd.query_async::<T>(&mut manager).await {
                // A connection lost before (the store restarted, say): the manager reconnects
                // on the failure, and the command is sent once more on the new connection.
                // (Every command here may run twice: see the scripts, and `mark_spent`.)
                Err(e)
                    if e.is_connection_refusal()
                        || e.is_io_error()
                        || e.is_connection_dropped() =>
                {
                    cmd.query_async::<T>(&mut manager)
                        .await
                        .map_err(|e| words(&e))
                }
                answered => answered.map_err(|e| words(&e)),
            }
        })
        .await
    }
}

#[async_trait]
impl StateStore for RedisStore {
    fn describe(&self) -> String {
        self.url.clone()
    }

    async fn ping(&self) -> Result<(), StoreError> {
        let answer: String = self.query(redis::cmd("PING")).await?;
        if answer == "PONG" {
            Ok(())
        } else {
            Err(StoreError {
                store: self.url.clone(),
                cause: "answered PING with something other than PONG".into(),
            })
        }
    }

    async fn mark_spent(&self, handle: &str, until_ms: u64) -> Result<bool, StoreError> {
        let name = spent_name(&self.key, handle);
        let value = self.key.seal_stored(&name, SPENT);
        let mut cmd = redis::cmd("SET");
        cmd.arg(&name)
            .arg(&value)
            .arg("NX")
            .arg("PX")
            .arg(ms_until(until_ms));
        // OK when it was set, nil when the key was there already: set by another replica, or
        // by this very request sent twice after a lost answer (then the value is its own).
        let set: Option<String> = self.query(cmd).await?;
        if set.is_some() {
            return Ok(true);
        }
        let mut cmd = redis::cmd("GET");
        cmd.arg(&name);
        let there: Option<String> = self.query(cmd).await?;
        Ok(there.as_deref() == Some(value.as_str()))
    }

    async fn revoke(&self, session: &str, ttl: Duration) -> Result<(), StoreError> {
        let name = revoked_name(&self.key, session);
        let value = self.key.seal_stored(&name, REVOKED);
        let mut cmd = redis::cmd("SET");
        cmd.arg(&name)
            .arg(value)
            .arg("PX")
            .arg((ttl.as_millis() as u64).max(1));
        let _: Option<String> = self.query(cmd).await?;
        Ok(())
    }

    async fn is_revoked(&self, session: &str) -> Result<bool, StoreError> {
        let name = revoked_name(&self.key, session);
        let mut cmd = redis::cmd("GET");
        cmd.arg(&name);
        let value: Option<String> = self.query(cmd).await?;
        // Only a value sealed for this name says so: the store cannot forge a revocation.
        Ok(value
            .and_then(|v| self.key.open_stored(&name, &v))
            .is_some_and(|plain| plain == REVOKED))
    }

    async fn task_create(
        &self,
        id: &str,
        scope: &str,
        write: TaskWrite<'_>,
        ttl: Duration,
        lease: Duration,
    ) -> Result<(), StoreError> {
        let names = TaskNames::new(&self.key, id);
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(CREATE)
            .arg(4)
            .arg(&names.record)
            .arg(&names.lease)
            .arg(scope_name(&self.key, scope))
            .arg(&names.summary)
            .arg(self.key.seal_stored(&names.record, write.record))
            .arg((ttl.as_millis() as u64).max(1))
            .arg((lease.as_millis() as u64).max(1))
            .arg(&names.member)
            .arg(self.key.seal_stored(&names.summary, write.summary));
        let _: i64 = self.query(cmd).await?;
        Ok(())
    }

    async fn task_update(&self, id: &str, write: TaskWrite<'_>) -> Result<bool, StoreError> {
        let names = TaskNames::new(&self.key, id);
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(UPDATE)
            .arg(3)
            .arg(&names.record)
            .arg(&names.end)
            .arg(&names.summary)
            .arg(self.key.seal_stored(&names.record, write.record))
            .arg(self.key.seal_stored(&names.summary, write.summary));
        Ok(self.query::<i64>(cmd).await? == 1)
    }

    async fn task_end(&self, id: &str, write: TaskWrite<'_>) -> Result<bool, StoreError> {
        let names = TaskNames::new(&self.key, id);
        let mut cmd = redis::cmd("EVAL");
        // Sealed afresh, the marker is this claim's own: a retry of it finds it there.
        cmd.arg(END)
            .arg(4)
            .arg(&names.record)
            .arg(&names.end)
            .arg(&names.lease)
            .arg(&names.summary)
            .arg(self.key.seal_stored(&names.record, write.record))
            .arg(self.key.seal_stored(&names.end, ENDED))
            .arg(self.key.seal_stored(&names.summary, write.summary));
        Ok(self.query::<i64>(cmd).await? == 1)
    }

    async fn task_tick(
        &self,
        id: &str,
        lease: Option<Duration>,
        handed: usize,
    ) -> Result<Option<Vec<Option<Vec<u8>>>>, StoreError> {
        let names = TaskNames::new(&self.key, id);
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(TICK)
            .arg(5)
            .arg(&names.end)
            .arg(&names.lease)
            .arg(&names.inbox)
            .arg(&names.record)
            .arg(&names.inbox_base)
            .arg(lease.map_or(0, |l| (l.as_millis() as u64).max(1)))
            .arg(handed);
        let (running, messages): (i64, Vec<String>) = self.query(cmd).await?;
        // Only messages sealed for this inbox count: the store cannot forge an answer (one that
        // does not open is read, and passed over).
        Ok((running == 1).then(|| {
            messages
                .iter()
                .map(|m| self.key.open_stored(&names.inbox, m))
                .collect()
        }))
    }

    async fn task_read(&self, id: &str) -> Result<Option<(Vec<u8>, bool)>, StoreError> {
        let names = TaskNames::new(&self.key, id);
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(READ).arg(2).arg(&names.record).arg(&names.lease);
        let (found, record, leased): (i64, String, i64) = self.query(cmd).await?;
        Ok((found == 1)
            .then(|| self.key.open_stored(&names.record, &record))
            .flatten()
            .map(|r| (r, leased == 1)))
    }

    async fn task_list(&self, scope: &str) -> Result<Vec<(Vec<u8>, bool)>, StoreError> {
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(LIST)
            .arg(1)
            .arg(scope_name(&self.key, scope))
            .arg(crate::bounds::SERVE_STORE_TASK_LIST)
            .arg(SUMMARY_PREFIX)
            .arg(LEASE_PREFIX);
        let flat: Vec<String> = self.query(cmd).await?;
        Ok(flat
            .chunks_exact(3)
            .filter_map(|c| {
                let name = format!("{SUMMARY_PREFIX}{}", c[0]);
                Some((self.key.open_stored(&name, &c[1])?, c[2] == "1"))
            })
            .collect())
    }

    async fn task_send(&self, id: &str, message: &[u8]) -> Result<Sent, StoreError> {
        let names = TaskNames::new(&self.key, id);
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(SEND)
            .arg(3)
            .arg(&names.inbox)
            .arg(&names.end)
            .arg(&names.record)
            .arg(self.key.seal_stored(&names.inbox, message))
            .arg(crate::bounds::SERVE_STORE_TASK_INBOX);
        Ok(match self.query::<i64>(cmd).await? {
            1 => Sent::Queued,
            -1 => Sent::Full,
            _ => Sent::Ended,
        })
    }

    async fn take_tokens(
        &self,
        buckets: &[Bucket],
    ) -> Result<Option<(usize, Duration)>, StoreError> {
        if buckets.is_empty() {
            return Ok(None);
        }
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(TAKE).arg(buckets.len());
        for bucket in buckets {
            cmd.arg(format!(
                "toolnexus:rate:{}",
                self.key.name(&format!("rate\0{}", bucket.name))
            ));
        }
        for bucket in buckets {
            // Tokens a millisecond.
            cmd.arg(bucket.capacity.to_string())
                .arg((bucket.per_minute / 60_000.0).to_string());
        }
        let (at, tokens): (i64, String) = self.query(cmd).await?;
        if at == 0 {
            return Ok(None);
        }
        let i = (at as usize).saturating_sub(1).min(buckets.len() - 1);
        let tokens = tokens.parse::<f64>().unwrap_or(0.0);
        Ok(Some((i, wait_for_token(tokens, buckets[i].per_minute))))
    }
}

/// `url` without credentials (`scheme://host:port[/db]`), or why it is not a store URL.
fn describe(url: &str) -> Result<String, String> {
    let refused = "stateStore must be a redis:// or rediss:// URL (e.g. redis://10.0.0.7:6379)";
    let parsed = reqwest::Url::parse(url).map_err(|_| refused.to_string())?;
    if parsed.scheme() != "redis" && parsed.scheme() != "rediss" {
        return Err(format!("{refused}, got {}://", parsed.scheme()));
    }
    let host = parsed
        .host_str()
        .filter(|h| !h.is_empty())
        .ok_or_else(|| format!("{refused}: it names no host"))?;
    let port = parsed.port().unwrap_or(6379);
    let path = parsed.path().trim_end_matches('/');
    Ok(format!("{}://{host}:{port}{path}", parsed.scheme()))
}

/// A client error in words, never with the URL (whose credentials it could quote).
fn words(e: &redis::RedisError) -> String {
    if e.is_timeout() {
        return "no answer in time".into();
    }
    if e.is_connection_refusal() {
        return "connection refused".into();
    }
    if e.is_io_error() || e.is_connection_dropped() {
        return format!("connection lost ({e})");
    }
    match (e.kind(), e.code()) {
        (redis::ErrorKind::AuthenticationFailed, _) | (_, Some("WRONGPASS")) => {
            "authentication failed (check the user name and password)".into()
        }
        (_, Some("NOAUTH")) => {
            "it needs a password, and the URL gives none (redis://:PASSWORD@host; \
                                from the environment with --state-store-env)"
                .into()
        }
        (_, Some(code)) => match e.detail() {
            Some(detail) => format!("it answered {code} {detail}"),
            None => format!("it answered {code}"),
        },
        _ => "it answered with something this server does not understand".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::store::TIMEOUT;
    use crate::serve::store::tests::{contract, key};

    /// Against a real Redis when `TOOLNEXUS_TEST_REDIS_URL` names one (skipped otherwise).
    #[tokio::test]
    async fn the_redis_store_keeps_the_contract() {
        let Ok(url) = std::env::var("TOOLNEXUS_TEST_REDIS_URL") else {
            return;
        };
        let store =
            RedisStore::new(&url, Arc::new(key("0123456789abcdef0123456789abcdef"))).unwrap();
        contract(&store).await;
    }

    #[tokio::test]
    async fn an_unreachable_redis_fails_in_words_within_the_bound() {
        // A port nothing listens on (bound, then released).
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let url = format!("redis://user:secret@127.0.0.1:{port}/0");
        let store =
            RedisStore::new(&url, Arc::new(key("0123456789abcdef0123456789abcdef"))).unwrap();
        assert_eq!(store.describe(), format!("redis://127.0.0.1:{port}/0"));
        let started = std::time::Instant::now();
        let e = store.is_revoked("s").await.unwrap_err();
        assert!(started.elapsed() < TIMEOUT + Duration::from_millis(500));
        let words = e.to_string();
        assert!(
            words.starts_with(&format!("redis://127.0.0.1:{port}/0: ")),
            "{words}"
        );
        assert!(!words.contains("secret"), "{words}");
    }

    #[test]
    fn urls_are_checked_in_words() {
        let k = Arc::new(key("0123456789abcdef0123456789abcdef"));
        let e = connect("http://127.0.0.1:6379", k.clone()).err().unwrap();
        assert!(e.contains("redis://"), "{e}");
        assert!(connect("redis://127.0.0.1:6379", k.clone()).is_ok());
        assert!(connect("rediss://cache.example.com:6380/2", k).is_ok());
    }
}
