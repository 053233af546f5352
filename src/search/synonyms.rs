//! A built-in table of words that tool catalogs and their users use for the same thing. A query
//! word also looks for the other words of its groups, at a lower weight than itself.
//!
//! The groups are general English of tool catalogs (verbs on files, records, processes and the
//! web; the nouns they act on), not the words of any one server.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::text::stem;

const GROUPS: &[&[&str]] = &[
    // Verbs.
    &[
        "remove", "delete", "erase", "rm", "unlink", "destroy", "purge", "discard", "drop",
    ],
    &[
        "create", "make", "new", "add", "insert", "generate", "build",
    ],
    &[
        "find", "search", "lookup", "query", "locate", "grep", "seek", "discover", "match",
    ],
    &[
        "get", "fetch", "read", "retrieve", "obtain", "load", "show", "view", "display", "open",
    ],
    &["list", "enumerate", "ls", "browse", "all", "show"],
    &["write", "save", "store", "put", "persist", "record"],
    &[
        "edit", "modify", "update", "change", "patch", "replace", "alter", "amend",
    ],
    &["move", "rename", "mv", "relocate"],
    &["copy", "duplicate", "clone", "cp"],
    &[
        "run", "execute", "exec", "invoke", "launch", "start", "call", "trigger",
    ],
    &["stop", "kill", "terminate", "halt", "cancel", "abort"],
    &["download", "fetch", "retrieve", "grab", "scrape"],
    &["send", "post", "notify", "deliver"],
    &["compare", "diff", "difference"],
    &["undo", "reset", "revert", "rollback", "restore", "unstage"],
    &["wait", "sleep", "delay", "pause"],
    &["convert", "transform", "translate"],
    &[
        "calculate",
        "compute",
        "sum",
        "plus",
        "total",
        "math",
        "arithmetic",
    ],
    &[
        "think",
        "reason",
        "reflect",
        "thought",
        "ponder",
        "brainstorm",
    ],
    &[
        "annotate",
        "annotation",
        "comment",
        "note",
        "observation",
        "remark",
    ],
    // Nouns.
    &["folder", "directory", "dir"],
    &["file", "document", "doc"],
    &[
        "web", "url", "page", "website", "http", "internet", "link", "site", "online", "webpage",
    ],
    &["time", "clock", "date", "timezone", "zone", "hour"],
    &["now", "current", "present", "today", "latest"],
    &[
        "memory",
        "remember",
        "knowledge",
        "graph",
        "entity",
        "relation",
        "fact",
        "recall",
    ],
    &["issue", "ticket", "bug"],
    &["message", "mail", "email", "notification"],
    &["size", "length", "bytes"],
    &[
        "info",
        "information",
        "metadata",
        "details",
        "stats",
        "attributes",
        "properties",
    ],
    &["content", "contents", "text", "body"],
    &["user", "person", "people", "account", "member"],
    &["error", "failure", "problem", "exception"],
    &["log", "history", "journal"],
    &["repo", "repository", "project"],
    &["image", "picture", "photo", "screenshot", "png"],
    &["tree", "hierarchy", "structure", "nested", "recursive"],
    &["allowed", "permitted", "accessible", "permission", "access"],
    &[
        "config",
        "configuration",
        "settings",
        "options",
        "preferences",
    ],
    &["tag", "label"],
    &["environment", "env", "variable"],
    &["sample", "example", "demo"],
    &["echo", "repeat", "parrot"],
    &["long", "slow", "lengthy", "progress"],
];

/// The stems that a query stem also looks for, without itself; empty for most words.
pub(crate) fn related(token: &str) -> &'static [String] {
    static TABLE: OnceLock<HashMap<String, Vec<String>>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut table: HashMap<String, Vec<String>> = HashMap::new();
        for group in GROUPS {
            let stems: Vec<String> = group.iter().map(|w| stem(w)).collect();
            for s in &stems {
                let entry = table.entry(s.clone()).or_default();
                entry.extend(stems.iter().filter(|o| *o != s).cloned());
            }
        }
        for others in table.values_mut() {
            others.sort();
            others.dedup();
        }
        table
    });
    table.get(token).map_or(&[], Vec::as_slice)
}
