//! Arguments checked against a tool's `inputSchema` before it runs (draft-07 and 2020-12, and
//! whatever else the schema's `$schema` names), with the `jsonschema` crate.

use serde_json::{Map, Value};

use crate::bounds::{
    SERVE_MAX_ARGUMENT_PROBLEMS as MAX_PROBLEMS,
    SERVE_MAX_COMPILED_PROPERTIES as MAX_COMPILED_PROPERTIES,
};

/// How a tool's arguments are checked, found on its first call.
pub(crate) enum Check {
    /// Its schema, compiled once.
    Compiled(Arguments),
    /// Per call, against the schema cut down to the arguments' properties (see [`wide`]).
    Wide,
    /// Its schema does not compile: served unchecked.
    Unchecked,
}

impl Check {
    pub(crate) fn for_schema(schema: &Map<String, Value>) -> Self {
        if wide(schema) {
            return Check::Wide;
        }
        Arguments::compile(&Value::Object(schema.clone())).map_or(Check::Unchecked, Check::Compiled)
    }

    /// Ok, or the problems (see [`Arguments::check`]); `schema` is the one this was made for.
    pub(crate) fn check(
        &self,
        schema: &Map<String, Value>,
        arguments: &Map<String, Value>,
    ) -> Result<(), String> {
        match self {
            Check::Compiled(compiled) => compiled.check(arguments),
            Check::Wide => match Arguments::compile(&cut_to(schema, arguments)) {
                Some(compiled) => compiled.check(arguments),
                None => Ok(()),
            },
            Check::Unchecked => Ok(()),
        }
    }
}

/// Whether the schema has more than [`MAX_COMPILED_PROPERTIES`] properties and can be cut: no
/// reference anywhere in it (a `$ref`, or an anchor or id one could point at, may lead into
/// the properties a cut drops, or resolve against the cut root), so the cut schema checks
/// what the whole one does.
fn wide(schema: &Map<String, Value>) -> bool {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| p.len() > MAX_COMPILED_PROPERTIES)
        && !refers(&Value::Object(schema.clone()))
}

/// Whether a schema uses `$ref`, `$dynamicRef`, `$recursiveRef` or names a place with `$id`,
/// `$anchor`, `$dynamicAnchor` or `$recursiveAnchor`, at any depth.
fn refers(schema: &Value) -> bool {
    const KEYS: [&str; 7] = [
        "$ref",
        "$dynamicRef",
        "$recursiveRef",
        "$id",
        "$anchor",
        "$dynamicAnchor",
        "$recursiveAnchor",
    ];
    match schema {
        Value::Object(members) => members
            .iter()
            .any(|(key, value)| KEYS.contains(&key.as_str()) || refers(value)),
        Value::Array(items) => items.iter().any(refers),
        _ => false,
    }
}

/// The schema with only the `properties` the arguments name (the others would check nothing).
pub(crate) fn cut_to(schema: &Map<String, Value>, arguments: &Map<String, Value>) -> Value {
    let cut = schema
        .iter()
        .map(|(key, value)| match (key.as_str(), value.as_object()) {
            ("properties", Some(properties)) => {
                let named = arguments
                    .keys()
                    .filter_map(|name| Some((name.clone(), properties.get(name)?.clone())))
                    .collect();
                (key.clone(), Value::Object(named))
            }
            _ => (key.clone(), value.clone()),
        })
        .collect();
    Value::Object(cut)
}

pub(crate) struct Arguments(jsonschema::Validator);

impl Arguments {
    /// None when the schema does not compile: the tool is then served unchecked, as before,
    /// rather than made uncallable.
    pub(crate) fn compile(schema: &Value) -> Option<Self> {
        if !schema.is_object() {
            return None;
        }
        jsonschema::validator_for(schema).ok().map(Self)
    }

    /// Ok, or the problems, each naming the failing path (`/a: "1" is not of type "number"`).
    pub(crate) fn check(&self, arguments: &Map<String, Value>) -> Result<(), String> {
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

/// The problems of a whole JSON document against a JSON Schema, for the CLI's checks of files
/// (`toolnexus add` checks a server.json against the registry's published schema): each an
/// instance path (`/packages/0/transport`, `""` for the root) and words, at most `max` of them.
/// Err, in words, when the schema itself does not compile.
pub fn schema_problems(
    schema: &Value,
    value: &Value,
    max: usize,
) -> Result<Vec<(String, String)>, String> {
    let validator = jsonschema::validator_for(schema)
        .map_err(|e| format!("the schema does not compile: {}", shorten(&e.to_string())))?;
    Ok(validator
        .iter_errors(value)
        .take(max)
        .map(|e| (e.instance_path().to_string(), shorten(&e.to_string())))
        .collect())
}

/// A message cut to 300 characters: some quote the whole failing value.
fn shorten(message: &str) -> String {
    match message.char_indices().nth(300) {
        Some((at, _)) => format!("{}…", &message[..at]),
        None => message.to_string(),
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
    fn documents_are_checked_whole() {
        let schema = json!({"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"n": {"type": "number"}}, "type": "object", "properties": {"a": {"$ref": "#/definitions/n"}, "b": {"type": "array", "items": {"type": "string"}}}, "required": ["c"]});
        assert_eq!(
            schema_problems(&schema, &json!({"a": "1", "b": ["x", 2], "c": 0}), 10),
            Ok(vec![
                (
                    "/a".to_string(),
                    r#""1" is not of type "number""#.to_string()
                ),
                (
                    "/b/1".to_string(),
                    r#"2 is not of type "string""#.to_string()
                ),
            ])
        );
        assert_eq!(
            schema_problems(&schema, &json!({}), 10),
            Ok(vec![(
                String::new(),
                r#""c" is a required property"#.to_string()
            )])
        );
        assert_eq!(
            schema_problems(&schema, &json!({"a": "1", "b": [1, 2]}), 2)
                .unwrap()
                .len(),
            2
        );
        assert!(
            schema_problems(&json!({"type": 5}), &json!({}), 10)
                .unwrap_err()
                .starts_with("the schema does not compile: ")
        );
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
    fn a_wide_schema_is_checked_as_a_compiled_one_would_be() {
        let properties: Map<String, Value> = (0..MAX_COMPILED_PROPERTIES + 1)
            .map(|i| (format!("p{i}"), json!({"type": "number"})))
            .collect();
        let schema = json!({"type": "object", "properties": properties, "required": ["p0"],
            "additionalProperties": false});
        let wide = Check::for_schema(schema.as_object().unwrap());
        assert!(matches!(wide, Check::Wide));
        let whole = Arguments::compile(&schema).unwrap();
        for arguments in [
            json!({"p0": 1, "p1000": 2}),
            json!({"p1": 1}),
            json!({"p0": "1", "p7": true}),
            json!({"p0": 1, "nope": 1}),
        ] {
            let arguments = args(arguments);
            let checked = wide.check(schema.as_object().unwrap(), &arguments);
            assert_eq!(checked, whole.check(&arguments));
        }
        assert_eq!(
            wide.check(schema.as_object().unwrap(), &args(json!({"p0": "1"})))
                .unwrap_err(),
            r#"/p0: "1" is not of type "number""#
        );
    }

    #[test]
    fn a_wide_schema_with_references_is_compiled_whole() {
        let mut properties: Map<String, Value> = (0..MAX_COMPILED_PROPERTIES + 1)
            .map(|i| (format!("p{i}"), json!({"type": "number"})))
            .collect();
        // `q` is checked through a reference into a property the arguments do not name.
        properties.insert("q".into(), json!({"$ref": "#/properties/p5"}));
        let schema = json!({"type": "object", "properties": properties});
        let check = Check::for_schema(schema.as_object().unwrap());
        assert!(matches!(check, Check::Compiled(_)));
        assert_eq!(
            check
                .check(schema.as_object().unwrap(), &args(json!({"q": "x"})))
                .unwrap_err(),
            r#"/q: "x" is not of type "number""#
        );
    }

    #[test]
    fn a_schema_that_does_not_compile_is_not_checked() {
        assert!(Arguments::compile(&json!({"type": 12})).is_none());
        assert!(Arguments::compile(&json!(null)).is_none());
    }
}
