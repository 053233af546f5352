//! The elicitation bridge's two mappings: an MCP `elicitation/create` request to the agent's
//! `Request`, and the agent's `Answer` back to an MCP `ElicitResult`.

use serde_json::{Map, Value, json};

/// Form mode => `{kind: "input", message, data: {schema}}`; URL mode =>
/// `{kind: "authorization", message, url, elicitationId?}`.
pub fn elicitation_to_request(params: &Value) -> Value {
    let message = params.get("message").and_then(Value::as_str).unwrap_or("");
    let is_url = params.get("mode").and_then(Value::as_str) == Some("url")
        || (params.get("mode").is_none() && params.get("url").is_some());
    if is_url {
        let mut request = Map::new();
        request.insert("kind".into(), json!("authorization"));
        request.insert("message".into(), json!(message));
        request.insert(
            "url".into(),
            params.get("url").cloned().unwrap_or_else(|| json!("")),
        );
        if let Some(id) = params.get("elicitationId") {
            request.insert("elicitationId".into(), id.clone());
        }
        Value::Object(request)
    } else {
        let schema = params
            .get("requestedSchema")
            .cloned()
            .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
        json!({ "kind": "input", "message": message, "data": { "schema": schema } })
    }
}

/// `ok` => accept with `data ?? {}`; `reason: "declined"` => decline; anything else => cancel.
pub fn answer_to_elicit_result(answer: &Value) -> Value {
    if answer.get("ok").and_then(Value::as_bool) == Some(true) {
        let content = match answer.get("data") {
            Some(Value::Object(data)) => Value::Object(data.clone()),
            _ => json!({}),
        };
        return json!({ "action": "accept", "content": content });
    }
    if answer.get("reason").and_then(Value::as_str) == Some("declined") {
        return json!({ "action": "decline" });
    }
    json!({ "action": "cancel" })
}

/// An accepted form answer completed with the requested schema's defaults for the fields it
/// leaves out, as the client side of the protocol should (SEP-1034). Others are untouched.
pub fn apply_defaults(params: &Value, result: &mut Value) {
    if result.get("action").and_then(Value::as_str) != Some("accept") {
        return;
    }
    let Some(properties) = params
        .get("requestedSchema")
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
    else {
        return;
    };
    let Some(content) = result
        .as_object_mut()
        .map(|r| r.entry("content").or_insert_with(|| json!({})))
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    for (name, schema) in properties {
        if let Some(default) = schema.get("default")
            && !content.contains_key(name)
        {
            content.insert(name.clone(), default.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepted_answers_get_the_schema_defaults_they_omit() {
        let params = json!({"message": "m", "requestedSchema": {"type": "object", "properties": {
            "name": {"type": "string", "default": "Ada"},
            "age": {"type": "integer", "default": 36},
            "plain": {"type": "string"}}}});
        let mut result = json!({"action": "accept", "content": {"name": "Grace"}});
        apply_defaults(&params, &mut result);
        assert_eq!(
            result,
            json!({"action": "accept", "content": {"name": "Grace", "age": 36}})
        );
        let mut declined = json!({"action": "decline"});
        apply_defaults(&params, &mut declined);
        assert_eq!(declined, json!({"action": "decline"}));
    }

    #[test]
    fn form_and_url_requests() {
        let form = json!({"mode": "form", "message": "Name?", "requestedSchema": {"type": "object", "properties": {"n": {"type": "string"}}}});
        assert_eq!(
            elicitation_to_request(&form),
            json!({"kind": "input", "message": "Name?", "data": {"schema": {"type": "object", "properties": {"n": {"type": "string"}}}}})
        );
        let url = json!({"mode": "url", "message": "Log in", "url": "https://x/auth", "elicitationId": "e1"});
        assert_eq!(
            elicitation_to_request(&url),
            json!({"kind": "authorization", "message": "Log in", "url": "https://x/auth", "elicitationId": "e1"})
        );
    }

    #[test]
    fn answers() {
        assert_eq!(
            answer_to_elicit_result(&json!({"ok": true, "data": {"n": "x"}})),
            json!({"action": "accept", "content": {"n": "x"}})
        );
        assert_eq!(
            answer_to_elicit_result(&json!({"ok": true})),
            json!({"action": "accept", "content": {}})
        );
        assert_eq!(
            answer_to_elicit_result(&json!({"ok": false, "reason": "declined"})),
            json!({"action": "decline"})
        );
        assert_eq!(
            answer_to_elicit_result(&json!({"ok": false, "reason": "timeout"})),
            json!({"action": "cancel"})
        );
    }
}
