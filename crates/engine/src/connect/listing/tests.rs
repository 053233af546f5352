//! A page read from its text, against rmcp's typed reading of it.

use super::surface::left_out;
use super::*;
use serde_json::json;

/// What the typed path makes of the same page (execution tucked as the framing does).
fn typed(page: &Value) -> Vec<Value> {
    let text = json!({"jsonrpc": "2.0", "id": 1, "result": page}).to_string();
    let text = crate::compat::execution::tuck(&text).unwrap_or(text);
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

#[test]
fn a_surface_page_keeps_every_field_and_its_hints() {
    use crate::surface::Kind;
    let page = json!({"resources": [
        {"uri": "a://one", "name": "one", "mimeType": "text/plain", "x-extra": {"kept": true}},
        {"uri": "a://two", "name": "two", "size": 5, "annotations": {"priority": 0.5}},
    ], "nextCursor": "p2", "ttlMs": 5000, "cacheScope": "public"});
    let read = read_surface_page(Kind::Resources, &page.to_string()).unwrap();
    assert_eq!(read.next_cursor.as_deref(), Some("p2"));
    let items: Vec<Value> = read.items.into_iter().map(Value::Object).collect();
    assert_eq!(Value::Array(items), page["resources"]);
    assert_eq!(read.hints.ttl_ms, Some(5000));
    assert_eq!(read.hints.scope, Some(rmcp::model::CacheScope::Public));
    // A bad hint is no hint, never a refused page.
    let page = json!({"prompts": [{"name": "p", "arguments": [{"name": "a"}]}],
        "ttlMs": "soon", "cacheScope": 3});
    let read = read_surface_page(Kind::Prompts, &page.to_string()).unwrap();
    assert_eq!(read.hints, crate::surface::Hints::default());
    assert_eq!(read.next_cursor, None);
    let page = json!({"resourceTemplates": [{"uriTemplate": "a://{id}", "name": "t"}]});
    let read = read_surface_page(Kind::ResourceTemplates, &page.to_string()).unwrap();
    assert_eq!(read.items[0]["uriTemplate"], "a://{id}");
}

#[test]
fn a_surface_page_names_what_is_wrong() {
    use crate::surface::Kind;
    let err = |kind: Kind, page: Value| {
        read_surface_page(kind, &page.to_string())
            .err()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        err(
            Kind::Resources,
            json!({"resources": [{"uri": "a://x", "name": "x"}, {"name": "y"}]})
        ),
        "resources/list failed: the server's answer is not a resources listing \
         (item 1: \"uri\" is missing or not a string)"
    );
    assert_eq!(
        err(Kind::Prompts, json!({"prompts": [{"name": 5}]})),
        "prompts/list failed: the server's answer is not a prompts listing \
         (item 0: \"name\" is missing or not a string)"
    );
    assert_eq!(
        err(
            Kind::ResourceTemplates,
            json!({"resourceTemplates": [{"uriTemplate": "a://{x}"}]})
        ),
        "resources/templates/list failed: the server's answer is not a resources/templates \
         listing (item 0: \"name\" is missing or not a string)"
    );
    assert!(
        err(Kind::Resources, json!({"nope": []})).ends_with("(no \"resources\")"),
        "{}",
        err(Kind::Resources, json!({"nope": []}))
    );
    assert!(err(Kind::Resources, json!({"resources": [7]})).contains("item 0 is not an object"));
    let huge = "x".repeat(crate::bounds::MAX_SURFACE_ITEM_BYTES);
    let item = json!({"uri": "a://big", "name": "big", "text": huge});
    let len = item.to_string().len();
    let why = err(Kind::Resources, json!({"resources": [item]}));
    assert_eq!(
        why,
        format!(
            "resources/list failed: resource \"a://big\" is {len} bytes of JSON, over the 1 MiB \
             an item may be"
        )
    );
}

#[test]
fn a_failed_kind_is_left_out_in_words() {
    use crate::surface::Kind;
    let timeout = ConnectError::Timeout {
        phase: "resources/list",
        after: Duration::from_millis(1000),
    };
    assert_eq!(
        left_out("x", Kind::Resources, &timeout),
        "toolnexus: server \"x\": resources/list timed out after 1000 ms; its resources are left out"
    );
    let repeated =
        ConnectError::Protocol("prompts/list repeated cursor \"c\"; stopped paging".into());
    assert_eq!(
        left_out("x", Kind::Prompts, &repeated),
        "toolnexus: server \"x\": prompts/list repeated cursor \"c\"; stopped paging; its prompts are left out"
    );
}
