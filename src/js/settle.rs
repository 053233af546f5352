//! Settling `tool.execute` calls of loadMcp tools in batches.
//!
//! napi's `spawn_future_with_callback` gives every call a deferred of its own: a thread-safe
//! function created and torn down, an `Error` with a captured stack trace, a cleanup hook, and
//! one wake-up of the JavaScript thread. A call here is instead a number: the JavaScript glue
//! keeps its promise's `resolve` under that number, and one thread-safe function per
//! environment carries finished calls back. Calls that finish while the JavaScript thread is busy
//! queue up and arrive in one wake-up, as one JSON text `[[id, result], …]` parsed once.
//!
//! The thread-safe function is weak while nothing is in flight, so an idle source never keeps
//! Node alive; it is referenced while a call is pending, so a pending call does (as a promise
//! from napi would).

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{
    ThreadsafeCallContext, ThreadsafeFunction, ThreadsafeFunctionCallMode,
};

use super::abort::AbortWatch;

/// Wakes the JavaScript thread; its callback turns the queue into the batch text.
type Wake = ThreadsafeFunction<(), (), String, Status, false, true>;

/// What the runtime threads share: finished calls not yet delivered, and the wake-up.
struct Queue {
    done: Mutex<Vec<(u32, String)>>,
    wake: Wake,
}

/// The JavaScript thread's side: calls in flight and the abort listeners to remove.
struct Thread {
    queue: Arc<Queue>,
    next_id: u32,
    in_flight: usize,
    watches: HashMap<u32, AbortWatch>,
}

thread_local! {
    // One per JavaScript environment: every environment (the main one, each worker) has a
    // thread of its own.
    static THREAD: RefCell<Option<Thread>> = const { RefCell::new(None) };
}

/// Where a finished call's result goes; sendable to the runtime.
#[derive(Clone)]
pub struct Completion {
    id: u32,
    queue: Arc<Queue>,
}

impl Completion {
    pub fn id(&self) -> u32 {
        self.id
    }

    /// Hands `result` (JSON text) to the JavaScript thread, waking it unless a wake-up is
    /// already on its way.
    pub fn deliver(self, result: String) {
        let first = {
            let mut done = self.queue.done.lock().unwrap_or_else(|e| e.into_inner());
            done.push((self.id, result));
            done.len() == 1
        };
        if first {
            self.queue
                .wake
                .call((), ThreadsafeFunctionCallMode::NonBlocking);
        }
    }
}

/// Sets up this environment's queue; `receive` gets each batch text. Called once at init.
pub fn install(receive: Function<String, ()>) -> Result<()> {
    let wake: Wake = receive
        .build_threadsafe_function::<()>()
        .weak::<true>()
        .callee_handled::<false>()
        .build_callback(|ctx: ThreadsafeCallContext<()>| Ok(take_batch(&ctx.env)))?;
    let queue = Arc::new(Queue {
        done: Mutex::new(Vec::new()),
        wake,
    });
    THREAD.with(|thread| {
        *thread.borrow_mut() = Some(Thread {
            queue,
            next_id: 0,
            in_flight: 0,
            watches: HashMap::new(),
        });
    });
    Ok(())
}

/// Starts tracking a call (on the JavaScript thread); `watch` is its abort listener, removed
/// when the call settles.
pub fn begin(env: &Env, watch: Option<AbortWatch>) -> Result<Completion> {
    THREAD.with(|thread| {
        let mut thread = thread.borrow_mut();
        let thread = thread
            .as_mut()
            .ok_or_else(|| Error::from_reason("toolnexus: not initialised"))?;
        thread.next_id = thread.next_id.wrapping_add(1);
        let id = thread.next_id;
        if thread.in_flight == 0 {
            reference(&thread.queue, env, true);
        }
        thread.in_flight += 1;
        if let Some(watch) = watch {
            thread.watches.insert(id, watch);
        }
        Ok(Completion {
            id,
            queue: thread.queue.clone(),
        })
    })
}

/// Runs on the JavaScript thread: everything finished so far as one JSON array of
/// `[id, result]` pairs; the calls' listeners are removed and they no longer keep Node alive.
fn take_batch(env: &Env) -> String {
    THREAD.with(|thread| {
        let mut thread = thread.borrow_mut();
        let Some(thread) = thread.as_mut() else {
            return "[]".to_string();
        };
        let done =
            std::mem::take(&mut *thread.queue.done.lock().unwrap_or_else(|e| e.into_inner()));
        let mut batch =
            String::with_capacity(2 + done.iter().map(|(_, r)| r.len() + 14).sum::<usize>());
        batch.push('[');
        for (i, (id, result)) in done.iter().enumerate() {
            if i > 0 {
                batch.push(',');
            }
            let _ = write!(batch, "[{id},{result}]");
            if let Some(watch) = thread.watches.remove(id) {
                watch.release(env);
            }
        }
        batch.push(']');
        thread.in_flight = thread.in_flight.saturating_sub(done.len());
        if thread.in_flight == 0 {
            reference(&thread.queue, env, false);
        }
        batch
    })
}

/// A referenced wake-up keeps Node's event loop alive; a weak one does not. Node's own calls,
/// not napi-rs's `refer`/`unref`: those need the function exclusively, and a lock shared with
/// the runtime threads that call it would make the JavaScript thread wait for them.
fn reference(queue: &Queue, env: &Env, keep_alive: bool) {
    let raw = queue.wake.raw();
    // SAFETY: on the JavaScript thread of the environment that created the function.
    unsafe {
        if keep_alive {
            napi::sys::napi_ref_threadsafe_function(env.raw(), raw);
        } else {
            napi::sys::napi_unref_threadsafe_function(env.raw(), raw);
        }
    }
}
