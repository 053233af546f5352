//! Quoting a value the user gave inside a message, bounded so a 5 MB value never comes back
//! whole in an error or a warning.

use serde_json::Value;

/// How much of a quoted value a message shows: enough to recognise it.
pub const QUOTE_CHARS: usize = 200;

/// `s` as a JSON string literal, cut after `max_chars` characters with `…` and the full length.
pub(crate) fn quote(s: &str, max_chars: usize) -> String {
    match cut(s, max_chars) {
        None => Value::from(s).to_string(),
        Some(head) => format!("{}… ({} characters)", Value::from(head), s.chars().count()),
    }
}

/// `s` as it is, cut after `max_chars` characters with `…` (for paths and reasons, which are
/// shown bare).
pub fn shorten(s: &str, max_chars: usize) -> String {
    match cut(s, max_chars) {
        None => s.to_string(),
        Some(head) => format!("{head}…"),
    }
}

/// `mcpServers.github`, or `mcpServers["Github PR"]` when the key is not a plain word (or is too
/// long to show whole).
pub fn key_path(prefix: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key.len() <= QUOTE_CHARS
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '$');
    match (plain, prefix.is_empty()) {
        (true, true) => key.to_string(),
        (true, false) => format!("{prefix}.{key}"),
        (false, _) => format!("{prefix}[{}]", quote(key, QUOTE_CHARS)),
    }
}

/// The first `max_chars` characters when `s` is longer than that.
fn cut(s: &str, max_chars: usize) -> Option<&str> {
    s.char_indices().nth(max_chars).map(|(at, _)| &s[..at])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_values_are_quoted_whole() {
        assert_eq!(quote("ws", 10), "\"ws\"");
        assert_eq!(quote("a\"b\n", 10), "\"a\\\"b\\n\"");
        assert_eq!(shorten("/etc/mcp.json", 20), "/etc/mcp.json");
    }

    #[test]
    fn long_values_are_cut_on_a_character_boundary() {
        let long = "é".repeat(5_000_000);
        let q = quote(&long, 3);
        assert_eq!(q, "\"ééé\"… (5000000 characters)");
        assert_eq!(shorten(&long, 2), "éé…");
        assert_eq!(quote("abcd", 4), "\"abcd\"");
        assert_eq!(quote("abcde", 4), "\"abcd\"… (5 characters)");
    }

    #[test]
    fn key_paths() {
        assert_eq!(key_path("mcpServers", "github"), "mcpServers.github");
        assert_eq!(key_path("", "a"), "a");
        assert_eq!(
            key_path("mcpServers", "Github PR"),
            "mcpServers[\"Github PR\"]"
        );
        let long = "k".repeat(1_000_000);
        let shown = key_path("mcpServers", &long);
        assert!(shown.len() < 300, "{}", shown.len());
        assert!(shown.ends_with("… (1000000 characters)]"), "{shown}");
    }
}
