//! Input-required rounds of served calls in the 2026-07-28 era (SEP-2322, "MRTR").
//!
//! That era has no server-to-client requests: when a run asks for input (`ctx.elicit`,
//! `ctx.sample`, `ctx.listRoots`), the `tools/call` is answered with an input-required result
//! carrying the requests and a `requestState`, and the client retries the call with the
//! answers. The run itself keeps going: it stays parked here, keyed by that state, until the
//! retry comes, and the retry resumes the same run. Parked runs are bounded in number and in
//! time, so a client that never retries costs a slot for a while, not forever.
//!
//! Without a state key the `requestState` is a random handle to this process's memory (a
//! changed or foreign one is simply unknown), so a retry must reach the process that parked the
//! run. With one (`serve(addr, { stateKey })`) it is sealed ([`super::seal`]): it names the
//! subject, a digest of the arguments and of the principal, the round, an expiry, the handle
//! of the parked run, and every answer the run has been given. A retry that reaches a replica
//! without the parked run runs it again from the start with those answers (and the retry's),
//! so each question already answered is answered at once and the run reaches the next one or
//! its end; see [`drive::Retry`].

#![allow(deprecated)] // sampling and roots are deprecated by SEP-2577 but still served.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use rmcp::model::{InputRequiredResult, InputResponses};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

use super::abort::AbortOnDrop;
use super::context::CallContext;
use super::input::Pending;
use super::seal::{self, Purpose, StateKey};

use crate::bounds::SERVE_STATE_MAX_ANSWERS as MAX_ANSWERS;
pub use crate::bounds::{SERVE_MAX_PARKED as MAX_PARKED, SERVE_PARK_TIMEOUT as PARK_TIMEOUT};

pub(super) mod drive;

/// What a served run answers: a `tools/call`, a `prompts/get` or a `resources/read`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SubjectKind {
    Tool,
    Prompt,
    Resource,
}

impl SubjectKind {
    /// How a retry that names another subject is told whose run the state is.
    fn call_of(self) -> &'static str {
        match self {
            Self::Tool => "a call of tool",
            Self::Prompt => "a get of prompt",
            Self::Resource => "a read of resource",
        }
    }
}

/// The tool, prompt or resource a run is for (a retry must name the same one), and where it
/// came from (reported through `OnCall` for tools).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subject {
    pub kind: SubjectKind,
    pub name: String,
    pub source: String,
}

/// A served call between its start and its result: the run's task, the input requests it
/// waits on, and where new ones arrive.
pub struct Running {
    /// What the run answers, from the set the call started with.
    pub subject: Subject,
    pub task: AbortOnDrop<Value>,
    pub asks: Option<mpsc::UnboundedReceiver<Vec<Pending>>>,
    pub ctx: CallContext,
    pub pending: Vec<Pending>,
    pub started: Instant,
    /// Every answer the run has been given so far, by key (sealed into the next state, so
    /// another replica can run it again up to where it is).
    pub answered: Map<String, Value>,
    /// How many input-required results the call has had.
    pub round: u32,
    /// A digest of what the call was made with (tool arguments, prompt arguments, a URI), when
    /// its state is to be sealed.
    pub digest: Option<String>,
    /// Where the run asks to become a task (`ctx.startTask()`), when its call may become one.
    pub escalate: Option<mpsc::UnboundedReceiver<super::context::Escalation>>,
}

impl Running {
    /// New input requests of the run: those `responses` already answers (by key) are answered
    /// at once, the rest wait for the client.
    pub fn asked(&mut self, asks: Vec<Pending>, responses: &InputResponses) {
        for mut ask in asks {
            // Two waiting requests under one key would hide one of them: the later is renamed.
            let mut n = 1;
            let key = ask.key.clone();
            while self.pending.iter().any(|p| p.key == ask.key) {
                n += 1;
                ask.key = format!("{key}-{n}");
            }
            let ask = match responses.get(&ask.key) {
                Some(response) => {
                    let key = ask.key.clone();
                    match ask.accept(response) {
                        Ok(()) => {
                            // Kept only for a state that will be sealed (a digest is made
                            // only then).
                            if self.digest.is_some() {
                                self.answered.insert(key, response.clone());
                            }
                            continue;
                        }
                        Err(ask) => ask,
                    }
                }
                None => ask,
            };
            self.pending.push(ask);
        }
    }

    /// From now on the run may become a task partway (`ctx.startTask()`; see
    /// [`super::context::CallContext::start_task`]).
    pub fn allow_task(&mut self) {
        self.escalate = Some(self.ctx.allow_task());
    }

    /// The run may no longer become a task (it is one now).
    pub fn forbid_task(&mut self) {
        self.escalate = None;
        self.ctx.forbid_task();
    }

    /// The client's answers to what the run waits on; unanswered requests stay pending.
    pub fn answer(&mut self, responses: &InputResponses) {
        let pending = std::mem::take(&mut self.pending);
        self.asked(pending, responses);
    }

    /// Input requests that arrived meanwhile, without waiting for more.
    pub fn drain_asks(&mut self, responses: &InputResponses) {
        while let Some(asks) = self.asks.as_mut().and_then(|rx| rx.try_recv().ok()) {
            self.asked(asks, responses);
        }
    }
}

/// The runs waiting for their retry, keyed by the `requestState` they went out with (with a
/// state key, by the handle sealed in it).
#[derive(Default)]
pub struct Parking {
    runs: Mutex<HashMap<String, Parked>>,
    limits: Limits,
    /// The handles of sealed states already retried here (see [`Parking::spend`]).
    spent: Mutex<Spent>,
}

/// The handles of sealed states retried on this replica, each until its state expires (when
/// it would be refused anyway), at most [`MAX_SPENT`] (the oldest forgotten first).
#[derive(Default)]
struct Spent {
    until: HashMap<String, u64>,
    order: std::collections::VecDeque<(String, u64)>,
}

pub use crate::bounds::SERVE_MAX_SPENT_STATES as MAX_SPENT;

/// A waiting run: since when, and whether another replica (or this one, running it again) could
/// continue its call without it, from its sealed state.
struct Parked {
    since: Instant,
    run: Running,
    portable: bool,
    /// Whose call it is (the principal's key; None without auth).
    owner: Option<String>,
}

#[derive(Clone, Copy)]
pub struct Limits {
    pub max: usize,
    pub timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max: MAX_PARKED,
            timeout: PARK_TIMEOUT,
        }
    }
}

/// What [`make_room`] weighs of a parked run.
struct Waiting<'a> {
    handle: &'a str,
    owner: Option<&'a str>,
    since: Instant,
    portable: bool,
}

/// Which parked run, if any, makes room for a new run of `owner` when the space is full.
///
/// A run whose call its sealed state can continue (`portable`) is only a shortcut: dropping it
/// makes its retry run the call again. Behind a balancer most retries reach another replica and
/// leave their run here unclaimed. So the room comes from the newcomer's own runs or from
/// another principal's holding at least as many as the newcomer then would, the heaviest first
/// (the newcomer's own between equals): a principal that floods the space drops its own oldest
/// runs, never another's. A run that cannot be continued elsewhere is never dropped (the call is refused).
fn make_room<'a>(
    waiting: impl Iterator<Item = Waiting<'a>>,
    owner: Option<&str>,
) -> Option<String> {
    let waiting: Vec<Waiting<'a>> = waiting.collect();
    let mut held: HashMap<Option<&str>, usize> = HashMap::new();
    for run in &waiting {
        *held.entry(run.owner).or_default() += 1;
    }
    let newcomer = held.get(&owner).copied().unwrap_or(0) + 1;
    let mut owners: Vec<(Option<&str>, usize)> = held
        .into_iter()
        .filter(|&(who, count)| who == owner || count >= newcomer)
        .collect();
    // The heaviest first; between equals, the newcomer's own, then in a stable order.
    owners.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then_with(|| (b.0 == owner).cmp(&(a.0 == owner)))
            .then_with(|| a.0.cmp(&b.0))
    });
    owners.into_iter().find_map(|(candidate, _)| {
        waiting
            .iter()
            .filter(|run| run.owner == candidate && run.portable)
            .min_by_key(|run| run.since)
            .map(|run| run.handle.to_string())
    })
}

impl Parking {
    pub fn new(limits: Limits) -> Self {
        Self {
            runs: Mutex::default(),
            limits,
            spent: Mutex::default(),
        }
    }

    /// Marks the sealed state of `handle` (good until `expires`, ms since the epoch) retried
    /// here: false when it was already, so a replayed retry is refused instead of running the
    /// call again. Once per replica: another replica sharing the key has its own record.
    pub fn spend(&self, handle: &str, expires: u64) -> bool {
        let mut spent = self.spent.lock().unwrap_or_else(|e| e.into_inner());
        let now = seal::now_millis();
        while let Some((old, until)) = spent.order.front().cloned() {
            if until >= now && spent.until.len() < MAX_SPENT {
                break;
            }
            spent.order.pop_front();
            if spent.until.get(&old) == Some(&until) {
                spent.until.remove(&old);
            }
        }
        if spent.until.contains_key(handle) {
            return false;
        }
        spent.until.insert(handle.to_string(), expires);
        spent.order.push_back((handle.to_string(), expires));
        true
    }

    /// Parks `run` until its retry and answers the call with what it waits on.
    pub fn park(self: &Arc<Self>, mut run: Running) -> Result<InputRequiredResult, String> {
        let mut requests = Map::new();
        for pending in &run.pending {
            requests.insert(pending.key.clone(), pending.request());
        }
        run.round += 1;
        let handle = new_state();
        let (state_out, portable) = match seal::key_of(&run.ctx.request()) {
            Some(key) => {
                let sealed = Sealed::of(&run, &handle, self.limits.timeout);
                (sealed.seal(&key), sealed.answers.is_some())
            }
            None => (handle.clone(), false),
        };
        let state = handle;
        let owner = super::caller::owner_of(&run.ctx.request());
        {
            let mut runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
            let timeout = self.limits.timeout;
            runs.retain(|_, parked| parked.since.elapsed() < timeout);
            if runs.len() >= self.limits.max {
                let waiting = runs.iter().map(|(handle, parked)| Waiting {
                    handle,
                    owner: parked.owner.as_deref(),
                    since: parked.since,
                    portable: parked.portable,
                });
                match make_room(waiting, owner.as_deref()) {
                    Some(victim) => drop(runs.remove(&victim)),
                    None => {
                        return Err(format!(
                            "{} calls are already waiting for their clients' input; try again later",
                            runs.len()
                        ));
                    }
                }
            }
            let parked = Parked {
                since: Instant::now(),
                run,
                portable,
                owner,
            };
            runs.insert(state.clone(), parked);
        }
        // A client that never retries: the run is dropped (aborted) when its time is up.
        let parking: Weak<Self> = Arc::downgrade(self);
        let (key, timeout) = (state.clone(), self.limits.timeout);
        tokio::spawn(async move {
            tokio::time::sleep(timeout).await;
            if let Some(parking) = parking.upgrade() {
                let expired = parking
                    .runs
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&key);
                drop(expired);
            }
        });
        serde_json::from_value(json!({
            "resultType": "input_required",
            "inputRequests": requests,
            "requestState": state_out,
        }))
        .map_err(|e| format!("input requests could not be sent: {e}"))
    }

    /// The run parked under `state`, taken out for its retry, if it is one of `kind` `name`;
    /// a retry naming another leaves it waiting and learns whose run it is.
    pub fn take(
        &self,
        state: &str,
        kind: SubjectKind,
        name: &str,
        owner: Option<&str>,
    ) -> Result<Running, Option<String>> {
        let mut runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
        match runs.get(state).map(|parked| &parked.run) {
            Some(run) if run.ctx.owner().as_deref() != owner => return Err(None),
            Some(run) if run.subject.kind != kind || run.subject.name != name => {
                let of = &run.subject;
                return Err(Some(format!("{} \"{}\"", of.kind.call_of(), of.name)));
            }
            Some(_) => {}
            None => return Err(None),
        }
        match runs.remove(state) {
            Some(parked) if parked.since.elapsed() < self.limits.timeout => Ok(parked.run),
            _ => Err(None),
        }
    }

    pub fn count(&self) -> usize {
        self.runs.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Ends every waiting run (its retry can no longer arrive): each is aborted and its input
    /// requests fail, so nothing of it is left pending on the JavaScript side either.
    pub fn clear(&self) {
        let runs = std::mem::take(&mut *self.runs.lock().unwrap_or_else(|e| e.into_inner()));
        drop(runs);
    }
}

/// A sealed `requestState` (with a state key): what any replica sharing the key needs to
/// continue the call.
#[derive(Serialize, Deserialize)]
pub struct Sealed {
    /// What the call is of.
    pub kind: SubjectKind,
    pub name: String,
    /// Digest of its arguments (a retry must bring the same ones).
    pub args: String,
    /// Digest of the principal it belongs to (None without auth).
    pub owner: Option<String>,
    pub round: u32,
    /// Milliseconds since the epoch after which it is refused.
    pub expires: u64,
    /// The parked run on the replica that sealed it.
    pub handle: String,
    /// Every answer given so far; None when they outgrew [`MAX_ANSWERS`].
    pub answers: Option<Map<String, Value>>,
    /// A forwarded call's upstream round (see [`CallContext::checkpoint`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream: Option<Value>,
}

impl Sealed {
    fn of(run: &Running, handle: &str, timeout: Duration) -> Self {
        let upstream = run.ctx.checkpoint();
        let size = serde_json::to_vec(&(&run.answered, &upstream)).map_or(usize::MAX, |v| v.len());
        Self {
            kind: run.subject.kind,
            name: run.subject.name.clone(),
            args: run.digest.clone().unwrap_or_default(),
            owner: run.ctx.owner().map(|o| seal::digest(o.as_bytes())),
            round: run.round,
            expires: seal::now_millis() + timeout.as_millis() as u64,
            handle: handle.to_string(),
            answers: (size <= MAX_ANSWERS).then(|| run.answered.clone()),
            upstream: upstream.filter(|_| size <= MAX_ANSWERS),
        }
    }

    fn seal(&self, key: &StateKey) -> String {
        key.seal_json(Purpose::RequestState, self)
    }

    /// The state `text` holds, when `key` sealed it.
    pub fn open(key: &StateKey, text: &str) -> Option<Self> {
        key.open_json(Purpose::RequestState, text)
    }

    pub fn expired(&self) -> bool {
        seal::now_millis() > self.expires
    }
}

/// The digest a sealed state keeps of what a call was made with: a resource read's URI, a
/// tool's or prompt's arguments.
pub fn call_digest(kind: SubjectKind, name: &str, arguments: &Map<String, Value>) -> String {
    let made_with = match kind {
        SubjectKind::Resource => Value::String(name.to_string()),
        SubjectKind::Tool | SubjectKind::Prompt => Value::Object(arguments.clone()),
    };
    seal::digest(seal::canonical(&made_with).as_bytes())
}

/// 128 random bits, hex: unguessable, so a changed state names nothing.
pub(super) fn new_state() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // No system randomness: still unique, though guessable.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        bytes[..8].copy_from_slice(&n.to_le_bytes());
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod room_tests {
    use std::time::{Duration, Instant};

    use super::{Waiting, make_room};

    /// Parked runs as (handle, owner, age in seconds, portable).
    fn room(runs: &[(&str, Option<&str>, u64, bool)], owner: Option<&str>) -> Option<String> {
        let now = Instant::now() + Duration::from_secs(1000);
        make_room(
            runs.iter().map(|&(handle, who, age, portable)| Waiting {
                handle,
                owner: who,
                since: now - Duration::from_secs(age),
                portable,
            }),
            owner,
        )
    }

    #[test]
    fn a_flooding_principal_drops_its_own_runs_never_anothers() {
        let (mallory, alice, bob) = (Some("mallory"), Some("alice"), Some("bob"));
        let full = [
            ("a1", alice, 100, true),
            ("m1", mallory, 90, true),
            ("m2", mallory, 80, true),
            ("m3", mallory, 70, true),
            ("b1", bob, 60, true),
        ];
        // Mallory's next run drops Mallory's oldest, though Alice's is older.
        assert_eq!(room(&full, mallory).as_deref(), Some("m1"));
        // Bob (one held) drops from the heaviest: Mallory's oldest.
        assert_eq!(room(&full, bob).as_deref(), Some("m1"));
        // A newcomer with none drops from the heaviest too.
        assert_eq!(room(&full, Some("carol")).as_deref(), Some("m1"));
        // Alice's oldest is never the one dropped for anyone else.
        for who in [mallory, bob, Some("carol"), None] {
            assert_ne!(room(&full, who).as_deref(), Some("a1"));
        }
    }

    #[test]
    fn only_from_whoever_holds_at_least_as_many_and_only_portable_runs() {
        let (alice, bob) = (Some("alice"), Some("bob"));
        // Equal holdings: the newcomer drops its own oldest, not the other's.
        let even = [("a1", alice, 100, true), ("b1", bob, 90, true)];
        assert_eq!(room(&even, bob).as_deref(), Some("b1"));
        assert_eq!(room(&even, alice).as_deref(), Some("a1"));
        // Bob's runs cannot be continued elsewhere: Alice (one) cannot take Bob's (three), nor
        // drop her own, which is not portable either; Bob's own newcomer is refused too.
        let pinned = [
            ("a1", alice, 100, false),
            ("b1", bob, 90, false),
            ("b2", bob, 80, false),
            ("b3", bob, 70, false),
        ];
        assert_eq!(room(&pinned, alice), None);
        assert_eq!(room(&pinned, bob), None);
        // Without auth everyone is one owner: the oldest portable run, as before.
        let anonymous = [
            ("x", None, 50, false),
            ("y", None, 40, true),
            ("z", None, 30, true),
        ];
        assert_eq!(room(&anonymous, None).as_deref(), Some("y"));
    }
}
