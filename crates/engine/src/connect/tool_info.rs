//! A listed tool (`ToolInfo`), kept in one form: the JSON text it is handed on as.
//!
//! A tool's schemas held as `serde_json::Value` cost about 17 times their text (a 6 MB schema
//! of 200 000 properties is 98 MB of maps and strings), and every copy of the value costs that
//! again. So a listing is read from its text straight into each tool's text (see
//! [`super::listing`]), shared (`Arc`) by the session, the inventory and every `Tool` object
//! made from it, and read as a value only where a value is needed, one field at a time.

use std::sync::Arc;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

/// The largest tool definition (one tool of a `tools/list` answer, as JSON text) a server may
/// list; a listing with a bigger one fails that server. Real tools are kilobytes; 8 MiB leaves
/// room for generated schemas of hundreds of thousands of properties while bounding what one
/// tool can cost where it must be read as a value (serving it again, `onToolsChanged`: about
/// 17 bytes of memory per byte of text), and stays under the 16 MiB line of the stdio framing
/// ([`super::stdio::framing::MAX_LINE_BYTES`]), so the refusal names the tool.
pub(crate) use crate::bounds::MAX_TOOL_BYTES;

/// A tool's `ToolInfo` as JSON text, with its name read out. Cloning shares it.
#[derive(Clone)]
pub struct ToolInfo(Arc<Inner>);

struct Inner {
    name: String,
    json: Box<RawValue>,
}

/// Two listings of a tool are the same tool when their texts are equal (a re-listing that
/// changed nothing changes nothing).
impl PartialEq for ToolInfo {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.json.get() == other.0.json.get()
    }
}

/// Why a listed tool cannot be kept, in words once displayed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum ToolRefused {
    #[error(
        "tool {:?} is {len} bytes of JSON, over the {} MiB a tool definition may be",
        super::reason::bounded(name),
        MAX_TOOL_BYTES >> 20
    )]
    TooBig { name: String, len: usize },
    #[error("a tool is not a tool object ({0})")]
    NotATool(String),
    #[error("a tool is not JSON ({0})")]
    NotJson(String),
}

impl ToolInfo {
    /// From the text of a `ToolInfo` object (which has a string `name`), refused in words when
    /// it is over [`MAX_TOOL_BYTES`].
    pub(crate) fn from_json(json: String) -> Result<Self, ToolRefused> {
        #[derive(Deserialize)]
        struct Name {
            name: String,
        }
        let name = serde_json::from_str::<Name>(&json)
            .map_err(|e| ToolRefused::NotATool(e.to_string()))?
            .name;
        Self::named(name, json)
    }

    /// From the text of a `ToolInfo` object whose name is `name`, within the same bound.
    pub(crate) fn named(name: String, json: String) -> Result<Self, ToolRefused> {
        check_size(json.len(), || name.clone())?;
        let json = RawValue::from_string(json).map_err(|e| ToolRefused::NotJson(e.to_string()))?;
        Ok(Self(Arc::new(Inner { name, json })))
    }

    /// From a `ToolInfo` value (the typed path), within the same bound.
    pub(crate) fn from_value(info: &Value) -> Result<Self, ToolRefused> {
        Self::from_json(info.to_string())
    }

    /// Its original name.
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// Its text.
    pub fn json(&self) -> &RawValue {
        &self.0.json
    }

    /// Its top-level fields in order, each as its text.
    pub fn fields(&self) -> Vec<(String, &RawValue)> {
        object_fields(self.0.json.get()).unwrap_or_default()
    }

    /// The whole tool as a value (read from its text each time: for a wide schema that is the
    /// expensive form, so only where a value is needed).
    pub fn to_value(&self) -> Value {
        serde_json::from_str(self.0.json.get()).unwrap_or(Value::Null)
    }
}

impl std::fmt::Debug for ToolInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.json.get())
    }
}

impl Serialize for ToolInfo {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.json.serialize(serializer)
    }
}

/// Ok when a tool definition of `len` bytes is within [`MAX_TOOL_BYTES`]; else the reason,
/// naming the tool (`name` is asked only then).
pub(crate) fn check_size(len: usize, name: impl FnOnce() -> String) -> Result<(), ToolRefused> {
    if len <= MAX_TOOL_BYTES {
        return Ok(());
    }
    Err(ToolRefused::TooBig { name: name(), len })
}

/// A JSON object's members in order, each as its text (a key given twice keeps its first
/// place and its last value, as `serde_json::Map` reads it); None when `text` is no object.
pub fn object_fields(text: &str) -> Option<Vec<(String, &RawValue)>> {
    serde_json::from_str::<RawObject<'_>>(text)
        .ok()
        .map(|o| o.0)
}

/// A JSON object's members as their text.
pub(crate) struct RawObject<'a>(pub Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for RawObject<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> Visitor<'de> for Members {
            type Value = RawObject<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut members: Vec<(String, &'de RawValue)> = Vec::new();
                // Where each key stands, so a repeated key is found without a scan: an object
                // of hundreds of thousands of keys reads in linear time.
                let mut places: std::collections::HashMap<String, usize> =
                    std::collections::HashMap::new();
                while let Some((key, value)) = map.next_entry::<String, &'de RawValue>()? {
                    match places.entry(key) {
                        std::collections::hash_map::Entry::Occupied(at) => {
                            members[*at.get()].1 = value
                        }
                        std::collections::hash_map::Entry::Vacant(at) => {
                            members.push((at.key().clone(), value));
                            at.insert(members.len() - 1);
                        }
                    }
                }
                Ok(RawObject(members))
            }
        }
        deserializer.deserialize_map(Members)
    }
}

/// The text of a JSON object of these members (each value given as its JSON text), in order.
pub fn object_text(members: &[(&str, &str)]) -> String {
    let mut text = String::with_capacity(
        members
            .iter()
            .map(|(k, v)| k.len() + v.len() + 4)
            .sum::<usize>()
            + 2,
    );
    text.push('{');
    for (i, (key, value)) in members.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&Value::String((*key).to_string()).to_string());
        text.push(':');
        text.push_str(value);
    }
    text.push('}');
    text
}

/// A value's JSON text.
pub fn text_of(value: &impl Serialize) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".into())
}

/// After a listing of `bytes` of tools was freed: when that was much, gives the memory back to
/// the system. glibc keeps what the freed reads and copies of a wide listing used (in each
/// thread's arena) as the process's own, and resident memory would stay up by as much.
pub fn release_freed(bytes: usize) {
    if bytes >= 1024 * 1024 {
        crate::memory::trim();
    }
}

/// How many bytes of text these tools are.
pub fn bytes(tools: &[ToolInfo]) -> usize {
    tools.iter().map(|t| t.json().get().len()).sum()
}

/// Applies a server's `tools` map (see [`crate::connect::inventory::filter_tools`]), without warnings: for re-listings.
pub(crate) fn apply_filter(
    filter: Option<&[(String, bool)]>,
    tools: Vec<ToolInfo>,
) -> Vec<ToolInfo> {
    let Some(filter) = filter.filter(|f| !f.is_empty()) else {
        return tools;
    };
    let allow = filter.iter().any(|(_, on)| *on);
    tools
        .into_iter()
        .filter(|t| {
            let name = t.name();
            let listed = filter.iter().find(|(n, _)| *n == name).map(|(_, on)| *on);
            if allow {
                listed == Some(true)
            } else {
                listed != Some(false)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_tool_is_kept_as_its_text_and_read_by_field() {
        let info = json!({"name": "a", "description": "d", "inputSchema": {"type": "object"}});
        let tool = ToolInfo::from_value(&info).unwrap();
        assert_eq!(tool.name(), "a");
        assert_eq!(tool.to_value(), info);
        let fields: Vec<(String, &str)> = tool
            .fields()
            .into_iter()
            .map(|(k, v)| (k, v.get()))
            .collect();
        assert_eq!(
            fields,
            [
                ("name".to_string(), r#""a""#),
                ("description".to_string(), r#""d""#),
                ("inputSchema".to_string(), r#"{"type":"object"}"#)
            ]
        );
        assert_eq!(serde_json::to_string(&tool).unwrap(), info.to_string());
    }

    #[test]
    fn a_key_given_twice_keeps_its_first_place_and_last_value() {
        let fields = object_fields(r#"{"a": 1, "b": 2, "a": 3}"#).unwrap();
        let fields: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (k.as_str(), v.get())).collect();
        assert_eq!(fields, [("a", "3"), ("b", "2")]);
        assert!(object_fields("[1]").is_none());
    }

    #[test]
    fn an_over_large_tool_is_refused_in_words() {
        let big = json!({"name": "big", "description": "x".repeat(MAX_TOOL_BYTES)});
        let err = ToolInfo::from_value(&big).err().unwrap().to_string();
        assert_eq!(
            err,
            format!(
                "tool \"big\" is {} bytes of JSON, over the 8 MiB a tool definition may be",
                big.to_string().len()
            )
        );
    }
}
