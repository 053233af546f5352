//! One entry in every dialect: what it becomes, and why it fails.

use serde_json::{Value, json};

use super::*;

pub(super) fn load_value(v: Value) -> Config {
    load(ConfigInput::Value(v)).unwrap()
}

pub(super) fn one(v: Value) -> ServerEntry {
    let mut config = load_value(json!({ "mcpServers": { "s": v } }));
    assert_eq!(config.servers.len(), 1);
    config.servers.remove(0)
}

pub(super) fn reason(v: Value) -> String {
    one(v).spec.unwrap_err().to_string()
}

pub(super) fn local(cmd: &[&str], env: &[(&str, &str)], cwd: Option<&str>) -> ServerSpec {
    ServerSpec::Local {
        command: cmd.iter().map(|s| s.to_string()).collect(),
        environment: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        cwd: cwd.map(str::to_string),
    }
}

pub(super) fn remote(
    url: &str,
    transport: RemoteTransport,
    headers: &[(&str, &str)],
) -> ServerSpec {
    ServerSpec::Remote {
        url: url.into(),
        transport,
        headers: headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

use RemoteTransport::{Auto, Sse, StreamableHttp};

#[test]
fn local_dialects() {
    let cases = [
        // opencode: command array + environment
        (
            json!({"type": "local", "command": ["npx", "-y", "x"], "environment": {"A": "1"}}),
            local(&["npx", "-y", "x"], &[("A", "1")], None),
        ),
        // Claude / Cursor / VS Code: string + args + env + cwd
        (
            json!({"command": "npx", "args": ["-y", "x"], "env": {"A": "1"}, "cwd": "/w"}),
            local(&["npx", "-y", "x"], &[("A", "1")], Some("/w")),
        ),
        (
            json!({"type": "stdio", "command": "node"}),
            local(&["node"], &[], None),
        ),
        // Zed: command object
        (
            json!({"command": {"path": "zed-srv", "args": ["--x"], "env": {"Z": "z", "A": "zed"}},
                "env": {"A": "env"}}),
            local(&["zed-srv", "--x"], &[("Z", "z"), ("A", "env")], None),
        ),
        // env and environment merge, environment wins per key, first position kept
        (
            json!({"command": "c", "env": {"A": "env", "B": "b"}, "environment": {"A": "envt", "C": "c"}}),
            local(&["c"], &[("A", "envt"), ("B", "b"), ("C", "c")], None),
        ),
        // array command plus args, scalar args/env values stringified, empty cwd dropped
        (
            json!({"command": ["py"], "args": ["--port", 8080, true], "env": {"N": 1.5, "F": false}, "cwd": ""}),
            local(
                &["py", "--port", "8080", "true"],
                &[("N", "1.5"), ("F", "false")],
                None,
            ),
        ),
        // null means "not given"
        (
            json!({"command": "c", "args": null, "env": null, "timeout": null, "tools": null}),
            local(&["c"], &[], None),
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(one(input.clone()).spec, Ok(expected), "{input}");
    }
}

#[test]
fn remote_dialects() {
    let cases = [
        (
            json!({"url": "https://h/mcp"}),
            remote("https://h/mcp", Auto, &[]),
        ),
        (
            json!({"type": "remote", "url": "u", "headers": {"Authorization": "Bearer ${T}"}}),
            remote("u", Auto, &[("Authorization", "Bearer ${T}")]),
        ),
        (
            json!({"type": "http", "url": "u"}),
            remote("u", StreamableHttp, &[]),
        ),
        (
            json!({"type": "streamable-http", "url": "u"}),
            remote("u", StreamableHttp, &[]),
        ),
        (
            json!({"type": "streamableHttp", "url": "u"}),
            remote("u", StreamableHttp, &[]),
        ),
        (json!({"type": "sse", "url": "u"}), remote("u", Sse, &[])),
        (json!({"serverUrl": "w"}), remote("w", Auto, &[])),
        (json!({"httpUrl": "g"}), remote("g", StreamableHttp, &[])),
        (
            json!({"type": "remote", "url": "u", "transport": "sse"}),
            remote("u", Sse, &[]),
        ),
        (
            json!({"url": "u", "transport": "streamable-http"}),
            remote("u", StreamableHttp, &[]),
        ),
        (
            json!({"url": "u", "transport": {"type": "http"}}),
            remote("u", StreamableHttp, &[]),
        ),
        // type is more specific than transport; URL wins over command when type is absent
        (
            json!({"type": "sse", "url": "u", "transport": "http"}),
            remote("u", Sse, &[]),
        ),
        (
            json!({"url": "u", "command": "ignored"}),
            remote("u", Auto, &[]),
        ),
        (
            json!({"url": "u", "headers": {"X-Retries": 3}}),
            remote("u", Auto, &[("X-Retries", "3")]),
        ),
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
        (
            json!({"command": 42}),
            "mcpServers.s.command must be a string or an array of strings",
        ),
        (
            json!({"command": []}),
            "mcpServers.s.command must not be empty",
        ),
        (
            json!({"command": ""}),
            "mcpServers.s.command must not be empty",
        ),
        (
            json!({"command": ["", "x"]}),
            "mcpServers.s.command must not be empty",
        ),
        (
            json!({"command": ["a", {}]}),
            "mcpServers.s.command[1] must be a string",
        ),
        (
            json!({"command": {"args": []}}),
            "mcpServers.s.command.path must be a string",
        ),
        (
            json!({"command": "c", "args": "-y"}),
            "mcpServers.s.args must be an array of strings",
        ),
        (
            json!({"command": "c", "args": [null]}),
            "mcpServers.s.args[0] must be a string",
        ),
        (
            json!({"command": "c", "env": ["A=1"]}),
            "mcpServers.s.env must be an object of strings",
        ),
        (
            json!({"command": "c", "env": {"TOKEN": {"v": "secret"}}}),
            "mcpServers.s.env.TOKEN must be a string",
        ),
        (
            json!({"command": "c", "environment": {"A B": []}}),
            "mcpServers.s.environment[\"A B\"] must be a string",
        ),
        (
            json!({"command": "c", "cwd": 1}),
            "mcpServers.s.cwd must be a string",
        ),
        (
            json!({"type": "local", "url": "u"}),
            "mcpServers.s.command is required for a local server",
        ),
        (
            json!({"type": "remote", "command": "c"}),
            "mcpServers.s.url is required for a remote server",
        ),
        (
            json!({"url": ""}),
            "mcpServers.s.url must be a non-empty string",
        ),
        (
            json!({"serverUrl": 5}),
            "mcpServers.s.serverUrl must be a non-empty string",
        ),
        (
            json!({"url": "u", "headers": {"Authorization": ["secret"]}}),
            "mcpServers.s.headers.Authorization must be a string",
        ),
        (
            json!({"url": "u", "headers": "Bearer x"}),
            "mcpServers.s.headers must be an object of strings",
        ),
        (
            json!({"type": "ws", "url": "u"}),
            "mcpServers.s.type \"ws\" is not supported (expected local, stdio, remote, http, streamable-http or sse)",
        ),
        (
            json!({"type": 1, "url": "u"}),
            "mcpServers.s.type must be a string",
        ),
        (
            json!({"url": "u", "transport": {"type": 2}}),
            "mcpServers.s.transport.type must be a string",
        ),
        (
            json!({"description": "nothing runnable"}),
            "mcpServers.s needs a command (local server) or a url (remote server)",
        ),
        (
            json!({"command": "c", "timeout": "60s"}),
            "mcpServers.s.timeout must be a number of milliseconds",
        ),
        (
            json!({"command": "c", "timeout": -1}),
            "mcpServers.s.timeout must be a number of milliseconds",
        ),
        (
            json!({"command": "c", "enabled": "no"}),
            "mcpServers.s.enabled must be true or false",
        ),
        (
            json!({"command": "c", "disabled": 1}),
            "mcpServers.s.disabled must be true or false",
        ),
        (
            json!({"command": "c", "tools": ["a"]}),
            "mcpServers.s.tools must be an object of tool names to true or false",
        ),
        (
            json!({"command": "c", "tools": {"a.b": "yes"}}),
            "mcpServers.s.tools[\"a.b\"] must be true or false",
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(reason(input.clone()), expected, "{input}");
    }
    // The spec error wins over a later field error; a bad timeout keeps the default.
    let s = one(json!({"command": 42, "timeout": "x", "enabled": false}));
    assert_eq!(
        s.spec.unwrap_err(),
        "mcpServers.s.command must be a string or an array of strings"
    );
    assert_eq!((s.enabled, s.timeout_ms), (false, 30_000));
    // Only the broken server fails.
    let c = load_value(json!({"servers": {"bad": {"command": 42}, "good": {"command": "x"}}}));
    assert_eq!(
        c.servers[0].spec,
        Err(Invalid(
            "servers.bad.command must be a string or an array of strings".into()
        ))
    );
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
