//! A tool call's result, one type for every road: what a loaded tool's `execute` resolves (the
//! package's `ToolResult`: `output` in words, `isError`, and the MCP parts as the tool sent
//! them) and what a served call answers (MCP's `CallToolResult`), with the conversions between
//! them and from a JSON value in either shape.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value, json};

/// A tool call's result (see the module's documentation).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolResult {
    /// The result in words (docs/loading.md's mapping for MCP results).
    pub(crate) output: String,
    pub(crate) is_error: bool,
    /// MCP `content` parts, as the tool sent them.
    pub(crate) content: Option<Value>,
    pub(crate) structured_content: Option<Value>,
    /// MCP `_meta`, as the tool sent it.
    pub meta: Option<Value>,
}

/// The MCP parts a `ToolResult` carries, by their JSON names.
const PARTS: [&str; 3] = ["content", "structuredContent", "_meta"];

impl ToolResult {
    /// A result that is one text (as MCP: one text part).
    pub fn text(output: impl Into<String>, is_error: bool) -> Self {
        Self {
            output: output.into(),
            is_error,
            ..Self::default()
        }
    }

    /// An MCP `CallToolResult` (as JSON): its `output` mapped as for MCP tools, its parts kept.
    pub fn from_mcp(raw: Value) -> Self {
        let (output, is_error) = crate::connect::session::result::output_of(&raw);
        Self::text(output, is_error).with_parts_of(raw)
    }

    /// `output` and `isError` as given, and the MCP parts of `raw` (a `CallToolResult` as
    /// JSON) when it is one.
    pub fn with_parts_of(mut self, raw: Value) -> Self {
        if let Value::Object(mut raw) = raw {
            self.content = raw.remove("content");
            self.structured_content = raw.remove("structuredContent");
            self.meta = raw.remove("_meta");
        }
        self
    }

    /// A `ToolResult` as JavaScript gave it (`{output, isError, content?, structuredContent?}`):
    /// a non-string `output` is its JSON text, `content` counts only as an array.
    pub fn from_js(result: Value) -> Self {
        let Value::Object(mut result) = result else {
            return Self::default();
        };
        let output = match result.remove("output") {
            Some(Value::String(s)) => s,
            Some(other) => other.to_string(),
            None => String::new(),
        };
        let is_error = result
            .get("isError")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        Self {
            output,
            is_error,
            content: result.remove("content").filter(|c| c.is_array()),
            structured_content: result.remove("structuredContent"),
            meta: None,
        }
    }

    /// As MCP's `CallToolResult` JSON: the `content` parts (and `structuredContent`) when it has
    /// them, else `output` as one text part.
    pub fn into_mcp(self) -> Value {
        let Some(content) = self.content else {
            return json!({
                "content": [{ "type": "text", "text": self.output }],
                "isError": self.is_error,
            });
        };
        let mut mcp = Map::new();
        mcp.insert("content".into(), content);
        if let Some(structured) = self.structured_content {
            mcp.insert("structuredContent".into(), structured);
        }
        mcp.insert("isError".into(), Value::Bool(self.is_error));
        Value::Object(mcp)
    }

    /// As JavaScript's `ToolResult` object (`output`, `isError`, then the parts it has).
    pub fn into_js(self) -> Map<String, Value> {
        let mut result = Map::new();
        result.insert("output".into(), Value::String(self.output));
        result.insert("isError".into(), Value::Bool(self.is_error));
        let parts = [self.content, self.structured_content, self.meta];
        for (key, part) in PARTS.iter().zip(parts) {
            if let Some(part) = part {
                result.insert((*key).into(), part);
            }
        }
        result
    }
}

/// JavaScript's `ToolResult` object.
impl From<ToolResult> for Value {
    fn from(result: ToolResult) -> Self {
        Value::Object(result.into_js())
    }
}

/// MCP's `CallToolResult`: one text part for a text result, the parts as sent otherwise (and
/// an error a client can read when they are not valid MCP).
impl From<ToolResult> for CallToolResult {
    fn from(result: ToolResult) -> Self {
        if result.content.is_none() {
            let content = vec![ContentBlock::text(result.output)];
            return if result.is_error {
                CallToolResult::error(content)
            } else {
                CallToolResult::success(content)
            };
        }
        call_result_from_json(result.into_mcp())
    }
}

/// A caller's result as MCP's `CallToolResult`. Callers promise one, but a bare value must
/// still reach the client as content, and a malformed one as an error the client can read.
pub(crate) fn call_result_from_json(result: Value) -> CallToolResult {
    let result = match result {
        Value::Object(ref o) if o.get("content").is_some_and(Value::is_array) => result,
        Value::Object(mut o) if !o.contains_key("content") => {
            o.insert("content".into(), json!([]));
            Value::Object(o)
        }
        Value::String(text) => return ToolResult::text(text, false).into(),
        other => return ToolResult::text(other.to_string(), false).into(),
    };
    serde_json::from_value::<CallToolResult>(result)
        .map(|mut result| {
            result.result_type = Some(rmcp::model::ResultType::COMPLETE);
            result
        })
        .unwrap_or_else(|e| {
            let why =
                format!("the tool returned a result that is not a valid MCP CallToolResult: {e}");
            ToolResult::text(why, true).into()
        })
}

/// A text result as MCP's `CallToolResult`.
pub(crate) fn text_result(text: impl Into<String>, is_error: bool) -> rmcp::model::CallToolResult {
    ToolResult::text(text, is_error).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_mcp_result_keeps_its_parts_and_maps_its_output() {
        let raw = json!({"content": [{"type": "text", "text": "hi"}], "_meta": {"m": 1}});
        let result = ToolResult::from_mcp(raw);
        assert_eq!(result.output, "hi");
        assert!(!result.is_error);
        assert_eq!(
            Value::from(result.clone()),
            json!({"output": "hi", "isError": false, "content": [{"type": "text", "text": "hi"}], "_meta": {"m": 1}})
        );
        assert_eq!(
            result.into_mcp(),
            json!({"content": [{"type": "text", "text": "hi"}], "isError": false})
        );
    }

    #[test]
    fn a_js_result_without_parts_is_one_text_part() {
        let result = ToolResult::from_js(json!({"output": {"n": 1}, "isError": true}));
        assert_eq!(
            result.clone().into_mcp(),
            json!({"content": [{"type": "text", "text": "{\"n\":1}"}], "isError": true})
        );
        let mcp = CallToolResult::from(result);
        assert_eq!(mcp.is_error, Some(true));
    }
}
