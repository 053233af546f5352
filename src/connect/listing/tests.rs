//! A page read from its text, against rmcp's typed reading of it.

use super::*;
use serde_json::json;

/// What the typed path makes of the same page (execution tucked as the framing does).
fn typed(page: &Value) -> Vec<Value> {
    let text = json!({"jsonrpc": "2.0", "id": 1, "result": page}).to_string();
    let text = crate::connect::execution::tuck(&text).unwrap_or(text);
    let message: Value = serde_json::from_str(&text).unwrap();
    let result: rmcp::model::ListToolsResult =
        serde_json::from_value(message["result"].clone()).unwrap();
    result
        .tools
        .into_iter()
        .map(super::typed_tool_info)
        .collect()
}

#[test]
fn a_page_reads_as_the_typed_path_reads_it() {
    let page = json!({"tools": [
        {"name": "plain", "inputSchema": {}},
        {"name": "full", "title": "Full", "description": "d",
         "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
         "outputSchema": {"type": "object", "properties": {}},
         "annotations": {"title": "t", "readOnlyHint": true, "destructiveHint": false},
         "icons": [{"src": "https://example.com/i.png", "mimeType": "image/png", "sizes": ["48x48"]}],
         "_meta": {"x": 1},
         "execution": {"taskSupport": "required"}},
        {"name": "meta-only-execution", "inputSchema": {"type": "object"},
         "execution": {"taskSupport": "optional"}},
        {"name": "unknown fields", "inputSchema": {"type": "object"}, "extra": [1, 2],
         "description": null, "title": null},
    ], "nextCursor": "c2"});
    let read = read_page(&page.to_string()).unwrap();
    assert_eq!(read.next_cursor.as_deref(), Some("c2"));
    let typed = typed(&page);
    let values: Vec<Value> = read.tools.iter().map(ToolInfo::to_value).collect();
    assert_eq!(values, typed);
    // Same text too, key order included (what `toolnexus list --json` prints).
    for (a, b) in read.tools.iter().zip(&typed) {
        assert_eq!(a.json().get(), b.to_string());
    }
}

#[test]
fn a_tool_over_the_bound_is_refused_naming_it() {
    let bound = crate::connect::tool_info::MAX_TOOL_BYTES;
    let fits = json!({"tools": [{"name": "fits", "description": "x".repeat(bound - 100), "inputSchema": {}}]});
    assert_eq!(
        read_page(&fits.to_string()).unwrap().tools[0].name(),
        "fits"
    );
    let over = json!({"tools": [
        {"name": "small", "inputSchema": {}},
        {"name": "padded", "description": "x".repeat(bound), "inputSchema": {}},
    ]});
    let err = read_page(&over.to_string()).err().unwrap().to_string();
    let size = over["tools"][1].to_string().len();
    assert_eq!(
        err,
        format!(
            "tools/list failed: tool \"padded\" is {size} bytes of JSON, over the 8 MiB a tool definition may be"
        )
    );
}

#[test]
fn a_page_rmcp_would_refuse_is_refused_in_words() {
    for (page, why) in [
        (
            json!({"tools": [{"name": "x"}]}),
            "missing field `inputSchema`",
        ),
        (
            json!({"tools": [{"name": "x", "inputSchema": []}]}),
            "invalid type",
        ),
        (json!({"tools": "no"}), "invalid type"),
        (json!([]), "expected an object with \"tools\""),
        (
            json!({"tools": [{"name": "x", "inputSchema": {}, "icons": [7]}]}),
            "expected an object at",
        ),
        (
            json!({"tools": [{"name": "x", "inputSchema": {}, "annotations": {"readOnlyHint": "yes"}}]}),
            "invalid type",
        ),
    ] {
        let err = read_page(&page.to_string()).err().unwrap().to_string();
        assert!(
            err.starts_with("tools/list failed: the server's answer is not a tool listing (")
                && err.contains(why),
            "{err}"
        );
        let typed = serde_json::from_value::<rmcp::model::ListToolsResult>(page);
        assert!(typed.is_err(), "rmcp accepts what is refused here");
    }
}
