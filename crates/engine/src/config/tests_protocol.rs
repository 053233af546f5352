//! The per-server `protocol` field: the eras and revisions it names, and how it fails.

use serde_json::json;

use super::tests::{load_value, one, reason};
use super::*;

#[test]
fn protocol_eras_and_revisions() {
    assert_eq!(one(json!({"command": "c"})).protocol, None);
    assert_eq!(one(json!({"url": "u", "protocol": null})).protocol, None);
    let cases = [
        ("auto", Protocol::Auto),
        ("2026-07-28", Protocol::Discover),
        ("2025-11-25", Protocol::Handshake("2025-11-25")),
        ("2025-06-18", Protocol::Handshake("2025-06-18")),
        ("2025-03-26", Protocol::Handshake("2025-03-26")),
        ("2024-11-05", Protocol::Handshake("2024-11-05")),
    ];
    for (given, expected) in cases {
        for entry in [
            json!({"command": "c", "protocol": given}),
            json!({"url": "https://h/mcp", "protocol": given}),
        ] {
            let s = one(entry.clone());
            assert_eq!(s.protocol, Some(expected), "{entry}");
            assert!(s.spec.is_ok(), "{entry}");
        }
        assert_eq!(expected.as_str(), given);
    }
    // Legacy SSE speaks only the handshake: auto is fine there, pinning discover is not.
    let sse = |p: &str| one(json!({"type": "sse", "url": "https://h/sse", "protocol": p}));
    assert_eq!(sse("auto").protocol, Some(Protocol::Auto));
    assert_eq!(
        sse("2024-11-05").protocol,
        Some(Protocol::Handshake("2024-11-05"))
    );
    assert_eq!(
        sse("2026-07-28").spec.unwrap_err(),
        "mcpServers.s.protocol 2026-07-28 needs streamable HTTP or stdio; legacy SSE has only the \
         initialize handshake"
    );
}

#[test]
fn protocol_wrong_values_fail_that_server_naming_the_field() {
    let expected = "(expected auto, 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05)";
    for (value, quoted) in [
        (json!("2099-01-01"), "\"2099-01-01\""),
        (json!("AUTO"), "\"AUTO\""),
        (json!("2024-10-07"), "\"2024-10-07\""),
        (json!(""), "\"\""),
    ] {
        assert_eq!(
            reason(json!({"command": "c", "protocol": value})),
            format!("mcpServers.s.protocol {quoted} is not supported {expected}")
        );
    }
    for value in [json!(20260728), json!(true), json!(["auto"]), json!({})] {
        assert_eq!(
            reason(json!({"url": "u", "protocol": value})),
            "mcpServers.s.protocol must be a string"
        );
    }
    // A huge value is quoted bounded, not echoed whole.
    let huge = "x".repeat(100_000);
    let r = reason(json!({"command": "c", "protocol": huge}));
    assert!(r.len() < 500, "{} chars", r.len());
    assert!(r.starts_with(&format!("mcpServers.s.protocol \"{}", "x".repeat(200))));
    let r = reason(json!({"url": "u", "type": "y".repeat(100_000)}));
    assert!(r.len() < 500, "type quoted whole: {} chars", r.len());
    // A broken command stays the headline; the other server is unaffected.
    let c = load_value(json!({"mcpServers": {
        "bad": {"command": 42, "protocol": "nope"},
        "good": {"command": "x", "protocol": "auto"},
    }}));
    assert_eq!(
        c.servers[0].spec,
        Err("mcpServers.bad.command must be a string or an array of strings".into())
    );
    assert_eq!(c.servers[1].protocol, Some(Protocol::Auto));
}

#[test]
fn protocol_in_the_normalised_shape_only_when_given() {
    let c = load_value(json!({"mcpServers": {
        "plain": {"url": "https://h/mcp"},
        "pinned": {"url": "https://h/mcp", "protocol": "2026-07-28"},
        "local": {"command": "c", "protocol": "auto"},
        "bad": {"command": "c", "protocol": "2099-01-01"},
    }}));
    let out = normalised_json(&c);
    assert_eq!(out["plain"].get("protocol"), None);
    assert_eq!(out["pinned"]["protocol"], "2026-07-28");
    assert_eq!(out["local"]["protocol"], "auto");
    assert_eq!(out["bad"]["type"], "invalid");
    assert_eq!(out["bad"].get("protocol"), None);
    let again = load_value(out.clone());
    assert_eq!(again.servers, c.servers);
    assert_eq!(normalised_json(&again), out);
}
