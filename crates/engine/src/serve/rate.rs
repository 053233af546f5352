//! Rate and concurrency limits of a served endpoint (`serve(addr, { limits })`): token buckets
//! and in-flight counts for each caller (its principal, or without auth its address), for the
//! whole endpoint, and for each limited tool.
//!
//! A caller's or the endpoint's rate (`callsPerMinute`, `burst`) is checked on every MCP
//! request (a POST) before it reaches rmcp: over it, the request is answered 429 with
//! `Retry-After`. Every concurrency cap (`concurrent`) counts tool calls in flight, and a
//! tool's rate is checked when a call of it starts: over either, the call is a tool error
//! saying which limit and when to retry. A call's run holds its places until it ends (a task's
//! until the task ends, a call parked on input while it waits), whatever its client does.
//! Callers are kept in a bounded table: one not seen for [`FORGET_AFTER`] (or whose bucket is
//! full again, with nothing in flight) is forgotten, and past [`MAX_CALLERS`] the newcomers
//! share one bucket, so a flood of addresses costs bounded memory and is still limited.
//!
//! With a state store replicas share (`stateStore`), the rates' buckets are in the store, so a
//! fleet allows each rate once, not once per replica ([`Limiter::admit_shared`]); the caps on
//! calls at once stay each replica's. While the store fails, each replica's own buckets count.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use futures::FutureExt;

use super::store::{Bucket, StateStore};
use super::tool::ToolCaller;

use crate::bounds::{
    SERVE_LIMIT_FORGET_AFTER as FORGET_AFTER, SERVE_LIMIT_MAX_CALLERS as MAX_CALLERS,
};

/// One limit: a token bucket of `burst` calls refilled at `per_minute`, and at most
/// `concurrent` in flight. Each part is optional.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Limit {
    pub per_minute: Option<f64>,
    /// The bucket's size (default: `per_minute`, at least 1).
    pub burst: Option<f64>,
    pub concurrent: Option<u32>,
}

impl Limit {
    fn capacity(&self) -> f64 {
        self.burst
            .or(self.per_minute)
            .map_or(f64::INFINITY, |c| c.max(1.0))
    }

    fn describe_rate(&self) -> String {
        let per_minute = self.per_minute.unwrap_or_default();
        let calls = if per_minute == 1.0 { "call" } else { "calls" };
        match self.burst {
            Some(burst) => format!("{per_minute} {calls} a minute (bursts of {burst})"),
            None => format!("{per_minute} {calls} a minute"),
        }
    }
}

/// An endpoint's limits.
#[derive(Debug, Clone, Default)]
pub struct RateLimits {
    /// For each caller: its principal, or without auth its address.
    pub caller: Option<Limit>,
    /// For the endpoint as a whole.
    pub overall: Option<Limit>,
    /// For each tool whose name matches the glob (the first that matches), all callers
    /// together.
    pub tools: Vec<(String, Limit)>,
}

impl RateLimits {
    pub fn is_empty(&self) -> bool {
        self.caller.is_none() && self.overall.is_none() && self.tools.is_empty()
    }
}

/// Which limit refused, and when to come back.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Refusal {
    /// Which limit: `caller`, `overall` or `tool`.
    pub(crate) limit: &'static str,
    pub(crate) message: String,
    /// Whole seconds, at least 1 (the `Retry-After` header).
    pub(crate) retry_after: u64,
}

#[derive(Debug)]
struct Slot {
    tokens: f64,
    at: Instant,
    inflight: u32,
}

impl Slot {
    fn new(limit: &Limit, now: Instant) -> Self {
        Slot {
            tokens: limit.capacity(),
            at: now,
            inflight: 0,
        }
    }

    fn refill(&mut self, limit: &Limit, now: Instant) {
        if let Some(per_minute) = limit.per_minute {
            let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
            self.tokens = (self.tokens + elapsed * per_minute / 60.0).min(limit.capacity());
        }
        self.at = now;
    }

    /// Why a call cannot start now for want of a concurrency place (None: it can).
    fn busy_refusal(&self, limit: &Limit, (which, whose): (&'static str, &str)) -> Option<Refusal> {
        let most = limit.concurrent?;
        if self.inflight < most {
            return None;
        }
        let calls = if most == 1 { "call" } else { "calls" };
        Some(Refusal {
            limit: which,
            message: format!("{whose} allows {most} {calls} at once; retry when one has finished"),
            retry_after: 1,
        })
    }

    /// Why a request cannot go on for want of a token (None: it can).
    fn rate_refusal(&self, limit: &Limit, whose: (&'static str, &str)) -> Option<Refusal> {
        let per_minute = limit.per_minute?;
        if self.tokens >= 1.0 {
            return None;
        }
        let wait = crate::serve::store::wait_for_token(self.tokens, per_minute);
        Some(rate_refused(limit, whose, wait))
    }

    /// Whether forgetting it changes nothing (a full bucket, nothing in flight).
    fn is_fresh(&self, limit: &Limit) -> bool {
        self.inflight == 0 && self.tokens >= limit.capacity()
    }
}

/// Refused by `limit`'s rate, with a token in `wait`.
fn rate_refused(
    limit: &Limit,
    (which, whose): (&'static str, &str),
    wait: std::time::Duration,
) -> Refusal {
    let retry_after = wait.as_secs_f64().ceil().clamp(1.0, 86_400.0) as u64;
    Refusal {
        limit: which,
        message: format!(
            "{whose} allows {}; retry in {retry_after} s",
            limit.describe_rate()
        ),
        retry_after,
    }
}

/// Slots by key, bounded (see the module's doc).
#[derive(Default)]
struct Table {
    slots: HashMap<String, (Slot, Instant)>,
    /// Keys added since the last sweep.
    added: usize,
    /// When the last sweep was (sweeps are at most [`SWEEP_INTERVAL`] apart, so a full table
    /// costs one pass a second, not one per newcomer).
    swept: Option<Instant>,
}

/// How many new keys between two sweeps of the forgotten ones...
const SWEEP_EVERY: usize = 4096;
/// ...and at most one sweep in this long.
const SWEEP_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

/// Where newcomers go once the table is full.
const OVERFLOW: &str = "\u{0}overflow";

impl Table {
    /// The slot of `key` (or, the table being full, the shared one), and the key it is under.
    fn slot(&mut self, key: &str, limit: &Limit, now: Instant) -> (&mut Slot, String) {
        let new = !self.slots.contains_key(key);
        let due = self
            .swept
            .is_none_or(|at| now.saturating_duration_since(at) >= SWEEP_INTERVAL);
        if new && due && (self.slots.len() >= MAX_CALLERS || self.added >= SWEEP_EVERY) {
            self.added = 0;
            self.swept = Some(now);
            self.slots.retain(|_, (slot, seen)| {
                slot.refill(limit, now);
                slot.inflight > 0
                    || (now.saturating_duration_since(*seen) < FORGET_AFTER
                        && !slot.is_fresh(limit))
            });
        }
        let key = if !new || self.slots.len() < MAX_CALLERS {
            key
        } else {
            OVERFLOW
        };
        if !self.slots.contains_key(key) {
            self.added += 1;
        }
        let (slot, seen) = self
            .slots
            .entry(key.to_string())
            .or_insert_with(|| (Slot::new(limit, now), now));
        *seen = now;
        slot.refill(limit, now);
        (slot, key.to_string())
    }

    fn release(&mut self, key: &str) {
        if let Some((slot, _)) = self.slots.get_mut(key) {
            slot.inflight = slot.inflight.saturating_sub(1);
        }
    }
}

/// An endpoint's limits and their state.
pub(crate) struct Limiter {
    limits: RateLimits,
    callers: Mutex<Table>,
    overall: Mutex<Option<Slot>>,
    tools: Mutex<Table>,
}

/// A request's or call's place in the concurrency limits it counts against; released on drop.
pub(crate) struct Permit {
    limiter: Arc<Limiter>,
    caller: Option<String>,
    overall: bool,
    tool: Option<String>,
}

impl Drop for Permit {
    fn drop(&mut self) {
        let limiter = &self.limiter;
        if let Some(key) = &self.caller {
            lock(&limiter.callers).release(key);
        }
        if self.overall
            && let Some(slot) = lock(&limiter.overall).as_mut()
        {
            slot.inflight = slot.inflight.saturating_sub(1);
        }
        if let Some(tool) = &self.tool {
            lock(&limiter.tools).release(tool);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Limiter {
    pub(crate) fn new(limits: RateLimits) -> Arc<Self> {
        Arc::new(Limiter {
            limits,
            callers: Mutex::default(),
            overall: Mutex::default(),
            tools: Mutex::default(),
        })
    }

    /// Whether requests are limited at all (a caller's or the overall rate).
    pub(crate) fn limits_requests(&self) -> bool {
        let rated = |limit: &Option<Limit>| limit.as_ref().is_some_and(|l| l.per_minute.is_some());
        rated(&self.limits.caller) || rated(&self.limits.overall)
    }

    /// Lets a request of `caller` in by the caller's and the overall rate (each request takes a
    /// token), or says which limit refused it.
    pub(crate) fn admit(&self, caller: &str) -> Result<(), Refusal> {
        let now = Instant::now();
        let mut callers = lock(&self.callers);
        let mut overall = lock(&self.overall);
        let caller_limit = self
            .limits
            .caller
            .as_ref()
            .filter(|l| l.per_minute.is_some());
        let overall_limit = self
            .limits
            .overall
            .as_ref()
            .filter(|l| l.per_minute.is_some());
        let mut caller_slot = match caller_limit {
            Some(limit) => {
                let (slot, _) = callers.slot(caller, limit, now);
                if let Some(refusal) = slot.rate_refusal(limit, RATE_OF_CALLER) {
                    return Err(refusal);
                }
                Some(slot)
            }
            None => None,
        };
        if let Some(limit) = overall_limit {
            let slot = overall.get_or_insert_with(|| Slot::new(limit, now));
            slot.refill(limit, now);
            if let Some(refusal) = slot.rate_refusal(limit, RATE_OF_SERVER) {
                return Err(refusal);
            }
            slot.tokens -= 1.0;
        }
        if let Some(slot) = caller_slot.as_mut() {
            slot.tokens -= 1.0;
        }
        Ok(())
    }

    /// [`Limiter::admit`] with the rates' buckets in `store`, which replicas share (so N
    /// replicas allow the limit, not N times it). While the store fails, this replica's own
    /// buckets count, as without one.
    pub(crate) async fn admit_shared(
        &self,
        store: &dyn StateStore,
        caller: &str,
    ) -> Result<(), Refusal> {
        let mut buckets = Vec::new();
        let mut whose = Vec::new();
        let rated = |limit: &Option<Limit>| limit.clone().filter(|l| l.per_minute.is_some());
        if let Some(limit) = rated(&self.limits.caller) {
            buckets.push(bucket(&format!("caller\0{caller}"), &limit));
            whose.push((limit, RATE_OF_CALLER));
        }
        if let Some(limit) = rated(&self.limits.overall) {
            buckets.push(bucket("overall", &limit));
            whose.push((limit, RATE_OF_SERVER));
        }
        match store.take_tokens(&buckets).await {
            Ok(None) => Ok(()),
            Ok(Some((at, wait))) => {
                let (limit, whose) = &whose[at.min(whose.len() - 1)];
                Err(rate_refused(limit, *whose, wait))
            }
            Err(_) => self.admit(caller),
        }
    }

    /// [`Limiter::admit_call`] with the tools' rates in `store` (see [`Limiter::admit_shared`];
    /// the concurrency caps stay each replica's own).
    pub(crate) async fn admit_call_shared(
        self: &Arc<Self>,
        store: Option<&dyn StateStore>,
        caller: &str,
        tool: &str,
    ) -> Result<Permit, Refusal> {
        let rated = self
            .tool_limit(tool)
            .filter(|limit| limit.per_minute.is_some())
            .cloned();
        let (Some(store), Some(limit)) = (store, rated) else {
            return self.admit_call(caller, tool);
        };
        let permit = self.admit_call_with(caller, tool, false)?;
        let whose = format!("the limit of tool {tool}");
        match store
            .take_tokens(&[bucket(&format!("tool\0{tool}"), &limit)])
            .await
        {
            Ok(None) => Ok(permit),
            Ok(Some((_, wait))) => Err(rate_refused(&limit, ("tool", &whose), wait)),
            Err(_) => {
                drop(permit);
                self.admit_call(caller, tool)
            }
        }
    }

    /// The limit of `tool`: the first of `tools` whose glob names it.
    fn tool_limit(&self, tool: &str) -> Option<&Limit> {
        self.limits
            .tools
            .iter()
            .find(|(glob, _)| super::auth::glob_matches(glob, tool))
            .map(|(_, limit)| limit)
    }

    /// Lets a call of `tool` by `caller` start: its place in every concurrency cap and its
    /// tool's rate, held by the permit until it drops; or which limit refused it.
    pub(crate) fn admit_call(
        self: &Arc<Self>,
        caller: &str,
        tool: &str,
    ) -> Result<Permit, Refusal> {
        self.admit_call_with(caller, tool, true)
    }

    /// [`Limiter::admit_call`], the tool's rate taken here only when `rate`.
    fn admit_call_with(
        self: &Arc<Self>,
        caller: &str,
        tool: &str,
        rate: bool,
    ) -> Result<Permit, Refusal> {
        let now = Instant::now();
        let mut permit = Permit {
            limiter: self.clone(),
            caller: None,
            overall: false,
            tool: None,
        };
        if let Some(limit) = self
            .limits
            .caller
            .as_ref()
            .filter(|l| l.concurrent.is_some())
        {
            let mut callers = lock(&self.callers);
            let (slot, key) = callers.slot(caller, limit, now);
            if let Some(refusal) = slot.busy_refusal(limit, RATE_OF_CALLER) {
                return Err(refusal);
            }
            slot.inflight += 1;
            permit.caller = Some(key);
        }
        if let Some(limit) = self
            .limits
            .overall
            .as_ref()
            .filter(|l| l.concurrent.is_some())
        {
            let mut overall = lock(&self.overall);
            let slot = overall.get_or_insert_with(|| Slot::new(limit, now));
            if let Some(refusal) = slot.busy_refusal(limit, RATE_OF_SERVER) {
                return Err(refusal);
            }
            slot.inflight += 1;
            permit.overall = true;
        }
        if let Some(limit) = self.tool_limit(tool) {
            let mut tools = lock(&self.tools);
            let (slot, key) = tools.slot(tool, limit, now);
            let whose = ("tool", format!("the limit of tool {tool}"));
            let whose = (whose.0, whose.1.as_str());
            if let Some(refusal) = slot
                .busy_refusal(limit, whose)
                .or_else(|| rate.then(|| slot.rate_refusal(limit, whose)).flatten())
            {
                return Err(refusal);
            }
            if rate && limit.per_minute.is_some() {
                slot.tokens -= 1.0;
            }
            slot.inflight += 1;
            permit.tool = Some(key);
        }
        Ok(permit)
    }

    /// Whether calls are limited at all (a concurrency cap, or a tool's limit).
    pub(crate) fn limits_calls(&self) -> bool {
        let capped = |limit: &Option<Limit>| limit.as_ref().is_some_and(|l| l.concurrent.is_some());
        capped(&self.limits.caller) || capped(&self.limits.overall) || !self.limits.tools.is_empty()
    }
}

/// `limit`'s bucket named `name` in a shared store.
fn bucket(name: &str, limit: &Limit) -> Bucket {
    Bucket {
        name: name.to_string(),
        capacity: limit.capacity(),
        per_minute: limit.per_minute.unwrap_or(0.0),
    }
}

const RATE_OF_CALLER: (&str, &str) = ("caller", "the limit for each caller");
const RATE_OF_SERVER: (&str, &str) = ("overall", "the server's overall limit");

/// `inner`, whose run holds `permit` (its places in the limits) until it ends: answered, or,
/// as a task, finished.
pub(crate) fn held(inner: Arc<dyn ToolCaller>, permit: Permit) -> Arc<dyn ToolCaller> {
    let permit = Mutex::new(Some(permit));
    super::tool::around(inner, move |inner, arguments, ctx| {
        let permit = lock(&permit).take();
        let run = inner.call(arguments, ctx);
        async move {
            let _permit = permit;
            run.await
        }
        .boxed()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limiter(caller: Limit) -> Arc<Limiter> {
        Limiter::new(RateLimits {
            caller: Some(caller),
            ..Default::default()
        })
    }

    #[test]
    fn a_burst_is_let_through_then_refused_with_when_to_retry() {
        let limits = limiter(Limit {
            per_minute: Some(6.0),
            burst: Some(2.0),
            concurrent: None,
        });
        limits.admit("alice").unwrap();
        limits.admit("alice").unwrap();
        let refused = limits.admit("alice").err().unwrap();
        assert_eq!(
            refused,
            Refusal {
                limit: "caller",
                message: "the limit for each caller allows 6 calls a minute (bursts of 2); \
                          retry in 10 s"
                    .into(),
                retry_after: 10,
            }
        );
        // Another caller has a bucket of its own.
        assert!(limits.admit("bob").is_ok());
    }

    #[test]
    fn concurrency_is_held_until_the_permit_drops() {
        let limits = limiter(Limit {
            concurrent: Some(1),
            ..Default::default()
        });
        assert!(
            !limits.limits_requests(),
            "a cap alone limits calls, not requests"
        );
        let first = limits.admit_call("alice", "t").unwrap();
        let refused = limits.admit_call("alice", "t").err().unwrap();
        assert_eq!(
            refused.message,
            "the limit for each caller allows 1 call at once; retry when one has finished"
        );
        assert!(limits.admit_call("bob", "t").is_ok());
        drop(first);
        assert!(limits.admit_call("alice", "t").is_ok());
    }

    #[test]
    fn callers_are_bounded_in_memory_and_the_overflow_is_still_limited() {
        let limits = limiter(Limit {
            per_minute: Some(1.0),
            ..Default::default()
        });
        for n in 0..MAX_CALLERS {
            limits.admit(&format!("caller-{n}")).unwrap();
        }
        // The table is full of recent, emptied buckets: newcomers share one.
        assert!(limits.admit("newcomer-1").is_ok());
        assert!(limits.admit("newcomer-2").is_err());
        assert!(lock(&limits.callers).slots.len() <= MAX_CALLERS + 1);
    }

    #[test]
    fn a_permit_taken_in_the_shared_slot_is_given_back_there() {
        let limits = limiter(Limit {
            concurrent: Some(1),
            ..Default::default()
        });
        let mut held = Vec::new();
        for n in 0..MAX_CALLERS {
            held.push(limits.admit_call(&format!("caller-{n}"), "t").unwrap());
        }
        let shared = limits.admit_call("newcomer", "t").unwrap();
        assert_eq!(shared.caller.as_deref(), Some(OVERFLOW));
        assert!(
            limits.admit_call("another", "t").is_err(),
            "the shared slot is taken"
        );
        drop(shared);
        assert!(limits.admit_call("another", "t").is_ok(), "and given back");
    }

    #[test]
    fn callers_not_seen_for_a_while_are_forgotten() {
        let limit = Limit {
            per_minute: Some(1.0),
            ..Default::default()
        };
        let mut table = Table::default();
        let start = Instant::now();
        table.slot("old", &limit, start).0.tokens -= 1.0;
        // Later, enough newcomers come for a sweep: the old caller's emptied bucket is gone
        // (it would be full again by now anyway), the recent ones stay.
        let later = start + FORGET_AFTER + std::time::Duration::from_secs(1);
        for n in 0..=SWEEP_EVERY {
            table.slot(&format!("new-{n}"), &limit, later).0.tokens -= 1.0;
        }
        assert!(!table.slots.contains_key("old"));
        assert!(table.slots.contains_key("new-0"));
    }

    #[test]
    fn a_tool_limit_applies_to_the_tools_its_glob_names() {
        let limits = Limiter::new(RateLimits {
            tools: vec![(
                "up_*".into(),
                Limit {
                    per_minute: Some(60.0),
                    burst: Some(1.0),
                    concurrent: None,
                },
            )],
            ..Default::default()
        });
        assert!(limits.admit_call("a", "other").unwrap().tool.is_none());
        assert!(limits.admit_call("a", "up_add").unwrap().tool.is_some());
        assert_eq!(
            limits.admit_call("a", "up_add").err().unwrap().message,
            "the limit of tool up_add allows 60 calls a minute (bursts of 1); retry in 1 s"
        );
        assert!(limits.admit_call("a", "up_echo").is_ok());
    }
}
