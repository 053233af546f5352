//! A built-in table of words that tool catalogs and their users use for the same thing. A query
//! word also looks for the other words of its groups, at a lower weight than itself.
//!
//! The groups are general English of tool catalogs (verbs on files, records, processes and the
//! web; the nouns they act on), not the words of any one server.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::text::stem;

/// The weight of a word of the same group as a query word, against 1 for the word itself.
pub(crate) const SYNONYM_WEIGHT: f64 = 0.6;
/// The weight of the words an abbreviation stands for.
const EXPANSION_WEIGHT: f64 = 0.9;

const GROUPS: &[&[&str]] = &[
    // Verbs.
    &[
        "remove", "delete", "erase", "rm", "unlink", "destroy", "purge", "discard", "drop",
        "forget",
    ],
    &[
        "create", "make", "new", "add", "insert", "generate", "build", "open", "start", "setup",
    ],
    &[
        "find", "search", "lookup", "look", "query", "locate", "grep", "seek", "discover", "match",
    ],
    &[
        "get", "fetch", "read", "retrieve", "obtain", "load", "show", "view", "display", "open",
    ],
    &["list", "enumerate", "ls", "browse", "all"],
    &[
        "write",
        "save",
        "store",
        "put",
        "persist",
        "record",
        "overwrite",
        "remember",
        "memorize",
    ],
    &[
        "edit", "modify", "update", "change", "patch", "replace", "alter", "amend", "adjust",
    ],
    &["move", "rename", "mv", "relocate"],
    &["copy", "duplicate", "clone", "cp", "fork"],
    &[
        "run", "execute", "exec", "invoke", "launch", "start", "call", "trigger", "perform",
    ],
    &["stop", "kill", "terminate", "halt", "cancel", "abort"],
    &["download", "fetch", "retrieve", "grab", "scrape", "pull"],
    &["upload", "push", "send", "submit"],
    &["send", "post", "notify", "deliver", "tell"],
    &["reply", "respond", "answer", "response", "comment"],
    &["compare", "diff", "difference"],
    &["undo", "reset", "revert", "rollback", "restore", "unstage"],
    &["wait", "sleep", "delay", "pause", "until"],
    &["convert", "transform", "translate"],
    &[
        "calculate",
        "compute",
        "sum",
        "add",
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
        "fact",
    ],
    &["merge", "squash", "combine"],
    &["review", "approve", "approval", "feedback"],
    &["subscribe", "subscription", "subscriber", "watch", "follow"],
    &["toggle", "switch", "enable", "disable"],
    &["compress", "zip", "gzip", "archive", "pack"],
    &["evaluate", "eval", "javascript", "script", "code"],
    &["type", "enter", "input", "fill", "keyboard"],
    &["click", "press", "tap", "mouse", "button"],
    &["back", "return", "previous", "prior"],
    &["navigate", "go", "visit", "goto"],
    &["resize", "viewport", "dimension", "width", "height"],
    // Nouns.
    &["folder", "directory", "dir", "subfolder", "subdirectory"],
    &["file", "document", "doc", "disk", "filesystem", "path"],
    &[
        "web", "url", "page", "website", "http", "internet", "link", "site", "online", "webpage",
    ],
    &["time", "clock", "date", "timezone", "zone", "hour"],
    &["now", "current", "present", "today", "latest", "moment"],
    &["memory", "remember", "knowledge", "recall", "memorize"],
    &["entity", "item", "object", "thing", "person", "people"],
    &[
        "relation",
        "relationship",
        "connection",
        "link",
        "association",
    ],
    &["issue", "ticket", "bug"],
    &["message", "mail", "email", "notification", "post"],
    &["channel", "room", "chat", "conversation"],
    &["reaction", "emoji", "react", "emoticon"],
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
    &["content", "contents", "text", "body", "inside", "paragraph"],
    &["user", "person", "people", "account", "member", "profile"],
    &["error", "failure", "problem", "exception"],
    &["log", "history", "journal"],
    &["repo", "repository", "project"],
    &[
        "image",
        "picture",
        "photo",
        "screenshot",
        "png",
        "jpeg",
        "webp",
        "capture",
        "logo",
    ],
    &["dialog", "popup", "modal", "alert", "prompt", "confirm"],
    &["schema", "column", "field", "describe", "structure"],
    &["row", "record", "entry"],
    &["tree", "hierarchy", "structure", "nested", "recursive"],
    &["pattern", "glob", "wildcard", "regex"],
    &["multiple", "many", "several", "batch", "bulk"],
    &["all", "every", "entire", "whole", "complete", "full"],
    &["allowed", "permitted", "accessible", "permission", "access"],
    &[
        "config",
        "configuration",
        "settings",
        "options",
        "preferences",
        "setup",
    ],
    &["tag", "label"],
    &["environment", "env", "variable"],
    &[
        "sample",
        "example",
        "demo",
        "simulate",
        "simulated",
        "pretend",
    ],
    &["echo", "repeat", "parrot"],
    &["long", "slow", "lengthy", "progress"],
];

/// Abbreviations and the words they stand for (looked for when the abbreviation is asked).
const ABBREVIATIONS: &[(&str, &[&str])] = &[
    ("pr", &["pull", "request"]),
    ("mr", &["merge", "request"]),
    ("repo", &["repository"]),
    ("db", &["database"]),
    ("dir", &["directory"]),
    ("env", &["environment"]),
    ("txt", &["text"]),
    ("msg", &["message"]),
    ("img", &["image"]),
    ("info", &["information"]),
    ("js", &["javascript"]),
    ("sql", &["query", "database"]),
    ("tz", &["timezone"]),
];

/// The stems that a query stem also looks for, with their weights, without itself; empty for
/// most words.
pub(crate) fn related(token: &str) -> &'static [(String, f64)] {
    static TABLE: OnceLock<HashMap<String, Vec<(String, f64)>>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut table: HashMap<String, Vec<(String, f64)>> = HashMap::new();
        for group in GROUPS {
            let stems: Vec<String> = group.iter().map(|w| stem(w)).collect();
            for s in &stems {
                let others = stems.iter().filter(|o| *o != s);
                let entry = table.entry(s.clone()).or_default();
                entry.extend(others.map(|o| (o.clone(), SYNONYM_WEIGHT)));
            }
        }
        for (short, long) in ABBREVIATIONS {
            let entry = table.entry(stem(short)).or_default();
            entry.extend(long.iter().map(|w| (stem(w), EXPANSION_WEIGHT)));
        }
        for others in table.values_mut() {
            // The highest weight of each stem, in a fixed order.
            others.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)));
            others.dedup_by(|a, b| a.0 == b.0);
        }
        table
    });
    table.get(token).map_or(&[], Vec::as_slice)
}
