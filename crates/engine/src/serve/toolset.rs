//! One version of a served tool set: its `tools/list` entries, built once, and what
//! `tools/call` needs to find and check a tool.

use std::collections::HashMap;

use rmcp::model::Tool;
use serde_json::{Map, Value};

use super::tool::ServedTool;
use super::validate;

/// One version of the served tools, with what `tools/list` and `tools/call` need of it.
pub(super) struct ToolSet {
    pub(super) tools: Vec<ServedTool>,
    pub(super) by_name: HashMap<String, usize>,
    /// Built once per version.
    pub(super) listed: Vec<Tool>,
    /// The `execution` of each listed tool that has one, by name (rmcp's `Tool` has no such
    /// field; `wire` puts it back).
    pub(super) executions: HashMap<String, Value>,
    /// Each tool's argument check, by index, made on its first call (so serving a tool costs
    /// no compiled validator until it is called).
    checks: Vec<std::sync::OnceLock<validate::Check>>,
    /// The search index over `listed`, built on the first `search_tools` (search mode only).
    pub(super) search_index: std::sync::OnceLock<crate::search::Index>,
}

impl ToolSet {
    pub(super) fn new(tools: Vec<ServedTool>) -> Self {
        let mut by_name = HashMap::with_capacity(tools.len());
        let mut listed = Vec::with_capacity(tools.len());
        let mut executions = HashMap::new();
        let checks = tools.iter().map(|_| std::sync::OnceLock::new()).collect();
        // First definition wins so `tools/list` never shows a name twice.
        let firsts = crate::tools::first_wins(&tools, |t| &t.name);
        for ((i, tool), first) in tools.iter().enumerate().zip(firsts) {
            if !first {
                continue;
            }
            by_name.insert(tool.name.clone(), i);
            listed.push(listing(tool));
            if let Some(execution) = tool.extras.get("execution") {
                executions.insert(tool.name.clone(), execution.clone());
            }
        }
        Self {
            tools,
            by_name,
            listed,
            executions,
            checks,
            search_index: std::sync::OnceLock::new(),
        }
    }

    /// Ok when tool `index`'s arguments match its input schema, else the problems.
    pub(super) fn check(&self, index: usize, arguments: &Map<String, Value>) -> Result<(), String> {
        let schema = &self.tools[index].input_schema;
        self.checks[index]
            .get_or_init(|| validate::Check::for_schema(schema))
            .check(schema, arguments)
    }
}

/// A tool's `tools/list` entry: its extras as given when they are valid MCP, else without them.
fn listing(tool: &ServedTool) -> Tool {
    let plain = || {
        Tool::new(
            tool.name.clone(),
            tool.description.clone(),
            tool.input_schema.clone(),
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
    // Read with an empty schema, then given the tool's own (shared, not copied).
    full.insert("inputSchema".into(), Value::Object(Map::new()));
    match serde_json::from_value::<Tool>(Value::Object(full)) {
        Ok(mut listed) => {
            listed.input_schema = tool.input_schema.clone();
            listed
        }
        Err(_) => plain(),
    }
}
