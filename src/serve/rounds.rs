//! Input-required rounds of served calls in the 2026-07-28 era (SEP-2322, "MRTR").
//!
//! That era has no server-to-client requests: when a run asks for input (`ctx.elicit`,
//! `ctx.sample`, `ctx.listRoots`), the `tools/call` is answered with an input-required result
//! carrying the requests and a `requestState`, and the client retries the call with the
//! answers. The run itself keeps going: it stays parked here, keyed by that state, until the
//! retry comes, and the retry resumes the same run. Parked runs are bounded in number and in
//! time, so a client that never retries costs a slot for a while, not forever.
//!
//! The state is a random handle to this process's memory (a changed or foreign one is simply
//! unknown), so a retry must reach the process that parked the run: behind a load balancer
//! that needs affinity for the call's retries.

#![allow(deprecated)] // sampling and roots are deprecated by SEP-2577 but still served.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use rmcp::model::{InputRequiredResult, InputResponses};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

use rmcp::ErrorData;
use rmcp::model::{CallToolResponse, CallToolResult};
use rmcp::service::{RequestContext, RoleServer};

use super::ServedTool;
use super::context::CallContext;
use super::input::{self, Pending};
use super::{AbortOnDrop, CallRecord, ToolServer, text_result, to_call_result};

pub use crate::bounds::{SERVE_MAX_PARKED as MAX_PARKED, SERVE_PARK_TIMEOUT as PARK_TIMEOUT};

/// A served call between its start and its result: the run's task, the input requests it
/// waits on, and where new ones arrive.
pub struct Running {
    /// The tool, from the tool set the call started with (a retry must name the same tool).
    pub tool: ServedTool,
    pub task: AbortOnDrop<Value>,
    pub asks: Option<mpsc::UnboundedReceiver<Vec<Pending>>>,
    pub ctx: CallContext,
    pub pending: Vec<Pending>,
    pub started: Instant,
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
                Some(response) => match ask.accept(response) {
                    Ok(()) => continue,
                    Err(ask) => ask,
                },
                None => ask,
            };
            self.pending.push(ask);
        }
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

/// The runs waiting for their retry, keyed by the `requestState` they went out with.
#[derive(Default)]
pub struct Parking {
    runs: Mutex<HashMap<String, (Instant, Running)>>,
    limits: Limits,
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

impl Parking {
    pub fn new(limits: Limits) -> Self {
        Self {
            runs: Mutex::default(),
            limits,
        }
    }

    /// Parks `run` until its retry and answers the call with what it waits on.
    pub fn park(self: &Arc<Self>, run: Running) -> Result<InputRequiredResult, String> {
        let mut requests = Map::new();
        for pending in &run.pending {
            requests.insert(pending.key.clone(), pending.request());
        }
        let state = new_state();
        {
            let mut runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
            let timeout = self.limits.timeout;
            runs.retain(|_, (parked, _)| parked.elapsed() < timeout);
            if runs.len() >= self.limits.max {
                return Err(format!(
                    "{} calls are already waiting for their clients' input; try again later",
                    runs.len()
                ));
            }
            runs.insert(state.clone(), (Instant::now(), run));
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
            "requestState": state,
        }))
        .map_err(|e| format!("input requests could not be sent: {e}"))
    }

    /// The run parked under `state`, taken out for its retry, if it is a call of `tool`; a
    /// retry naming another tool leaves it waiting and learns which tool it belongs to.
    pub fn take(&self, state: &str, tool: &str) -> Result<Running, Option<String>> {
        let mut runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
        match runs.get(state) {
            Some((_, run)) if run.tool.name != tool => return Err(Some(run.tool.name.clone())),
            Some(_) => {}
            None => return Err(None),
        }
        match runs.remove(state) {
            Some((parked, run)) if parked.elapsed() < self.limits.timeout => Ok(run),
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

/// 128 random bits, hex: unguessable, so a changed state names nothing.
fn new_state() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // No system randomness: still unique, though guessable.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        bytes[..8].copy_from_slice(&n.to_le_bytes());
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// How a served call runs: started on its own task, driven until it finishes or waits on input.
impl ToolServer {
    /// Starts a call's run on its own task, so a panicking caller (synchronously or while
    /// polled) costs one result, not the connection; dropping the guard aborts it.
    pub(super) fn start(
        &self,
        tool: ServedTool,
        arguments: Map<String, Value>,
        request: RequestContext<RoleServer>,
    ) -> Running {
        let (ctx, asks) = CallContext::new(request, self.log_level.clone());
        let caller = tool.caller.clone();
        let run_ctx = ctx.clone();
        let task = AbortOnDrop(tokio::spawn(async move {
            caller.call(arguments, run_ctx).await
        }));
        Running {
            tool,
            task,
            asks,
            ctx,
            pending: Vec::new(),
            started: Instant::now(),
        }
    }

    /// Runs a call until it finishes, the client cancels it, or (2026-07-28) it waits on input
    /// the client has to give: then it is parked and the call answered as input-required.
    pub(super) async fn drive(
        &self,
        mut run: Running,
        responses: InputResponses,
    ) -> Result<CallToolResponse, ErrorData> {
        loop {
            run.drain_asks(&responses);
            if !run.pending.is_empty() {
                return match self.shared.parking.park(run) {
                    Ok(input_required) => Ok(CallToolResponse::InputRequired(input_required)),
                    Err(why) => Ok(CallToolResponse::Complete(text_result(why, true))),
                };
            }
            let cancelled = run.ctx.request().ct.clone();
            let asks = async {
                match run.asks.as_mut() {
                    Some(asks) => asks.recv().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                joined = &mut run.task.0 => {
                    let result = match joined {
                        Ok(result) => to_call_result(result),
                        Err(_) => text_result("tool panicked", true),
                    };
                    return self.finish(&run, result);
                }
                Some(asks) = asks => run.asked(asks, &responses),
                _ = cancelled.cancelled() => {
                    let result = text_result("cancelled by the client", true);
                    return self.finish(&run, result);
                }
            }
        }
    }

    /// A finished call: reported to `OnCall`, and in the 2026-07-28 era a run that failed
    /// after being refused a capability is the client's MissingRequiredClientCapability.
    fn finish(&self, run: &Running, result: CallToolResult) -> Result<CallToolResponse, ErrorData> {
        let tool = &run.tool;
        let is_error = result.is_error.unwrap_or(false);
        if let Some(on_call) = &self.shared.on_call {
            on_call(CallRecord {
                name: tool.name.clone(),
                source: tool.source.clone(),
                ms: run.started.elapsed().as_secs_f64() * 1000.0,
                is_error,
            });
        }
        let request = run.ctx.request();
        if let (true, true, Some(kind)) = (is_error, input::is_modern(&request), run.ctx.refused())
        {
            let mut required = Map::new();
            required.insert(kind.capability().into(), json!({}));
            let required = serde_json::from_value(Value::Object(required)).unwrap_or_default();
            return Err(ErrorData::missing_required_client_capability(required));
        }
        Ok(CallToolResponse::Complete(result))
    }

    /// A 2026-07-28 retry: the parked run named by `state` resumes with the client's answers.
    pub(super) async fn resume(
        &self,
        tool: &str,
        state: &str,
        responses: InputResponses,
        request: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let mut run = match self.shared.parking.take(state, tool) {
            Ok(run) => run,
            Err(None) => {
                return Err(ErrorData::invalid_params(
                    "requestState is not one this server issued, or its call waited too long and ended",
                    None,
                ));
            }
            Err(Some(other)) => {
                return Err(ErrorData::invalid_params(
                    format!("requestState belongs to a call of tool \"{other}\""),
                    None,
                ));
            }
        };
        run.ctx.follow(request);
        run.answer(&responses);
        self.drive(run, responses).await
    }
}
