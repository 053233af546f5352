//! What a hostile config cannot do: overflow a clock with its timeout, or come back whole in a
//! reason or a warning.

use serde_json::{Value, json};

use super::entry::MAX_TIMEOUT_MS;
use super::tests::load_value;
use super::*;

fn entry(server: Value) -> ServerEntry {
    load_value(json!({ "mcpServers": { "s": server } }))
        .servers
        .remove(0)
}

#[test]
fn timeout_must_be_in_range() {
    let too_big = "mcpServers.s.timeout must be at most 2147483647 milliseconds (about 24.8 days)";
    for timeout in [
        json!(1e300),
        json!(5e9),
        json!(2147483647.5),
        json!(u64::MAX),
    ] {
        let e = entry(json!({"command": "c", "timeout": timeout}));
        assert_eq!(e.spec, Err(Invalid(too_big.to_string())), "{timeout}");
        assert_eq!(e.timeout_ms, 30_000, "a bad timeout keeps the default");
    }
    for (timeout, ms) in [
        (json!(2147483647), MAX_TIMEOUT_MS),
        (json!(0), 0),
        (json!(-0.0), 0),
        (json!(0.2), 1),
    ] {
        let e = entry(json!({"command": "c", "timeout": timeout}));
        assert!(e.spec.is_ok(), "{timeout}");
        assert_eq!(e.timeout_ms, ms, "{timeout}");
    }
    let out = normalised_json(&load_value(
        json!({"a": {"command": "c", "timeout": 2147483647}}),
    ));
    assert_eq!(out["a"]["timeout"], json!(2147483647));
}

#[test]
fn reasons_quote_at_most_a_few_hundred_characters() {
    let huge = "t".repeat(5_000_000);
    let why = entry(json!({"type": huge, "url": "u"})).spec.unwrap_err().0;
    assert!(why.len() < 400, "{} bytes", why.len());
    assert!(why.starts_with("mcpServers.s.type \"ttt"), "{}", &why[..60]);
    assert!(why.ends_with("\"… (5000000 characters) is not supported (expected local, stdio, remote, http, streamable-http or sse)"));

    // Our own `{type: "invalid", error}` round trip keeps a reason, not a 5 MB one.
    let why = entry(json!({"type": "invalid", "error": "e".repeat(5_000_000)}))
        .spec
        .unwrap_err();
    assert_eq!(why.chars().count(), 1001);
    assert!(why.ends_with("e…"));

    // A 5 MB server name is cut in every path that names it.
    let name = "n".repeat(5_000_000);
    let c = load_value(json!({ "mcpServers": { name.clone(): {"command": 42} } }));
    let why = c.servers[0].spec.clone().unwrap_err();
    assert!(why.len() < 400, "{} bytes", why.len());
    assert!(
        why.ends_with("… (5000000 characters)].command must be a string or an array of strings")
    );
    assert_eq!(
        c.servers[0].name, name,
        "the name itself is data, kept whole"
    );
}

#[test]
fn warnings_quote_at_most_a_few_hundred_characters() {
    let name = "w".repeat(5_000_000);
    let c = load_value(json!({ "mcpServers": { name: "not an object" } }));
    assert_eq!(c.warnings.len(), 1);
    assert!(c.warnings[0].len() < 600, "{} bytes", c.warnings[0].len());
    assert!(c.warnings[0].starts_with("toolnexus: skipped MCP server \"www"));

    let var = "V".repeat(1_000_000);
    let spec = ServerSpec::Remote {
        url: format!("https://x/${{{var}}}"),
        transport: RemoteTransport::Auto,
        headers: vec![],
    };
    let mut warnings = Vec::new();
    spec.expanded_with(&"s".repeat(1_000_000), &|_| None, &mut warnings);
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].len() < 600, "{} bytes", warnings[0].len());
}

#[test]
fn a_huge_env_normalises_in_linear_time() {
    let n = 100_000;
    let env: serde_json::Map<String, Value> =
        (0..n).map(|i| (format!("K{i}"), json!("env"))).collect();
    let environment: serde_json::Map<String, Value> = (0..n)
        .step_by(2)
        .map(|i| (format!("K{i}"), json!("environment")))
        .collect();
    let started = std::time::Instant::now();
    let e = entry(json!({"command": "c", "env": env, "environment": environment}));
    // Quadratic merging took minutes here; linear takes milliseconds (a generous hang bound).
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    let Ok(ServerSpec::Local { environment, .. }) = e.spec else {
        panic!("a local server")
    };
    assert_eq!(environment.len(), n);
    assert_eq!(
        environment[0],
        ("K0".to_string(), "environment".to_string())
    );
    assert_eq!(environment[1], ("K1".to_string(), "env".to_string()));
}
