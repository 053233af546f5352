//! What the environment turns on, the bounded labels, and the Prometheus text.

use std::collections::HashMap;

use super::setup::wanted;

fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |name| map.get(name).cloned()
}

#[test]
fn a_signal_is_exported_only_with_an_otlp_endpoint_over_http_protobuf() {
    let none = env(&[]);
    assert!(!wanted(&none, "TRACES"));
    let generic = env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")]);
    assert!(wanted(&generic, "TRACES"));
    assert!(wanted(&generic, "METRICS"));
    let traces_only = env(&[(
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "http://127.0.0.1:4318/v1/traces",
    )]);
    assert!(wanted(&traces_only, "TRACES"));
    assert!(!wanted(&traces_only, "METRICS"));
    let blank = env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "  ")]);
    assert!(!wanted(&blank, "TRACES"));
    let off = env(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
        ("OTEL_TRACES_EXPORTER", "none"),
    ]);
    assert!(!wanted(&off, "TRACES"));
    assert!(wanted(&off, "METRICS"));
    // Only http/protobuf is spoken: grpc or http/json is refused (with a warning), not
    // sent in a format the collector would not read.
    for protocol in ["grpc", "http/json"] {
        let other = env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", protocol),
        ]);
        assert!(!wanted(&other, "TRACES"), "{protocol}");
    }
    let per_signal = env(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf"),
    ]);
    assert!(wanted(&per_signal, "TRACES"));
    assert!(!wanted(&per_signal, "METRICS"));
    let zipkin = env(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
        ("OTEL_TRACES_EXPORTER", "zipkin"),
    ]);
    assert!(!wanted(&zipkin, "TRACES"));
}

#[test]
fn disabled_sdk_turns_everything_off() {
    let disabled = env(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
        ("OTEL_SDK_DISABLED", "TRUE"),
    ]);
    let telemetry = super::setup::from_env(&disabled);
    assert!(telemetry.tracer.is_none());
    assert!(telemetry.histograms.is_none());
}

#[test]
fn queue_bounds_come_from_the_environment_within_limits() {
    let config = super::export::QueueConfig::from_env(&env(&[
        ("OTEL_BSP_MAX_QUEUE_SIZE", "10"),
        ("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "512"),
        ("OTEL_BSP_SCHEDULE_DELAY", "garbage"),
    ]));
    assert_eq!(config.max_queue, 10);
    assert_eq!(config.max_batch, 10, "a batch never exceeds the queue");
    assert_eq!(config.delay, std::time::Duration::from_millis(5000));
}

#[test]
fn names_label_durations_until_the_bound_then_other() {
    use super::op::Named;
    let first = super::op::label(Named::Tool("bounded-label-test"));
    assert_eq!(
        first,
        Some(("gen_ai.tool.name", "bounded-label-test".into()))
    );
    let mut other = None;
    for i in 0..super::op::MAX_LABELLED_NAMES + 1 {
        other = super::op::label(Named::Prompt(&format!("flood-{i}")));
    }
    assert_eq!(other, Some(("gen_ai.prompt.name", "_OTHER".into())));
    // A name seen before the bound keeps its label.
    assert_eq!(
        super::op::label(Named::Tool("bounded-label-test")),
        Some(("gen_ai.tool.name", "bounded-label-test".into()))
    );
    assert_eq!(super::op::label(Named::Resource("file:///x")), None);
}

#[test]
fn prometheus_text_names_the_histograms_and_their_labels() {
    super::state::serve_metrics();
    super::prom::operation(
        true,
        0.03,
        &[
            ("mcp.method.name", "tools/call".into()),
            ("gen_ai.tool.name", "prom-text-test".into()),
            ("error.type", "tool_error".into()),
        ],
    );
    let text = super::state::metrics_text();
    assert!(
        text.contains("# TYPE mcp_server_operation_duration_seconds histogram"),
        "{text}"
    );
    let count = text
        .lines()
        .find(|l| {
            l.starts_with("mcp_server_operation_duration_seconds_count{")
                && l.contains("gen_ai_tool_name=\"prom-text-test\"")
        })
        .expect(&text);
    assert!(count.contains("mcp_method_name=\"tools/call\""));
    assert!(count.contains("error_type=\"tool_error\""));
    assert!(count.ends_with(" 1"), "{count}");
    assert!(text.contains("le=\"0.05\""));
    assert!(text.contains("toolnexus_telemetry_dropped_spans_total 0"));
}
