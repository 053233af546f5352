use serde_json::{Value, json};

use super::*;

fn load_value(v: Value) -> Config {
    load(ConfigInput::Value(v)).unwrap()
}

fn one(v: Value) -> ServerEntry {
    let mut config = load_value(json!({ "mcpServers": { "s": v } }));
    assert_eq!(config.servers.len(), 1);
    config.servers.remove(0)
}

fn reason(v: Value) -> String {
    one(v).spec.unwrap_err()
}

fn local(cmd: &[&str], env: &[(&str, &str)], cwd: Option<&str>) -> ServerSpec {
    ServerSpec::Local {
        command: cmd.iter().map(|s| s.to_string()).collect(),
        environment: env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        cwd: cwd.map(str::to_string),
    }
}

fn remote(url: &str, transport: RemoteTransport, headers: &[(&str, &str)]) -> ServerSpec {
    ServerSpec::Remote {
        url: url.into(),
        transport,
        headers: headers.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
    }
}

use RemoteTransport::{Auto, Sse, StreamableHttp};

#[test]
fn local_dialects() {
    let cases = [
        // opencode: command array + environment
        (json!({"type": "local", "command": ["npx", "-y", "x"], "environment": {"A": "1"}}),
         local(&["npx", "-y", "x"], &[("A", "1")], None)),
        // Claude / Cursor / VS Code: string + args + env + cwd
        (json!({"command": "npx", "args": ["-y", "x"], "env": {"A": "1"}, "cwd": "/w"}),
         local(&["npx", "-y", "x"], &[("A", "1")], Some("/w"))),
        (json!({"type": "stdio", "command": "node"}), local(&["node"], &[], None)),
        // Zed: command object
        (json!({"command": {"path": "zed-srv", "args": ["--x"], "env": {"Z": "z", "A": "zed"}},
                "env": {"A": "env"}}),
         local(&["zed-srv", "--x"], &[("Z", "z"), ("A", "env")], None)),
        // env and environment merge, environment wins per key, first position kept
        (json!({"command": "c", "env": {"A": "env", "B": "b"}, "environment": {"A": "envt", "C": "c"}}),
         local(&["c"], &[("A", "envt"), ("B", "b"), ("C", "c")], None)),
        // array command plus args, scalar args/env values stringified, empty cwd dropped
        (json!({"command": ["py"], "args": ["--port", 8080, true], "env": {"N": 1.5, "F": false}, "cwd": ""}),
         local(&["py", "--port", "8080", "true"], &[("N", "1.5"), ("F", "false")], None)),
        // null means "not given"
        (json!({"command": "c", "args": null, "env": null, "timeout": null, "tools": null}),
         local(&["c"], &[], None)),
    ];
    for (input, expected) in cases {
        assert_eq!(one(input.clone()).spec, Ok(expected), "{input}");
    }
}

#[test]
fn remote_dialects() {
    let cases = [
        (json!({"url": "https://h/mcp"}), remote("https://h/mcp", Auto, &[])),
        (json!({"type": "remote", "url": "u", "headers": {"Authorization": "Bearer ${T}"}}),
         remote("u", Auto, &[("Authorization", "Bearer ${T}")])),
        (json!({"type": "http", "url": "u"}), remote("u", StreamableHttp, &[])),
        (json!({"type": "streamable-http", "url": "u"}), remote("u", StreamableHttp, &[])),
        (json!({"type": "streamableHttp", "url": "u"}), remote("u", StreamableHttp, &[])),
        (json!({"type": "sse", "url": "u"}), remote("u", Sse, &[])),
        (json!({"serverUrl": "w"}), remote("w", Auto, &[])),
        (json!({"httpUrl": "g"}), remote("g", StreamableHttp, &[])),
        (json!({"type": "remote", "url": "u", "transport": "sse"}), remote("u", Sse, &[])),
        (json!({"url": "u", "transport": "streamable-http"}), remote("u", StreamableHttp, &[])),
        (json!({"url": "u", "transport": {"type": "http"}}), remote("u", StreamableHttp, &[])),
        // type is more specific than transport; URL wins over command when type is absent
        (json!({"type": "sse", "url": "u", "transport": "http"}), remote("u", Sse, &[])),
        (json!({"url": "u", "command": "ignored"}), remote("u", Auto, &[])),
        (json!({"url": "u", "headers": {"X-Retries": 3}}), remote("u", Auto, &[("X-Retries", "3")])),
    ];
    for (input, expected) in cases {
        assert_eq!(one(input.clone()).spec, Ok(expected), "{input}");
    }
}

#[test]
fn enabled_timeout_and_tools() {
    let s = one(json!({"command": "c"}));
    assert_eq!((s.enabled, s.timeout_ms, s.tools), (true, 30_000, None));
    assert!(!one(json!({"command": "c", "enabled": false})).enabled);
    assert!(!one(json!({"command": "c", "disabled": true})).enabled);
    assert!(one(json!({"command": "c", "disabled": false})).enabled);
    assert!(!one(json!({"command": "c", "enabled": true, "disabled": true})).enabled);
    assert_eq!(one(json!({"command": "c", "timeout": 500})).timeout_ms, 500);
    assert_eq!(one(json!({"command": "c", "timeout": 1.2})).timeout_ms, 2);
    let s = one(json!({"command": "c", "tools": {"b": true, "a": false}}));
    assert_eq!(s.tools, Some(vec![("b".into(), true), ("a".into(), false)]));
    assert!(s.spec.is_ok());
}

#[test]
fn wrong_types_fail_only_that_server_with_field_paths() {
    let cases = [
        (json!({"command": 42}), "mcpServers.s.command must be a string or an array of strings"),
        (json!({"command": []}), "mcpServers.s.command must not be empty"),
        (json!({"command": ""}), "mcpServers.s.command must not be empty"),
        (json!({"command": ["", "x"]}), "mcpServers.s.command must not be empty"),
        (json!({"command": ["a", {}]}), "mcpServers.s.command[1] must be a string"),
        (json!({"command": {"args": []}}), "mcpServers.s.command.path must be a string"),
        (json!({"command": "c", "args": "-y"}), "mcpServers.s.args must be an array of strings"),
        (json!({"command": "c", "args": [null]}), "mcpServers.s.args[0] must be a string"),
        (json!({"command": "c", "env": ["A=1"]}), "mcpServers.s.env must be an object of strings"),
        (json!({"command": "c", "env": {"TOKEN": {"v": "secret"}}}), "mcpServers.s.env.TOKEN must be a string"),
        (json!({"command": "c", "environment": {"A B": []}}), "mcpServers.s.environment[\"A B\"] must be a string"),
        (json!({"command": "c", "cwd": 1}), "mcpServers.s.cwd must be a string"),
        (json!({"type": "local", "url": "u"}), "mcpServers.s.command is required for a local server"),
        (json!({"type": "remote", "command": "c"}), "mcpServers.s.url is required for a remote server"),
        (json!({"url": ""}), "mcpServers.s.url must be a non-empty string"),
        (json!({"serverUrl": 5}), "mcpServers.s.serverUrl must be a non-empty string"),
        (json!({"url": "u", "headers": {"Authorization": ["secret"]}}), "mcpServers.s.headers.Authorization must be a string"),
        (json!({"url": "u", "headers": "Bearer x"}), "mcpServers.s.headers must be an object of strings"),
        (json!({"type": "ws", "url": "u"}), "mcpServers.s.type \"ws\" is not supported (expected local, stdio, remote, http, streamable-http or sse)"),
        (json!({"type": 1, "url": "u"}), "mcpServers.s.type must be a string"),
        (json!({"url": "u", "transport": {"type": 2}}), "mcpServers.s.transport.type must be a string"),
        (json!({"description": "nothing runnable"}), "mcpServers.s needs a command (local server) or a url (remote server)"),
        (json!({"command": "c", "timeout": "60s"}), "mcpServers.s.timeout must be a number of milliseconds"),
        (json!({"command": "c", "timeout": -1}), "mcpServers.s.timeout must be a number of milliseconds"),
        (json!({"command": "c", "enabled": "no"}), "mcpServers.s.enabled must be true or false"),
        (json!({"command": "c", "disabled": 1}), "mcpServers.s.disabled must be true or false"),
        (json!({"command": "c", "tools": ["a"]}), "mcpServers.s.tools must be an object of tool names to true or false"),
        (json!({"command": "c", "tools": {"a.b": "yes"}}), "mcpServers.s.tools[\"a.b\"] must be true or false"),
    ];
    for (input, expected) in cases {
        assert_eq!(reason(input.clone()), expected, "{input}");
    }
    // The spec error wins over a later field error; a bad timeout keeps the default.
    let s = one(json!({"command": 42, "timeout": "x", "enabled": false}));
    assert_eq!(s.spec.unwrap_err(), "mcpServers.s.command must be a string or an array of strings");
    assert_eq!((s.enabled, s.timeout_ms), (false, 30_000));
    // Only the broken server fails.
    let c = load_value(json!({"servers": {"bad": {"command": 42}, "good": {"command": "x"}}}));
    assert_eq!(c.servers[0].spec, Err("servers.bad.command must be a string or an array of strings".into()));
    assert!(c.servers[1].spec.is_ok());
}

#[test]
fn unknown_keys_are_ignored() {
    let s = one(json!({
        "command": "c", "autoApprove": ["a"], "alwaysAllow": ["b"], "disabledTools": ["c"],
        "description": "d", "envFile": "${workspaceFolder}/.env", "oauth": false, "trust": true,
    }));
    assert_eq!(s.spec, Ok(local(&["c"], &[], None)));
    assert_eq!(s.tools, None);
}

#[test]
fn wrappers_in_priority_order_and_field_paths() {
    let srv = json!({"command": 1});
    let cases = [
        (json!({"mcpServers": {"x": srv}, "servers": {"y": {}}}), "x", "mcpServers.x.command"),
        (json!({"servers": {"x": srv}, "mcp": {"y": {}}}), "x", "servers.x.command"),
        (json!({"mcp": {"x": srv}, "context_servers": {"y": {}}}), "x", "mcp.x.command"),
        (json!({"context_servers": {"x": srv}}), "x", "context_servers.x.command"),
        (json!({"x": srv}), "x", "x.command"),
        (json!({"Github PR": srv}), "Github PR", "[\"Github PR\"].command"),
        (json!({"mcpServers": {"github.com/a/b": srv}}), "github.com/a/b", "mcpServers[\"github.com/a/b\"].command"),
    ];
    for (input, name, path) in cases {
        let c = load_value(input.clone());
        assert_eq!(c.servers.len(), 1, "{input}");
        assert_eq!(c.servers[0].name, name);
        let why = c.servers[0].spec.clone().unwrap_err();
        assert_eq!(why, format!("{path} must be a string or an array of strings"));
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
    assert_eq!(c.warnings, [
        "toolnexus: skipped MCP server \"note\" (note): expected an object, got a string",
        "toolnexus: skipped MCP server \"list\" (list): expected an object, got an array",
    ]);
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
    assert_eq!(names, ["mcp", "servers", "agents", "other"]);
}

#[test]
fn config_order_is_kept() {
    let names = ["zeta", "alpha", "mid", "Beta", "0"];
    let text = format!(
        "{{\"mcpServers\": {{{}}}}}",
        names.map(|n| format!("\"{n}\": {{\"command\": \"c\"}}")).join(",")
    );
    let c = load(ConfigInput::Text(text)).unwrap();
    let got: Vec<_> = c.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(got, names);
}

#[test]
fn non_object_entries_are_skipped_with_a_warning() {
    let c = load_value(json!({"mcpServers": {"a": "npx x", "b": {"command": "c"}, "c": null}}));
    assert_eq!(c.servers.len(), 1);
    assert_eq!(c.warnings, [
        "toolnexus: skipped MCP server \"a\" (mcpServers.a): expected an object, got a string",
        "toolnexus: skipped MCP server \"c\" (mcpServers.c): expected an object, got null",
    ]);
}

#[test]
fn no_server_map_is_empty_not_an_error() {
    for v in [json!({}), json!({"mcpServers": {}}), json!({"$schema": "s"})] {
        let c = load_value(v);
        assert!(c.servers.is_empty() && c.warnings.is_empty());
    }
}

#[test]
fn wrong_document_shapes_are_type_errors() {
    let cases = [
        (ConfigInput::Value(json!([1])), "toolnexus: MCP config must be an object, got an array"),
        (ConfigInput::Value(json!(3)), "toolnexus: MCP config must be an object, got a number"),
        (ConfigInput::Text("{} ".into()), ""),
        (ConfigInput::Text("[]".into()), "toolnexus: MCP config <inline JSON> must be an object, got an array"),
        (ConfigInput::Value(json!({"mcpServers": []})),
         "toolnexus: MCP config key \"mcpServers\" must be an object of servers, got an array"),
        (ConfigInput::Value(json!({"servers": null})),
         "toolnexus: MCP config key \"servers\" must be an object of servers, got null"),
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
    assert_eq!(c.servers[1].spec, Ok(local(&["node", "--x=/*keep*/"], &[], None)));
}

#[test]
fn syntax_errors_name_the_source_and_line_column() {
    let e = load(ConfigInput::Text("{\n  \"mcpServers\": {\n    \"a\": {} \"b\": {}\n  }\n}".into()))
        .unwrap_err();
    assert_eq!(e.kind, ConfigErrorKind::Syntax);
    assert_eq!(e.message, "toolnexus: invalid MCP config <inline JSON>:3:15: expected `,` or `}`");

    let dir = std::env::temp_dir().join(format!("toolnexus-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("mcp.json");
    std::fs::write(&file, "{\n  // comment\n  \"mcpServers\": { \"a\": { \"command\": 'x' } }\n}\n").unwrap();
    let e = load(ConfigInput::Path(file.clone())).unwrap_err();
    assert_eq!(e.kind, ConfigErrorKind::Syntax);
    assert_eq!(e.message, format!("toolnexus: invalid MCP config {}:3:34: expected value", file.display()));

    std::fs::write(&file, "{\"mcpServers\": {\"a\": {\"command\": \"x\",},},}").unwrap();
    assert_eq!(load(ConfigInput::Path(file.clone())).unwrap().servers.len(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn missing_file_is_an_io_error_with_an_absolute_path() {
    let e = load(input_from_string("no/such/mcp.json")).unwrap_err();
    assert_eq!(e.kind, ConfigErrorKind::Io);
    let abs = std::env::current_dir().unwrap().join("no/such/mcp.json");
    assert_eq!(
        e.message,
        format!("toolnexus: cannot read MCP config {}: No such file or directory (os error 2)", abs.display())
    );
}

#[test]
fn string_input_is_text_or_path() {
    assert!(matches!(input_from_string("  \n{\"a\":1}"), ConfigInput::Text(_)));
    assert!(matches!(input_from_string("\u{FEFF}{}"), ConfigInput::Text(_)));
    assert!(matches!(input_from_string("./mcp.json"), ConfigInput::Path(p) if p == std::path::Path::new("./mcp.json")));
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
    assert_eq!(out, json!({
        "loc": {"type": "local", "command": ["npx", "-y", "x"], "environment": {"T": "${TOKEN}"},
                "cwd": "/w", "enabled": true, "timeout": 30000, "tools": {"a": true}},
        "rem": {"type": "remote", "url": "https://h/sse", "transport": "sse", "headers": {"H": "v"},
                "enabled": false, "timeout": 5},
        "bad": {"type": "invalid", "error": "mcpServers.bad.command must be a string or an array of strings",
                "enabled": false, "timeout": 30000},
        "mcp": {"type": "remote", "url": "u", "transport": "auto", "headers": {}, "enabled": true,
                "timeout": 30000},
    }));
    let keys: Vec<_> = out.as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys, ["loc", "rem", "bad", "mcp"]);
    let again = load_value(out.clone());
    assert_eq!(again.servers, c.servers);
    assert_eq!(normalised_json(&again), out);
}
