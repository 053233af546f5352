//! The access log: one entry per request, written when its response has been sent (or
//! abandoned), with when it came, who made it, what it asked (the JSON-RPC method, and the
//! tool, prompt or resource it named), the status and how long it took. Never its arguments,
//! headers or token: the request body is only peeked at for `method` and `params.name/uri`.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use serde::Deserialize;
use serde_json::{Map, Value};

/// Where entries go (`toolkit.serve`'s `accessLog`).
pub type AccessLog = Arc<dyn Fn(Value) + Send + Sync>;

/// The chunks of a request body as rmcp read them (shared, not copied).
pub(crate) type Tee = Arc<Mutex<Vec<Bytes>>>;

/// One request's entry, logged when dropped.
pub(crate) struct Entry {
    log: AccessLog,
    started: Instant,
    time: String,
    http: String,
    path: String,
    pub(crate) principal: Option<String>,
    pub(crate) status: u16,
    /// Why the request was refused before it reached the server (a 401, 403 or 500 of auth).
    pub(crate) error: Option<String>,
    body: Tee,
    trace: crate::telemetry::TraceSlot,
}

impl Entry {
    pub(crate) fn begin(log: &AccessLog, parts: &http::request::Parts) -> Self {
        Self {
            log: log.clone(),
            started: Instant::now(),
            time: iso_time(SystemTime::now()),
            http: parts.method.to_string(),
            path: parts.uri.path().chars().take(256).collect(),
            principal: None,
            status: 0,
            error: None,
            body: Tee::default(),
            trace: Default::default(),
        }
    }

    /// Where the handler leaves the request's trace ids.
    pub(crate) fn trace_slot(&self) -> crate::telemetry::TraceSlot {
        self.trace.clone()
    }

    /// Where the request body's chunks are kept for the peek.
    pub(crate) fn tee(&self) -> Tee {
        self.body.clone()
    }
}

#[derive(Deserialize)]
struct Peek {
    method: Option<String>,
    params: Option<PeekParams>,
}

#[derive(Deserialize)]
struct PeekParams {
    name: Option<Value>,
    uri: Option<Value>,
}

impl Drop for Entry {
    fn drop(&mut self) {
        let chunks = std::mem::take(&mut *self.body.lock().unwrap_or_else(|e| e.into_inner()));
        let body: Vec<u8> = chunks.iter().flat_map(|c| c.iter().copied()).collect();
        let peek: Option<Peek> = serde_json::from_slice(&body).ok();
        let mut entry = Map::new();
        entry.insert("time".into(), Value::String(std::mem::take(&mut self.time)));
        entry.insert(
            "principal".into(),
            self.principal.take().map_or(Value::Null, Value::String),
        );
        entry.insert("http".into(), Value::String(std::mem::take(&mut self.http)));
        entry.insert("path".into(), Value::String(std::mem::take(&mut self.path)));
        let method = peek.as_ref().and_then(|p| p.method.clone());
        let named = |key: &str| {
            let params = peek.as_ref()?.params.as_ref()?;
            let value = if key == "uri" {
                &params.uri
            } else {
                &params.name
            };
            value
                .as_ref()?
                .as_str()
                .map(|s| s.chars().take(512).collect::<String>())
        };
        let subject = match method.as_deref() {
            Some("tools/call") => named("name").map(|n| ("tool", n)),
            Some("prompts/get") => named("name").map(|n| ("prompt", n)),
            Some("resources/read") => named("uri").map(|u| ("resource", u)),
            _ => None,
        };
        entry.insert("method".into(), method.map_or(Value::Null, Value::String));
        if let Some((key, value)) = subject {
            entry.insert(key.into(), Value::String(value));
        }
        entry.insert("status".into(), Value::from(self.status));
        if let Some(why) = self.error.take() {
            entry.insert("error".into(), Value::String(why));
        }
        let ms = self.started.elapsed().as_secs_f64() * 1000.0;
        entry.insert("ms".into(), Value::from((ms * 1000.0).round() / 1000.0));
        if let Some((trace, span)) = self.trace.take() {
            entry.insert("traceId".into(), Value::String(trace));
            if let Some(span) = span {
                entry.insert("spanId".into(), Value::String(span));
            }
        }
        (self.log)(Value::Object(entry));
    }
}

/// A response body that logs its request's entry when it ends or is dropped.
pub(crate) struct Logged<B> {
    inner: B,
    entry: Option<Entry>,
}

impl<B> Logged<B> {
    pub(crate) fn new(inner: B, entry: Option<Entry>) -> Self {
        Self { inner, entry }
    }
}

impl<B: Body + Unpin> Body for Logged<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(None) = polled {
            // Sent whole: the entry is written now, not when the connection gets round to
            // dropping the body.
            self.entry.take();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// `2026-12-02T04:16:03.123Z`: RFC 3339 in UTC, to the millisecond.
pub(crate) fn iso_time(at: SystemTime) -> String {
    let since = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days as i64);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        since.subsec_millis()
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (H. Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn times_are_rfc_3339_in_utc() {
        assert_eq!(iso_time(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let at = UNIX_EPOCH + Duration::from_millis(1_796_184_963_123);
        assert_eq!(iso_time(at), "2026-12-02T04:16:03.123Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(iso_time(leap), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn an_entry_names_the_method_and_tool_but_never_the_arguments() {
        let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
        let sink = seen.clone();
        let log: AccessLog = Arc::new(move |v| sink.lock().unwrap().push(v));
        let (parts, ()) = http::Request::post("/mcp").body(()).unwrap().into_parts();
        let mut entry = Entry::begin(&log, &parts);
        entry.principal = Some("alice".into());
        entry.status = 200;
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"secret":"s3cr3t"}}}"#;
        let (head, tail) = body.split_at(40);
        entry
            .tee()
            .lock()
            .unwrap()
            .extend([Bytes::from_static(head), Bytes::from_static(tail)]);
        drop(entry);
        let seen = seen.lock().unwrap();
        let line = seen[0].as_object().unwrap();
        let keys: Vec<&str> = line.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "time",
                "principal",
                "http",
                "path",
                "method",
                "tool",
                "status",
                "ms"
            ]
        );
        assert_eq!(line["principal"], "alice");
        assert_eq!(line["method"], "tools/call");
        assert_eq!(line["tool"], "echo");
        assert_eq!(line["status"], 200);
        assert!(!seen[0].to_string().contains("s3cr3t"));
    }
}
