//! A listed tool's `execution` (`taskSupport`), which rmcp 3.11's `Tool` has no field for and so
//! drops when it reads a listing. Where toolnexus sees a server's messages as text (its own
//! stdio framing, server-sent events of streamable HTTP and legacy SSE), the `execution` of each
//! tool in a `tools/list` answer is tucked into the tool's `_meta` under a private key before
//! rmcp reads the message, and taken back out for `ToolInfo`. (A streamable-HTTP answer sent as
//! a plain JSON body is read by rmcp's HTTP client itself, so there it is still lost.)

use serde_json::{Map, Value};

const KEY: &str = "toolnexus/execution";

/// The message with each listed tool's `execution` moved into its `_meta`; None when no tool
/// has one (almost always, and then nothing is parsed twice).
pub fn tuck(text: &str) -> Option<String> {
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
pub fn untuck(info: &mut Map<String, Value>) {
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

/// Whether a listing says the tool can only be called as a task.
pub fn task_required(listing: &Value) -> bool {
    listing.get("execution").is_some_and(requires_task)
}

/// Whether a tool's `execution` says it can only be called as a task.
pub fn requires_task(execution: &Value) -> bool {
    execution.get("taskSupport").and_then(Value::as_str) == Some("required")
}

/// A task status as the wire names it.
pub fn status_name(status: rmcp::model::TaskStatus) -> &'static str {
    use rmcp::model::TaskStatus;
    match status {
        TaskStatus::Working => "working",
        TaskStatus::InputRequired => "input_required",
        TaskStatus::Completed => "completed",
        TaskStatus::Failed => "failed",
        TaskStatus::Cancelled => "cancelled",
        // rmcp's enum is open to later revisions' statuses: one not known here is still going.
        _ => "working",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
