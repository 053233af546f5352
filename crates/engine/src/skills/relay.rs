//! A gateway's relay of its upstream servers' skills: each upstream's `skill://` URIs re-rooted
//! under its server name (`skill://pdf/SKILL.md` of server `docs` is served as
//! `skill://docs/pdf/SKILL.md`), so two servers' skills never shadow each other. The bytes are
//! unchanged, so the digests stay valid, and the last path segment (the skill's name) too.
//! A skill under another scheme is not relayed (it could not be told apart).

use serde_json::{Map, Value};

const SCHEME: &str = "skill://";

/// `uri` of server `server`, as the gateway serves it.
pub(crate) fn rerooted(server: &str, uri: &str) -> Option<String> {
    let rest = uri.strip_prefix(SCHEME)?;
    Some(format!("{SCHEME}{server}/{rest}"))
}

/// The server and its own URI of a URI the gateway serves re-rooted.
pub(crate) fn unrooted(uri: &str) -> Option<(&str, String)> {
    let rest = uri.strip_prefix(SCHEME)?;
    let (server, path) = rest.split_once('/')?;
    (!server.is_empty() && !path.is_empty()).then(|| (server, format!("{SCHEME}{path}")))
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

/// Whether `uri` (the server's own) is a file one of its listed `skills` names, or a folder
/// within one of them.
pub(crate) fn within_listed(skills: &[Map<String, Value>], uri: &str) -> bool {
    skills.iter().any(|skill| {
        let Some(base) = skill
            .get("uri")
            .and_then(Value::as_str)
            .and_then(|u| u.strip_suffix("SKILL.md"))
        else {
            return false;
        };
        uri.starts_with(base) || uri == base.trim_end_matches('/')
    })
}
