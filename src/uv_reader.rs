//! Reading a loadMcp stdio server's stdout on the JavaScript thread, with a libuv poll handle.
//!
//! A direct call is written on the JavaScript thread; read by a tokio worker, its answer then
//! has to wake the JavaScript thread, a third thread hand-off a bare client does not pay. Here
//! the event loop itself watches the pipe: when it is readable the lines are read and screened
//! in place ([`Feed`]), answers to direct calls settle at once (through [`settle::here`], no
//! thread-safe function), and everything else goes on to rmcp on the runtime.
//!
//! Only Node itself gets this reader ([`chosen`]): libuv is no part of the Node-API ABI, and other
//! runtimes that load Node-API addons either lack it (Bun aborts the process on `uv_poll_init`)
//! or imitate it with other semantics (Deno). Anywhere else, or when libuv's functions are not in
//! the running process (`dlsym`) or fail the self-check, each stdout gets a thread of its own
//! ([`read_on_thread`](engine::connect::stdio::handoff::read_on_thread)). The choice is made once
//! per process. The handle is unreferenced: an idle source does not keep Node alive
//! (a pending call does, through `settle`). It is closed at end of file, when the server breaks
//! the framing, and by an environment cleanup hook (a worker thread ending).

use std::cell::{Cell, RefCell};
use std::ffi::{c_int, c_void};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::OnceLock;

use napi::bindgen_prelude::*;
use napi::sys;

use super::settle;
use engine::connect::stdio::handoff::{Feed, Flow, Taken, read_on_runtime};

/// `UV_POLL` in libuv's `uv_handle_type`, and `UV_READABLE` in its poll events.
const UV_POLL: c_int = 8;
const UV_READABLE: c_int = 1;
/// How much one wake-up reads at most, so a flooding server cannot hold the event loop.
const READ_CHUNK: usize = 64 * 1024;
const CHUNKS_PER_WAKE: usize = 16;

type PollCb = unsafe extern "C" fn(*mut c_void, c_int, c_int);
type CloseCb = unsafe extern "C" fn(*mut c_void);

type HandleSize = unsafe extern "C" fn(c_int) -> usize;
type PollInit = unsafe extern "C" fn(*mut sys::uv_loop_s, *mut c_void, c_int) -> c_int;
type PollStart = unsafe extern "C" fn(*mut c_void, c_int, PollCb) -> c_int;
type PollStop = unsafe extern "C" fn(*mut c_void) -> c_int;
type Close = unsafe extern "C" fn(*mut c_void, CloseCb);
type Unref = unsafe extern "C" fn(*mut c_void);
type Version = unsafe extern "C" fn() -> std::ffi::c_uint;

/// The libuv functions this needs, from the running process.
struct Uv {
    handle_size: HandleSize,
    poll_init: PollInit,
    poll_start: PollStart,
    poll_stop: PollStop,
    close: Close,
    unref: Unref,
    version: Version,
}

fn uv() -> Option<&'static Uv> {
    static UV: OnceLock<Option<Uv>> = OnceLock::new();
    UV.get_or_init(|| {
        fn find(name: &std::ffi::CStr) -> Option<*mut c_void> {
            // SAFETY: dlsym only reads the loaded objects' symbol tables; `name` is a valid C
            // string for the call, and a missing symbol is a null pointer, checked below.
            let found = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
            (!found.is_null()).then_some(found)
        }
        // SAFETY: each non-null symbol is libuv's function of that name (the node binary exports
        // libuv for addons; other runtimes are refused before any is called, see `chosen`), and
        // each type above is the signature libuv 1.x declares for it, so the pointer may be
        // called as that type.
        unsafe {
            Some(Uv {
                handle_size: std::mem::transmute::<*mut c_void, HandleSize>(find(
                    c"uv_handle_size",
                )?),
                poll_init: std::mem::transmute::<*mut c_void, PollInit>(find(c"uv_poll_init")?),
                poll_start: std::mem::transmute::<*mut c_void, PollStart>(find(c"uv_poll_start")?),
                poll_stop: std::mem::transmute::<*mut c_void, PollStop>(find(c"uv_poll_stop")?),
                close: std::mem::transmute::<*mut c_void, Close>(find(c"uv_close")?),
                unref: std::mem::transmute::<*mut c_void, Unref>(find(c"uv_unref")?),
                version: std::mem::transmute::<*mut c_void, Version>(find(c"uv_version")?),
            })
        }
    })
    .as_ref()
}

/// Whether this process reads stdouts on the JavaScript thread: on Node itself, with libuv's
/// functions found and passing the self-check. Decided by the first call (on a JavaScript
/// thread), the same for every environment of the process after that.
pub fn chosen(env: &Env) -> bool {
    static CHOSEN: OnceLock<bool> = OnceLock::new();
    *CHOSEN.get_or_init(|| is_node(env) && self_check(env))
}

/// Whether the runtime is Node: `process.release.name` is `"node"`, `process.versions.node` is
/// set, and neither Bun's (`process.versions.bun`) nor Deno's (`globalThis.Deno`) marks are
/// there (both runtimes name themselves Node for compatibility).
fn is_node(env: &Env) -> bool {
    let read = || -> Result<bool> {
        // SAFETY: `cast` reinterprets the handle without a check; the global object is always an
        // object, so the `Object` it becomes is what the value is.
        let global: Object = unsafe { env.get_global()?.to_unknown().cast() }?;
        let marked = |obj: &Object, key: &str| -> Result<bool> {
            Ok(obj.get_named_property::<Unknown>(key)?.get_type()? != ValueType::Undefined)
        };
        let object = |obj: &Object, key: &str| -> Result<Option<Object>> {
            let value: Unknown = obj.get_named_property(key)?;
            Ok(match value.get_type()? {
                // SAFETY: the type was just checked to be an object, which is what `Object`
                // wraps; the handle lives in this call's scope.
                ValueType::Object => Some(unsafe { value.cast::<Object>() }?),
                _ => None,
            })
        };
        if marked(&global, "Deno")? || marked(&global, "Bun")? {
            return Ok(false);
        }
        let Some(process) = object(&global, "process")? else {
            return Ok(false);
        };
        let (Some(versions), Some(release)) =
            (object(&process, "versions")?, object(&process, "release")?)
        else {
            return Ok(false);
        };
        if marked(&versions, "bun")? || marked(&versions, "deno")? || !marked(&versions, "node")? {
            return Ok(false);
        }
        let name: Unknown = release.get_named_property("name")?;
        if name.get_type()? != ValueType::String {
            return Ok(false);
        }
        // SAFETY: the type was just checked to be a string, which `String` reads.
        Ok(unsafe { name.cast::<String>() }? == "node")
    };
    let node = read().unwrap_or(false);
    // A getter that threw leaves its exception pending: it is this check's, not the caller's.
    let mut pending = false;
    // SAFETY: both calls take this environment's handle on its own JavaScript thread (this is
    // called from a JavaScript call), with valid out-pointers to locals.
    unsafe {
        sys::napi_is_exception_pending(env.raw(), &mut pending);
        if pending {
            let mut error = std::ptr::null_mut();
            sys::napi_get_and_clear_last_exception(env.raw(), &mut error);
        }
    }
    node && !pending
}

/// libuv's functions are all there, of libuv 1.x, with a poll handle of a plausible size, and
/// this environment has an event loop.
fn self_check(env: &Env) -> bool {
    uv().is_some_and(|uv| {
        // SAFETY: `uv()` found both functions (see there); neither takes a pointer, and
        // `UV_POLL` is a valid handle type, so the calls have no precondition left.
        let (version, size) = unsafe { ((uv.version)(), (uv.handle_size)(UV_POLL)) };
        version >> 16 == 1
            && size > 0
            && size <= 1024
            && env.get_uv_event_loop().is_ok_and(|l| !l.is_null())
    })
}

/// One server's stdout, read on this thread. Lives in a box whose pointer is the handle's
/// `data`, until libuv has closed the handle.
struct Reader {
    /// The `uv_poll_t`, in 8-byte words (its first field is `data`).
    handle: Box<[u64]>,
    fd: Option<OwnedFd>,
    feed: Option<Feed>,
    env: sys::napi_env,
    buf: Vec<u8>,
    closing: bool,
    /// The source it belongs to, which closes it (see [`close_owned`]).
    owner: usize,
}

thread_local! {
    /// This thread's open readers, closed by the environment's cleanup hook.
    static READERS: RefCell<Vec<*mut Reader>> = const { RefCell::new(Vec::new()) };
    static HOOKED: Cell<bool> = const { Cell::new(false) };
}

/// Reads `taken` on this (the JavaScript) thread; when that cannot start, the stdout is handed
/// back (the caller reads it on the runtime).
pub fn start(env: &Env, taken: Taken, owner: usize) -> std::result::Result<(), Taken> {
    if !chosen(env) {
        return Err(taken);
    }
    let (Some(uv), Ok(event_loop)) = (uv(), env.get_uv_event_loop()) else {
        return Err(taken);
    };
    if !HOOKED.get() {
        if env.add_env_cleanup_hook((), |_| close_all()).is_err() {
            return Err(taken);
        }
        HOOKED.set(true);
    }
    let fd = taken.fd.as_raw_fd();
    // SAFETY: `fd` is open (owned by `taken` for the whole block); F_GETFL/F_SETFL read and set
    // only its status flags and touch no memory. The reads must not block the event loop.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(taken);
        }
    }
    // SAFETY: as in `self_check`, which passed (`chosen`): no pointer, a valid handle type.
    let size = unsafe { (uv.handle_size)(UV_POLL) };
    let Taken {
        fd: owned,
        buffered,
        mut feed,
    } = taken;
    let words = size.div_ceil(8).max(1);
    let mut reader = Box::new(Reader {
        handle: vec![0u64; words].into_boxed_slice(),
        fd: None,
        feed: None,
        env: env.raw(),
        buf: vec![0; READ_CHUNK],
        closing: false,
        owner,
    });
    let handle = reader.handle.as_mut_ptr().cast::<c_void>();
    // SAFETY: `handle` has room for a `uv_poll_t`; the loop is this environment's, and this is
    // its thread.
    if unsafe { (uv.poll_init)(event_loop, handle, fd) } != 0 {
        return Err(Taken {
            fd: owned,
            buffered,
            feed,
        });
    }
    reader.fd = Some(owned);
    let stop = feed.push_here(reader.env, &buffered) == Flow::Stop;
    reader.feed = Some(feed);
    let reader = Box::into_raw(reader);
    // SAFETY: `handle` points into the reader's boxed words, initialised by `poll_init`; `data`
    // is a `uv_handle_t`'s first field, pointer-aligned (the words are u64), so writing the
    // reader's pointer there is in bounds. The box lives until `on_closed`. `unref` takes the
    // initialised handle on its loop's thread (this one).
    unsafe {
        *handle.cast::<*mut c_void>() = reader.cast();
        (uv.unref)(handle);
    }
    READERS.with(|readers| readers.borrow_mut().push(reader));
    // SAFETY: the handle was initialised above on this loop's thread, and `on_readable` has the
    // callback signature libuv declares.
    if stop || unsafe { (uv.poll_start)(handle, UV_READABLE, on_readable) } != 0 {
        // SAFETY: `reader` was boxed above and not closed yet (it is in READERS), and this is the
        // thread it belongs to.
        unsafe { close(reader) };
    }
    Ok(())
}

trait PushHere {
    fn push_here(&mut self, env: sys::napi_env, bytes: &[u8]) -> Flow;
}

impl PushHere for Feed {
    /// [`Feed::push`], the calls it finishes settled on this thread.
    fn push_here(&mut self, env: sys::napi_env, bytes: &[u8]) -> Flow {
        let mut flow = Flow::More;
        // The environment of this thread, which is running its event loop.
        let env = Env::from_raw(env);
        settle::here(&env, || flow = self.push(bytes));
        flow
    }
}

unsafe extern "C" fn on_readable(handle: *mut c_void, status: c_int, _events: c_int) {
    // SAFETY: libuv passes the handle `start` registered; its `data` was set there to the
    // reader's box, which lives until `on_closed` (never before this callback returns).
    let reader = unsafe { *handle.cast::<*mut Reader>() };
    let end = {
        // SAFETY: the box is live (above), and only this thread (the loop's) touches a reader,
        // so this is the one reference while it lives.
        let r = unsafe { &mut *reader };
        if r.closing {
            return;
        }
        status < 0 || read_available(r)
    };
    if end {
        // SAFETY: the reader is live and of this thread (above); `close` tolerates one that
        // is already closing.
        unsafe { close(reader) };
    // SAFETY: live and of this thread (above); the `&mut` borrow has ended.
    } else if unsafe { &*reader }.feed.as_ref().is_some_and(Feed::is_full) {
        // rmcp's side fell behind: the runtime reader waits for it without holding this thread.
        // SAFETY: as for the `close` above.
        let (fd, feed) = unsafe { close(reader) };
        if let (Some(fd), Some(feed)) = (fd, feed) {
            let buffered = Vec::new();
            read_on_runtime(Taken { fd, buffered, feed });
        }
    }
}

/// Reads what the pipe holds (a bounded amount); true once no more will come.
fn read_available(r: &mut Reader) -> bool {
    let (Some(fd), Some(feed)) = (r.fd.as_ref(), r.feed.as_mut()) else {
        return true;
    };
    let fd = fd.as_raw_fd();
    let buf = &mut r.buf;
    let mut end = false;
    // The environment of this thread, which is running its event loop.
    let env = Env::from_raw(r.env);
    settle::here(&env, || {
        for _ in 0..CHUNKS_PER_WAKE {
            // SAFETY: `fd` is open (owned by the reader) and `buf` is valid for its length.
            let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
            if n > 0 {
                if feed.push(&buf[..n as usize]) == Flow::Stop {
                    end = true;
                    return;
                }
                continue;
            }
            if n < 0 {
                match std::io::Error::last_os_error().kind() {
                    std::io::ErrorKind::WouldBlock => return,
                    std::io::ErrorKind::Interrupted => continue,
                    _ => {}
                }
            }
            // End of file, or a read error: either way no more messages come.
            end = true;
            return;
        }
    });
    end
}

/// Stops reading, and gives back the descriptor and the feed (dropped, rmcp's side sees the
/// end and the descriptor closes); the memory goes when libuv has closed the handle.
///
/// # Safety
/// `reader` is a live reader of this thread.
unsafe fn close(reader: *mut Reader) -> (Option<OwnedFd>, Option<Feed>) {
    // SAFETY: the caller promises a live reader of this thread, so no other reference to it
    // exists while this one does.
    let r = unsafe { &mut *reader };
    if r.closing {
        return (None, None);
    }
    r.closing = true;
    READERS.with(|readers| readers.borrow_mut().retain(|other| *other != reader));
    let Some(uv) = uv() else {
        return (None, None);
    };
    let handle = r.handle.as_mut_ptr().cast::<c_void>();
    // SAFETY: the handle is initialised and not yet closed (`closing` was false, and is set now,
    // so this runs once per handle), on its loop's thread. Stopped, it no longer watches the
    // descriptor, which may then be closed.
    unsafe {
        (uv.poll_stop)(handle);
        (uv.close)(handle, on_closed);
    }
    (r.fd.take(), r.feed.take())
}

unsafe extern "C" fn on_closed(handle: *mut c_void) {
    // SAFETY: `data` holds the pointer `Box::into_raw` gave in `start`; libuv calls this once,
    // when it is done with the handle inside the box, and nothing else frees it.
    unsafe { drop(Box::from_raw(*handle.cast::<*mut Reader>())) };
}

/// The environment is going away: every reader of its thread stops.
fn close_all() {
    HOOKED.set(false);
    let readers = READERS.with(|readers| readers.take());
    for reader in readers {
        // SAFETY: the list holds only live readers of this thread (`close` takes a reader out
        // before libuv may free it), and this hook runs on that thread.
        unsafe { close(reader) };
    }
}

/// The source `owner` closed: its readers stop.
pub fn close_owned(owner: usize) {
    let readers = READERS.with(|readers| readers.borrow().clone());
    for reader in readers {
        // SAFETY: the list holds only live readers of this thread (`close` takes a reader out
        // before libuv may free it), and this is a JavaScript call on that thread.
        if unsafe { &*reader }.owner == owner {
            // SAFETY: as just above; the shared borrow has ended.
            unsafe { close(reader) };
        }
    }
}
