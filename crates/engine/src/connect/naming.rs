//! Tool names an agent sees: `sanitize(server)_sanitize(tool)`, kept within 64 characters and
//! unique across all servers, deterministically.

use std::collections::{HashMap, HashSet};

use crate::config::sanitize::sanitize;

/// The longest name most model APIs accept for a tool.
pub(crate) const MAX_NAME: usize = 64;
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

#[cfg(test)]
/// Names for `(server, tool)` pairs in order, plus a warning for every name that had to change.
pub(crate) fn assign(pairs: &[(&str, &str)]) -> (Vec<String>, Vec<String>) {
    Namer::default().assign(pairs)
}

/// Names that stay put while a tool set changes (a toolkit's servers restart one by one, or
/// re-list their tools): a `(server, tool)` pair keeps the name it was given for as long as it
/// is listed, so a tool is not renamed because another server came or went. New pairs are
/// named as [`assign`] would, around the names already given; the first call is [`assign`].
#[derive(Default)]
pub struct Namer {
    given: HashMap<(String, String), String>,
}

impl Namer {
    /// Names for `pairs` in order, plus a warning for every new name that had to change.
    pub fn assign(&mut self, pairs: &[(&str, &str)]) -> (Vec<String>, Vec<String>) {
        let listed: HashSet<(&str, &str)> = pairs.iter().copied().collect();
        self.given
            .retain(|(server, tool), _| listed.contains(&(server.as_str(), tool.as_str())));
        let mut taken: HashSet<String> = self.given.values().cloned().collect();
        // Names handed out in this call: a pair listed twice gets a second name.
        let mut used = HashSet::new();
        let mut names = Vec::with_capacity(pairs.len());
        let mut warnings = Vec::new();
        for &(server, tool) in pairs {
            let key = (server.to_string(), tool.to_string());
            let name = match self.given.get(&key) {
                Some(kept) if !used.contains(kept) => kept.clone(),
                _ => {
                    let name = fresh_name(server, tool, &taken, &mut warnings);
                    taken.insert(name.clone());
                    self.given.entry(key).or_insert_with(|| name.clone());
                    name
                }
            };
            used.insert(name.clone());
            names.push(name);
        }
        (names, warnings)
    }
}

/// `sanitize(server)_sanitize(tool)`, shortened past [`MAX_NAME`] and hashed when `taken`.
fn fresh_name(
    server: &str,
    tool: &str,
    taken: &HashSet<String>,
    warnings: &mut Vec<String>,
) -> String {
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
    name
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

    #[test]
    fn a_namer_starts_as_assign_does() {
        let pairs = [("a.b", "x"), ("a_b", "x"), ("srv", &*"t".repeat(80))];
        let (names, warnings) = Namer::default().assign(&pairs);
        assert_eq!((names.clone(), warnings.clone()), assign(&pairs));
        assert_eq!(names[0], "a_b_x");
        assert!(names[1].starts_with("a_b_x_"));
        assert_eq!(warnings.len(), 2);
    }

    #[test]
    fn a_namer_keeps_names_while_others_come_and_go() {
        let mut namer = Namer::default();
        let (first, _) = namer.assign(&[("a.b", "x"), ("a_b", "x")]);
        // "a.b" restarts with no tools: "a_b" keeps its name, and hears no new warning.
        let (names, warnings) = namer.assign(&[("a_b", "x")]);
        assert_eq!(names, vec![first[1].clone()]);
        assert!(warnings.is_empty());
        // "a.b" comes back: it may have the plain name again, nobody else moves.
        let (names, warnings) = namer.assign(&[("a.b", "x"), ("a_b", "x")]);
        assert_eq!(names, first);
        assert!(warnings.is_empty());
        // A new tool of an earlier server that collides with a kept name is the one renamed.
        let (names, warnings) = namer.assign(&[("a", "b_x"), ("a.b", "x"), ("a_b", "x")]);
        assert_eq!(&names[1..], &first[..]);
        assert!(names[0].starts_with("a_b_x_") && !first.contains(&names[0]));
        assert_eq!(warnings.len(), 1);
    }

    #[test]
    fn a_pair_listed_twice_gets_two_names() {
        let mut namer = Namer::default();
        let (names, _) = namer.assign(&[("s", "t"), ("s", "t")]);
        assert_eq!(names, assign(&[("s", "t"), ("s", "t")]).0);
        assert_eq!(namer.assign(&[("s", "t"), ("s", "t")]).0, names);
    }
}
