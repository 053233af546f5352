//! The inventory listMcpTools gives, as JSON text.

use serde_json::{Map, Value};

use super::ServerInventory;
use crate::connect::error::Status;
use crate::connect::tool_info::{object_text, text_of};
use crate::surface::Kind;

/// `{ tools, resources, resourceTemplates, prompts, skills, status, errors, info }` in config
/// order, as JSON text (each tool written as the text it is kept as). The tools and the four kinds
/// beside them have one key per connected server, `[]` when it lists none.
pub fn inventory_json(servers: Vec<ServerInventory>) -> String {
    let mut tools = Vec::new();
    let mut kinds: [Map<String, Value>; 4] = Default::default();
    let mut status = Map::new();
    let mut errors = Map::new();
    let mut info = Map::new();
    for server in servers {
        status.insert(server.name.clone(), server.status.as_str().into());
        if let Some(error) = server.error {
            errors.insert(server.name.clone(), Value::String(error));
        }
        if let Some(server_info) = server.info {
            info.insert(server.name.clone(), server_info);
        }
        if server.status == Status::Connected {
            for (map, kind) in kinds.iter_mut().zip(Kind::ALL) {
                let listed = server.surface.get(kind).items.iter();
                let items = match kind {
                    Kind::Skills => listed.map(crate::skills::described).collect(),
                    _ => listed.cloned().map(Value::Object).collect(),
                };
                map.insert(server.name.clone(), Value::Array(items));
            }
            tools.push((server.name, server.tools));
        }
    }
    let tools: Vec<(&str, String)> = tools
        .iter()
        .map(|(name, tools)| (name.as_str(), text_of(tools)))
        .collect();
    let tools: Vec<(&str, &str)> = tools.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let [resources, templates, prompts, skills] = kinds.map(|map| text_of(&map));
    let (tools, status, errors, info) = (
        object_text(&tools),
        text_of(&status),
        text_of(&errors),
        text_of(&info),
    );
    object_text(&[
        ("tools", &tools),
        ("resources", &resources),
        ("resourceTemplates", &templates),
        ("prompts", &prompts),
        ("skills", &skills),
        ("status", &status),
        ("errors", &errors),
        ("info", &info),
    ])
}
