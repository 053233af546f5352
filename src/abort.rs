//! The AbortSignal bridge: a JavaScript `AbortSignal` cancels a tokio `CancellationToken`.
//!
//! napi's built-in `AbortSignal` type overwrites `signal.onabort` and ignores a signal that is
//! already aborted, so the signal is taken as a plain object: `aborted` is checked first, then
//! an `abort` listener is added with `addEventListener` (removed again when the call settles, via
//! a private AbortController passed as the listener's `signal` option). The abort reason is
//! captured without coercion so the promise rejects with `signal.reason` itself.

use std::sync::{Arc, Mutex};

use napi::bindgen_prelude::*;
use tokio_util::sync::CancellationToken;

/// What else an abort does, run by the listener on the JavaScript thread (a direct call
/// writes its `notifications/cancelled` and settles there, with no task to wake).
pub type OnAbort = Arc<Mutex<Option<Box<dyn FnOnce() + Send>>>>;

type AddEventListener<'a> =
    Function<'a, FnArgs<(&'a str, Function<'a, Object<'a>, ()>, Object<'a>)>, Unknown<'a>>;

pub struct AbortWatch {
    token: CancellationToken,
    reason: Arc<Mutex<Option<Error>>>,
    detach: Option<ObjectRef>,
    on_abort: OnAbort,
}

pub enum Watch {
    /// The signal was already aborted: reject with this, start nothing.
    AlreadyAborted(Error),
    Watching(AbortWatch),
}

impl AbortWatch {
    pub fn token(&self) -> &CancellationToken {
        &self.token
    }

    /// Where to put what else the abort should do (run once, if the signal fires).
    pub fn on_abort(&self) -> OnAbort {
        self.on_abort.clone()
    }

    /// The captured `signal.reason`, once the signal fired.
    pub fn take_reason(&self) -> Option<Error> {
        self.reason.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// Removes the listener. Must run on the JavaScript thread.
    pub fn release(mut self, env: &Env) {
        if let Some(detach) = self.detach.take() {
            if let Ok(controller) = detach.get_value(env)
                && let Ok(abort) = controller.get_named_property::<Function<(), Unknown>>("abort")
            {
                let _ = abort.apply(controller, ());
            }
            let _ = detach.unref(env);
        }
    }
}

/// Wires `signal` (anything with `aborted`, `reason` and `addEventListener`) to a new token.
pub fn watch(env: &Env, signal: Option<Object>) -> Result<Watch> {
    let token = CancellationToken::new();
    let reason = Arc::new(Mutex::new(None));
    let on_abort = OnAbort::default();
    let Some(signal) = signal else {
        return Ok(Watch::Watching(AbortWatch {
            token,
            reason,
            detach: None,
            on_abort,
        }));
    };
    if signal
        .get_named_property::<bool>("aborted")
        .unwrap_or(false)
    {
        let value: Unknown = signal.get_named_property("reason")?;
        return Ok(Watch::AlreadyAborted(Error::from_unknown_without_coercion(
            value,
        )));
    }
    let slot = reason.clone();
    let cancel = token.clone();
    let also = on_abort.clone();
    let listener = env.create_function_from_closure("toolnexusAbort", move |ctx| {
        let event: Object = ctx.get(0)?;
        let target: Object = event.get_named_property("target")?;
        let value: Unknown = target.get_named_property("reason")?;
        *slot.lock().unwrap_or_else(|e| e.into_inner()) =
            Some(Error::from_unknown_without_coercion(value));
        cancel.cancel();
        let also = also.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(also) = also {
            also();
        }
        Ok(())
    })?;
    let global = env.get_global()?;
    let controller_class: Function<(), Unknown> = global.get_named_property("AbortController")?;
    let controller: Object = controller_class.new_instance(())?.coerce_to_object()?;
    let detach_signal: Object = controller.get_named_property("signal")?;
    let mut options = Object::new(env)?;
    options.set_named_property("once", true)?;
    options.set_named_property("signal", detach_signal)?;
    let add: AddEventListener = signal.get_named_property("addEventListener")?;
    add.apply(signal, ("abort", listener, options).into())?;
    Ok(Watch::Watching(AbortWatch {
        token,
        reason,
        detach: Some(controller.create_ref()?),
        on_abort,
    }))
}
