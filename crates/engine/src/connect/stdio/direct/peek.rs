//! The envelope peek: what a line is, read without building it (fields borrowed from the line,
//! the result kept as raw JSON), so an answer to a direct request never meets rmcp's typed parse.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{Direct, FIRST_ID, Failure};
use crate::connect::stdio::screen::{Route, Routed, bounded, response_problem};

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    jsonrpc: Option<&'a RawValue>,
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<&'a RawValue>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    // `null` counts as present (an answer with `"result": null` is a bad answer, not none).
    #[serde(borrow, default, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

#[derive(Deserialize)]
struct ProgressParams<'a> {
    #[serde(rename = "progressToken", borrow, default)]
    progress_token: Option<&'a RawValue>,
}

/// A JSON-RPC error object as rmcp reads one: an integer code and a message.
#[derive(Deserialize)]
struct ErrorObject {
    code: i32,
    message: String,
}

impl Route for Direct {
    /// Looks at one line from the server before rmcp does: an answer to a direct request is
    /// settled here, a progress notification for one restarts its timeout (and still goes on).
    fn route(&self, text: &str) -> Routed {
        if self.shared.lock().pending.is_empty() {
            return Routed::NotOurs;
        }
        route(self, text)
    }
}

pub(super) fn route(direct: &Direct, text: &str) -> Routed {
    let Ok(envelope) = serde_json::from_str::<Envelope>(text) else {
        // Not JSON, or not an object: the usual rules decide (noise, or a violation).
        return Routed::NotOurs;
    };
    if let Some(method) = envelope.method {
        if method.get() == "\"notifications/progress\""
            && let Some(params) = envelope.params
            && let Some(id) = serde_json::from_str::<ProgressParams>(params.get())
                .ok()
                .and_then(|p| p.progress_token)
                .and_then(direct_id)
        {
            direct.progressed(id, params);
        }
        return Routed::NotOurs;
    }
    let Some(id) = envelope.id.and_then(direct_id) else {
        return Routed::NotOurs;
    };
    let answer = answer_of(&envelope);
    let Some(answer) = answer else {
        if direct.is_pending(id) {
            let problem = serde_json::from_str(text)
                .map(|object| response_problem(&object))
                .unwrap_or("it is not an object");
            return Routed::Invalid(format!(
                "the answer to request {id} is not a valid JSON-RPC response ({problem}): {}",
                bounded(text)
            ));
        }
        // A bad answer to a request given up on: as any JSON that answers nothing we asked.
        return Routed::NotOurs;
    };
    if let Some(pending) = direct.take(id) {
        (pending.settle)(answer);
    }
    Routed::Handled
}

/// A request id in the direct range (a number, or a string of one as rmcp also accepts).
fn direct_id(raw: &RawValue) -> Option<u64> {
    let text = raw.get();
    let digits = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(text);
    digits.parse::<u64>().ok().filter(|id| *id >= FIRST_ID)
}

/// The answer a well-formed response carries, or None when it is not one.
fn answer_of<'a>(envelope: &Envelope<'a>) -> Option<Result<&'a RawValue, Failure>> {
    if envelope.jsonrpc.map(RawValue::get) != Some("\"2.0\"") {
        return None;
    }
    match (envelope.result, envelope.error) {
        (Some(result), _) if result.get().starts_with('{') => Some(Ok(result)),
        (None, Some(error)) => serde_json::from_str::<ErrorObject>(error.get())
            .ok()
            .map(|error| {
                Err(Failure::JsonRpc {
                    code: error.code,
                    message: error.message,
                })
            }),
        _ => None,
    }
}
