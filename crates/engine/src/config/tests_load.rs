//! The document as a whole: wrappers, order, JSONC, errors, and the normalised round trip.

use serde_json::json;

use super::tests::{load_value, local, remote};
use super::*;
use RemoteTransport::Auto;

#[test]
fn wrappers_in_priority_order_and_field_paths() {
    let srv = json!({"command": 1});
    let cases = [
        (
            json!({"mcpServers": {"x": srv}, "servers": {"y": {}}}),
            "x",
            "mcpServers.x.command",
        ),
        (
            json!({"servers": {"x": srv}, "mcp": {"y": {}}}),
            "x",
            "servers.x.command",
        ),
        (
            json!({"mcp": {"x": srv}, "context_servers": {"y": {}}}),
            "x",
            "mcp.x.command",
        ),
        (
            json!({"context_servers": {"x": srv}}),
            "x",
            "context_servers.x.command",
        ),
        (json!({"x": srv}), "x", "x.command"),
        (
            json!({"Github PR": srv}),
            "Github PR",
            "[\"Github PR\"].command",
        ),
        (
            json!({"mcpServers": {"github.com/a/b": srv}}),
            "github.com/a/b",
            "mcpServers[\"github.com/a/b\"].command",
        ),
    ];
    for (input, name, path) in cases {
        let c = load_value(input.clone());
        assert_eq!(c.servers.len(), 1, "{input}");
        assert_eq!(c.servers[0].name, name);
        let why = c.servers[0].spec.clone().unwrap_err();
        assert_eq!(
            why,
            format!("{path} must be a string or an array of strings")
        );
    }
}

#[test]
fn bare_map_skips_reserved_and_metadata_keys() {
    let c = load_value(json!({
        "$schema": "https://x", "builtins": false, "agents": {"coder": {"model": "m"}},
        "a2a": {"peer": {}}, "mcpServer": {"name": "me"},
        "srv": {"command": "c"}, "note": "hello", "list": [1],
    }));
    let names: Vec<_> = c.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["srv"]);
    assert_eq!(
        c.warnings,
        [
            "toolnexus: skipped MCP server \"note\" (note): expected an object, got a string",
            "toolnexus: skipped MCP server \"list\" (list): expected an object, got an array",
        ]
    );
}

#[test]
fn servers_named_like_wrappers_stay_servers() {
    let c = load_value(json!({
        "mcp": {"type": "local", "command": ["a"]},
        "servers": {"url": "u"},
        "agents": {"command": "b"},
        "other": {"command": "c"},
    }));
    let names: Vec<_> = c.servers.iter().map(|s| s.name.as_str()).collect();
    // Reserved siblings are dropped whatever they hold (docs/listing.md).
    assert_eq!(names, ["mcp", "servers", "other"]);
}

#[test]
fn vscode_settings_nest_servers_under_mcp() {
    let c = load_value(json!({"mcp": {"servers": {"gh": {"command": "gh-mcp"}}}}));
    let names: Vec<_> = c.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["gh"]);
}

#[test]
fn vscode_settings_mcp_with_inputs_beside_servers() {
    // VS Code's settings.json: `inputs` next to `servers` under "mcp".
    let c = load_value(json!({
        "editor.fontSize": 12,
        "mcp": {
            "inputs": [{"type": "promptString", "id": "key"}],
            "servers": {"gh": {"type": "stdio", "command": "gh-mcp"}, "r": {"url": "u"}},
        },
    }));
    let names: Vec<_> = c.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["gh", "r"]);
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    // opencode servers, one of them named "servers": an entry, not VS Code's map.
    let c = load_value(json!({
        "mcp": {
            "servers": {"type": "local", "command": ["a"]},
            "other": {"type": "remote", "url": "u"},
        },
    }));
    let names: Vec<_> = c.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["servers", "other"]);
    // A "servers" whose values are not all objects is not a map of servers.
    let c =
        load_value(json!({"mcp": {"servers": {"enabled": false, "x": {}}, "o": {"command": "c"}}}));
    let names: Vec<_> = c.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["servers", "o"]);
}

#[test]
fn config_order_is_kept() {
    let names = ["zeta", "alpha", "mid", "Beta", "0"];
    let text = format!(
        "{{\"mcpServers\": {{{}}}}}",
        names
            .map(|n| format!("\"{n}\": {{\"command\": \"c\"}}"))
            .join(",")
    );
    let c = load(ConfigInput::Text(text)).unwrap();
    let got: Vec<_> = c.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(got, names);
}

#[test]
fn non_object_entries_are_skipped_with_a_warning() {
    let c = load_value(json!({"mcpServers": {"a": "npx x", "b": {"command": "c"}, "c": null}}));
    assert_eq!(c.servers.len(), 1);
    assert_eq!(
        c.warnings,
        [
            "toolnexus: skipped MCP server \"a\" (mcpServers.a): expected an object, got a string",
            "toolnexus: skipped MCP server \"c\" (mcpServers.c): expected an object, got null",
        ]
    );
}

#[test]
fn no_server_map_is_empty_not_an_error() {
    for v in [
        json!({}),
        json!({"mcpServers": {}}),
        json!({"$schema": "s"}),
    ] {
        let c = load_value(v);
        assert!(c.servers.is_empty() && c.warnings.is_empty());
    }
}

#[test]
fn wrong_document_shapes_are_type_errors() {
    let cases = [
        (
            ConfigInput::Value(json!([1])),
            "toolnexus: MCP config must be an object, got an array",
        ),
        (
            ConfigInput::Value(json!(3)),
            "toolnexus: MCP config must be an object, got a number",
        ),
        (ConfigInput::Text("{} ".into()), ""),
        (
            ConfigInput::Text("[]".into()),
            "toolnexus: MCP config <inline JSON> must be an object, got an array",
        ),
        (
            ConfigInput::Value(json!({"mcpServers": []})),
            "toolnexus: MCP config key \"mcpServers\" must be an object of servers, got an array",
        ),
        // A null server map is no server map: empty, not an error.
        (ConfigInput::Value(json!({"servers": null})), ""),
    ];
    for (input, expected) in cases {
        match load(input) {
            Ok(_) => assert_eq!(expected, ""),
            Err(e) => {
                assert_eq!(e.kind, ConfigErrorKind::Type);
                assert_eq!(e.to_string(), expected);
            }
        }
    }
}

#[test]
fn jsonc_text_with_comments_and_trailing_commas() {
    let text = r#"{
      // VS Code writes these
      "servers": {
        "a": { "url": "http://x//y", /* inline */ },
        "b": { "command": "node", "args": ["--x=/*keep*/",], },
      },
    }"#;
    let c = load(ConfigInput::Text(text.into())).unwrap();
    assert_eq!(c.servers[0].spec, Ok(remote("http://x//y", Auto, &[])));
    assert_eq!(
        c.servers[1].spec,
        Ok(local(&["node", "--x=/*keep*/"], &[], None))
    );
}

#[test]
fn syntax_errors_name_the_source_and_line_column() {
    let e = load(ConfigInput::Text(
        "{\n  \"mcpServers\": {\n    \"a\": {} \"b\": {}\n  }\n}".into(),
    ))
    .unwrap_err();
    assert_eq!(e.kind, ConfigErrorKind::Syntax);
    assert_eq!(
        e.message,
        "toolnexus: invalid MCP config <inline JSON>:3:13: expected `,` or `}`"
    );

    let dir = std::env::temp_dir().join(format!("toolnexus-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("mcp.json");
    std::fs::write(
        &file,
        "{\n  // comment\n  \"mcpServers\": { \"a\": { \"command\": 'x' } }\n}\n",
    )
    .unwrap();
    let e = load(ConfigInput::Path(file.clone())).unwrap_err();
    assert_eq!(e.kind, ConfigErrorKind::Syntax);
    assert_eq!(
        e.message,
        format!(
            "toolnexus: invalid MCP config {}:3:37: expected value",
            file.display()
        )
    );

    std::fs::write(&file, "{\"mcpServers\": {\"a\": {\"command\": \"x\",},},}").unwrap();
    assert_eq!(
        load(ConfigInput::Path(file.clone())).unwrap().servers.len(),
        1
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn missing_file_is_an_io_error_with_an_absolute_path() {
    let e = load(input_from_string("no/such/mcp.json")).unwrap_err();
    assert_eq!(e.kind, ConfigErrorKind::Io);
    let abs = std::env::current_dir().unwrap().join("no/such/mcp.json");
    assert_eq!(
        e.message,
        format!(
            "toolnexus: cannot read MCP config {}: No such file or directory (os error 2)",
            abs.display()
        )
    );
}

#[test]
fn string_input_is_text_or_path() {
    assert!(matches!(
        input_from_string("  \n{\"a\":1}"),
        ConfigInput::Text(_)
    ));
    assert!(matches!(
        input_from_string("\u{FEFF}{}"),
        ConfigInput::Text(_)
    ));
    assert!(
        matches!(input_from_string("./mcp.json"), ConfigInput::Path(p) if p == std::path::Path::new("./mcp.json"))
    );
    assert!(matches!(input_from_string("[1]"), ConfigInput::Path(_)));
    assert!(matches!(input_from_string(""), ConfigInput::Path(_)));
}

#[test]
fn normalised_json_shape_and_round_trip() {
    let c = load_value(json!({"mcpServers": {
        "loc": {"command": "npx", "args": ["-y", "x"], "env": {"T": "${TOKEN}"}, "cwd": "/w",
                "tools": {"a": true}},
        "rem": {"type": "sse", "url": "https://h/sse", "headers": {"H": "v"}, "timeout": 5,
                "disabled": true},
        "bad": {"command": 42, "enabled": false},
        "mcp": {"url": "u"},
    }}));
    let out = normalised_json(&c);
    assert_eq!(
        out,
        json!({
            "loc": {"type": "local", "command": ["npx", "-y", "x"], "environment": {"T": "${TOKEN}"},
                    "cwd": "/w", "enabled": true, "timeout": 30000, "tools": {"a": true}},
            "rem": {"type": "remote", "url": "https://h/sse", "transport": "sse", "headers": {"H": "v"},
                    "enabled": false, "timeout": 5},
            "bad": {"type": "invalid", "error": "mcpServers.bad.command must be a string or an array of strings",
                    "enabled": false, "timeout": 30000},
            "mcp": {"type": "remote", "url": "u", "transport": "auto", "headers": {}, "enabled": true,
                    "timeout": 30000},
        })
    );
    let keys: Vec<_> = out.as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys, ["loc", "rem", "bad", "mcp"]);
    let again = load_value(out.clone());
    assert_eq!(again.servers, c.servers);
    assert_eq!(normalised_json(&again), out);
}

/// Servers named like the reserved siblings (`builtins`, `agents`, `a2a`, `mcpServer`) survive a
/// `parseMcpConfig` round trip; in a hand-written bare map those keys are still not servers.
#[test]
fn reserved_names_survive_a_round_trip() {
    let c = load_value(json!({"mcpServers": {
        "builtins": {"command": "b"},
        "agents": {"url": "https://h/a"},
        "a2a": {"command": 42},
        "mcpServer": {"command": "m", "enabled": false},
    }}));
    assert_eq!(c.servers.len(), 4);
    let out = normalised_json(&c);
    let again = load_value(out.clone());
    assert_eq!(again.servers, c.servers);
    assert_eq!(normalised_json(&again), out);
    let bare = load_value(json!({
        "builtins": {"type": "local", "command": ["b"], "enabled": true},
        "fs": {"command": "fs"},
    }));
    let names: Vec<_> = bare.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["fs"]);
}

/// A settings file read at one key path: only that part, however much else the file holds.
#[test]
fn settings_read_at_a_key_path() {
    let at = |path: &[&str]| path.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let settings = r#"{
        // VS Code's user settings: JSONC, servers under "mcp"."servers"
        "editor.fontSize": 14,
        "workbench": { "colorTheme": "x" },
        "mcp": { "servers": { "gh": { "command": "gh-mcp" }, } },
    }"#;
    let config = load_at(ConfigInput::Text(settings.into()), &at(&["mcp", "servers"])).unwrap();
    let names: Vec<_> = config.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["gh"]);
    // A settings file with no MCP part: read whole, its other objects would pass for servers.
    let plain = r#"{ "editor.fontSize": 14, "workbench": { "colorTheme": "x" } }"#;
    assert_eq!(
        load(ConfigInput::Text(plain.into())).unwrap().servers.len(),
        1
    );
    let none = load_at(ConfigInput::Text(plain.into()), &at(&["mcp", "servers"])).unwrap();
    assert!(none.servers.is_empty() && none.warnings.is_empty());

    // ~/.claude.json: one project's entry; another project's, or none, hold no servers.
    let claude = json!({ "projects": { "/p": { "mcpServers": { "a": { "command": "a" } } } } });
    let project = |p: &str| {
        load_at(
            ConfigInput::Value(claude.clone()),
            &at(&["projects", p, "mcpServers"]),
        )
        .unwrap()
        .servers
        .len()
    };
    assert_eq!((project("/p"), project("/q")), (1, 0));

    let bad = load_at(
        ConfigInput::Value(json!({ "mcp": 5 })),
        &at(&["mcp", "servers"]),
    );
    assert_eq!(
        bad.unwrap_err().message,
        "toolnexus: MCP config key mcp must be an object, got a number"
    );
    let bad = load_at(
        ConfigInput::Value(json!({ "context_servers": [] })),
        &at(&["context_servers"]),
    );
    assert_eq!(
        bad.unwrap_err().message,
        "toolnexus: MCP config key \"context_servers\" must be an object of servers, got an array"
    );
}
