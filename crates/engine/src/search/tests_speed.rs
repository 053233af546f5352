//! The speed of ranking: a 10 000-tool catalog indexed and searched quickly.

use std::time::Instant;

use super::{Doc, Index};

/// A deterministic catalog of `n` tools made of everyday tool-catalog words.
fn synthetic_catalog(n: usize) -> Vec<Doc> {
    const VERBS: &[&str] = &[
        "get", "list", "create", "delete", "update", "search", "send", "read", "write", "move",
        "copy", "run", "stop", "fetch", "sync", "export", "import", "archive", "tag", "merge",
    ];
    const NOUNS: &[&str] = &[
        "file",
        "directory",
        "issue",
        "message",
        "user",
        "branch",
        "commit",
        "ticket",
        "invoice",
        "order",
        "event",
        "calendar",
        "page",
        "image",
        "job",
        "pipeline",
        "record",
        "table",
        "column",
        "note",
        "contact",
        "project",
        "label",
        "comment",
        "release",
        "secret",
        "bucket",
        "queue",
        "topic",
        "channel",
        "alert",
        "metric",
        "dashboard",
        "report",
        "customer",
        "lead",
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |m: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as usize % m
    };
    (0..n)
        .map(|i| {
            let (v, o) = (VERBS[next(VERBS.len())], NOUNS[next(NOUNS.len())]);
            let extra = NOUNS[next(NOUNS.len())];
            Doc {
                name: format!("{v}_{o}_{i}"),
                server: Some(format!("server{}", i % 40)),
                title: None,
                description: Some(format!(
                    "{v} a {o} of the {extra} in the workspace, with paging and filters"
                )),
                params: vec![
                    (format!("{o}_id"), Some(format!("The {o} to {v}"))),
                    ("limit".to_string(), Some("How many to return".to_string())),
                ],
            }
        })
        .collect()
}

#[test]
fn ten_thousand_tools_answer_each_query_quickly() {
    let docs = synthetic_catalog(10_000);
    let started = Instant::now();
    let index = Index::new(docs);
    let build = started.elapsed();
    let queries = [
        "remove a folder",
        "find open tickets for a customer",
        "send a message to the channel",
        "read file contents",
        "list every release of a project",
        "export the dashboard report",
        "copy the bucket",
        "zyxwvut",
    ];
    let rounds = 20;
    let started = Instant::now();
    for _ in 0..rounds {
        for q in queries {
            std::hint::black_box(index.search(q, 5, None));
        }
    }
    let per_query = started.elapsed() / (rounds * queries.len()) as u32;
    println!("10 000 tools: build {build:?}, {per_query:?} per query (this profile)");
    assert_eq!(index.len(), 10_000);
    assert_eq!(index.search("read file contents", 5, None).len(), 5);
    // A generous bound that holds in debug builds on a busy machine; release is far under 1 ms.
    assert!(per_query.as_millis() < 50, "{per_query:?} per query");
}
