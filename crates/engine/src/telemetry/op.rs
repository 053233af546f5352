//! One MCP operation as telemetry sees it: its span (when spans are exported) and its duration
//! (when metrics are), ended with the convention's `error.type`.

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::Instant;

use opentelemetry::trace::{Link, SpanKind, Status, TraceContextExt, Tracer};
use opentelemetry::{Context, KeyValue};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Map, Value};

use super::state::Telemetry;

/// The context of the SERVER span a served request runs in, in the request's extensions: what
/// it sends upstream on its behalf is a child of it.
#[derive(Clone)]
pub(crate) struct SpanCx(pub(crate) Context);

/// Where a request's trace ids are left for its access-log entry (in the request's HTTP
/// extensions): the trace id, and the SERVER span's id when spans are exported.
#[derive(Clone, Default)]
pub(crate) struct TraceSlot(std::sync::Arc<Mutex<Option<Ids>>>);

/// A trace id, and a span id when there is a span.
type Ids = (String, Option<String>);

impl TraceSlot {
    fn fill(&self, trace: String, span: Option<String>) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some((trace, span));
    }

    /// The ids left here, once.
    pub(crate) fn take(&self) -> Option<Ids> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

/// Where the upstream server of a request sent on a served request's behalf is, and what it
/// speaks: `network.transport` (`pipe` or `tcp`), `server.address`, `server.port`,
/// `mcp.protocol.version`.
pub(crate) struct Peer<'a> {
    pub(crate) transport: &'static str,
    pub(crate) address: Option<&'a str>,
    pub(crate) port: Option<u16>,
    pub(crate) protocol_version: Option<&'a str>,
}

/// Where a live server is and what it speaks, as telemetry names them: `network.transport`
/// (`pipe` for stdio, `tcp` for HTTP), `server.address` and `server.port` of a remote server,
/// and the protocol revision.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PeerAttributes {
    pub transport: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
}

impl PeerAttributes {
    /// A server at `url` (None: stdio) speaking `protocol`.
    pub(crate) fn of(url: Option<&str>, protocol: Option<&rmcp::model::ProtocolVersion>) -> Self {
        let parsed = url.and_then(|u| reqwest::Url::parse(u).ok());
        PeerAttributes {
            transport: if url.is_some() { "tcp" } else { "pipe" },
            address: parsed
                .as_ref()
                .and_then(|u| u.host_str().map(str::to_string)),
            port: parsed.as_ref().and_then(|u| u.port_or_known_default()),
            protocol_version: protocol.map(|p| p.to_string()),
        }
    }

    /// As telemetry's CLIENT spans name the server.
    pub(crate) fn telemetry(&self) -> Peer<'_> {
        Peer {
            transport: self.transport,
            address: self.address.as_deref(),
            port: self.port,
            protocol_version: self.protocol_version.as_deref(),
        }
    }
}

/// The client's address, as the HTTP front accepted the connection.
#[derive(Clone, Copy)]
pub(crate) struct PeerAddr(pub(crate) std::net::SocketAddr);

/// What an operation names besides its method.
#[derive(Clone, Copy)]
pub(crate) enum Named<'a> {
    Nothing,
    Tool(&'a str),
    Prompt(&'a str),
    Resource(&'a str),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Server,
    Client,
}

/// A name or URI in a span is cut to this many characters.
const MAX_NAME_CHARS: usize = 256;
/// Distinct tool or prompt names a duration is labelled with; later ones are `_OTHER`, so a
/// client naming unknown tools cannot grow the metrics without bound.
pub(super) const MAX_LABELLED_NAMES: usize = 1000;

/// One operation in progress; ended by [`Op::end`], or as `cancelled` when dropped first.
pub(crate) struct Op {
    side: Side,
    method: &'static str,
    /// The tool or prompt name its duration is labelled with.
    label: Option<(&'static str, String)>,
    transport: &'static str,
    started: Instant,
    cx: Option<Context>,
    ended: bool,
}

fn cut(name: &str) -> String {
    name.chars().take(MAX_NAME_CHARS).collect()
}

/// The convention's attributes for what `named` names, and the span name's target.
fn naming(method: &'static str, named: Named<'_>) -> (Vec<KeyValue>, String) {
    let mut attributes = vec![KeyValue::new("mcp.method.name", method)];
    let name = match named {
        Named::Tool(tool) => {
            attributes.push(KeyValue::new("gen_ai.tool.name", cut(tool)));
            attributes.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
            format!("{method} {}", cut(tool))
        }
        Named::Prompt(prompt) => {
            attributes.push(KeyValue::new("gen_ai.prompt.name", cut(prompt)));
            format!("{method} {}", cut(prompt))
        }
        // A URI is not in the span name (unbounded, and may be sensitive in aggregate).
        Named::Resource(uri) => {
            attributes.push(KeyValue::new("mcp.resource.uri", cut(uri)));
            method.to_string()
        }
        Named::Nothing => method.to_string(),
    };
    (attributes, name)
}

pub(super) fn label(named: Named<'_>) -> Option<(&'static str, String)> {
    static SEEN: std::sync::RwLock<Option<HashSet<String>>> = std::sync::RwLock::new(None);
    let (key, name) = match named {
        Named::Tool(tool) => ("gen_ai.tool.name", tool),
        Named::Prompt(prompt) => ("gen_ai.prompt.name", prompt),
        Named::Resource(_) | Named::Nothing => return None,
    };
    let name = cut(name);
    // A name seen before (the usual case) needs only the shared lock.
    let seen = SEEN.read().unwrap_or_else(|e| e.into_inner());
    if seen.as_ref().is_some_and(|s| s.contains(&name)) {
        return Some((key, name));
    }
    drop(seen);
    let mut seen = SEEN.write().unwrap_or_else(|e| e.into_inner());
    let seen = seen.get_or_insert_with(HashSet::new);
    if seen.contains(&name) || seen.len() < MAX_LABELLED_NAMES {
        seen.insert(name.clone());
        Some((key, name))
    } else {
        Some((key, "_OTHER".into()))
    }
}

impl Op {
    /// A served request's operation, with the request's `context` back: when spans are
    /// exported, its SERVER span is in the context's extensions ([`SpanCx`]), a child of the
    /// trace context the request came with (its `_meta`'s, else its HTTP headers', the latter
    /// linked when both differ). None (and nothing paid) when nothing records.
    pub(crate) fn server(
        method: &'static str,
        named: Named<'_>,
        mut context: RequestContext<RoleServer>,
    ) -> (Option<Op>, RequestContext<RoleServer>) {
        let telemetry = Telemetry::get();
        let parts = context.extensions.get::<http::request::Parts>();
        let slot = parts.and_then(|p| p.extensions.get::<TraceSlot>()).cloned();
        let records = telemetry.records();
        let transport = if parts.is_some() { "tcp" } else { "pipe" };
        let cx = telemetry.tracer().map(|tracer| {
            let (mut attributes, name) = naming(method, named);
            attributes.push(KeyValue::new("network.transport", transport));
            attributes.push(KeyValue::new(
                "jsonrpc.request.id",
                match &context.id {
                    rmcp::model::NumberOrString::Number(n) => n.to_string(),
                    rmcp::model::NumberOrString::String(s) => cut(s),
                },
            ));
            if let Some(version) = context.protocol_version() {
                attributes.push(KeyValue::new("mcp.protocol.version", version.to_string()));
            }
            if let Some(parts) = parts {
                if let Some(session) = parts
                    .headers
                    .get("mcp-session-id")
                    .and_then(|v| v.to_str().ok())
                {
                    attributes.push(KeyValue::new("mcp.session.id", cut(session)));
                }
                if let Some(PeerAddr(addr)) = parts.extensions.get::<PeerAddr>() {
                    attributes.push(KeyValue::new("client.address", addr.ip().to_string()));
                    attributes.push(KeyValue::new("client.port", i64::from(addr.port())));
                }
            }
            let incoming = super::propagate::incoming(&context);
            let from_meta = incoming.meta.as_ref().and_then(super::propagate::extract);
            let from_headers = incoming
                .headers
                .as_ref()
                .and_then(super::propagate::extract);
            let parent = match (&from_meta, &from_headers) {
                (Some(meta), _) => Context::new().with_remote_span_context(meta.clone()),
                (None, Some(headers)) => Context::new().with_remote_span_context(headers.clone()),
                (None, None) => Context::new(),
            };
            let links = match (from_meta, from_headers) {
                (Some(meta), Some(headers)) if meta.span_id() != headers.span_id() => {
                    vec![Link::with_context(headers)]
                }
                _ => Vec::new(),
            };
            let span = tracer
                .span_builder(name)
                .with_kind(SpanKind::Server)
                .with_attributes(attributes)
                .with_links(links)
                .start_with_context(tracer, &parent);
            parent.with_span(span)
        });
        // The access log names the request's trace: its SERVER span's, else the one it came in.
        if let Some(slot) = slot {
            match &cx {
                Some(cx) => {
                    let span = cx.span().span_context().clone();
                    slot.fill(
                        span.trace_id().to_string(),
                        Some(span.span_id().to_string()),
                    );
                }
                None => {
                    let incoming = super::propagate::incoming(&context);
                    if let Some(span) = incoming
                        .meta
                        .or(incoming.headers)
                        .as_ref()
                        .and_then(super::propagate::extract)
                    {
                        slot.fill(span.trace_id().to_string(), None);
                    }
                }
            }
        }
        if !records {
            return (None, context);
        }
        if let Some(cx) = &cx {
            context.extensions.insert(SpanCx(cx.clone()));
        }
        let op = Op {
            side: Side::Server,
            method,
            label: telemetry.measures().then(|| label(named)).flatten(),
            transport,
            started: Instant::now(),
            cx,
            ended: false,
        };
        (Some(op), context)
    }

    /// A request sent upstream on behalf of the served request whose span is `parent`: a
    /// CLIENT span (its child) when spans are exported, and its duration.
    pub(crate) fn client(
        method: &'static str,
        named: Named<'_>,
        parent: Option<&Context>,
        peer: Peer<'_>,
    ) -> Option<Op> {
        let telemetry = Telemetry::get();
        if !telemetry.records() {
            return None;
        }
        let cx = telemetry.tracer().zip(parent).map(|(tracer, parent)| {
            let (mut attributes, name) = naming(method, named);
            attributes.push(KeyValue::new("network.transport", peer.transport));
            if let Some(address) = peer.address {
                attributes.push(KeyValue::new("server.address", address.to_string()));
            }
            if let Some(port) = peer.port {
                attributes.push(KeyValue::new("server.port", i64::from(port)));
            }
            if let Some(version) = peer.protocol_version {
                attributes.push(KeyValue::new("mcp.protocol.version", version.to_string()));
            }
            let span = tracer
                .span_builder(name)
                .with_kind(SpanKind::Client)
                .with_attributes(attributes)
                .start_with_context(tracer, parent);
            parent.with_span(span)
        });
        Some(Op {
            side: Side::Client,
            method,
            label: telemetry.measures().then(|| label(named)).flatten(),
            transport: peer.transport,
            started: Instant::now(),
            cx,
            ended: false,
        })
    }

    /// `traceparent` (and `tracestate`) naming this operation's span, for the request's
    /// `_meta`; None when it has no span.
    pub(crate) fn meta(&self) -> Option<Map<String, Value>> {
        super::propagate::inject(self.cx.as_ref()?)
    }

    /// Ends the operation: `error` is the convention's `error.type` (`tool_error`, a JSON-RPC
    /// code, `timeout`, `cancelled`, `closed`, `_OTHER`), None when it succeeded.
    pub(crate) fn end(mut self, error: Option<&str>) {
        self.finish(error);
    }

    fn finish(&mut self, error: Option<&str>) {
        if std::mem::replace(&mut self.ended, true) {
            return;
        }
        let seconds = self.started.elapsed().as_secs_f64();
        if let Some(cx) = &self.cx {
            let span = cx.span();
            if let Some(error) = error {
                span.set_attribute(KeyValue::new("error.type", error.to_string()));
                if error.parse::<i64>().is_ok() {
                    span.set_attribute(KeyValue::new(
                        "rpc.response.status_code",
                        error.to_string(),
                    ));
                }
                span.set_status(Status::error(error.to_string()));
            }
            span.end();
        }
        let telemetry = Telemetry::get();
        if !telemetry.measures() {
            return;
        }
        let mut labels: Vec<(&'static str, String)> = vec![
            ("mcp.method.name", self.method.to_string()),
            ("network.transport", self.transport.to_string()),
        ];
        if let Some(label) = &self.label {
            labels.push(label.clone());
        }
        if let Some(error) = error {
            labels.push(("error.type", error.to_string()));
        }
        let server = self.side == Side::Server;
        if let Some(histograms) = &telemetry.histograms {
            histograms.operation(server, seconds, &labels);
        }
        if super::prom::on() {
            super::prom::operation(server, seconds, &labels);
        }
    }
}

impl Drop for Op {
    fn drop(&mut self) {
        // The request was dropped before it was answered: its client went away or cancelled.
        self.finish(Some("cancelled"));
    }
}

/// A session's life, for the session duration histograms.
pub(crate) fn session_ended(server: bool, seconds: f64, transport: &'static str) {
    let telemetry = Telemetry::get();
    let labels = [("network.transport", transport.to_string())];
    if let Some(histograms) = &telemetry.histograms {
        histograms.session(server, seconds, &labels);
    }
    if super::prom::on() {
        super::prom::session(server, seconds, &labels);
    }
}
