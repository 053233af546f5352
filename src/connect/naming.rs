//! Tool names an agent sees: `sanitize(server)_sanitize(tool)`, kept within 64 characters and
//! unique across all servers, deterministically.

use std::collections::HashSet;

use crate::config::sanitize::sanitize;

/// The longest name most model APIs accept for a tool.
pub const MAX_NAME: usize = 64;
const HASH_LEN: usize = 8;

/// FNV-1a: tiny, stable across versions and platforms, good enough to tell names apart.
fn short_hash(parts: &[&str]) -> String {
    let mut hash: u32 = 0x811c_9dc5;
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            hash ^= 0xff;
            hash = hash.wrapping_mul(0x0100_0193);
        }
        for byte in part.bytes() {
            hash ^= u32::from(byte);
            hash = hash.wrapping_mul(0x0100_0193);
        }
    }
    format!("{hash:08x}")
}

/// A readable head of `name` plus a hash of the original (server, tool) pair.
fn with_hash(name: &str, server: &str, tool: &str) -> String {
    let head: String = name.chars().take(MAX_NAME - HASH_LEN - 1).collect();
    format!("{head}_{}", short_hash(&[server, tool]))
}

/// Names for `(server, tool)` pairs in order, plus a warning for every name that had to change.
pub fn assign(pairs: &[(&str, &str)]) -> (Vec<String>, Vec<String>) {
    let mut taken = HashSet::new();
    let mut names = Vec::with_capacity(pairs.len());
    let mut warnings = Vec::new();
    for (server, tool) in pairs {
        let plain = format!("{}_{}", sanitize(server), sanitize(tool));
        let mut name = plain.clone();
        if name.len() > MAX_NAME {
            name = with_hash(&plain, server, tool);
            warnings.push(format!(
                "toolnexus: tool name {plain:?} is longer than {MAX_NAME} characters; using {name:?}"
            ));
        }
        if taken.contains(&name) {
            let renamed = with_hash(&plain, server, tool);
            warnings.push(format!(
                "toolnexus: tool {tool:?} of server {server:?} collides with another tool named {name:?}; using {renamed:?}"
            ));
            name = renamed;
        }
        taken.insert(name.clone());
        names.push(name);
    }
    (names, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names() {
        let (names, warnings) = assign(&[("git hub", "search.code"), ("x", "😀")]);
        assert_eq!(names, vec!["git_hub_search_code", "x___"]);
        assert!(warnings.is_empty());
    }

    #[test]
    fn long_names_are_shortened_deterministically() {
        let tool = "a".repeat(80);
        let (names, warnings) = assign(&[("srv", &tool)]);
        assert_eq!(names[0].len(), MAX_NAME);
        assert!(names[0].starts_with("srv_aaaa"));
        assert_eq!(assign(&[("srv", &tool)]).0, names);
        assert_eq!(warnings.len(), 1);
    }

    #[test]
    fn collisions_are_disambiguated() {
        let (names, warnings) = assign(&[("a", "b.c"), ("a", "b_c"), ("a", "b-c")]);
        assert_eq!(names[0], "a_b_c");
        assert_ne!(names[1], names[0]);
        assert!(names[1].starts_with("a_b_c_"));
        assert_eq!(names[2], "a_b-c");
        assert_eq!(warnings.len(), 1);
        // The same inputs always give the same names.
        assert_eq!(assign(&[("a", "b.c"), ("a", "b_c"), ("a", "b-c")]).0, names);
    }
}
