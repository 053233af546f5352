//! Arguments checked against a tool's `inputSchema` before it runs (draft-07 and 2020-12, and
//! whatever else the schema's `$schema` names), with the `jsonschema` crate.

use serde_json::{Map, Value};

/// How many problems one message names, so a huge bad input stays a short answer.
const MAX_PROBLEMS: usize = 5;

pub struct Arguments(jsonschema::Validator);

impl Arguments {
    /// None when the schema does not compile: the tool is then served unchecked, as before,
    /// rather than made uncallable.
    pub fn compile(schema: &Value) -> Option<Self> {
        if !schema.is_object() {
            return None;
        }
        jsonschema::validator_for(schema).ok().map(Self)
    }

    /// Ok, or the problems, each naming the failing path (`/a: "1" is not of type "number"`).
    pub fn check(&self, arguments: &Map<String, Value>) -> Result<(), String> {
        let instance = Value::Object(arguments.clone());
        let problems: Vec<String> = self
            .0
            .iter_errors(&instance)
            .take(MAX_PROBLEMS + 1)
            .map(|e| {
                let path = e.instance_path().to_string();
                let path = if path.is_empty() {
                    "arguments".to_string()
                } else {
                    path
                };
                let message: String = e.to_string().chars().take(300).collect();
                format!("{path}: {message}")
            })
            .collect();
        if problems.is_empty() {
            return Ok(());
        }
        let more = problems.len() > MAX_PROBLEMS;
        let mut text = problems
            .into_iter()
            .take(MAX_PROBLEMS)
            .collect::<Vec<_>>()
            .join("; ");
        if more {
            text.push_str("; …");
        }
        Err(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn mismatches_name_their_path() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]});
        let check = Arguments::compile(&schema).unwrap();
        assert_eq!(check.check(&args(json!({"a": 1, "b": 2}))), Ok(()));
        assert_eq!(
            check.check(&args(json!({}))).unwrap_err(),
            r#"arguments: "a" is a required property; arguments: "b" is a required property"#
        );
        assert_eq!(
            check.check(&args(json!({"a": "1", "b": 2}))).unwrap_err(),
            r#"/a: "1" is not of type "number""#
        );
    }

    #[test]
    fn draft_2020_12_and_draft_07_keywords() {
        let modern = json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
            "properties": {"xs": {"type": "array", "prefixItems": [{"type": "string"}]}}});
        let check = Arguments::compile(&modern).unwrap();
        assert!(
            check
                .check(&args(json!({"xs": [1]})))
                .unwrap_err()
                .starts_with("/xs/0: ")
        );
        let old = json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
            "properties": {"n": {"type": "integer", "exclusiveMinimum": 0}}, "additionalProperties": false});
        let check = Arguments::compile(&old).unwrap();
        assert!(check.check(&args(json!({"n": 0}))).is_err());
        assert!(
            check
                .check(&args(json!({"n": 1, "x": 1})))
                .unwrap_err()
                .contains("x")
        );
    }

    #[test]
    fn a_schema_that_does_not_compile_is_not_checked() {
        assert!(Arguments::compile(&json!({"type": 12})).is_none());
        assert!(Arguments::compile(&json!(null)).is_none());
    }
}
