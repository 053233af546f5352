//! The durations as Prometheus text, for `/metrics`: the conventions' histograms under their
//! Prometheus names (`mcp_server_operation_duration_seconds`, …) with the same labels, dots
//! turned into underscores, plus the spans dropped on the way to a collector.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use prometheus_client::encoding::prometheus_text;
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// The histograms' bucket boundaries in seconds, as the MCP conventions advise.
pub(super) const BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

type Labels = Vec<(String, String)>;
type Durations = Family<Labels, Histogram, fn() -> Histogram>;

struct Prom {
    /// Requests and calls refused by a rate or concurrency limit, by limit (and tool).
    refused: Family<Labels, Counter>,
    server: Durations,
    client: Durations,
    server_session: Durations,
    client_session: Durations,
}

fn histogram() -> Histogram {
    Histogram::new(BUCKETS)
}

static PROM: OnceLock<Prom> = OnceLock::new();
/// Set once an endpoint serves `/metrics`: from then on durations are also kept for it.
static ON: AtomicBool = AtomicBool::new(false);

/// Whether durations are kept for `/metrics`.
pub(super) fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// From now on, keep the durations `/metrics` renders.
pub(super) fn enable() {
    PROM.get_or_init(|| Prom {
        refused: Family::default(),
        server: Family::new_with_constructor(histogram),
        client: Family::new_with_constructor(histogram),
        server_session: Family::new_with_constructor(histogram),
        client_session: Family::new_with_constructor(histogram),
    });
    ON.store(true, Ordering::Relaxed);
}

fn labels(labels: &[(&'static str, String)]) -> Labels {
    labels
        .iter()
        .map(|(k, v)| (k.replace('.', "_"), v.clone()))
        .collect()
}

pub(super) fn operation(server: bool, seconds: f64, attributes: &[(&'static str, String)]) {
    if let Some(prom) = PROM.get() {
        let family = if server { &prom.server } else { &prom.client };
        family.get_or_create(&labels(attributes)).observe(seconds);
    }
}

pub(super) fn session(server: bool, seconds: f64, attributes: &[(&'static str, String)]) {
    if let Some(prom) = PROM.get() {
        let family = if server {
            &prom.server_session
        } else {
            &prom.client_session
        };
        family.get_or_create(&labels(attributes)).observe(seconds);
    }
}

/// A request or call refused by the `limit` (`caller`, `overall`, `tool`) of `tool`, if any.
pub(super) fn refused(limit: &'static str, tool: Option<&str>) {
    if let Some(prom) = PROM.get() {
        let mut labels = vec![("limit".to_string(), limit.to_string())];
        if let Some(tool) = tool {
            labels.push(("gen_ai_tool_name".to_string(), tool.to_string()));
        }
        prom.refused.get_or_create(&labels).inc();
    }
}

/// Everything recorded so far, in the Prometheus text format (version 0.0.4), with `dropped`
/// spans.
pub(super) fn render(dropped: u64) -> String {
    let mut registry = Registry::default();
    if let Some(prom) = PROM.get() {
        let families = [
            (
                "mcp_server_operation_duration",
                "The duration of an MCP request as the server saw it",
                &prom.server,
            ),
            (
                "mcp_client_operation_duration",
                "The duration of an MCP request this gateway sent upstream",
                &prom.client,
            ),
            (
                "mcp_server_session_duration",
                "The duration of an MCP session as the server saw it",
                &prom.server_session,
            ),
            (
                "mcp_client_session_duration",
                "The duration of an upstream MCP session of this gateway",
                &prom.client_session,
            ),
        ];
        for (name, help, family) in families {
            registry.register_with_unit(
                name,
                help,
                prometheus_client::registry::Unit::Seconds,
                family.clone(),
            );
        }
        registry.register(
            "toolnexus_limit_refusals",
            "Requests and tool calls refused by a rate or concurrency limit",
            prom.refused.clone(),
        );
    }
    registry.register(
        "toolnexus_telemetry_dropped_spans",
        "Spans dropped on the way to the OpenTelemetry collector",
        ConstCounter::new(dropped),
    );
    let mut text = String::new();
    // Writing to a String cannot fail.
    let _ = prometheus_text::encode(&mut text, &registry);
    text
}
