//! One kind of thread-safe function for every JavaScript callback the engine calls from its
//! runtime threads, built one way.

use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunction;

/// A JavaScript function callable from any thread with `Args`, answering `Ret`. Weak: it never
/// keeps Node alive on its own. Not callee-handled: call it with `call_async_catch` (or
/// `call_with_return_value`), so a throw in it comes back as an `Err` instead of an uncaught
/// exception that would end Node.
pub type JsCallback<Args, Ret = ()> = ThreadsafeFunction<Args, Ret, Args, Status, false, true>;

/// `f` as a [`JsCallback`].
pub fn js_callback<Args, Ret>(f: Function<Args, Ret>) -> Result<JsCallback<Args, Ret>>
where
    Args: 'static + JsValuesTupleIntoVec,
    Ret: 'static + FromNapiValue,
{
    f.build_threadsafe_function()
        .weak::<true>()
        .callee_handled::<false>()
        .build()
}
