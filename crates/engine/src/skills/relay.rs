//! A gateway's relay of its upstream servers' skills: each upstream's `skill://` URIs re-rooted
//! under its server name (`skill://pdf/SKILL.md` of server `docs` is served as
//! `skill://docs/pdf/SKILL.md`), so two servers' skills never shadow each other. The bytes are
//! unchanged, so the digests stay valid, and the last path segment (the skill's name) too.
//! A skill under another scheme is not relayed (it could not be told apart). The server's name
//! is one segment, percent-encoded (a name `a/b` is `a%2Fb`), so no two servers' URIs meet. A
//! URI with an empty, `.` or `..` segment (also percent-encoded) is never relayed: it could
//! name something else than it seems to, past a scope that allows its prefix.

use serde_json::{Map, Value};

const SCHEME: &str = "skill://";

/// `name` as one URI segment: every byte but the unreserved ones percent-encoded.
fn segment(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for byte in name.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// A segment percent-decoded (None when it is not valid UTF-8 once decoded).
fn decoded(segment: &str) -> Option<String> {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = segment.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Whether a URI's path has an empty, `.` or `..` segment (percent-encoded too).
fn has_dot_segment(path: &str) -> bool {
    path.split('/').any(|s| {
        let s = decoded(s).unwrap_or_else(|| s.to_string());
        matches!(s.as_str(), "" | "." | "..")
    })
}

/// `uri` of server `server`, as the gateway serves it.
pub(crate) fn rerooted(server: &str, uri: &str) -> Option<String> {
    let rest = uri.strip_prefix(SCHEME)?;
    Some(format!("{SCHEME}{}/{rest}", segment(server)))
}

/// The server and its own URI of a URI the gateway serves re-rooted; None for another URI, or
/// one with an empty, `.` or `..` segment.
pub(crate) fn unrooted(uri: &str) -> Option<(String, String)> {
    let rest = uri.strip_prefix(SCHEME)?;
    let (server, path) = rest.split_once('/')?;
    if has_dot_segment(path.split(['?', '#']).next().unwrap_or_default()) {
        return None;
    }
    let server = decoded(server).filter(|s| !s.is_empty())?;
    Some((server, format!("{SCHEME}{path}")))
}

/// Rewrites the `uri` of `item` (and of each of its `key` list's items) with `rewrite`; None
/// when its `uri` cannot be.
fn rewrite_uris(
    item: &Map<String, Value>,
    key: &str,
    rewrite: &dyn Fn(&str) -> Option<String>,
) -> Option<Map<String, Value>> {
    let mut item = item.clone();
    let uri = rewrite(item.get("uri")?.as_str()?)?;
    item.insert("uri".into(), Value::String(uri));
    if let Some(Value::Array(list)) = item.get_mut(key) {
        for entry in list.iter_mut() {
            if let Some(Value::String(uri)) = entry.get_mut("uri")
                && let Some(new) = rewrite(uri)
            {
                *uri = new;
            }
        }
    }
    Some(item)
}

/// A resource of server `server` (its listing) with a `skill://` URI, re-rooted; None for
/// another URI.
pub(crate) fn rerooted_resource(
    server: &str,
    resource: &Map<String, Value>,
) -> Option<Map<String, Value>> {
    rewrite_uris(resource, "", &|uri| rerooted(server, uri))
}

/// A skill entry of server `server`, re-rooted (its `SKILL.md` and every file it lists).
pub(crate) fn rerooted_entry(
    server: &str,
    entry: &Map<String, Value>,
) -> Option<Map<String, Value>> {
    rewrite_uris(entry, "resources", &|uri| rerooted(server, uri))
}

/// Every `uri` in a result's `list` (`contents` of a read, `resources` of a directory read)
/// re-rooted under `server`.
pub(crate) fn rerooted_list(server: &str, mut result: Value, list: &str) -> Value {
    if let Some(Value::Array(items)) = result.get_mut(list) {
        for item in items.iter_mut() {
            if let Some(Value::String(uri)) = item.get_mut("uri")
                && let Some(new) = rerooted(server, uri)
            {
                *uri = new;
            }
        }
    }
    result
}
