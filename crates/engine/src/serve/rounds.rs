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
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rmcp::model::InputResponses;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio::sync::mpsc;

use super::abort::AbortOnDrop;
use super::context::CallContext;
use super::input::Pending;
use super::seal::{self, Purpose, StateKey};

use crate::bounds::SERVE_STATE_MAX_ANSWERS as MAX_ANSWERS;
pub(crate) use crate::bounds::{
    SERVE_MAX_PARKED as MAX_PARKED, SERVE_PARK_TIMEOUT as PARK_TIMEOUT,
};

pub(super) mod drive;
mod parking;

/// What a served run answers: a `tools/call`, a `prompts/get` or a `resources/read`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum SubjectKind {
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
pub(crate) struct Subject {
    pub(crate) kind: SubjectKind,
    pub(crate) name: String,
    pub(crate) source: String,
}

/// A served call between its start and its result: the run's task, the input requests it
/// waits on, and where new ones arrive.
pub(crate) struct Running {
    /// What the run answers, from the set the call started with.
    pub(crate) subject: Subject,
    pub(crate) task: AbortOnDrop<Value>,
    pub(crate) asks: Option<mpsc::UnboundedReceiver<Vec<Pending>>>,
    pub(crate) ctx: CallContext,
    pub(crate) pending: Vec<Pending>,
    pub(crate) started: Instant,
    /// Every answer the run has been given so far, by key (sealed into the next state, so
    /// another replica can run it again up to where it is).
    pub(crate) answered: Map<String, Value>,
    /// How many input-required results the call has had.
    pub(crate) round: u32,
    /// A digest of what the call was made with (tool arguments, prompt arguments, a URI), when
    /// its state is to be sealed.
    pub(crate) digest: Option<String>,
    /// Where the run asks to become a task (`ctx.startTask()`), when its call may become one.
    pub(crate) escalate: Option<mpsc::UnboundedReceiver<super::context::Escalation>>,
}

impl Running {
    /// New input requests of the run: those `responses` already answers (by key) are answered
    /// at once, the rest wait for the client.
    pub(crate) fn asked(&mut self, asks: Vec<Pending>, responses: &InputResponses) {
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
    pub(crate) fn allow_task(&mut self) {
        self.escalate = Some(self.ctx.allow_task());
    }

    /// The run may no longer become a task (it is one now).
    pub(crate) fn forbid_task(&mut self) {
        self.escalate = None;
        self.ctx.forbid_task();
    }

    /// The client's answers to what the run waits on; unanswered requests stay pending.
    pub(crate) fn answer(&mut self, responses: &InputResponses) {
        let pending = std::mem::take(&mut self.pending);
        self.asked(pending, responses);
    }

    /// Input requests that arrived meanwhile, without waiting for more.
    pub(crate) fn drain_asks(&mut self, responses: &InputResponses) {
        while let Some(asks) = self.asks.as_mut().and_then(|rx| rx.try_recv().ok()) {
            self.asked(asks, responses);
        }
    }
}

/// The runs waiting for their retry, keyed by the `requestState` they went out with (with a
/// state key, by the handle sealed in it).
#[derive(Default)]
pub(crate) struct Parking {
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

pub(crate) use crate::bounds::SERVE_MAX_SPENT_STATES as MAX_SPENT;

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
pub(crate) struct Limits {
    pub(crate) max: usize,
    pub(crate) timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max: MAX_PARKED,
            timeout: PARK_TIMEOUT,
        }
    }
}

/// A sealed `requestState` (with a state key): what any replica sharing the key needs to
/// continue the call.
#[derive(Serialize, Deserialize)]
pub(crate) struct Sealed {
    /// What the call is of.
    pub(crate) kind: SubjectKind,
    pub(crate) name: String,
    /// Digest of its arguments (a retry must bring the same ones).
    pub(crate) args: String,
    /// Digest of the principal it belongs to (None without auth).
    pub(crate) owner: Option<String>,
    pub(crate) round: u32,
    /// Milliseconds since the epoch after which it is refused.
    pub(crate) expires: u64,
    /// The parked run on the replica that sealed it.
    pub(crate) handle: String,
    /// Every answer given so far; None when they outgrew [`MAX_ANSWERS`].
    pub(crate) answers: Option<Map<String, Value>>,
    /// A forwarded call's upstream round (see [`CallContext::checkpoint`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) upstream: Option<Value>,
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
    pub(crate) fn open(key: &StateKey, text: &str) -> Option<Self> {
        key.open_json(Purpose::RequestState, text)
    }

    pub(crate) fn expired(&self) -> bool {
        seal::now_millis() > self.expires
    }
}

/// The digest a sealed state keeps of what a call was made with: a resource read's URI, a
/// tool's or prompt's arguments.
pub(crate) fn call_digest(kind: SubjectKind, name: &str, arguments: &Map<String, Value>) -> String {
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
