//! Failure reasons: how causes read, where they are placed, what rmcp's text yields.

use super::*;
use crate::connect::error::AtUrl;

#[test]
fn bounded_cuts_and_flattens() {
    assert_eq!(bounded("  a\nb\tc "), "a b c");
    let long = "é".repeat(1000);
    let cut = bounded(&long);
    assert_eq!(cut.chars().count(), QUOTE_CHARS + 1);
    assert!(cut.ends_with('…'));
}

#[test]
fn http_causes_read_as_words() {
    let http = |status, ct: Option<&str>, detail: Option<&str>| Cause::Http {
        status,
        content_type: ct.map(str::to_string),
        detail: detail.map(str::to_string),
    };
    let cases = [
        (
            http(404, Some("text/html"), None),
            "not an MCP endpoint (HTTP 404, text/html)",
        ),
        (
            http(404, None, None),
            "not an MCP endpoint (HTTP 404 Not Found)",
        ),
        (
            http(405, Some("application/json"), None),
            "not an MCP endpoint (HTTP 405 Method Not Allowed)",
        ),
        (http(401, Some("text/html"), None), "HTTP 401 Unauthorized"),
        (
            http(500, None, Some("boom")),
            "HTTP 500 Internal Server Error: boom",
        ),
        (
            http(400, Some("application/json"), Some("bad")),
            "HTTP 400 Bad Request: bad",
        ),
        (
            http(404, Some("text/plain; charset=utf-8"), None),
            "not an MCP endpoint (HTTP 404, text/plain; charset=utf-8)",
        ),
        (http(400, Some("text/plain"), None), "HTTP 400 Bad Request"),
        (
            Cause::NotMcp {
                content_type: Some("text/html".into()),
            },
            "not an MCP endpoint (it answered with text/html)",
        ),
    ];
    for (cause, words) in cases {
        assert_eq!(cause.to_string(), words);
    }
}

#[test]
fn located_at_a_redacted_url_and_said_once() {
    let url = "https://user:pw@h.example/mcp?api_key=secret#frag";
    let refused = Cause::Network("connection refused".into());
    assert_eq!(
        refused.at(url),
        "connection refused at https://h.example/mcp"
    );
    assert_eq!(
        AtUrl::both(refused.clone(), refused.clone(), url).to_string(),
        "connection refused at https://h.example/mcp"
    );
    let bare = Cause::Http {
        status: 404,
        content_type: None,
        detail: None,
    };
    let typed = Cause::Http {
        status: 404,
        content_type: Some("text/html".into()),
        detail: None,
    };
    assert_eq!(
        AtUrl::both(bare.clone(), typed.clone(), url).to_string(),
        "not an MCP endpoint (HTTP 404, text/html) at https://h.example/mcp"
    );
    let other = Cause::Http {
        status: 405,
        content_type: None,
        detail: None,
    };
    assert_eq!(
        AtUrl::both(refused.clone(), other.clone(), url).to_string(),
        "connection refused at https://h.example/mcp; legacy SSE fallback: not an MCP endpoint \
         (HTTP 405 Method Not Allowed) at https://h.example/mcp"
    );
    assert_eq!(Cause::Words("said (x)".into()).at(url), "said (x)");
}

#[test]
fn status_lines_from_rmcp() {
    assert_eq!(
        status_line("HTTP 404 Not Found: <html>"),
        Some((404, "<html>"))
    );
    assert_eq!(status_line("HTTP 401 Unauthorized: "), Some((401, "")));
    assert_eq!(status_line("expect json, got Accepted"), None);
    assert_eq!(plain_detail("<!doctype html>"), None);
    assert_eq!(plain_detail("no session\nmore"), Some("no session".into()));
    assert_eq!(
        strip_os_error("Connection refused (os error 111)"),
        "Connection refused"
    );
}
