//! Ranking tests: the tokeniser, the stemmer, synonyms, field weights, filters and limits (the
//! speed of a 10 000-tool catalog is `tests_speed`).

use serde_json::json;

use super::query::chunks;
use super::text::{stem, stop_words_sorted, tokens, words};
use super::{Doc, Hit, Index};

fn doc(name: &str, server: &str, description: &str) -> Doc {
    Doc {
        name: name.to_string(),
        server: Some(server.to_string()),
        description: Some(description.to_string()),
        ..Doc::default()
    }
}

/// The names of the hits, best first.
fn names(docs: &[Doc], hits: &[Hit]) -> Vec<String> {
    hits.iter().map(|h| docs[h.index].name.clone()).collect()
}

fn search(docs: &[Doc], query: &str, limit: usize) -> Vec<String> {
    let index = Index::new(docs.to_vec());
    names(docs, &index.search(query, limit, None))
}

#[test]
fn identifiers_split_at_case_digit_and_punctuation_boundaries() {
    assert_eq!(words("getFileInfo"), ["get", "file", "info"]);
    assert_eq!(
        words("list_allowed_directories"),
        ["list", "allowed", "directories"]
    );
    assert_eq!(words("HTTPServer"), ["http", "server"]);
    assert_eq!(words("read-text-file"), ["read", "text", "file"]);
    assert_eq!(words("v2Api"), ["v", "2", "api"]);
    assert_eq!(
        words("Fetch a URL, then parseJSON!"),
        ["fetch", "a", "url", "then", "parse", "json"]
    );
}

#[test]
fn tokens_drop_one_letter_words_and_stop_words_and_are_stemmed() {
    assert_eq!(tokens("v2Api"), ["api"]);
    assert_eq!(tokens("Get the size of a file"), ["get", "siz", "fil"]);
    assert_eq!(
        tokens("list_allowed_directories"),
        ["list", "allow", "directory"]
    );
    assert!(tokens("the of and to").is_empty());
    assert!(
        stop_words_sorted(),
        "STOP_WORDS must stay sorted for binary search"
    );
}

#[test]
fn stemming_meets_word_forms_and_keeps_short_words() {
    let same = [
        ("directories", "directory"),
        ("files", "file"),
        ("searching", "search"),
        ("searches", "search"),
        ("created", "create"),
        ("creation", "create"),
        ("deletion", "delete"),
        ("writing", "write"),
        ("added", "add"),
        ("running", "run"),
        ("entities", "entity"),
        ("copied", "copy"),
        ("boxes", "box"),
        ("indexes", "index"),
        ("processes", "process"),
    ];
    for (a, b) in same {
        assert_eq!(stem(a), stem(b), "{a} and {b}");
    }
    for word in [
        "status", "class", "string", "all", "user", "need", "gas", "üben",
    ] {
        assert_eq!(stem(word), word, "{word} is left alone");
    }
}

#[test]
fn a_synonym_finds_a_tool_that_shares_no_word_with_the_query() {
    let docs = vec![
        doc(
            "delete_directory",
            "fs",
            "Deletes a directory and all it holds.",
        ),
        doc("read_file", "fs", "Reads a file."),
        doc("get_weather", "weather", "Today's forecast."),
    ];
    assert_eq!(search(&docs, "remove folder", 5), ["delete_directory"]);
    assert_eq!(search(&docs, "fetch a document", 1), ["read_file"]);
}

#[test]
fn an_exact_word_outranks_its_synonym() {
    let docs = vec![
        doc("delete_entry", "db", "Deletes a row."),
        doc("remove_entry", "db", "Removes a row."),
    ];
    assert_eq!(
        search(&docs, "remove entry", 5),
        ["remove_entry", "delete_entry"]
    );
}

#[test]
fn a_name_match_beats_a_description_match() {
    let docs = vec![
        doc(
            "archive_notes",
            "notes",
            "Moves old notes aside; does not touch a calendar.",
        ),
        doc("calendar_events", "cal", "Lists events."),
    ];
    assert_eq!(
        search(&docs, "calendar", 5),
        ["calendar_events", "archive_notes"]
    );
}

#[test]
fn titles_and_parameters_from_a_listing_are_searched() {
    let listing = json!({
        "name": "op1",
        "title": "Translate text",
        "description": "Runs the operation.",
        "inputSchema": {"type": "object", "properties": {
            "language": {"type": "string", "description": "The target tongue, like French"},
            "words": {"type": "string"}
        }}
    });
    let d = Doc::from_listing("lang__op1", Some("lang"), &listing);
    assert_eq!(d.title.as_deref(), Some("Translate text"));
    assert_eq!(
        d.params,
        [
            (
                "language".to_string(),
                Some("The target tongue, like French".to_string())
            ),
            ("words".to_string(), None)
        ]
    );
    let docs = vec![d, doc("other", "x", "Something else entirely.")];
    assert_eq!(search(&docs, "translate", 5), ["lang__op1"]);
    assert_eq!(search(&docs, "french language", 5), ["lang__op1"]);
}

#[test]
fn a_listing_without_fields_gives_a_doc_with_only_its_name() {
    let d = Doc::from_listing("bare", None, &json!({"name": "bare", "inputSchema": 3}));
    assert_eq!(
        d,
        Doc {
            name: "bare".to_string(),
            ..Doc::default()
        }
    );
}

#[test]
fn servers_filter_the_hits() {
    let docs = vec![
        doc("read_file", "alpha", "Reads a file."),
        doc("read_file", "beta", "Reads a file."),
        Doc {
            name: "read_file".to_string(),
            description: Some("Reads.".into()),
            ..Doc::default()
        },
    ];
    let index = Index::new(docs);
    let only_beta = index.search("read file", 5, Some(&["beta".to_string()][..]));
    assert_eq!(only_beta.iter().map(|h| h.index).collect::<Vec<_>>(), [1]);
    assert!(index.search("read file", 5, Some(&[][..])).is_empty());
    assert_eq!(index.search("read file", 5, None).len(), 3);
}

#[test]
fn limit_caps_the_hits_and_ties_go_by_name_then_position() {
    let docs: Vec<Doc> = ["zeta", "alpha", "mid", "alpha", "beta"]
        .iter()
        .map(|n| doc(n, "s", "Sends a message."))
        .collect();
    let index = Index::new(docs.clone());
    let hits = index.search("send message", 3, None);
    assert_eq!(names(&docs, &hits), ["alpha", "alpha", "beta"]);
    assert_eq!(hits.iter().map(|h| h.index).collect::<Vec<_>>(), [1, 3, 4]);
    assert!(hits.windows(2).all(|w| w[0].score == w[1].score));
    assert_eq!(
        index.search("send message", 3, None),
        hits,
        "the same query, the same hits"
    );
    assert!(index.search("send message", 0, None).is_empty());
    assert_eq!(index.search("send message", 100, None).len(), 5);
}

#[test]
fn empty_stop_word_and_unknown_queries_find_nothing() {
    let docs = vec![doc("read_file", "fs", "Reads a file.")];
    let index = Index::new(docs);
    for query in ["", "   ", "the of a", "zyxwvut", "!!!"] {
        assert!(index.search(query, 5, None).is_empty(), "{query:?}");
    }
    assert!(Index::new(Vec::new()).search("read", 5, None).is_empty());
    assert_eq!(index.len(), 1);
}

#[test]
fn unicode_text_is_tokenised_without_panicking() {
    let docs = vec![
        doc("übersetzen", "de", "Übersetzt Text ins Französische."),
        doc("検索", "ja", "ファイルを検索します 🔍"),
        doc("ǅemal_İstanbul", "tr", "ΣΊΣΥΦΟΣ ﬁle ß"),
    ];
    let index = Index::new(docs.clone());
    assert_eq!(
        names(&docs, &index.search("Übersetzen", 5, None)),
        ["übersetzen"]
    );
    assert_eq!(names(&docs, &index.search("検索", 5, None)), ["検索"]);
    for query in [
        "🔍",
        "İSTANBUL ǅ",
        "σίσυφος",
        "\u{0}\u{feff}",
        "a\u{301}b\u{301}",
    ] {
        index.search(query, 5, None);
    }
}

#[test]
fn quoted_text_paths_and_numbers_are_values() {
    let flags: Vec<(&str, bool)> =
        chunks("Close ticket #12 as 'won't fix' in src/a.rs, “really” now");
    assert_eq!(
        flags,
        [
            ("Close", false),
            ("ticket", false),
            ("#12", true),
            ("as", false),
            ("'won't", true),
            ("fix'", true),
            ("in", false),
            ("src/a.rs,", true),
            ("“really”", true),
            ("now", false)
        ]
    );
}

#[test]
fn the_words_of_a_value_weigh_less_than_the_request_around_it() {
    let docs = vec![
        doc("create_issue", "tracker", "Opens a ticket."),
        doc("close_page", "browser", "Closes the page."),
    ];
    assert_eq!(
        search(&docs, "Open a ticket titled 'close the page'", 5),
        ["create_issue", "close_page"]
    );
    let docs = vec![
        doc("read_file", "fs", "Reads."),
        doc("get_page", "web", "Gets a web page."),
    ];
    assert_eq!(
        search(&docs, "show me notes.txt", 1),
        ["read_file"],
        "a file name means a file"
    );
}

#[test]
fn a_brand_written_in_camel_case_matches_whole_and_names_its_server() {
    let docs = vec![
        doc("git_branch", "git", "List Git branches."),
        doc(
            "list_branches",
            "github",
            "List branches of a GitHub repository.",
        ),
    ];
    assert_eq!(
        search(&docs, "branches on GitHub", 5),
        ["list_branches", "git_branch"]
    );
    assert_eq!(
        search(&docs, "branches in git", 5),
        ["git_branch", "list_branches"]
    );
}
