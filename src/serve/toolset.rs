//! One version of a served tool set: its `tools/list` entries, built once, and what
//! `tools/call` needs to find and check a tool.

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::Tool;
use serde_json::{Map, Value};

use super::{ServedTool, validate};

/// One version of the served tools, with what `tools/list` and `tools/call` need of it.
pub(super) struct ToolSet {
    pub(super) tools: Vec<ServedTool>,
    pub(super) by_name: HashMap<String, usize>,
    /// Built once per version.
    pub(super) listed: Vec<Tool>,
    /// Each tool's argument check, by index (None: its schema could not be compiled).
    pub(super) validators: Vec<Option<validate::Arguments>>,
}

impl ToolSet {
    pub(super) fn new(tools: Vec<ServedTool>) -> Self {
        let mut by_name = HashMap::with_capacity(tools.len());
        let mut listed = Vec::with_capacity(tools.len());
        let validators = tools
            .iter()
            .map(|t| validate::Arguments::compile(&t.input_schema))
            .collect();
        for (i, tool) in tools.iter().enumerate() {
            // First definition wins so `tools/list` never shows a name twice.
            if by_name.contains_key(&tool.name) {
                continue;
            }
            by_name.insert(tool.name.clone(), i);
            listed.push(listing(tool));
        }
        Self {
            tools,
            by_name,
            listed,
            validators,
        }
    }
}

/// A tool's `tools/list` entry: its extras as given when they are valid MCP, else without them.
fn listing(tool: &ServedTool) -> Tool {
    let plain = || {
        Tool::new(
            tool.name.clone(),
            tool.description.clone(),
            Arc::new(object_schema(&tool.input_schema)),
        )
    };
    if tool.extras.is_empty() {
        return plain();
    }
    let mut full = tool.extras.clone();
    full.insert("name".into(), Value::String(tool.name.clone()));
    full.insert(
        "description".into(),
        Value::String(tool.description.clone()),
    );
    full.insert(
        "inputSchema".into(),
        Value::Object(object_schema(&tool.input_schema)),
    );
    serde_json::from_value(Value::Object(full)).unwrap_or_else(|_| plain())
}

/// MCP requires `inputSchema` to be an object schema; sources that have none get the empty one.
fn object_schema(schema: &Value) -> Map<String, Value> {
    match schema {
        Value::Object(schema) => schema.clone(),
        _ => {
            let mut schema = Map::new();
            schema.insert("type".into(), Value::String("object".into()));
            schema
        }
    }
}
