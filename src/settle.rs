//! Settling `tool.execute` calls of loadMcp tools in batches.
//!
//! napi's `spawn_future_with_callback` gives every call a deferred of its own: a thread-safe
//! function created and torn down, an `Error` with a captured stack trace, a cleanup hook, and
//! one wake-up of the JavaScript thread. A call here is instead a number: lib/source.js
//! keeps its promise's `resolve` under that number, and one thread-safe function per
//! environment carries finished calls back. Calls that finish while the JavaScript thread is busy
//! queue up and arrive in one wake-up, as one JSON text `[[id, result], …]` parsed once.
//!
//! The thread-safe function is weak while nothing is in flight, so an idle source never keeps
//! Node alive; it is referenced while a call is pending, so a pending call does (as a promise
//! from napi would).

use std::cell::{Cell, RefCell};
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
    /// lib/source.js's receiver, for settling calls where they finish on this thread.
    receive: FunctionRef<String, ()>,
    next_id: u32,
    in_flight: usize,
    watches: HashMap<u32, AbortWatch>,
}

thread_local! {
    // One per JavaScript environment: every environment (the main one, each worker) has a
    // thread of its own.
    static THREAD: RefCell<Option<Thread>> = const { RefCell::new(None) };
    // The queue whose calls are being finished on this, its JavaScript thread (see [`here`]).
    static HERE: Cell<*const Queue> = const { Cell::new(std::ptr::null()) };
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
        // On the JavaScript thread inside [`here`], the batch is handed over when it ends.
        let in_place = HERE.with(|here| std::ptr::eq(here.get(), Arc::as_ptr(&self.queue)));
        if first && !in_place {
            self.queue
                .wake
                .call((), ThreadsafeFunctionCallMode::NonBlocking);
        }
    }
}

/// Sets up this environment's queue; `receive` gets each batch text (internal: lib/source.js
/// calls it once as it loads, in each environment).
#[napi_derive::napi(ts_args_type = "receive: (batch: string) => void")]
pub fn receive_call_results(receive: Function<String, ()>) -> Result<()> {
    let receiver = receive.create_ref()?;
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
            receive: receiver,
            next_id: 0,
            in_flight: 0,
            watches: HashMap::new(),
        });
    });
    Ok(())
}

/// Runs `work` on the JavaScript thread, settling the calls it finishes when it ends, in one
/// batch and with no wake-up: for readers that run on the event loop itself.
pub fn here(env: &Env, work: impl FnOnce()) {
    let queue = THREAD.with(|thread| {
        thread
            .borrow()
            .as_ref()
            .map(|t| Arc::as_ptr(&t.queue))
            .unwrap_or(std::ptr::null())
    });
    let before = HERE.with(|here| here.replace(queue));
    work();
    HERE.with(|here| here.set(before));
    if queue.is_null() || before == queue {
        return;
    }
    let empty = THREAD.with(|thread| {
        thread.borrow().as_ref().is_none_or(|t| {
            t.queue
                .done
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .is_empty()
        })
    });
    if !empty {
        // SAFETY: on this environment's JavaScript thread, called from its event loop.
        unsafe { hand_over(env.raw()) };
    }
}

/// Calls lib/source.js's receiver with the batch, as a callback from the event loop (so promise
/// reactions run after it, as after a thread-safe function's call).
///
/// # Safety
/// `raw_env` must be this thread's environment, called from its event loop (not from inside
/// another napi call that holds a scope open).
unsafe fn hand_over(raw_env: napi::sys::napi_env) {
    use napi::sys;
    let env = Env::from_raw(raw_env);
    let mut scope = std::ptr::null_mut();
    // SAFETY (all calls): `raw_env` is this thread's environment, and the scope is closed below.
    unsafe {
        if sys::napi_open_handle_scope(raw_env, &mut scope) != sys::Status::napi_ok {
            return;
        }
        let receive = THREAD.with(|thread| {
            thread
                .borrow()
                .as_ref()
                .and_then(|t| t.receive.borrow_back(&env).ok().map(|f| f.raw()))
        });
        let batch = take_batch(&env);
        if let (Some(receive), Ok(batch)) = (receive, env.create_string(&batch)) {
            let mut resource = std::ptr::null_mut();
            let mut name = std::ptr::null_mut();
            let mut context = std::ptr::null_mut();
            let mut global = std::ptr::null_mut();
            sys::napi_create_object(raw_env, &mut resource);
            sys::napi_create_string_utf8(raw_env, c"toolnexus".as_ptr(), 9, &mut name);
            sys::napi_get_global(raw_env, &mut global);
            if sys::napi_async_init(raw_env, resource, name, &mut context) == sys::Status::napi_ok {
                let argv = [batch.raw()];
                let mut result = std::ptr::null_mut();
                let status = sys::napi_make_callback(
                    raw_env,
                    context,
                    global,
                    receive,
                    1,
                    argv.as_ptr(),
                    &mut result,
                );
                if status == sys::Status::napi_pending_exception {
                    let mut error = std::ptr::null_mut();
                    sys::napi_get_and_clear_last_exception(raw_env, &mut error);
                    sys::napi_fatal_exception(raw_env, error);
                }
                sys::napi_async_destroy(raw_env, context);
            }
        }
        sys::napi_close_handle_scope(raw_env, scope);
    }
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
