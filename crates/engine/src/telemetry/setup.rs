//! What the process exports, from the standard `OTEL_*` environment variables:
//! - `OTEL_SDK_DISABLED=true`: nothing;
//! - traces over OTLP/HTTP when `OTEL_EXPORTER_OTLP_ENDPOINT` or
//!   `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set, unless `OTEL_TRACES_EXPORTER` is `none`;
//! - metrics likewise (`..._METRICS_ENDPOINT`, `OTEL_METRICS_EXPORTER`), every
//!   `OTEL_METRIC_EXPORT_INTERVAL` milliseconds;
//! - the rest as the OpenTelemetry SDK reads it: `OTEL_EXPORTER_OTLP_HEADERS` and `_TIMEOUT`,
//!   `OTEL_SERVICE_NAME` (else `toolnexus`), `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER`,
//!   and the queue's `OTEL_BSP_MAX_QUEUE_SIZE`, `_SCHEDULE_DELAY`, `_MAX_EXPORT_BATCH_SIZE`.
//!
//! Only `http/protobuf` is spoken; another protocol, or an exporter other than `otlp`, is
//! refused with a warning in words and that signal is not exported.

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Histogram, MeterProvider as _};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;

use super::export::{Bounded, DROPPED, QueueConfig};

/// What the process exports to, decided once: spans (their tracer and provider), metrics
/// (their provider and the four histograms).
pub(crate) struct Setup {
    pub(super) tracer: Option<opentelemetry_sdk::trace::SdkTracer>,
    pub(super) traces: Option<opentelemetry_sdk::trace::SdkTracerProvider>,
    pub(super) meters: Option<opentelemetry_sdk::metrics::SdkMeterProvider>,
    pub(super) histograms: Option<Histograms>,
}

impl Setup {
    pub(super) fn off() -> Setup {
        Setup {
            tracer: None,
            traces: None,
            meters: None,
            histograms: None,
        }
    }
}

/// The four duration histograms of the conventions, in the exporting meter provider.
pub(super) struct Histograms {
    server: Histogram<f64>,
    client: Histogram<f64>,
    server_session: Histogram<f64>,
    client_session: Histogram<f64>,
}

fn attributes(labels: &[(&'static str, String)]) -> Vec<KeyValue> {
    labels
        .iter()
        .map(|(k, v)| KeyValue::new(*k, v.clone()))
        .collect()
}

impl Histograms {
    pub(super) fn operation(&self, server: bool, seconds: f64, labels: &[(&'static str, String)]) {
        let histogram = if server { &self.server } else { &self.client };
        histogram.record(seconds, &attributes(labels));
    }

    pub(super) fn session(&self, server: bool, seconds: f64, labels: &[(&'static str, String)]) {
        let histogram = if server {
            &self.server_session
        } else {
            &self.client_session
        };
        histogram.record(seconds, &attributes(labels));
    }
}

type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

fn set(env: Env<'_>, name: &str) -> Option<String> {
    env(name)
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

fn warn(what: &str) {
    eprintln!("toolnexus: telemetry: {what}");
}

/// Whether `signal` (`TRACES` or `METRICS`) is exported over OTLP, by the environment.
pub(super) fn wanted(env: Env<'_>, signal: &str) -> bool {
    let lower = signal.to_ascii_lowercase();
    match set(env, &format!("OTEL_{signal}_EXPORTER")).as_deref() {
        None | Some("otlp") => {}
        Some("none") => return false,
        Some(other) => {
            warn(&format!(
                "OTEL_{signal}_EXPORTER={other} is not supported (only otlp, over HTTP with \
                 protobuf); {lower} are not exported"
            ));
            return false;
        }
    }
    let endpoint = set(env, "OTEL_EXPORTER_OTLP_ENDPOINT")
        .or_else(|| set(env, &format!("OTEL_EXPORTER_OTLP_{signal}_ENDPOINT")));
    if endpoint.is_none() {
        return false;
    }
    let protocol = set(env, &format!("OTEL_EXPORTER_OTLP_{signal}_PROTOCOL"))
        .or_else(|| set(env, "OTEL_EXPORTER_OTLP_PROTOCOL"));
    match protocol.as_deref() {
        None | Some("http/protobuf") => true,
        Some(other) => {
            warn(&format!(
                "OTLP protocol {other} is not supported (only http/protobuf); {lower} are not \
                 exported"
            ));
            false
        }
    }
}

/// The resource spans and metrics are exported with: the SDK's, named `toolnexus` unless
/// `OTEL_SERVICE_NAME` or `OTEL_RESOURCE_ATTRIBUTES` names the service.
fn resource() -> Resource {
    let detected = Resource::builder().build();
    let named = detected
        .get(&opentelemetry::Key::from_static_str("service.name"))
        .is_some_and(|name| !name.as_str().starts_with("unknown_service"));
    if named {
        detected
    } else {
        Resource::builder().with_service_name("toolnexus").build()
    }
}

pub(super) fn scope() -> opentelemetry::InstrumentationScope {
    opentelemetry::InstrumentationScope::builder("toolnexus")
        .with_version(env!("CARGO_PKG_VERSION"))
        .build()
}

pub(super) fn from_env(env: Env<'_>) -> Setup {
    let mut telemetry = Setup::off();
    if set(env, "OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
        return telemetry;
    }
    let traces = wanted(env, "TRACES");
    let metrics = wanted(env, "METRICS");
    if !traces && !metrics {
        return telemetry;
    }
    let resource = resource();
    if traces {
        match opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .build()
        {
            Ok(exporter) => {
                let processor =
                    Bounded::start(exporter, &resource, QueueConfig::from_env(env), &DROPPED);
                let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
                    .with_resource(resource.clone())
                    .with_span_processor(processor)
                    .build();
                telemetry.tracer = Some(provider.tracer_with_scope(scope()));
                telemetry.traces = Some(provider);
            }
            Err(e) => warn(&format!("traces are not exported: {e}")),
        }
    }
    if metrics {
        match opentelemetry_otlp::MetricExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .build()
        {
            Ok(exporter) => {
                let reader = opentelemetry_sdk::metrics::PeriodicReader::builder(exporter).build();
                let provider = opentelemetry_sdk::metrics::SdkMeterProvider::builder()
                    .with_resource(resource)
                    .with_reader(reader)
                    .build();
                let meter = provider.meter_with_scope(scope());
                let histogram = |name: &'static str, description: &'static str| {
                    meter
                        .f64_histogram(name)
                        .with_unit("s")
                        .with_description(description)
                        .with_boundaries(super::prom::BUCKETS.to_vec())
                        .build()
                };
                telemetry.histograms = Some(Histograms {
                    server: histogram(
                        "mcp.server.operation.duration",
                        "The duration of an MCP request or notification as the server saw it",
                    ),
                    client: histogram(
                        "mcp.client.operation.duration",
                        "The duration of an MCP request or notification as the client saw it",
                    ),
                    server_session: histogram(
                        "mcp.server.session.duration",
                        "The duration of an MCP session as the server saw it",
                    ),
                    client_session: histogram(
                        "mcp.client.session.duration",
                        "The duration of an MCP session as the client saw it",
                    ),
                });
                telemetry.meters = Some(provider);
            }
            Err(e) => warn(&format!("metrics are not exported: {e}")),
        }
    }
    telemetry
}
