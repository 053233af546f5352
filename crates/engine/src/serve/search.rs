//! A served tool set's search mode (`createToolkit({ toolSearch })`): instead of the whole
//! catalog, `tools/list` shows `search_tools`, which ranks the catalog for a query
//! ([`crate::search`]) and answers the matches' names, descriptions and input schemas, and
//! `call_tool`, which calls one of them by name, plus the tools kept `always` in view. Every
//! tool stays callable by its own name too, and `call_tool` is that same call (validation,
//! progress, input requests and content as for any call). What a caller's scopes hide
//! (serving auth), search neither finds nor calls.

use std::sync::Arc;

use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use serde_json::{Map, Value, json};

use super::auth::Kind;
use super::caller::Sight;
use super::toolset::ToolSet;
use crate::search::{Doc, Index};

pub(crate) const SEARCH_TOOLS: &str = "search_tools";
pub(crate) const CALL_TOOL: &str = "call_tool";
/// The most matches one `search_tools` call answers.
pub(crate) const MAX_LIMIT: usize = 50;

/// How a tool set is searched instead of listed.
#[derive(Debug, Clone)]
pub struct SearchMode {
    /// Matches per search when the caller names no `limit`.
    pub limit: usize,
    /// Tools listed beside the two search tools.
    pub always: Vec<String>,
}

/// The two tools search mode lists.
pub(super) fn meta_tools() -> [Tool; 2] {
    let schema = |value: Value| match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(Map::new()),
    };
    [
        Tool::new(
            SEARCH_TOOLS,
            "Find the tools for a task among all of this server's tools. Describe the task in \
             plain words; answers the best matches with their names, descriptions and input \
             schemas. Then call one with call_tool (or by its name).",
            schema(json!({
                "type": "object",
                "properties": {
                    "query": { "type": "string", "description": "What you want to do, in plain words" },
                    "limit": { "type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "description": "How many matches at most" }
                },
                "required": ["query"]
            })),
        ),
        Tool::new(
            CALL_TOOL,
            "Call a tool that search_tools found, by its name, with arguments matching its input \
             schema.",
            schema(json!({
                "type": "object",
                "properties": {
                    "name": { "type": "string", "description": "The tool's name, as search_tools gave it" },
                    "arguments": { "type": "object", "description": "The tool's arguments" }
                },
                "required": ["name"]
            })),
        ),
    ]
}

/// The search index of one tool set version, over its listed tools (built on first search).
pub(super) fn index_of(set: &ToolSet) -> &Index {
    set.search_index.get_or_init(|| {
        let docs = set
            .listed
            .iter()
            .map(|tool| {
                let listing = serde_json::to_value(tool).unwrap_or_default();
                let server = set
                    .by_name
                    .get(tool.name.as_ref())
                    .map(|&i| set.tools[i].source.as_str());
                Doc::from_listing(&tool.name, server, &listing)
            })
            .collect();
        Index::new(docs)
    })
}

/// Whether search is offered to this caller: only when its scopes let it see some tool (the
/// two search tools would otherwise list, find and call nothing, and say that there is more).
pub(super) fn offered(set: &ToolSet, sight: &Sight) -> bool {
    set.listed.iter().any(|t| sight.sees(Kind::Tool, &t.name))
}

/// What search mode lists: the two search tools, then the `always` ones the caller may see;
/// nothing to a caller who may see no tool.
pub(super) fn listing(mode: &SearchMode, set: &ToolSet, sight: &Sight) -> Vec<Tool> {
    if !offered(set, sight) {
        return Vec::new();
    }
    let mut listed: Vec<Tool> = meta_tools().into();
    listed.extend(
        set.listed
            .iter()
            .filter(|t| mode.always.iter().any(|name| name == t.name.as_ref()))
            .filter(|t| sight.sees(Kind::Tool, &t.name))
            .cloned(),
    );
    listed
}

/// `search_tools(query, limit?)`: the best matches the caller may see, as `tools/list` entries
/// (name, description, inputSchema), in text and as structured content.
pub(super) fn search(
    mode: &SearchMode,
    set: &ToolSet,
    sight: &Sight,
    arguments: &Map<String, Value>,
) -> CallToolResult {
    let Some(query) = arguments.get("query").and_then(Value::as_str) else {
        return crate::tool_result::text_result(
            format!("{SEARCH_TOOLS} needs a query (a string)"),
            true,
        );
    };
    let limit = match arguments.get("limit") {
        None | Some(Value::Null) => mode.limit,
        Some(value) => match value.as_u64() {
            Some(n) if (1..=MAX_LIMIT as u64).contains(&n) => n as usize,
            _ => {
                return crate::tool_result::text_result(
                    format!("{SEARCH_TOOLS}: limit must be a whole number from 1 to {MAX_LIMIT}"),
                    true,
                );
            }
        },
    };
    let index = index_of(set);
    // Ask for all the caller could see, then keep its first `limit`: hidden tools never
    // crowd out visible ones.
    let hits = index.search(query, index.len(), None);
    let found: Vec<Value> = hits
        .into_iter()
        .filter_map(|hit| set.listed.get(hit.index))
        .filter(|tool| sight.sees(Kind::Tool, &tool.name))
        .take(limit)
        .map(|tool| {
            let mut entry = Map::new();
            entry.insert("name".into(), Value::String(tool.name.to_string()));
            if let Some(title) = &tool.title {
                entry.insert("title".into(), Value::String(title.clone()));
            }
            if let Some(description) = &tool.description {
                entry.insert("description".into(), Value::String(description.to_string()));
            }
            entry.insert(
                "inputSchema".into(),
                Value::Object((*tool.input_schema).clone()),
            );
            Value::Object(entry)
        })
        .collect();
    let structured = json!({ "tools": found });
    crate::tool_result::call_result_from_json(json!({
        "content": [{ "type": "text", "text": structured.to_string() }],
        "structuredContent": structured,
    }))
}

/// `call_tool(name, arguments?)` as the call of the tool it names, or why it cannot be (a
/// result the model can read).
pub(super) fn unwrap_call(
    request: CallToolRequestParams,
) -> Result<CallToolRequestParams, Box<CallToolResult>> {
    inner_call(request).map_err(|why| Box::new(crate::tool_result::text_result(why, true)))
}

fn inner_call(mut request: CallToolRequestParams) -> Result<CallToolRequestParams, String> {
    let mut arguments = request.arguments.take().unwrap_or_default();
    let Some(Value::String(name)) = arguments.remove("name") else {
        return Err(format!(
            "{CALL_TOOL} needs the name of a tool (a string), as {SEARCH_TOOLS} gave it"
        ));
    };
    if name == SEARCH_TOOLS || name == CALL_TOOL {
        return Err(format!("{CALL_TOOL} cannot call {name}"));
    }
    let inner = match arguments.remove("arguments") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(inner)) => inner,
        Some(_) => return Err(format!("{CALL_TOOL}: arguments must be an object")),
    };
    request.name = name.into();
    request.arguments = Some(inner);
    Ok(request)
}
