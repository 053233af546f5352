//! A served tool as an operator curated it (`curation.tools`): its own title and description,
//! arguments fixed for every call (`preset`: gone from the advertised schema, set on every call,
//! never the caller's to change) and arguments filled in when absent (`defaults`: listed with
//! their `default`, no longer required).

use std::sync::Arc;

use serde_json::{Map, Value};

use super::tool::ServedTool;

/// What curation changes of one tool (its new name is given by the caller).
#[derive(Debug, Clone, Default)]
pub struct Curation {
    pub title: Option<String>,
    pub description: Option<String>,
    pub preset: Map<String, Value>,
    pub defaults: Map<String, Value>,
}

impl Curation {
    fn changes_arguments(&self) -> bool {
        !self.preset.is_empty() || !self.defaults.is_empty()
    }
}

/// `tool` as curated: listed with the curated title, description and schema, called with the
/// default arguments filled in where the caller left them out and the preset ones always.
pub fn curated(mut tool: ServedTool, curation: &Curation) -> ServedTool {
    if let Some(description) = &curation.description {
        tool.description = description.clone();
    }
    if let Some(title) = &curation.title {
        tool.extras
            .insert("title".into(), Value::String(title.clone()));
    }
    if curation.changes_arguments() {
        tool.input_schema = Arc::new(advertised(&tool.input_schema, curation));
        let (preset, defaults) = (curation.preset.clone(), curation.defaults.clone());
        tool.caller = super::tool::around(tool.caller, move |inner, mut arguments, ctx| {
            for (name, value) in &defaults {
                if !arguments.contains_key(name) {
                    arguments.insert(name.clone(), value.clone());
                }
            }
            for (name, value) in &preset {
                arguments.insert(name.clone(), value.clone());
            }
            inner.call(arguments, ctx)
        });
    }
    tool
}

/// The schema a curated tool is listed with: the preset arguments gone (from `properties` and
/// `required`), the defaulted ones given their `default` and no longer required.
pub fn advertised(schema: &Map<String, Value>, curation: &Curation) -> Map<String, Value> {
    let mut schema = schema.clone();
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        for name in curation.preset.keys() {
            properties.remove(name);
        }
        for (name, value) in &curation.defaults {
            if let Some(Value::Object(property)) = properties.get_mut(name) {
                property.insert("default".into(), value.clone());
            }
        }
    }
    if let Some(Value::Array(required)) = schema.get_mut("required") {
        required.retain(|name| {
            name.as_str().is_none_or(|name| {
                !curation.preset.contains_key(name) && !curation.defaults.contains_key(name)
            })
        });
        if required.is_empty() {
            schema.remove("required");
        }
    }
    schema
}

/// Whether `values` (a preset, or defaults) fit the arguments of a tool whose schema is
/// `schema`: each names one of its properties (unless it takes any), and holds a value that
/// property allows. The problems in words otherwise.
pub fn check_values(
    schema: &Map<String, Value>,
    values: &Map<String, Value>,
) -> Result<(), String> {
    let properties = schema.get("properties").and_then(Value::as_object);
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
    for name in values.keys() {
        if closed && !properties.is_some_and(|p| p.contains_key(name)) {
            return Err(format!("{name:?} is not one of the tool's arguments"));
        }
    }
    let mut cut = match super::validate::cut_to(schema, values) {
        Value::Object(cut) => cut,
        _ => return Ok(()),
    };
    cut.remove("required");
    match super::validate::Arguments::compile(&Value::Object(cut)) {
        Some(compiled) => compiled.check(values),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn the_advertised_schema_lacks_the_preset_and_defaults_the_defaulted() {
        let schema = map(json!({
            "type": "object",
            "properties": { "repo": {"type": "string"}, "title": {"type": "string"}, "labels": {"type": "array"} },
            "required": ["repo", "title", "labels"],
            "additionalProperties": false,
        }));
        let curation = Curation {
            preset: map(json!({"repo": "acme/app"})),
            defaults: map(json!({"labels": ["triage"]})),
            ..Default::default()
        };
        assert_eq!(
            Value::Object(advertised(&schema, &curation)),
            json!({
                "type": "object",
                "properties": { "title": {"type": "string"}, "labels": {"type": "array", "default": ["triage"]} },
                "required": ["title"],
                "additionalProperties": false,
            })
        );
    }

    #[test]
    fn a_preset_must_fit_the_schema() {
        let schema = map(json!({
            "type": "object",
            "properties": { "count": {"type": "integer", "minimum": 1} },
            "required": ["count"],
            "additionalProperties": false,
        }));
        assert!(check_values(&schema, &map(json!({"count": 3}))).is_ok());
        assert_eq!(
            check_values(&schema, &map(json!({"count": 0}))).unwrap_err(),
            "/count: 0 is less than the minimum of 1"
        );
        assert_eq!(
            check_values(&schema, &map(json!({"cuont": 1}))).unwrap_err(),
            "\"cuont\" is not one of the tool's arguments"
        );
    }
}
