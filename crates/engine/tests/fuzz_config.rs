//! Property-based fuzzing (proptest, stable Rust) of everything that reads a config: JSONC,
//! config loading and normalising, variable expansion, and telling text from a path.
//!
//! `cargo test` runs a short smoke (proptest's 256 cases per property, a few seconds);
//! `scripts/fuzz-long.sh` runs the same properties with many more cases. Inputs are both
//! generated and mutated from the committed seed corpus: the real client configs in
//! `__test__/real-configs/` and `examples/mcp.json`. A failing case is saved by proptest under
//! `crates/engine/tests/fuzz_config.proptest-regressions` and replayed first from then on.

use std::sync::LazyLock;

use proptest::prelude::*;
use serde_json::{Map, Value};
use toolnexus_engine::config::{self, ConfigInput, jsonc, vars};

// ---- generators ----

/// Text that stresses JSONC and variable syntax: comment markers, quotes, escapes, commas,
/// brackets, placeholders, multibyte characters and control characters.
fn tricky_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("//".to_string()),
        Just("/*".to_string()),
        Just("*/".to_string()),
        Just("\"".to_string()),
        Just("\\".to_string()),
        Just(",".to_string()),
        Just("]".to_string()),
        Just("}".to_string()),
        Just("{".to_string()),
        Just("${".to_string()),
        Just(":-".to_string()),
        Just("env:".to_string()),
        Just("\n".to_string()),
        Just("é😀".to_string()),
        Just("\u{FEFF}".to_string()),
        "[a-zA-Z0-9_]{0,6}",
        any::<char>().prop_map(String::from),
    ];
    prop::collection::vec(piece, 0..24).prop_map(|parts| parts.concat())
}

/// Keys a config reader looks at, plus arbitrary ones.
fn config_key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec![
            "mcpServers", "servers", "mcp", "context_servers", "command", "args", "env",
            "environment", "cwd", "url", "serverUrl", "httpUrl", "type", "transport", "headers",
            "timeout", "tools", "enabled", "disabled", "path", "error", "builtins", "agents",
            "a2a", "mcpServer", "$schema", "local", "stdio", "sse", "http", "invalid",
        ])
        .prop_map(str::to_string),
        1 => tricky_text(),
    ]
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| serde_json::Number::from_f64(f)
            .map(Value::Number)),
        prop::sample::select(vec![0.0, -1.0, 1.5, 1e300, 2147483647.0, 2147483648.0, 5e9])
            .prop_map(Value::from),
        config_key().prop_map(Value::String),
        tricky_text().prop_map(Value::String),
    ]
}

/// JSON values shaped like configs (objects with config keys, a few levels deep).
fn json_value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((config_key(), inner), 0..6)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Writes `value` as JSON with comments, blank runs and trailing commas between the tokens.
fn jsonc_text(value: &Value, noise: &mut impl Iterator<Item = u8>) -> String {
    let mut out = String::new();
    write_noisy(value, noise, &mut out);
    out
}

fn gap(noise: &mut impl Iterator<Item = u8>, out: &mut String) {
    out.push_str(match noise.next().unwrap_or(0) % 6 {
        0 => " ",
        1 => "\n\t",
        2 => "// a comment, with } and ] and \"quotes\"\n",
        3 => "/* block ${X} , ] */",
        4 => "/**/",
        _ => "",
    })
}

fn write_noisy(value: &Value, noise: &mut impl Iterator<Item = u8>, out: &mut String) {
    let (open, close, items): (char, char, Vec<(Option<&String>, &Value)>) = match value {
        Value::Array(items) => ('[', ']', items.iter().map(|v| (None, v)).collect()),
        Value::Object(map) => ('{', '}', map.iter().map(|(k, v)| (Some(k), v)).collect()),
        scalar => return out.push_str(&scalar.to_string()),
    };
    out.push(open);
    for (i, (key, item)) in items.iter().enumerate() {
        gap(noise, out);
        if i > 0 {
            out.push(',');
            gap(noise, out);
        }
        if let Some(key) = key {
            out.push_str(&Value::from(key.as_str()).to_string());
            gap(noise, out);
            out.push(':');
            gap(noise, out);
        }
        write_noisy(item, noise, out);
    }
    if !items.is_empty() && noise.next().unwrap_or(0).is_multiple_of(2) {
        out.push(',');
    }
    gap(noise, out);
    out.push(close);
}

/// The committed seed corpus: real configs as clients write them.
static SEEDS: LazyLock<Vec<String>> = LazyLock::new(|| {
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let mut seeds = vec![std::fs::read_to_string(root.join("examples/mcp.json")).unwrap()];
    let mut files: Vec<_> = std::fs::read_dir(root.join("__test__/real-configs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    seeds.extend(files.iter().map(|p| std::fs::read_to_string(p).unwrap()));
    assert!(seeds.len() > 20, "the seed corpus is there");
    seeds
});

#[derive(Debug, Clone)]
enum Edit {
    Insert(usize, String),
    Delete(usize, usize),
    Replace(usize, String),
}

/// A seed with a few random edits at character boundaries.
fn mutated_seed() -> impl Strategy<Value = String> {
    let edit = prop_oneof![
        (any::<usize>(), tricky_text()).prop_map(|(at, s)| Edit::Insert(at, s)),
        (any::<usize>(), 1usize..40).prop_map(|(at, n)| Edit::Delete(at, n)),
        (any::<usize>(), tricky_text()).prop_map(|(at, s)| Edit::Replace(at, s)),
    ];
    (0..SEEDS.len(), prop::collection::vec(edit, 0..6)).prop_map(|(seed, edits)| {
        let mut text: Vec<char> = SEEDS[seed].chars().collect();
        for edit in edits {
            let at = |n: usize| if text.is_empty() { 0 } else { n % text.len() };
            match edit {
                Edit::Insert(n, s) => {
                    let i = at(n);
                    text.splice(i..i, s.chars());
                }
                Edit::Delete(n, len) => {
                    let i = at(n);
                    let end = (i + len).min(text.len());
                    text.drain(i..end);
                }
                Edit::Replace(n, s) => {
                    let i = at(n);
                    let end = (i + s.chars().count()).min(text.len());
                    text.splice(i..end, s.chars());
                }
            }
        }
        text.into_iter().collect()
    })
}

// ---- properties ----

fn assert_loads_without_panic(input: ConfigInput) {
    match config::load(input) {
        Ok(cfg) => {
            // Every entry is usable or has a reason in words, and is normalisable.
            for server in &cfg.servers {
                if let Err(reason) = &server.spec {
                    assert!(!reason.is_empty());
                }
                let mut warnings = Vec::new();
                if let Ok(spec) = &server.spec {
                    spec.expanded_with(&server.name, &|_| None, &mut warnings);
                }
            }
            config::normalised_json(&cfg);
        }
        Err(e) => assert!(e.message.starts_with("toolnexus: "), "{}", e.message),
    }
}

proptest! {
    #[test]
    fn jsonc_of_valid_json_is_serde_json(value in json_value(), pretty in any::<bool>()) {
        let text = if pretty { serde_json::to_string_pretty(&value) } else { serde_json::to_string(&value) }.unwrap();
        let expected: Value = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(jsonc::parse(&text).unwrap(), expected);
    }

    #[test]
    fn jsonc_ignores_comments_blanks_and_trailing_commas(value in json_value(), noise in prop::collection::vec(any::<u8>(), 0..512)) {
        let mut noise = noise.into_iter().cycle();
        let text = jsonc_text(&value, &mut noise);
        let parsed = jsonc::parse(&text);
        prop_assert!(parsed.is_ok(), "{:?} for {}", parsed, text);
        // Compared with serde_json's own reading of the plain text (its float parsing is not
        // an exact round trip, and that is not what is tested here).
        let plain: Value = serde_json::from_str(&serde_json::to_string(&value).unwrap()).unwrap();
        prop_assert_eq!(parsed.unwrap(), plain);
    }

    #[test]
    fn jsonc_never_panics_and_points_inside_the_text(text in prop_oneof![tricky_text(), mutated_seed()]) {
        let lines = text.split('\n').count();
        if let Err(e) = jsonc::parse(&text) {
            prop_assert!(e.line >= 1 && e.line <= lines + 1, "line {} of {}", e.line, lines);
            prop_assert!(e.column >= 1);
        }
        // Blanking keeps every byte where it was, so serde_json's positions stay true.
        if let Ok(plain) = jsonc::strip(&text) {
            prop_assert_eq!(plain.len(), text.len());
            let newlines = |s: &str| s.match_indices('\n').map(|(i, _)| i).collect::<Vec<_>>();
            prop_assert_eq!(newlines(&plain), newlines(&text));
        }
    }

    #[test]
    fn config_text_never_panics(text in prop_oneof![mutated_seed(), tricky_text()]) {
        assert_loads_without_panic(ConfigInput::Text(text));
    }

    #[test]
    fn config_values_never_panic_and_round_trip(value in json_value()) {
        assert_loads_without_panic(ConfigInput::Value(value.clone()));
        if let Ok(cfg) = config::load(ConfigInput::Value(value)) {
            // The normalised map reads back as the same entries (invalid ones stay invalid),
            // except servers named like the reserved keys of an agent config, which a bare map
            // leaves alone by design.
            let reserved = ["builtins", "agents", "a2a", "mcpServer"];
            let kept: Vec<_> = cfg.servers.iter().filter(|s| !reserved.contains(&s.name.as_str())).cloned().collect();
            let out = config::normalised_json(&config::Config { servers: kept.clone(), warnings: vec![] });
            let again = config::load(ConfigInput::Value(out)).unwrap();
            prop_assert_eq!(again.servers, kept);
        }
    }

    #[test]
    fn mutated_real_configs_load_or_fail_in_words(text in mutated_seed()) {
        assert_loads_without_panic(ConfigInput::Text(text));
    }

    #[test]
    fn expansion_without_dollar_is_identity(s in "[^$]{0,64}") {
        let mut missing = Vec::new();
        prop_assert_eq!(vars::expand_with(&s, &|_| Some("VALUE".into()), &mut missing), s);
        prop_assert!(missing.is_empty());
    }

    #[test]
    fn expansion_never_panics_and_never_grows_without_values(s in tricky_text()) {
        let mut missing = Vec::new();
        let out = vars::expand_with(&s, &|_| None, &mut missing);
        // With nothing set, placeholders become their defaults (parts of `s`) or nothing.
        prop_assert!(out.len() <= s.len(), "{:?} -> {:?}", s, out);
        for name in &missing {
            prop_assert!(s.contains(name.as_str()));
        }
        let mut unique = missing.clone();
        unique.sort();
        unique.dedup();
        prop_assert_eq!(unique.len(), missing.len(), "each missing name once");
    }

    #[test]
    fn set_variables_are_substituted(name in "[A-Za-z_][A-Za-z0-9_]{0,12}", value in "[^$]{0,24}", prefix in "[^$]{0,8}", env_form in any::<bool>()) {
        let placeholder = if env_form { format!("${{env:{name}}}") } else { format!("${{{name}}}") };
        let s = format!("{prefix}{placeholder}{prefix}");
        let mut missing = Vec::new();
        let out = vars::expand_with(&s, &|n| (n == name).then(|| value.clone()), &mut missing);
        prop_assert_eq!(out, format!("{prefix}{value}{prefix}"));
        prop_assert!(missing.is_empty());
    }

    #[test]
    fn text_or_path_is_decided_by_the_first_significant_character(s in prop_oneof![tricky_text(), mutated_seed()]) {
        let is_text = matches!(config::input_from_string(&s), ConfigInput::Text(_));
        // Text always parses as JSONC from where the brace is, or fails in words; never panics.
        if is_text {
            assert_loads_without_panic(ConfigInput::Text(s));
        }
    }
}
