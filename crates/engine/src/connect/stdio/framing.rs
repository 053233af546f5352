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
use std::future::Future;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, ErrorData, RequestId, ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::RoleClient;
use rmcp::transport::Transport;
use serde_json::{Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

use super::direct::Direct;
#[cfg(unix)]
use super::handoff::Handoff;
use super::pending::Pending;
pub(crate) use super::screen::StdoutReport;
use super::screen::{
    KEEP_BUFFER_BYTES, Read, Screened, bounded, response_problem, screen, take_line, too_long,
};
use super::writer::StdinWriter;

mod switch;

/// Turns a reader into its descriptor, off the runtime's reactor.
#[cfg(unix)]
pub(crate) type IntoFd<R> = fn(R) -> std::io::Result<std::os::fd::OwnedFd>;

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

/// An rmcp client transport over a server's stdout and stdin. Answers to direct requests
/// ([`Direct`]) are taken out of the stream before rmcp sees it.
pub(crate) struct LineTransport<R> {
    /// Stdout, until it is handed away (see [`super::handoff`]); then `lines` brings what the
    /// new reader passes on.
    reader: Option<BufReader<R>>,
    lines: Option<tokio::sync::mpsc::UnboundedReceiver<String>>,
    #[cfg(unix)]
    queued: Arc<super::handoff::Queued>,
    /// Giving stdout to another reader (see [`super::handoff`]).
    #[cfg(unix)]
    handoff: Arc<Handoff>,
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
    #[cfg(test)]
    pub(crate) fn new<W>(read: R, write: W, report: Arc<StdoutReport>) -> Self
    where
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        #[cfg(unix)]
        let writer = StdinWriter::new(write, None);
        #[cfg(not(unix))]
        let writer = StdinWriter::new(write);
        Self::with_writer(read, writer, report)
    }

    /// Over `writer`, which the direct requests share.
    pub(crate) fn with_writer(read: R, writer: StdinWriter, report: Arc<StdoutReport>) -> Self {
        Self {
            reader: Some(BufReader::with_capacity(64 * 1024, read)),
            lines: None,
            #[cfg(unix)]
            queued: Arc::default(),
            #[cfg(unix)]
            handoff: Arc::default(),
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
    pub(crate) fn direct(&self) -> Direct {
        self.direct.clone()
    }

    /// Asking this transport for its stdout, to read it elsewhere.
    #[cfg(unix)]
    pub(crate) fn handoff(&self) -> Arc<Handoff> {
        self.handoff.clone()
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
        let tucked = crate::compat::execution::tuck(text);
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
            self.handoff.refuse();
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
        self.handoff.refuse();
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
            if self.report.is_broken() {
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
