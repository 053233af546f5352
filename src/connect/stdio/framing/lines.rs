//! The line-level pieces of the framing, shared by every reader of a server's stdout (the
//! transport's own, and the one it hands stdout to): cutting lines at the bound, the first
//! checks, and quoting what was wrong.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::{MAX_LINE_BYTES, QUOTE_CHARS, Read, UTF8_BOM};
use crate::connect::stdio::direct::{Direct, Routed};

/// Moves bytes of `available` into `line` up to and including a newline: how many were taken,
/// and `Some` once the line is complete (or over [`MAX_LINE_BYTES`]).
pub(in crate::connect::stdio) fn take_line(
    line: &mut Vec<u8>,
    available: &[u8],
) -> (usize, Option<Read>) {
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
pub(in crate::connect::stdio) enum Screened<'a> {
    /// Text for rmcp's side to read.
    Pass(&'a str),
    /// Blank, or an answer to a direct request (settled).
    Dropped,
    /// The server broke the framing: why.
    Invalid(String),
}

/// The checks every line gets wherever it is read: its end and BOM cut off, valid UTF-8, and
/// an answer to a direct request settled right here.
pub(in crate::connect::stdio) fn screen<'a>(direct: &Direct, raw: &'a [u8]) -> Screened<'a> {
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
    match direct.route(text) {
        Routed::NotOurs => Screened::Pass(text),
        Routed::Handled => Screened::Dropped,
        Routed::Invalid(detail) => Screened::Invalid(detail),
    }
}

/// The violation for a line over the bound.
pub(in crate::connect::stdio) fn too_long() -> String {
    format!("a line over {} MiB long", MAX_LINE_BYTES >> 20)
}

/// Why a JSON object with the id of one of our requests is not a response, in words.
pub(in crate::connect::stdio) fn response_problem(object: &Map<String, Value>) -> &'static str {
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
pub(in crate::connect::stdio) fn bounded(text: &str) -> Cow<'_, str> {
    match text.char_indices().nth(QUOTE_CHARS) {
        Some((cut, _)) => Cow::Owned(format!("{}…", &text[..cut])),
        None => Cow::Borrowed(text),
    }
}

/// A stray line as a JSON string: its control characters escaped, so a reason stays one line.
pub(super) fn quote(line: &str) -> String {
    serde_json::to_string(line).unwrap_or_default()
}
