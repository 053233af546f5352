//! Traces and metrics of what this process serves, in the OpenTelemetry semantic conventions
//! for MCP: a SERVER span per served request (parented on the caller's trace context), a
//! CLIENT span per request a gateway sends upstream for it (its context carried up in
//! `_meta`), and the operation and session duration histograms.
//!
//! Configured once per process from the standard `OTEL_*` environment variables (see
//! [`setup`]): spans go over OTLP/HTTP through a bounded queue ([`export`]) when an OTLP
//! endpoint is set, metrics over OTLP on a period, and `/metrics` renders them as Prometheus
//! text when an endpoint asks for it ([`prom`]). An app may take the spans in its own process
//! instead ([`in_process`]). A source's listings while it connects are CLIENT spans under the
//! app's context ([`listing`]). With none of them, [`Op::server`] and [`Op::client`] return
//! None after a few loads and nothing else is paid.

mod export;
mod in_process;
mod listing;
mod op;
mod prom;
mod propagate;
mod setup;
mod state;
#[cfg(test)]
mod tests;

pub use in_process::{Sink, export_to};
pub use listing::CallTrace;
pub(crate) use listing::{connecting, listing, page_meta};
pub use op::PeerAttributes;
pub(crate) use op::{Named, Op, PeerAddr, SpanCx, TraceSlot, session_ended};
pub(crate) use propagate::{incoming, inject};
pub use state::{flush, metrics_text, tracing};
pub(crate) use state::{limit_refused, serve_metrics, start};
