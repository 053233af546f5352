//! The process's telemetry, decided once from the environment ([`super::setup`]).

use std::sync::OnceLock;

/// What the process exports to (see [`super::setup`]).
pub(super) type Telemetry = super::setup::Setup;

static STATE: OnceLock<Telemetry> = OnceLock::new();

impl Telemetry {
    /// The process's telemetry, read from the environment the first time it is needed (on a
    /// thread of its own: the OTLP exporter builds a blocking HTTP client, which a tokio
    /// worker must not).
    pub(super) fn get() -> &'static Telemetry {
        STATE.get_or_init(|| {
            std::thread::spawn(|| super::setup::from_env(&|name| std::env::var(name).ok()))
                .join()
                .unwrap_or_else(|_| Telemetry::off())
        })
    }

    /// The tracer spans are made with: the app's in-process sink's while one is set
    /// ([`super::in_process`]), else the OTLP exporter's.
    pub(super) fn tracer(&self) -> Option<&opentelemetry_sdk::trace::SdkTracer> {
        super::in_process::tracer().or(self.tracer.as_ref())
    }

    /// Whether durations are recorded (over OTLP, or for `/metrics`).
    pub(super) fn measures(&self) -> bool {
        self.histograms.is_some() || super::prom::on()
    }

    /// Whether anything records an operation.
    pub(super) fn records(&self) -> bool {
        self.tracer().is_some() || self.histograms.is_some() || super::prom::on()
    }
}

/// Whether spans are made: an OTLP endpoint is configured for traces, or the app takes them
/// in-process.
pub fn tracing() -> bool {
    Telemetry::get().tracer().is_some()
}

/// Reads the environment now (a server starting), so that its warnings come at start-up and
/// the first request does not wait for the exporters to be built.
pub(crate) fn start() {
    Telemetry::get();
}

/// From now on, keep the durations `/metrics` renders.
pub(crate) fn serve_metrics() {
    super::prom::enable();
}

/// Counts a request or call refused by a rate or concurrency limit, for `/metrics`.
pub(crate) fn limit_refused(limit: &'static str, tool: Option<&str>) {
    super::prom::refused(limit, tool);
}

/// Everything recorded for `/metrics`, in the Prometheus text format (version 0.0.4), with
/// the spans dropped on the way to a collector.
pub fn metrics_text() -> String {
    super::prom::render(super::export::DROPPED.total())
}

/// Sends what is queued (spans, and metrics when exported) and waits for it, bounded; then,
/// if spans were dropped since this was last said, says how many in all (one line on stderr).
/// The exporters stay up: a worker's environment ending calls this too.
pub fn flush() {
    let Some(telemetry) = STATE.get() else {
        return;
    };
    if let Some(traces) = &telemetry.traces {
        let _ = traces.force_flush();
    }
    if let Some(meters) = &telemetry.meters {
        let _ = meters.force_flush();
    }
    super::export::DROPPED.report_total();
}
