//! Result limits (`resultLimits`): a tool's result larger than its limit is cut, with a marker
//! saying how much was left out, never silently. Content parts are kept in order until the
//! limit, the last text part cut at a character boundary; a `structuredContent` that no longer
//! fits is left out and the result is then an error (a structured result is whole or absent:
//! the marker says why), so no client reads half of it as the tool's answer.

use std::sync::Arc;

use futures::FutureExt;
use serde_json::{Value, json};

use super::tool::ToolCaller;

/// The largest results, in bytes of their JSON: overall, and for the tools globs name (the
/// first that matches wins over the overall one).
#[derive(Debug, Clone, Default)]
pub struct ResultLimits {
    pub max_bytes: Option<usize>,
    pub tools: Vec<(String, usize)>,
}

impl ResultLimits {
    /// The limit of `tool`'s results, if any.
    pub(crate) fn of(&self, tool: &str) -> Option<usize> {
        self.tools
            .iter()
            .find(|(glob, _)| super::auth::glob_matches(glob, tool))
            .map(|(_, bytes)| *bytes)
            .or(self.max_bytes)
    }
}

fn size(value: &Value) -> usize {
    serde_json::to_vec(value).map_or(0, |bytes| bytes.len())
}

/// `result` (a CallToolResult as JSON) within `limit` bytes of content and structured content.
pub fn cut(mut result: Value, limit: usize) -> Value {
    let Some(object) = result.as_object_mut() else {
        return result;
    };
    let content = match object.get("content") {
        Some(Value::Array(parts)) => parts.clone(),
        _ => Vec::new(),
    };
    let structured = object.get("structuredContent").cloned();
    let total = content.iter().map(size).sum::<usize>() + structured.as_ref().map_or(0, size);
    if total <= limit {
        return result;
    }
    let mut budget = limit;
    let mut kept = Vec::new();
    for part in content {
        let bytes = size(&part);
        if bytes <= budget {
            budget -= bytes;
            kept.push(part);
            continue;
        }
        // A text part is cut to what is left; any other part does not fit whole and is left out.
        if let Some(text) = part.get("text").and_then(Value::as_str) {
            let overhead = bytes.saturating_sub(text.len());
            let room = budget.saturating_sub(overhead);
            let mut end = room.min(text.len());
            while end > 0 && !text.is_char_boundary(end) {
                end -= 1;
            }
            if end > 0 {
                let mut cut_part = part.clone();
                cut_part["text"] = Value::String(text[..end].to_string());
                kept.push(cut_part);
            }
        }
        // Nothing after a part that did not fit whole is kept, so the order stays the tool's.
        budget = 0;
    }
    let kept_bytes = kept.iter().map(size).sum::<usize>();
    let mut left_out = total - kept_bytes;
    let structured_fits = structured.as_ref().is_some_and(|s| size(s) <= budget);
    if structured_fits {
        left_out -= structured.as_ref().map_or(0, size);
    }
    let mut marker = format!(
        "[toolnexus: this result was cut to its limit of {limit} bytes: {left_out} of its \
         {total} bytes were left out]"
    );
    if structured.is_some() && !structured_fits {
        object.remove("structuredContent");
        object.insert("isError".into(), Value::Bool(true));
        marker.push_str(
            " [its structuredContent did not fit, so the structured result is not given]",
        );
    }
    kept.push(json!({ "type": "text", "text": marker }));
    object.insert("content".into(), Value::Array(kept));
    result
}

/// `inner`, its results cut to `limit` bytes.
pub(crate) fn cut_caller(inner: Arc<dyn ToolCaller>, limit: usize) -> Arc<dyn ToolCaller> {
    super::tool::around(inner, move |inner, arguments, ctx| {
        let run = inner.call(arguments, ctx);
        async move { cut(run.await, limit) }.boxed()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_within_its_limit_is_untouched() {
        let result = json!({"content": [{"type": "text", "text": "short"}]});
        assert_eq!(cut(result.clone(), 1000), result);
    }

    #[test]
    fn text_is_cut_at_a_character_boundary_and_the_marker_says_how_much() {
        let text = "é".repeat(100); // 200 bytes
        let result = json!({"content": [{"type": "text", "text": text}, {"type": "image", "data": "AAAA", "mimeType": "image/png"}]});
        let total = size(&result["content"][0]) + size(&result["content"][1]);
        let cut_result = cut(result, 81);
        let parts = cut_result["content"].as_array().unwrap();
        assert_eq!(parts.len(), 2, "the image did not fit and is left out");
        let kept = parts[0]["text"].as_str().unwrap();
        assert!(kept.chars().all(|c| c == 'é'));
        assert!(size(&parts[0]) <= 81);
        let left_out = total - size(&parts[0]);
        assert_eq!(
            parts[1]["text"],
            format!(
                "[toolnexus: this result was cut to its limit of 81 bytes: {left_out} of its \
                 {total} bytes were left out]"
            )
        );
        assert_eq!(cut_result.get("isError"), None);
    }

    #[test]
    fn structured_content_that_does_not_fit_is_left_out_and_the_result_is_an_error() {
        let result = json!({
            "content": [{"type": "text", "text": "x".repeat(50)}],
            "structuredContent": {"rows": "y".repeat(100)},
        });
        let cut_result = cut(result, 90);
        assert_eq!(cut_result.get("structuredContent"), None);
        assert_eq!(cut_result["isError"], true);
        assert!(
            cut_result["content"][1]["text"]
                .as_str()
                .unwrap()
                .ends_with(
                    "[its structuredContent did not fit, so the structured result is not given]"
                )
        );
    }

    #[test]
    fn a_tools_own_limit_wins_over_the_overall_one() {
        let limits = ResultLimits {
            max_bytes: Some(100),
            tools: vec![("fs_*".into(), 10)],
        };
        assert_eq!(limits.of("fs_read"), Some(10));
        assert_eq!(limits.of("other"), Some(100));
    }
}
