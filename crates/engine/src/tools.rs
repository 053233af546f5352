//! What every road does the same way with a list of tools: the input schema a tool gets when
//! it lacks one (or parts of one), narrowing a list to named tools, and "first name wins".
//! Listing (`connect`) and serving (`serve`) both use these, so they cannot drift apart.

use serde_json::{Map, Value};

/// What a tool's input schema is completed with when it lacks them (added last, in order), as
/// JSON text: one list for the text path and the typed path of listing, and for serving.
pub(crate) const SCHEMA_COMPLETION: [(&str, &str); 2] =
    [("type", "\"object\""), ("properties", "{}")];

/// `schema` with [`SCHEMA_COMPLETION`] ensured (added last).
pub(crate) fn complete_schema(schema: &mut Map<String, Value>) {
    for (key, empty) in SCHEMA_COMPLETION {
        if !schema.contains_key(key) {
            let value = serde_json::from_str(empty).unwrap_or(Value::Null);
            schema.insert(key.into(), value);
        }
    }
}

/// `schema` when it is an object (MCP requires an object schema), else the completed empty one.
pub(crate) fn object_schema(schema: Value) -> Map<String, Value> {
    match schema {
        Value::Object(schema) => schema,
        _ => {
            let mut schema = Map::new();
            complete_schema(&mut schema);
            schema
        }
    }
}

/// First name wins: for each tool, whether it is the first of its name (later ones are left
/// out, so a listing never shows a name twice).
pub fn first_wins<'a, T: 'a>(
    tools: impl IntoIterator<Item = &'a T>,
    name: impl Fn(&T) -> &str,
) -> Vec<bool> {
    let mut seen = std::collections::HashSet::new();
    tools
        .into_iter()
        .map(|t| seen.insert(name(t).to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_schema_is_completed_and_a_non_object_replaced() {
        let mut schema = json!({"properties": {"a": {}}})
            .as_object()
            .cloned()
            .unwrap();
        complete_schema(&mut schema);
        assert_eq!(
            Value::Object(schema),
            json!({"properties": {"a": {}}, "type": "object"})
        );
        assert_eq!(
            Value::Object(object_schema(json!(null))),
            json!({"type": "object", "properties": {}})
        );
    }

    #[test]
    fn the_first_of_a_name_wins() {
        let tools = ["a", "b", "a", "c"];
        assert_eq!(first_wins(&tools, |t| t), [true, true, false, true]);
    }
}
