//! Handing a stdio server's stdout to another reader (the JavaScript thread's event loop on
//! Node, a thread of its own elsewhere).
//!
//! A direct call's answer read by a tokio worker needs one more thread hand-off than a bare
//! client, which reads the pipe on its own thread. Once the handshake is done, the transport can
//! give its stdout away: it stops reading at a line boundary of what it has consumed, and hands
//! over the descriptor with the bytes it had buffered, so none is lost. The new reader splits
//! and screens lines as the transport does ([`Feed`], with the functions of
//! [`super::screen`]), settles answers to direct requests where it reads them, and sends every
//! other line to the transport through a channel, which rmcp's `receive` then reads.

use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::{Notify, mpsc, oneshot};

use super::direct::Direct;
use super::screen::{KEEP_BUFFER_BYTES, Read, Screened, StdoutReport, screen, take_line, too_long};

/// A stdout given away: its descriptor, the bytes already read from it (a partial line
/// included), and where the lines for rmcp go.
pub struct Taken {
    pub fd: OwnedFd,
    /// Read from `fd` before the hand-off and not yet looked at: [`Feed::push`] them first.
    pub buffered: Vec<u8>,
    pub feed: Feed,
}

/// The request to give stdout away, shared by the transport and whoever asks.
pub struct Handoff {
    state: Mutex<State>,
    wake: Notify,
}

struct State {
    asked: Option<oneshot::Sender<Taken>>,
    /// The transport ended or cannot give its stdout away: asking gets nothing.
    refused: bool,
}

impl Default for Handoff {
    /// Refused until a transport that can give its stdout away says so.
    fn default() -> Self {
        Self {
            state: Mutex::new(State {
                asked: None,
                refused: true,
            }),
            wake: Notify::new(),
        }
    }
}

impl Handoff {
    /// Asks the transport for its stdout; `None` when it has ended or cannot give it.
    pub async fn take(&self) -> Option<Taken> {
        let (asked, answer) = oneshot::channel();
        {
            let mut state = self.lock();
            if state.refused {
                return None;
            }
            state.asked = Some(asked);
        }
        self.wake.notify_one();
        answer.await.ok()
    }

    /// The transport's side: waits until stdout is asked for.
    pub(super) async fn asked(&self) -> oneshot::Sender<Taken> {
        loop {
            if let Some(asked) = self.lock().asked.take() {
                return asked;
            }
            self.wake.notified().await;
        }
    }

    /// No stdout will be given (the transport ended, or it has none to give).
    pub(super) fn refuse(&self) {
        let mut state = self.lock();
        state.refused = true;
        state.asked = None;
    }

    /// Stdout may be asked for (the transport can give it away).
    pub(super) fn allow(&self) {
        self.lock().refused = false;
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Bytes of lines passed on and not yet taken by rmcp's side, past which a reader stops reading
/// (the server then blocks on its full pipe, as with the runtime reader).
use crate::bounds::STDOUT_QUEUE_BYTES as QUEUE_BOUND;

/// What is queued between a reader and the transport.
#[derive(Default)]
pub(super) struct Queued {
    bytes: AtomicUsize,
    /// The queue fell to half the bound.
    drained: Notify,
}

impl Queued {
    /// The transport took a line of `len` bytes.
    pub(super) fn taken(&self, len: usize) {
        let before = self.bytes.fetch_sub(len, Ordering::AcqRel);
        if before > QUEUE_BOUND / 2 && before - len <= QUEUE_BOUND / 2 {
            self.drained.notify_one();
        }
    }
}

/// What a reader does with the bytes it reads: lines split with the framing's bound, screened
/// with its checks (answers to direct requests settled here), the rest sent on to rmcp.
pub struct Feed {
    line: Vec<u8>,
    direct: Direct,
    report: Arc<StdoutReport>,
    lines: mpsc::UnboundedSender<String>,
    queued: Arc<Queued>,
}

/// Whether a reader goes on reading.
#[derive(Debug, PartialEq)]
pub enum Flow {
    More,
    /// The server broke the framing (recorded): no more lines are read.
    Stop,
}

impl Feed {
    pub(super) fn new(
        line: Vec<u8>,
        direct: Direct,
        report: Arc<StdoutReport>,
        lines: mpsc::UnboundedSender<String>,
        queued: Arc<Queued>,
    ) -> Self {
        Self {
            line,
            direct,
            report,
            lines,
            queued,
        }
    }

    /// rmcp's side is this far behind: stop reading until it catches up.
    pub fn is_full(&self) -> bool {
        self.queued.bytes.load(Ordering::Acquire) > QUEUE_BOUND
    }

    /// Takes the bytes just read.
    pub fn push(&mut self, mut bytes: &[u8]) -> Flow {
        while !bytes.is_empty() {
            match take_line(&mut self.line, bytes) {
                (_, Some(Read::TooLong)) => {
                    self.report.record_violation(too_long());
                    return Flow::Stop;
                }
                (taken, read) => {
                    bytes = &bytes[taken..];
                    if read.is_some() && self.line_done() == Flow::Stop {
                        return Flow::Stop;
                    }
                }
            }
        }
        Flow::More
    }

    fn line_done(&mut self) -> Flow {
        let flow = match screen(&self.direct, &self.line) {
            Screened::Pass(text) => {
                // rmcp's side gone: the session is closing, and the line has nobody to read it.
                if self.lines.send(text.to_string()).is_ok() {
                    self.queued.bytes.fetch_add(text.len(), Ordering::AcqRel);
                }
                Flow::More
            }
            Screened::Dropped => Flow::More,
            Screened::Invalid(detail) => {
                self.report.record_violation(detail);
                Flow::Stop
            }
        };
        if self.line.capacity() > KEEP_BUFFER_BYTES {
            self.line = Vec::new();
        } else {
            self.line.clear();
        }
        flow
    }
}

/// Reads a stdout given away on the runtime, for when the new reader could not start or gave
/// it back (rmcp's side fell behind): the lines still go through the feed, so nothing changes
/// for rmcp, and reading waits while the queue is full.
pub fn read_on_runtime(taken: Taken) {
    let runtime = taken.feed.direct.runtime().clone();
    runtime.spawn(async move {
        use tokio::io::AsyncReadExt;
        let Taken {
            fd,
            buffered,
            mut feed,
        } = taken;
        if feed.push(&buffered) == Flow::Stop {
            return;
        }
        let Ok(mut pipe) = tokio::net::unix::pipe::Receiver::from_owned_fd(fd) else {
            return;
        };
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            while feed.is_full() {
                tokio::select! {
                    _ = feed.queued.drained.notified() => {}
                    // rmcp's side is gone: the connection is over.
                    _ = feed.lines.closed() => return,
                }
            }
            let Ok(n) = pipe.read(&mut buf).await else {
                break;
            };
            if n == 0 || feed.push(&buf[..n]) == Flow::Stop {
                break;
            }
        }
    });
}

/// Reads a stdout given away on a thread of its own, with blocking reads: where the JavaScript
/// thread cannot read it (on runtimes other than Node), an answer then wakes one thread, the
/// reader, where the runtime's reactor wakes a worker, which may wake another to share the task
/// (a context switch a sequential call pays every time). The thread ends at end of file (the
/// server and its process tree gone, as every close and teardown sees to) or when the server
/// breaks the framing. While rmcp's side is behind, it waits, as [`read_on_runtime`] does.
pub fn read_on_thread(taken: Taken) {
    let runtime = taken.feed.direct.runtime().clone();
    let slot = Arc::new(Mutex::new(Some(taken)));
    let theirs = slot.clone();
    let spawned = std::thread::Builder::new()
        // `/proc/<pid>/task/<tid>/comm` shows it (15 bytes at most).
        .name("toolnexus-out".into())
        .stack_size(512 * 1024)
        .spawn(move || {
            let taken = theirs.lock().unwrap_or_else(|e| e.into_inner()).take();
            if let Some(taken) = taken {
                let _ = read_blocking(&runtime, taken);
            }
        });
    if spawned.is_err() {
        // No thread to be had: the runtime reads it.
        if let Some(taken) = slot.lock().unwrap_or_else(|e| e.into_inner()).take() {
            read_on_runtime(taken);
        }
    }
}

/// Reads `taken` until end of file, a line that stops the feed, or rmcp's side gone; how the
/// feed ended ([`Flow::Stop`] when it was stopped).
fn read_blocking(runtime: &tokio::runtime::Handle, taken: Taken) -> Flow {
    use std::io::Read as _;
    use std::os::fd::AsRawFd;
    // What settles in place may spawn on the connection's runtime.
    let _context = runtime.enter();
    let Taken {
        fd,
        buffered,
        mut feed,
    } = taken;
    // SAFETY: F_GETFL/F_SETFL only change the flags of this descriptor, which the reader owns.
    unsafe {
        let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK) < 0 {
            read_on_runtime(Taken { fd, buffered, feed });
            return Flow::More;
        }
    }
    if feed.push(&buffered) == Flow::Stop {
        return Flow::Stop;
    }
    let mut pipe = std::fs::File::from(fd);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        while feed.is_full() {
            let gone = runtime.block_on(async {
                tokio::select! {
                    _ = feed.queued.drained.notified() => false,
                    // rmcp's side is gone: the connection is over.
                    _ = feed.lines.closed() => true,
                }
            });
            if gone {
                return Flow::Stop;
            }
        }
        match pipe.read(&mut buf) {
            Ok(0) => return Flow::More,
            Ok(n) if feed.push(&buf[..n]) == Flow::Stop => return Flow::Stop,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return Flow::More,
        }
    }
}

#[cfg(test)]
mod tests;
