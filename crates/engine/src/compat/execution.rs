//! **rmcp gap: a listed tool's `execution` is dropped.** rmcp 3.11's `Tool` has no `execution`
//! field (rust-sdk PR #635 added `execution.taskSupport` in February 2026; rmcp 3.0 took it out
//! with tasks, which became the `io.modelcontextprotocol/tasks` extension), so a `tools/list`
//! answer read into rmcp's types loses each tool's `taskSupport`, and a task-required tool would
//! be called without a task.
//!
//! The patch, on the client side: where toolnexus sees a server's messages as text (its own
//! stdio framing, the server-sent events of streamable HTTP and legacy SSE), each listed tool's
//! `execution` is tucked into its `_meta` under a private key before rmcp reads the message
//! ([`tuck`]), and taken back out for `ToolInfo` ([`untuck`]). Not patched: a streamable-HTTP
//! answer sent as a plain JSON body, which rmcp's HTTP client reads itself (only a copy of its
//! whole POST handling could reach it). The served side puts `execution` back on its own
//! listings in `serve::wire` and `serve::http::sessions`.
//!
//! Delete this file once [`tests::rmcp_still_drops_execution`] fails: rmcp then keeps the field.

use serde_json::{Map, Value};

const KEY: &str = "toolnexus/execution";

/// The message with each listed tool's `execution` moved into its `_meta`; None when no tool
/// has one (almost always, and then nothing is parsed twice).
pub(crate) fn tuck(text: &str) -> Option<String> {
    if !text.contains("\"execution\"") {
        return None;
    }
    let mut message: Value = serde_json::from_str(text).ok()?;
    let tools = message
        .get_mut("result")?
        .get_mut("tools")?
        .as_array_mut()?;
    let mut moved = false;
    for tool in tools.iter_mut().filter_map(Value::as_object_mut) {
        let Some(execution) = tool.remove("execution") else {
            continue;
        };
        let meta = tool
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(meta) = meta.as_object_mut() {
            meta.insert(KEY.into(), execution);
            moved = true;
        }
    }
    moved.then(|| message.to_string())
}

/// Puts a tucked `execution` back where the server listed it.
pub(crate) fn untuck(info: &mut Map<String, Value>) {
    let Some(Value::Object(meta)) = info.get_mut("_meta") else {
        return;
    };
    let Some(execution) = meta.remove(KEY) else {
        return;
    };
    if meta.is_empty() {
        info.remove("_meta");
    }
    info.insert("execution".into(), execution);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connect::execution::task_required;
    use serde_json::json;

    /// Fails once rmcp's `Tool` keeps `execution`: this patch can go then.
    #[test]
    fn rmcp_still_drops_execution() {
        let listed = json!({"name": "a", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}});
        let tool: rmcp::model::Tool = serde_json::from_value(listed).unwrap();
        let again = serde_json::to_value(&tool).unwrap();
        assert_eq!(
            again.get("execution"),
            None,
            "rmcp now keeps a tool's execution: delete crates/engine/src/compat/execution.rs and its callers' tuck/untuck"
        );
    }

    #[test]
    fn execution_survives_a_listing_through_meta() {
        let text = json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [
            {"name": "a", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}},
            {"name": "b", "inputSchema": {"type": "object"}, "_meta": {"x": 1}, "execution": {"taskSupport": "optional"}},
            {"name": "c", "inputSchema": {"type": "object"}},
        ]}})
        .to_string();
        let tucked: Value = serde_json::from_str(&tuck(&text).unwrap()).unwrap();
        let tools = tucked["result"]["tools"].as_array().unwrap();
        let mut infos: Vec<Map<String, Value>> = tools
            .iter()
            .map(|t| t.as_object().unwrap().clone())
            .collect();
        assert!(infos.iter().all(|t| !t.contains_key("execution")));
        infos.iter_mut().for_each(untuck);
        assert_eq!(infos[0]["execution"], json!({"taskSupport": "required"}));
        assert!(!infos[0].contains_key("_meta"));
        assert_eq!(infos[1]["_meta"], json!({"x": 1}));
        assert_eq!(infos[1]["execution"], json!({"taskSupport": "optional"}));
        assert!(!infos[2].contains_key("execution"));
        assert!(task_required(&Value::Object(infos[0].clone())));
        assert!(!task_required(&Value::Object(infos[1].clone())));
        assert_eq!(tuck(&json!({"result": {"tools": []}}).to_string()), None);
        assert_eq!(
            tuck(r#"{"result": {"content": [{"type": "text", "text": "\"execution\""}]}}"#),
            None
        );
    }
}
