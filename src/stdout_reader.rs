//! Who reads a loadMcp source's stdio servers' stdouts once their handshake is done: the one
//! place that chooses, once per process, from what the runtime is.
//!
//! - [`StdoutReader::EventLoop`]: the JavaScript thread's event loop, a libuv poll on the pipe
//!   ([`super::uv_reader`]); Node only, and only when libuv's functions are there and pass the
//!   self-check ([`super::uv_reader::chosen`]).
//! - [`StdoutReader::Thread`]: a thread of its own per server, `toolnexus-out`
//!   ([`read_on_thread`]); what Bun, Deno and a Node without usable libuv get.
//! - [`StdoutReader::Runtime`]: nobody takes the stdout, the transport reads it on the runtime
//!   as it did for the handshake. A toolkit's sources get it: the toolkit calls them from its
//!   tasks, on the runtime, so their answers are read there. (listMcpTools and a gateway's
//!   upstreams never hand their stdouts over at all.)
//!
//! There is no environment switch. The one hook is [`stdout_reader_for_tests`], a function of the
//! generated binding only (not in the package's `index.d.ts`), so that Node's tests can run the
//! other readers' checks too.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use napi::bindgen_prelude::*;
use napi_derive::napi;

use engine::connect::session::Session;
use engine::connect::stdio::handoff::{Taken, read_on_thread};

/// Who reads the stdouts of one load's stdio servers after the handshake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StdoutReader {
    EventLoop,
    Thread,
    Runtime,
}

/// 0: no override; else a [`StdoutReader`] + 1 (see [`stdout_reader_for_tests`]).
static TEST_OVERRIDE: AtomicU8 = AtomicU8::new(0);

impl StdoutReader {
    /// The reader a load gets: the runtime's for a toolkit's sources, else the process's.
    pub fn for_load(env: &Env, toolkit: bool) -> Self {
        if toolkit {
            return Self::Runtime;
        }
        match TEST_OVERRIDE.load(Ordering::Relaxed) {
            1 => Self::EventLoop,
            2 => Self::Thread,
            3 => Self::Runtime,
            _ if super::uv_reader::chosen(env) => Self::EventLoop,
            _ => Self::Thread,
        }
    }

    /// Whether the session's stdouts are to be taken from their transports at all.
    pub fn takes(self) -> bool {
        self != Self::Runtime
    }

    /// Starts reading `taken` (of the session at `owner`, see [`super::uv_reader::close_owned`]);
    /// an event loop that cannot start a poll hands it to a thread of its own.
    pub fn read(self, env: &Env, taken: Taken, owner: usize) {
        let taken = match self {
            Self::EventLoop => super::uv_reader::start(env, taken, owner),
            Self::Thread | Self::Runtime => Err(taken),
        };
        if let Err(taken) = taken {
            read_on_thread(taken);
        }
    }
}

/// The stdouts of the session's direct-path servers, handed over to be read by a
/// [`StdoutReader`] that [`takes`](StdoutReader::takes) them.
pub async fn take_stdouts(session: &Arc<Session>) -> Vec<Taken> {
    let mut stdouts = Vec::new();
    for stdout in session.servers.iter().filter_map(|s| s.stdout()) {
        // The transport answers from its next read; a bound in case it is stuck elsewhere
        // (giving up, the stdout it hands over is read on the runtime).
        let taken = tokio::time::timeout(engine::bounds::STDOUT_HANDOVER_BOUND, stdout.take());
        if let Ok(Some(taken)) = taken.await {
            stdouts.push(taken);
        }
    }
    stdouts
}

/// A test hook, of the generated binding only (`binding.js`; not part of the package's API):
/// the stdout reader the loads that follow get instead of the runtime's own choice —
/// `"thread"`, `"runtime"` or `"event loop"` (Node's) — or, with no argument, the runtime's
/// choice again. `__test__/loop-reader.test.mjs` runs its checks with each.
#[napi]
pub fn stdout_reader_for_tests(reader: Option<String>) -> Result<()> {
    let value = match reader.as_deref() {
        None => 0,
        Some("event loop") => 1,
        Some("thread") => 2,
        Some("runtime") => 3,
        Some(_) => {
            return Err(Error::new(
                Status::InvalidArg,
                "toolnexus: the stdout reader is \"event loop\", \"thread\" or \"runtime\"",
            ));
        }
    };
    TEST_OVERRIDE.store(value, Ordering::Relaxed);
    Ok(())
}
