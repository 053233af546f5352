//! Recall on the retrieval set of `bench/search/` (real `tools/list` catalogs of published servers
//! and requests written as users ask): recall@1 and recall@3 over all catalogs at once, split by
//! whether a request reuses the tool's own words, and by half (even-numbered requests were the
//! ones looked at while tuning, odd-numbered ones were held out).
//!
//! `cargo test search::tests_recall -- --ignored --nocapture`; the set is read from
//! `$TOOLNEXUS_SEARCH_SET` if given, else from `bench/search/` of this crate.

use std::path::PathBuf;

use serde_json::Value;

use super::{Doc, Index};

struct Request {
    request: String,
    expect: String,
    reuses: bool,
}

/// The docs of every catalog, their ids `<server>/<tool>`, and the requests.
type Set = (Vec<Doc>, Vec<String>, Vec<Request>);

/// The retrieval set, or why there is none.
fn load() -> Result<Set, String> {
    let dir = std::env::var_os("TOOLNEXUS_SEARCH_SET")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("bench/search")
        });
    let read = |p: PathBuf| -> Result<Value, String> {
        let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("catalogs"))
        .map_err(|e| format!("{}: {e}", dir.join("catalogs").display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut docs = Vec::new();
    let mut ids = Vec::new();
    for path in files {
        let server = path
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let catalog = read(path)?;
        let tools = catalog.get("tools").unwrap_or(&catalog);
        for tool in tools.as_array().into_iter().flatten() {
            let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
            ids.push(format!("{server}/{name}"));
            docs.push(Doc::from_listing(name, Some(&server), tool));
        }
    }
    let requests = read(dir.join("requests.json"))?;
    let requests = requests.get("requests").unwrap_or(&requests);
    let requests = requests
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| Request {
            request: r["request"].as_str().unwrap_or_default().to_string(),
            expect: r["expect"].as_str().unwrap_or_default().to_string(),
            reuses: r["reuses"].as_bool().unwrap_or(false),
        })
        .collect();
    Ok((docs, ids, requests))
}

#[derive(Default)]
struct Tally {
    n: usize,
    at1: usize,
    at3: usize,
}

impl Tally {
    fn line(&self, label: &str) -> String {
        let r = |k: usize| {
            if self.n == 0 {
                0.0
            } else {
                k as f64 / self.n as f64
            }
        };
        format!(
            "{label:<28} n={:<3} recall@1={:.3} recall@3={:.3}",
            self.n,
            r(self.at1),
            r(self.at3)
        )
    }
}

#[test]
#[ignore = "reads the retrieval set of bench/search; run with --ignored --nocapture"]
fn recall() {
    let (docs, ids, requests) = match load() {
        Ok(set) if !set.2.is_empty() => set,
        Ok(_) => return println!("no requests in the retrieval set; skipped"),
        Err(e) => return println!("no retrieval set ({e}); skipped"),
    };
    let verbose = std::env::var_os("TOOLNEXUS_SEARCH_VERBOSE").is_some();
    let index = Index::new(docs.clone());
    let missing: Vec<&str> = requests
        .iter()
        .filter(|r| !ids.contains(&r.expect))
        .map(|r| r.expect.as_str())
        .collect();
    assert!(
        missing.is_empty(),
        "requests expect tools absent from the catalogs: {missing:?}"
    );
    // [reuses][half]
    let mut tallies: [[Tally; 2]; 2] = Default::default();
    for (i, r) in requests.iter().enumerate() {
        let hits = index.search(&r.request, 3, None);
        let rank = hits.iter().position(|h| ids[h.index] == r.expect);
        let t = &mut tallies[r.reuses as usize][i % 2];
        t.n += 1;
        t.at1 += (rank == Some(0)) as usize;
        t.at3 += rank.is_some() as usize;
        // Only the tuning half is shown, so that the other half stays unseen.
        if verbose && rank != Some(0) && i % 2 == 0 {
            let got: Vec<&str> = hits.iter().map(|h| ids[h.index].as_str()).collect();
            println!(
                "#{i} {:?} → {} at {rank:?}; got {got:?}",
                r.request, r.expect
            );
            let want = ids
                .iter()
                .position(|id| *id == r.expect)
                .unwrap_or_default();
            let show = |d: usize| {
                let parts = index.explain(&r.request, d);
                let total: f64 = parts.iter().map(|p| p.1).sum();
                let parts: Vec<String> = parts.iter().map(|(t, s)| format!("{t}:{s:.2}")).collect();
                println!("    {} {total:.2} = {}", ids[d], parts.join(" "));
            };
            show(want);
            if let Some(top) = hits.first() {
                show(top.index);
            }
        }
    }
    println!("{} tools, {} requests", docs.len(), requests.len());
    let sum = |ts: &[&Tally]| Tally {
        n: ts.iter().map(|t| t.n).sum(),
        at1: ts.iter().map(|t| t.at1).sum(),
        at3: ts.iter().map(|t| t.at3).sum(),
    };
    let [plain, reusing] = &tallies;
    println!("{}", sum(&[&plain[0], &plain[1]]).line("reuses:false"));
    println!("{}", plain[0].line("  tuning half (even)"));
    println!("{}", plain[1].line("  held-out half (odd)"));
    println!("{}", sum(&[&reusing[0], &reusing[1]]).line("reuses:true"));
    println!("{}", reusing[0].line("  tuning half (even)"));
    println!("{}", reusing[1].line("  held-out half (odd)"));
}
