//! The one writer of a stdio server's stdin, shared by rmcp's sends and the direct calls.
//!
//! Lines go out whole and in the order they were written, from any thread. On Unix a write
//! first tries the pipe itself with a non-blocking `write(2)` (the caller's thread, the
//! JavaScript thread included, does the I/O: no task is woken). What does not fit in the pipe
//! goes to a backlog that a flusher task drains as the server reads, and every later write
//! queues behind that backlog, so order holds. Elsewhere, and for writers without a pipe (the
//! tests' in-memory ones), every line goes through the flusher.

use std::sync::{Arc, Mutex, MutexGuard};

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::Notify;

/// A backlog buffer grown past this by one big line is given back after it.
const KEEP_BUFFER_BYTES: usize = 1024 * 1024;

/// Writes whole lines to a server's stdin. Clones share the one stdin.
#[derive(Clone)]
pub(crate) struct StdinWriter {
    shared: Arc<Shared>,
}

struct Shared {
    state: Mutex<State>,
    /// Wakes the flusher: there is backlog, or stdin is to be closed.
    wake: Notify,
}

#[derive(Default)]
struct State {
    /// Bytes written by callers and not yet by the flusher, in order.
    backlog: Vec<u8>,
    /// The flusher is writing bytes it took from the backlog: nothing may jump ahead of them.
    flushing: bool,
    /// `close` was asked for: the backlog goes out, then stdin is dropped.
    closing: bool,
    /// A write failed (the server closed its stdin or exited): later writes fail too.
    broken: bool,
    /// The pipe, for writing in place while the flusher has nothing to write. Only set while
    /// the flusher holds the stdin it belongs to, so it is open whenever it is set.
    #[cfg(unix)]
    fd: Option<std::os::fd::RawFd>,
}

impl StdinWriter {
    /// Takes `stdin` over; its flusher runs on the current tokio runtime. `pipe` is its file
    /// descriptor when writes may be tried in place (it must be non-blocking).
    pub(crate) fn new<W>(stdin: W, #[cfg(unix)] pipe: Option<std::os::fd::RawFd>) -> Self
    where
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let state = State {
            #[cfg(unix)]
            fd: pipe.filter(|fd| is_non_blocking(*fd)),
            ..State::default()
        };
        let shared = Arc::new(Shared {
            state: Mutex::new(state),
            wake: Notify::new(),
        });
        tokio::spawn(flush(shared.clone(), stdin));
        Self { shared }
    }

    /// Writes `line` (which ends with its newline) whole, after everything written before it.
    /// Returns once the line is written or queued; fails when stdin is closed or broken.
    pub(crate) fn write_line(&self, line: &[u8]) -> std::io::Result<()> {
        let mut state = self.shared.lock();
        if state.closing || state.broken {
            return Err(closed_error());
        }
        #[cfg_attr(not(unix), allow(unused_mut))]
        let mut rest = line;
        #[cfg(unix)]
        if state.backlog.is_empty()
            && !state.flushing
            && let Some(fd) = state.fd
        {
            match write_in_place(fd, rest) {
                Ok(0) => return Ok(()),
                Ok(left) => rest = &rest[rest.len() - left..],
                Err(e) => {
                    state.broken = true;
                    drop(state);
                    // The flusher drops stdin.
                    self.shared.wake.notify_one();
                    return Err(e);
                }
            }
        }
        let was_idle = state.backlog.is_empty();
        state.backlog.extend_from_slice(rest);
        drop(state);
        if was_idle {
            self.shared.wake.notify_one();
        }
        Ok(())
    }

    /// Ends stdin once what was written before has gone out (that is what tells a stdio server
    /// to exit). Later writes fail.
    pub(crate) fn close(&self) {
        self.shared.lock().closing = true;
        self.shared.wake.notify_one();
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The flusher: writes the backlog as the server reads it, and drops stdin on `close`.
async fn flush<W: AsyncWrite + Unpin>(shared: Arc<Shared>, mut stdin: W) {
    let mut chunk = Vec::new();
    loop {
        {
            let mut state = shared.lock();
            state.flushing = false;
            if state.backlog.is_empty() {
                if state.closing || state.broken {
                    #[cfg(unix)]
                    {
                        state.fd = None;
                    }
                    break;
                }
            } else {
                std::mem::swap(&mut chunk, &mut state.backlog);
                state.flushing = true;
            }
        }
        if chunk.is_empty() {
            shared.wake.notified().await;
            continue;
        }
        let written = async {
            stdin.write_all(&chunk).await?;
            stdin.flush().await
        };
        if written.await.is_err() {
            let mut state = shared.lock();
            state.broken = true;
            state.backlog = Vec::new();
        }
        // A big line's buffer is not kept for the small ones after it.
        if chunk.capacity() > KEEP_BUFFER_BYTES {
            chunk = Vec::new();
        } else {
            chunk.clear();
        }
    }
    drop(stdin);
}

/// Writes what the pipe takes now; how many bytes are left (0: all written).
#[cfg(unix)]
fn write_in_place(fd: std::os::fd::RawFd, mut bytes: &[u8]) -> std::io::Result<usize> {
    while !bytes.is_empty() {
        // SAFETY: `fd` is open (see `State::fd`) and `bytes` is valid for its length.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n >= 0 {
            bytes = &bytes[n as usize..];
            continue;
        }
        let error = std::io::Error::last_os_error();
        match error.kind() {
            std::io::ErrorKind::WouldBlock => break,
            std::io::ErrorKind::Interrupted => {}
            _ => return Err(error),
        }
    }
    Ok(bytes.len())
}

#[cfg(unix)]
fn is_non_blocking(fd: std::os::fd::RawFd) -> bool {
    // SAFETY: F_GETFL only reads the descriptor's flags.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    flags >= 0 && flags & libc::O_NONBLOCK != 0
}

fn closed_error() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::NotConnected,
        "the server's stdin is closed",
    )
}

#[cfg(all(test, unix))]
mod tests;
