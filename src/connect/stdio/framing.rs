//! Framing a stdio server's stdout: one JSON-RPC message per line, bounded and checked.
//!
//! rmcp's own line transport drops what it cannot use — a line over its bound, a line that is not
//! UTF-8, well-formed JSON that is not a message — and carries on, so a server that answers our
//! request with one of those is only noticed when the phase times out. This transport fails such
//! a server at once and records why ([`StdoutReport::violation`]). What it tolerates — lines
//! that are not JSON at all (a banner or a log line printed to stdout by mistake), JSON that
//! answers nothing we asked — it keeps a bounded quote of, for the reason given if the server
//! fails later ([`StdoutReport::noise`]).

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, ErrorData, RequestId, ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::RoleClient;
use rmcp::transport::Transport;
use serde_json::{Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader};

use super::direct::Direct;
use super::writer::StdinWriter;

mod lines;
mod switch;
use lines::quote;
pub(super) use lines::{Screened, bounded, response_problem, screen, take_line, too_long};
#[cfg(unix)]
pub use switch::IntoFd;

/// The longest line (one message) a server may send. As rmcp's own bound, and the streamable
/// HTTP client's event bound, so what is acceptable over HTTP is acceptable over stdio.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
/// How many lines of stray output are kept, and how much of each line (or of a bad answer) is
/// quoted in a reason.
const NOISE_LINES: usize = 3;
const QUOTE_CHARS: usize = 200;
/// Requests awaiting an answer that are remembered; older ones (timed out long ago) are
/// forgotten first.
const MAX_PENDING: usize = 4096;
/// A line buffer grown past this by one big message is given back after it.
pub(super) const KEEP_BUFFER_BYTES: usize = 1024 * 1024;
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// What a server wrote to stdout besides protocol messages. Shared between the transport, which
/// fills it, and the server's process, which quotes it in failure reasons.
#[derive(Default)]
pub struct StdoutReport {
    inner: Mutex<Report>,
}

#[derive(Default)]
struct Report {
    violation: Option<String>,
    noise: VecDeque<String>,
}

impl StdoutReport {
    /// "sent an invalid message: …" once the server broke the framing, else None.
    pub fn violation(&self) -> Option<String> {
        self.lock()
            .violation
            .as_ref()
            .map(|detail| format!("sent an invalid message: {detail}"))
    }

    /// The last few stray lines, each quoted and bounded, or "" when there were none.
    pub fn noise(&self) -> String {
        let report = self.lock();
        let quoted: Vec<String> = report.noise.iter().map(|line| quote(line)).collect();
        quoted.join(" ")
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Report> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn record_violation(&self, detail: String) {
        self.lock().violation.get_or_insert(detail);
    }

    fn record_noise(&self, line: &str) {
        let mut report = self.lock();
        if report.noise.len() == NOISE_LINES {
            report.noise.pop_front();
        }
        report.noise.push_back(bounded(line).into_owned());
    }
}

/// Requests sent and not answered yet, by id, with whether each is the `initialize` request.
/// `order` is the sending order for forgetting the oldest; answered ids leave it lazily (taking
/// them out at once made every answer cost a scan of everything in flight).
#[derive(Default)]
struct Pending {
    initialize: HashMap<RequestId, bool>,
    order: VecDeque<RequestId>,
}

impl Pending {
    fn insert(&mut self, id: RequestId, initialize: bool) {
        if self.initialize.insert(id.clone(), initialize).is_none() {
            self.order.push_back(id);
        }
        while self.initialize.len() > MAX_PENDING {
            match self.order.pop_front() {
                Some(old) => {
                    self.initialize.remove(&old);
                }
                None => break,
            }
        }
        if self.order.len() > 2 * MAX_PENDING {
            let initialize = &self.initialize;
            self.order.retain(|id| initialize.contains_key(id));
        }
    }

    /// Whether `id` was pending (and whether it was `initialize`); it no longer is.
    fn take(&mut self, id: &RequestId) -> Option<bool> {
        self.initialize.remove(id)
    }
}

/// What one line turned out to be.
enum Line {
    Message(Box<ServerJsonRpcMessage>),
    /// Tolerated and dropped (blank, stray output, an unknown notification).
    Dropped,
    /// A request we cannot read: answered with an error so the server is not left waiting.
    UnreadableRequest(RequestId),
    /// The server broke the protocol: why.
    Invalid(String),
}

pub(super) enum Read {
    Line,
    TooLong,
    End,
}

/// An rmcp client transport over a server's stdout and stdin. Answers to direct requests
/// ([`Direct`]) are taken out of the stream before rmcp sees it.
pub struct LineTransport<R> {
    /// Stdout, until it is handed away (see [`super::handoff`]); then `lines` brings what the
    /// new reader passes on.
    reader: Option<BufReader<R>>,
    lines: Option<tokio::sync::mpsc::UnboundedReceiver<String>>,
    #[cfg(unix)]
    queued: Arc<super::handoff::Queued>,
    /// How stdout becomes a plain descriptor to hand away; None when it cannot be.
    #[cfg(unix)]
    into_fd: Option<IntoFd<R>>,
    /// The line being read. Lives here, not in `receive`, because rmcp polls `receive` inside a
    /// `select!` and may drop it midway: the partial line is resumed on the next call.
    line: Vec<u8>,
    writer: StdinWriter,
    direct: Direct,
    pending: Arc<Mutex<Pending>>,
    report: Arc<StdoutReport>,
}

impl<R> LineTransport<R>
where
    R: AsyncRead + Unpin + Send + 'static,
{
    /// Over any writer (everything it is sent goes through the writer's flusher task).
    pub fn new<W>(read: R, write: W, report: Arc<StdoutReport>) -> Self
    where
        W: AsyncWrite + Unpin + Send + 'static,
    {
        #[cfg(unix)]
        let writer = StdinWriter::new(write, None);
        #[cfg(not(unix))]
        let writer = StdinWriter::new(write);
        Self::with_writer(read, writer, report)
    }

    /// Over `writer`, which the direct requests share.
    pub fn with_writer(read: R, writer: StdinWriter, report: Arc<StdoutReport>) -> Self {
        Self {
            reader: Some(BufReader::with_capacity(64 * 1024, read)),
            lines: None,
            #[cfg(unix)]
            queued: Arc::default(),
            #[cfg(unix)]
            into_fd: None,
            line: Vec::new(),
            direct: Direct::new(writer.clone()),
            writer,
            pending: Arc::new(Mutex::new(Pending::default())),
            report,
        }
    }

    /// The direct requests of this connection.
    pub fn direct(&self) -> Direct {
        self.direct.clone()
    }

    /// Reads up to and including the next newline into `self.line`, never holding more than
    /// [`MAX_LINE_BYTES`]. Cancellation-safe: bytes are moved from the reader's buffer to the
    /// line with no await in between.
    async fn read_line(&mut self) -> Read {
        let Some(reader) = self.reader.as_mut() else {
            return Read::End;
        };
        loop {
            let available = match reader.fill_buf().await {
                Ok(available) if !available.is_empty() => available,
                // End of file, or a read error: either way no more messages come.
                _ => return Read::End,
            };
            let (taken, read) = take_line(&mut self.line, available);
            reader.consume(taken);
            if let Some(read) = read {
                return read;
            }
        }
    }

    fn classify(&self, raw: &[u8]) -> Line {
        match screen(&self.direct, raw) {
            Screened::Pass(text) => self.parse(text),
            Screened::Dropped => Line::Dropped,
            Screened::Invalid(detail) => Line::Invalid(detail),
        }
    }

    /// A line that passed [`screen`]: what it is to rmcp.
    fn parse(&self, text: &str) -> Line {
        // rmcp would drop a listed tool's `execution`: it travels in `_meta` instead.
        let tucked = crate::connect::execution::tuck(text);
        if let Ok(message) =
            serde_json::from_str::<ServerJsonRpcMessage>(tucked.as_deref().unwrap_or(text))
        {
            return self.check_message(message, text);
        }
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(object)) => self.check_object(&object, text),
            // JSON nested past what any message reader takes (serde_json's limit, which every
            // MCP peer shares): no answer can come of it, so waiting for one is pointless.
            Err(e) if e.to_string().starts_with("recursion limit exceeded") => {
                Line::Invalid(format!(
                    "a message nested too deeply to read (more than 127 levels): {}",
                    bounded(text)
                ))
            }
            _ => {
                self.report.record_noise(text);
                Line::Dropped
            }
        }
    }

    /// A well-formed message: an answer settles its request; the answer to `initialize` must be
    /// an initialize result.
    fn check_message(&self, message: ServerJsonRpcMessage, text: &str) -> Line {
        let answered = match &message {
            ServerJsonRpcMessage::Response(response) => Some(&response.id),
            ServerJsonRpcMessage::Error(error) => error.id.as_ref(),
            _ => None,
        };
        let was_initialize = answered.and_then(|id| self.lock_pending().take(id));
        if let (Some(true), ServerJsonRpcMessage::Response(response)) = (was_initialize, &message)
            && !matches!(response.result, ServerResult::InitializeResult(_))
        {
            return Line::Invalid(format!(
                "the answer to initialize is not an initialize result (it needs \
                 \"protocolVersion\", \"capabilities\" and \"serverInfo\"): {}",
                bounded(text)
            ));
        }
        Line::Message(Box::new(message))
    }

    /// A JSON object that is not a message we can read.
    fn check_object(&self, object: &Map<String, Value>, text: &str) -> Line {
        let id = object
            .get("id")
            .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok());
        if object.contains_key("method") {
            // rmcp drops notifications it does not know; a request gets an error answer.
            return id.map_or(Line::Dropped, Line::UnreadableRequest);
        }
        if let Some(id) = id
            && self.lock_pending().take(&id).is_some()
        {
            return Line::Invalid(format!(
                "the answer to request {id} is not a valid JSON-RPC response ({}): {}",
                response_problem(object),
                bounded(text)
            ));
        }
        // JSON that answers nothing we asked: a structured log line, most likely.
        self.report.record_noise(text);
        Line::Dropped
    }

    fn lock_pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes one message as a line (queued behind what was written before, if the pipe is
    /// full).
    fn write_now(&self, message: &ClientJsonRpcMessage) -> std::io::Result<()> {
        let mut bytes = serde_json::to_vec(message).map_err(std::io::Error::other)?;
        bytes.push(b'\n');
        self.writer.write_line(&bytes)
    }
}

impl<R> Transport<RoleClient> for LineTransport<R>
where
    R: AsyncRead + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn name() -> Cow<'static, str> {
        "stdio".into()
    }

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        // Recorded before the bytes leave, so the answer cannot arrive first.
        if let ClientJsonRpcMessage::Request(request) = &item {
            let initialize = matches!(request.request, ClientRequest::InitializeRequest(_));
            self.lock_pending().insert(request.id.clone(), initialize);
        }
        std::future::ready(self.write_now(&item))
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        let message = self.next_message().await;
        if message.is_none() {
            // No more answers come: the direct requests end too.
            #[cfg(unix)]
            self.direct.handoff().refuse();
            self.direct.close_all();
        }
        message
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // Ending stdin is what tells a stdio server to exit.
        self.writer.close();
        self.direct.close_all();
        Ok(())
    }
}

impl<R> Drop for LineTransport<R> {
    fn drop(&mut self) {
        #[cfg(unix)]
        self.direct.handoff().refuse();
        self.writer.close();
        self.direct.close_all();
    }
}

impl<R> LineTransport<R>
where
    R: AsyncRead + Unpin + Send + 'static,
{
    async fn next_message(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            if self.report.lock().violation.is_some() {
                return None;
            }
            match self.next_line().await {
                Read::Line => {}
                Read::End => return None,
                Read::TooLong => {
                    self.report.record_violation(too_long());
                    return None;
                }
            }
            // Lines from a new reader were screened there already.
            let outcome = match self.lines {
                Some(_) => self.parse(std::str::from_utf8(&self.line).unwrap_or_default()),
                None => self.classify(&self.line),
            };
            if self.line.capacity() > KEEP_BUFFER_BYTES {
                self.line = Vec::new();
            } else {
                self.line.clear();
            }
            match outcome {
                Line::Message(message) => return Some(*message),
                Line::Dropped => {}
                Line::UnreadableRequest(id) => {
                    let answer = ClientJsonRpcMessage::error(
                        ErrorData::invalid_request("Invalid request", None),
                        Some(id),
                    );
                    let _ = self.write_now(&answer);
                }
                Line::Invalid(detail) => {
                    self.report.record_violation(detail);
                    return None;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
