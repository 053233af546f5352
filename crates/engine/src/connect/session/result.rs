//! A tool call's result in words (its `output`), as every path maps it.

use std::time::Instant;

use rmcp::model::ServerResult;
use serde_json::Value;
use serde_json::value::RawValue;

use super::CallOutcome;

/// docs/loading.md: an error's non-blank text parts joined by a blank line; else structuredContent as
/// JSON; else the text parts joined by newlines.
pub(super) fn map_result(result: ServerResult, started: Instant) -> CallOutcome {
    outcome(serde_json::to_value(&result), started)
}

/// A `CallToolResult` as its server sent it (the direct path), mapped as [`map_result`] maps.
pub(super) fn map_raw_result(raw: &RawValue, started: Instant) -> CallOutcome {
    outcome(serde_json::from_str::<Value>(raw.get()), started)
}

/// A `CallToolResult` as JSON (a task's result), mapped as [`map_result`] maps.
pub(super) fn map_value(raw: Value, started: Instant) -> CallOutcome {
    outcome(Ok(raw), started)
}

fn outcome(raw: serde_json::Result<Value>, started: Instant) -> CallOutcome {
    match raw {
        Ok(raw) => {
            let (output, is_error) = output_of(&raw);
            CallOutcome {
                output,
                is_error,
                raw: Some(raw),
                elapsed: started.elapsed(),
                task_failed: false,
                error_type: None,
            }
        }
        Err(e) => CallOutcome::failure(
            format!("MCP tool call returned an unreadable result: {e}"),
            started,
        ),
    }
}

/// A `CallToolResult` (as JSON) in words: its `output` and whether it is an error.
pub(crate) fn output_of(raw: &Value) -> (String, bool) {
    let texts: Vec<&str> = raw
        .get("content")
        .and_then(Value::as_array)
        .map(|parts| {
            parts
                .iter()
                .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    let is_error = raw.get("isError").and_then(Value::as_bool).unwrap_or(false);
    let output = if is_error {
        let parts: Vec<&str> = texts
            .iter()
            .copied()
            .filter(|t| !t.trim().is_empty())
            .collect();
        if parts.is_empty() {
            "MCP tool returned an error".to_string()
        } else {
            parts.join("\n\n")
        }
    } else if let Some(structured) = raw.get("structuredContent") {
        structured.to_string()
    } else if texts.is_empty() {
        describe_content(raw.get("content"))
    } else {
        texts.join("\n")
    };
    (output, is_error)
}

/// What came when a result has no text: `[image image/png, 1.2 kB]`, one bracket per part, so
/// an agent reading `output` still learns what the `content` parts hold. Text parts are their
/// text (the CLI shows whole results this way).
pub fn describe_content(content: Option<&Value>) -> String {
    let parts = content
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    parts
        .iter()
        .map(|part| {
            let kind = part
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("content");
            let mime = |v: &Value| {
                v.get("mimeType")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            };
            match kind {
                "text" if part.get("text").is_some_and(Value::is_string) => {
                    part["text"].as_str().unwrap_or_default().to_string()
                }
                "image" | "audio" => {
                    let data = part.get("data").and_then(Value::as_str).unwrap_or("");
                    let mime = mime(part).unwrap_or_else(|| "unknown type".into());
                    format!("[{kind} {mime}, {}]", human_size(base64_len(data)))
                }
                "resource" => {
                    let resource = part.get("resource").unwrap_or(&Value::Null);
                    let uri = resource.get("uri").and_then(Value::as_str).unwrap_or("?");
                    match resource.get("text").and_then(Value::as_str) {
                        Some(text) => format!("[resource {uri}]\n{text}"),
                        None => format!("[resource {uri}]"),
                    }
                }
                "resource_link" => {
                    let uri = part.get("uri").and_then(Value::as_str).unwrap_or("?");
                    match part.get("name").and_then(Value::as_str) {
                        Some(name) => format!("[resource link {name}: {uri}]"),
                        None => format!("[resource link {uri}]"),
                    }
                }
                other => format!("[{other}]"),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// How many bytes a base64 text decodes to.
fn base64_len(data: &str) -> usize {
    let data = data.trim_end();
    let padding = data.bytes().rev().take_while(|&b| b == b'=').count().min(2);
    (data.len() / 4 * 3).saturating_sub(padding)
}

fn human_size(bytes: usize) -> String {
    if bytes < 1000 {
        format!("{bytes} B")
    } else if bytes < 1_000_000 {
        format!("{:.1} kB", bytes as f64 / 1000.0)
    } else {
        format!("{:.1} MB", bytes as f64 / 1_000_000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn results_without_text_describe_what_came() {
        let content = json!([
            {"type": "image", "data": "A".repeat(1600), "mimeType": "image/png"},
            {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "hello"}},
            {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAAA"}},
            {"type": "resource_link", "uri": "file:///c", "name": "c"},
            {"type": "text", "text": "last"},
        ]);
        assert_eq!(
            describe_content(Some(&content)),
            "[image image/png, 1.2 kB]\n[audio audio/wav, 3 B]\n[resource file:///a.txt]\nhello\n[resource file:///b.bin]\n[resource link c: file:///c]\nlast"
        );
        assert_eq!(describe_content(Some(&json!([]))), "");
    }
}
