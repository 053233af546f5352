//! The line-level pieces every reader of a stdio server's stdout shares (the transport's own,
//! and the readers it hands stdout to): cutting lines at the bound, the first checks of a line,
//! what a server wrote besides messages, and quoting what was wrong. A leaf: who settles an
//! answer (the direct requests) plugs in through [`Route`].

use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::Mutex;

use serde_json::{Map, Value};

/// The longest line (one message) a server may send. As rmcp's own bound, and the streamable
/// HTTP client's event bound, so what is acceptable over HTTP is acceptable over stdio.
pub(crate) use crate::bounds::MAX_LINE_BYTES;
/// How many lines of stray output are kept, and how much of each line (or of a bad answer) is
/// quoted in a reason.
use crate::bounds::{STDOUT_NOISE_LINES as NOISE_LINES, STDOUT_QUOTE_CHARS as QUOTE_CHARS};
/// A line buffer grown past this by one big message is given back after it.
pub(crate) const KEEP_BUFFER_BYTES: usize = 1024 * 1024;
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// What a look at a line before rmcp's side made of it (see [`Route`]).
#[derive(Debug, PartialEq)]
pub(crate) enum Routed {
    /// Not an answer to a direct request: it goes the usual way (to rmcp).
    NotOurs,
    /// An answer to a direct request, settled (or one that came too late, dropped).
    Handled,
    /// The answer to a pending direct request is not a JSON-RPC response: why.
    Invalid(String),
}

/// Who looks at each line first (the direct requests, which settle their answers there).
pub(crate) trait Route {
    fn route(&self, text: &str) -> Routed;
}

/// How reading one line ended.
pub(crate) enum Read {
    Line,
    TooLong,
    End,
}

/// What a server wrote to stdout besides protocol messages. Shared between the transport, which
/// fills it, and the server's process, which quotes it in failure reasons.
#[derive(Default)]
pub(crate) struct StdoutReport {
    inner: Mutex<Report>,
}

#[derive(Default)]
struct Report {
    violation: Option<String>,
    noise: VecDeque<String>,
}

impl StdoutReport {
    /// "sent an invalid message: …" once the server broke the framing, else None.
    pub(crate) fn violation(&self) -> Option<String> {
        self.detail()
            .map(|detail| format!("sent an invalid message: {detail}"))
    }

    /// Whether the server broke the framing.
    pub(crate) fn is_broken(&self) -> bool {
        self.lock().violation.is_some()
    }

    /// What was wrong, once the server broke the framing.
    pub(crate) fn detail(&self) -> Option<String> {
        self.lock().violation.clone()
    }

    /// The last few stray lines, each quoted and bounded, or "" when there were none.
    pub(crate) fn noise(&self) -> String {
        let report = self.lock();
        let quoted: Vec<String> = report.noise.iter().map(|line| quote(line)).collect();
        quoted.join(" ")
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Report> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn record_violation(&self, detail: String) {
        self.lock().violation.get_or_insert(detail);
    }

    pub(crate) fn record_noise(&self, line: &str) {
        let mut report = self.lock();
        if report.noise.len() == NOISE_LINES {
            report.noise.pop_front();
        }
        report.noise.push_back(bounded(line).into_owned());
    }
}

/// Moves bytes of `available` into `line` up to and including a newline: how many were taken,
/// and `Some` once the line is complete (or over [`MAX_LINE_BYTES`]).
pub(crate) fn take_line(line: &mut Vec<u8>, available: &[u8]) -> (usize, Option<Read>) {
    let newline = available.iter().position(|b| *b == b'\n');
    let take = newline.map_or(available.len(), |i| i + 1);
    let content = line.len() + take - usize::from(newline.is_some());
    if content > MAX_LINE_BYTES {
        return (0, Some(Read::TooLong));
    }
    line.extend_from_slice(&available[..take]);
    (take, newline.map(|_| Read::Line))
}

/// What the first look at a line made of it.
pub(crate) enum Screened<'a> {
    /// Text for rmcp's side to read.
    Pass(&'a str),
    /// Blank, or an answer to a direct request (settled).
    Dropped,
    /// The server broke the framing: why.
    Invalid(String),
}

/// The checks every line gets wherever it is read: its end and BOM cut off, valid UTF-8, and
/// an answer to a direct request settled right here.
pub(crate) fn screen<'a>(route: &impl Route, raw: &'a [u8]) -> Screened<'a> {
    let line = raw.strip_suffix(b"\n").unwrap_or(raw);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(UTF8_BOM).unwrap_or(line);
    let text = match std::str::from_utf8(line) {
        Ok(text) => text,
        Err(e) => {
            let at = e.valid_up_to();
            return Screened::Invalid(format!(
                "a line that is not valid UTF-8 (byte 0x{:02X} at offset {at})",
                line[at]
            ));
        }
    };
    if text.trim().is_empty() {
        return Screened::Dropped;
    }
    match route.route(text) {
        Routed::NotOurs => Screened::Pass(text),
        Routed::Handled => Screened::Dropped,
        Routed::Invalid(detail) => Screened::Invalid(detail),
    }
}

/// The violation for a line over the bound.
pub(crate) fn too_long() -> String {
    format!("a line over {} MiB long", MAX_LINE_BYTES >> 20)
}

/// Why a JSON object with the id of one of our requests is not a response, in words.
pub(crate) fn response_problem(object: &Map<String, Value>) -> &'static str {
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return "it lacks \"jsonrpc\": \"2.0\"";
    }
    match (object.get("result"), object.get("error")) {
        (Some(_), Some(_)) => "it has both \"result\" and \"error\"",
        (None, None) => "it has neither \"result\" nor \"error\"",
        (None, Some(_)) => {
            "its \"error\" is not an object with a numeric \"code\" and a \"message\""
        }
        (Some(_), None) => "its \"result\" is not an object",
    }
}

/// At most [`QUOTE_CHARS`] characters of `text`, with "…" when cut.
pub(crate) fn bounded(text: &str) -> Cow<'_, str> {
    match text.char_indices().nth(QUOTE_CHARS) {
        Some((cut, _)) => Cow::Owned(format!("{}…", &text[..cut])),
        None => Cow::Borrowed(text),
    }
}

/// A stray line as a JSON string: its control characters escaped, so a reason stays one line.
fn quote(line: &str) -> String {
    serde_json::to_string(line).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_are_bounded() {
        let long = "é".repeat(QUOTE_CHARS + 5);
        let cut = bounded(&long);
        assert_eq!(cut.chars().count(), QUOTE_CHARS + 1);
        assert!(cut.ends_with('…'));
        assert_eq!(bounded("short"), "short");
    }
}
