//! Handing a stdio server's stdout to another reader (the JavaScript thread's event loop).
//!
//! A direct call's answer read by a tokio worker needs one more thread hand-off than a bare
//! client, which reads the pipe on its own thread. Once the handshake is done, the transport can
//! give its stdout away: it stops reading at a line boundary of what it has consumed, and hands
//! over the descriptor with the bytes it had buffered, so none is lost. The new reader splits
//! and screens lines as the transport does ([`Feed`], with the framing's own functions), settles
//! answers to direct requests where it reads them, and sends every other line to the transport
//! through a channel, which rmcp's `receive` then reads.

use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::{Notify, mpsc, oneshot};

use super::direct::Direct;
use super::framing::{Read, Screened, StdoutReport, screen, take_line, too_long};

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

/// What a reader does with the bytes it reads: lines split with the framing's bound, screened
/// with its checks (answers to direct requests settled here), the rest sent on to rmcp.
pub struct Feed {
    line: Vec<u8>,
    direct: Direct,
    report: Arc<StdoutReport>,
    lines: mpsc::UnboundedSender<String>,
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
    ) -> Self {
        Self {
            line,
            direct,
            report,
            lines,
        }
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
                let _ = self.lines.send(text.to_string());
                Flow::More
            }
            Screened::Dropped => Flow::More,
            Screened::Invalid(detail) => {
                self.report.record_violation(detail);
                Flow::Stop
            }
        };
        if self.line.capacity() > super::framing::KEEP_BUFFER_BYTES {
            self.line = Vec::new();
        } else {
            self.line.clear();
        }
        flow
    }
}

/// Reads a stdout given away on the runtime, for when the new reader could not start: the lines
/// still go through the feed, so nothing changes for rmcp.
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
        while let Ok(n) = pipe.read(&mut buf).await {
            if n == 0 || feed.push(&buf[..n]) == Flow::Stop {
                break;
            }
        }
    });
}
