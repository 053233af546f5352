//! Direct requests over a stdio connection, beside rmcp.
//!
//! rmcp sends a request through its service task, which spawns a task per message, and hands
//! the answer back through a oneshot after parsing it into its typed model: about seven thread
//! wake-ups per call where a bare client needs two. A direct request is written by its caller
//! (on whatever thread it runs) through the shared [`StdinWriter`], and its answer is taken out
//! of the stdout reader before rmcp's typed parse and handed to the request's [`Settle`] right
//! there. rmcp still does everything else: the handshake, the server's requests, notifications
//! (progress included, so relays keyed by progress token keep working), its own requests.
//!
//! Direct ids start at [`FIRST_ID`], far above rmcp's ids and progress tokens (both count up
//! from 0), and below 2^53, so JavaScript servers keep them exact. A direct request's progress
//! token is its id. Timeouts need no task per request: one watchdog per connection sleeps until
//! the earliest deadline and is woken only when an earlier one is inserted.

mod peek;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio::sync::Notify;
use tokio::time::Instant;

use super::writer::StdinWriter;

/// The first direct request id (2^40).
pub(crate) const FIRST_ID: u64 = 1 << 40;
/// Room for this many pending requests is kept once a burst has settled.
const KEEP_PENDING: usize = 1024;

/// Why a direct request has no result.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Failure {
    /// The server answered with a JSON-RPC error: its code and message.
    JsonRpc { code: i32, message: String },
    /// No answer (nor progress) within the timeout; `notifications/cancelled` was sent.
    TimedOut(Duration),
    /// Aborted by the caller; `notifications/cancelled` was sent.
    Aborted,
    /// The connection ended: the server exited, broke the framing, or was closed.
    Closed,
}

/// What becomes of a request's answer: called once, with the raw `result` or why there is none,
/// on the thread that settled it (the reader, the watchdog, or the caller's own).
pub(crate) type Settle = Box<dyn for<'a> FnOnce(Result<&'a RawValue, Failure>) + Send>;

/// The direct requests of one connection. Clones share it.
#[derive(Clone)]
pub(crate) struct Direct {
    shared: Arc<Shared>,
}

struct Shared {
    writer: StdinWriter,
    table: Mutex<Table>,
    /// Wakes the watchdog: an earlier deadline, or the end of the connection.
    watchdog: Notify,
    /// The runtime the connection lives on, for work that cannot be done in place.
    runtime: tokio::runtime::Handle,
}

#[derive(Default)]
struct Table {
    next: u64,
    pending: HashMap<u64, Pending>,
    closed: bool,
    /// The deadline the watchdog sleeps until; None while it waits for one.
    watchdog_until: Option<Instant>,
}

/// Hears the `params` of each progress notification on one request, in the reader, before its
/// answer.
pub(crate) type Listener = Arc<dyn Fn(&RawValue) + Send + Sync>;

struct Pending {
    settle: Settle,
    /// Who hears its progress ([`Direct::send_heard`]).
    heard: Option<Listener>,
    timeout: Duration,
    deadline: Instant,
}

impl Direct {
    /// Requests written through `writer`; the watchdog runs on the current runtime.
    pub(crate) fn new(writer: StdinWriter) -> Self {
        let shared = Arc::new(Shared {
            writer,
            table: Mutex::new(Table {
                next: FIRST_ID,
                ..Table::default()
            }),
            watchdog: Notify::new(),
            runtime: tokio::runtime::Handle::current(),
        });
        tokio::spawn(watchdog(shared.clone()));
        Self { shared }
    }

    /// The runtime this connection lives on.
    pub(crate) fn runtime(&self) -> &tokio::runtime::Handle {
        &self.shared.runtime
    }

    /// A fresh request id (also the request's progress token), for [`Direct::send`].
    pub(crate) fn new_id(&self) -> u64 {
        let mut table = self.shared.lock();
        let id = table.next;
        table.next += 1;
        id
    }

    /// Sends request `id` (from [`Direct::new_id`]) with `params`, plus `_meta.progressToken`
    /// = `id`. `settle` gets the answer, or the failure after `timeout` (restarted by each
    /// progress notification). If the request cannot be sent, `settle` runs before this returns.
    pub(crate) fn send(
        &self,
        id: u64,
        method: &str,
        params: Map<String, Value>,
        timeout: Duration,
        settle: Settle,
    ) {
        self.send_heard(id, method, params, timeout, settle, None)
    }

    /// [`Direct::send`], and `heard` (when given) hears each progress notification on the
    /// request, in the reader: in order, and before the answer.
    pub(crate) fn send_heard(
        &self,
        id: u64,
        method: &str,
        mut params: Map<String, Value>,
        timeout: Duration,
        settle: Settle,
        heard: Option<Listener>,
    ) {
        let meta = params
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            meta.insert("progressToken".into(), Value::from(id));
        }
        let line = request_line(id, method, &params);
        let deadline = deadline_after(timeout);
        let wake = {
            let mut table = self.shared.lock();
            if table.closed {
                drop(table);
                return settle(Err(Failure::Closed));
            }
            // Registered before the line leaves, so the answer cannot come first.
            table.pending.insert(
                id,
                Pending {
                    settle,
                    heard,
                    timeout,
                    deadline,
                },
            );
            let earlier = table.watchdog_until.is_none_or(|until| deadline < until);
            if earlier {
                table.watchdog_until = Some(deadline);
            }
            earlier
        };
        if wake {
            self.shared.watchdog.notify_one();
        }
        if self.shared.writer.write_line(&line).is_err()
            && let Some(pending) = self.take(id)
        {
            (pending.settle)(Err(Failure::Closed));
        }
    }

    /// `method` with `params` as one direct request, its raw result awaited (reusable from any
    /// async code). Dropping the future forgets the request.
    pub(crate) async fn request(
        &self,
        method: &str,
        params: Map<String, Value>,
        timeout: Duration,
    ) -> Result<Box<RawValue>, Failure> {
        let (answered, answer) = tokio::sync::oneshot::channel();
        let id = self.new_id();
        let forget = self.forget_on_drop(id);
        self.send(
            id,
            method,
            params,
            timeout,
            Box::new(move |result| {
                let _ = answered.send(result.map(RawValue::to_owned));
            }),
        );
        let result = answer.await.unwrap_or(Err(Failure::Closed));
        drop(forget);
        result
    }

    /// Aborts request `id` if it is still pending: `notifications/cancelled` is written (with
    /// `reason`) and it settles as aborted. False when it had already settled.
    pub(crate) fn abort(&self, id: u64, reason: &str) -> bool {
        let Some(pending) = self.take(id) else {
            return false;
        };
        self.write_cancelled(id, reason);
        (pending.settle)(Err(Failure::Aborted));
        true
    }

    /// Forgets request `id` (its answer will be dropped); its settle is not called.
    pub(crate) fn forget(&self, id: u64) {
        self.take(id);
    }

    /// Forgets request `id` when dropped: for a caller that may stop waiting.
    pub(crate) fn forget_on_drop(&self, id: u64) -> Forget<'_> {
        Forget { direct: self, id }
    }

    /// Ends every pending request as [`Failure::Closed`]; later ones fail at once.
    pub(crate) fn close_all(&self) {
        let pending: Vec<Pending> = {
            let mut table = self.shared.lock();
            table.closed = true;
            table.pending.drain().map(|(_, p)| p).collect()
        };
        self.shared.watchdog.notify_one();
        for pending in pending {
            (pending.settle)(Err(Failure::Closed));
        }
    }

    fn take(&self, id: u64) -> Option<Pending> {
        let mut table = self.shared.lock();
        let pending = table.pending.remove(&id);
        // A burst of calls does not keep its table's memory once it is over.
        if table.pending.is_empty() && table.pending.capacity() > KEEP_PENDING {
            table.pending.shrink_to(KEEP_PENDING);
        }
        pending
    }

    fn is_pending(&self, id: u64) -> bool {
        self.shared.lock().pending.contains_key(&id)
    }

    /// Progress on request `id`: its timeout starts again, and whoever hears it is told.
    fn progressed(&self, id: u64, params: &RawValue) {
        let heard = self.shared.lock().pending.get_mut(&id).and_then(|pending| {
            pending.deadline = deadline_after(pending.timeout);
            pending.heard.clone()
        });
        if let Some(heard) = heard {
            heard(params);
        }
    }

    fn write_cancelled(&self, id: u64, reason: &str) {
        let notification = serde_json::json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": { "requestId": id, "reason": reason },
        });
        let mut line = notification.to_string().into_bytes();
        line.push(b'\n');
        let _ = self.shared.writer.write_line(&line);
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Forgets a request whose caller stopped waiting (see [`Direct::forget_on_drop`]).
pub(crate) struct Forget<'a> {
    direct: &'a Direct,
    id: u64,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.direct.forget(self.id);
    }
}

/// `timeout` from now (a year from now for a timeout too long to count).
fn deadline_after(timeout: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(timeout)
        .unwrap_or_else(|| now + Duration::from_secs(365 * 24 * 3600))
}

fn request_line(id: u64, method: &str, params: &Map<String, Value>) -> Vec<u8> {
    #[derive(serde::Serialize)]
    struct Request<'a> {
        jsonrpc: &'static str,
        id: u64,
        method: &'a str,
        params: &'a Map<String, Value>,
    }
    let request = Request {
        jsonrpc: "2.0",
        id,
        method,
        params,
    };
    let mut line = serde_json::to_vec(&request).unwrap_or_default();
    line.push(b'\n');
    line
}

/// Times requests out: sleeps until the earliest deadline, settles what expired, and sleeps
/// again; ends with the connection.
async fn watchdog(shared: Arc<Shared>) {
    let direct = Direct {
        shared: shared.clone(),
    };
    loop {
        let now = Instant::now();
        let (expired, next) = {
            let mut table = shared.lock();
            if table.closed {
                return;
            }
            let expired: Vec<u64> = table
                .pending
                .iter()
                .filter(|(_, p)| p.deadline <= now)
                .map(|(id, _)| *id)
                .collect();
            let expired: Vec<(u64, Pending)> = expired
                .into_iter()
                .filter_map(|id| table.pending.remove(&id).map(|p| (id, p)))
                .collect();
            let next = table.pending.values().map(|p| p.deadline).min();
            table.watchdog_until = next;
            (expired, next)
        };
        for (id, pending) in expired {
            // As rmcp does on a timeout: the server may stop working on it.
            direct.write_cancelled(id, "request timeout");
            (pending.settle)(Err(Failure::TimedOut(pending.timeout)));
        }
        match next {
            Some(deadline) => {
                tokio::select! {
                    _ = tokio::time::sleep_until(deadline) => {}
                    _ = shared.watchdog.notified() => {}
                }
            }
            None => shared.watchdog.notified().await,
        }
    }
}

#[cfg(test)]
mod tests;
