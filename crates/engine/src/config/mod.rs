//! Parsing and normalising `mcp.json` in every common client dialect.
//!
//! Problems with the document as a whole (unreadable, malformed, not an object) are errors;
//! problems with one server are data on that server, so the others still run.

pub(crate) mod auth;
mod entry;
mod error;
mod input;
pub mod jsonc;
pub mod quote;
pub mod sanitize;
mod spec;
pub mod vars;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_bounds;
#[cfg(test)]
mod tests_load;
#[cfg(test)]
mod tests_protocol;
#[cfg(test)]
mod tests_real;

use serde_json::{Map, Value};

pub(crate) use entry::ServerEntry;
pub use error::{ConfigError, ConfigErrorKind, Invalid};
pub use input::{ConfigInput, MAX_CONFIG_BYTES, input_from_string};
pub(crate) use spec::{LATEST_HANDSHAKE, Protocol, RemoteTransport, ServerSpec};

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub servers: Vec<ServerEntry>,
    pub warnings: Vec<String>,
}

/// Checked in this order; the first one holding an object of servers is the server map.
const WRAPPERS: [&str; 4] = ["mcpServers", "servers", "mcp", "context_servers"];
/// Siblings of a bare server map that belong to the rest of an agent config.
const RESERVED: [&str; 4] = ["builtins", "agents", "a2a", "mcpServer"];
const INLINE: &str = "<inline JSON>";

/// Parses (JSONC allowed for files and text), finds the server map and normalises every entry
/// in config order.
pub fn load(input: ConfigInput) -> Result<Config, ConfigError> {
    let (value, source) = read(input)?;
    let Value::Object(top) = value else {
        let of = source.map_or(String::new(), |s| format!(" {s}"));
        return Err(type_error(format!(
            "toolnexus: MCP config{of} must be an object, got {}",
            type_name(&value)
        )));
    };
    from_object(&top)
}

/// Like [`load`], for a file where the servers sit at one key path among other settings (VS
/// Code's `["mcp", "servers"]`, Zed's `["context_servers"]`, a project's entry in
/// `~/.claude.json`): only that part is read, so no other setting is taken for a server. A
/// document without that path holds no servers.
pub fn load_at(input: ConfigInput, at: &[String]) -> Result<Config, ConfigError> {
    let (mut value, source) = read(input)?;
    for (depth, key) in at.iter().enumerate() {
        value = match value {
            Value::Object(mut map) => match map.remove(key) {
                Some(inner) => inner,
                None => Value::Null,
            },
            Value::Null => Value::Null,
            other => {
                let of = source.map_or(String::new(), |s| format!(" in {s}"));
                return Err(type_error(format!(
                    "toolnexus: MCP config key {}{of} must be an object, got {}",
                    at[..depth].join("."),
                    type_name(&other)
                )));
            }
        };
    }
    let prefix = at.join(".");
    match value {
        Value::Null => Ok(servers(std::iter::empty(), &prefix)),
        Value::Object(map) => Ok(servers(map.iter(), &prefix)),
        other => Err(type_error(format!(
            "toolnexus: MCP config key {prefix:?} must be an object of servers, got {}",
            type_name(&other)
        ))),
    }
}

/// The config document as JSON, and where it came from (for messages).
fn read(input: ConfigInput) -> Result<(Value, Option<String>), ConfigError> {
    Ok(match input {
        ConfigInput::Value(value) => (value, None),
        ConfigInput::Text(text) if text.len() as u64 > MAX_CONFIG_BYTES => {
            return Err(ConfigError {
                kind: ConfigErrorKind::Syntax,
                message: format!(
                    "toolnexus: invalid MCP config {INLINE}: {}",
                    input::too_large(text.len() as u64)
                ),
            });
        }
        ConfigInput::Text(text) => (parse(&text, INLINE)?, Some(INLINE.to_string())),
        ConfigInput::Path(path) => {
            let text = input::read_file(&path)?;
            let shown = input::shown_path(&path);
            (parse(&text, &shown)?, Some(shown))
        }
    })
}

fn parse(text: &str, source: &str) -> Result<Value, ConfigError> {
    jsonc::parse(text).map_err(|e| ConfigError {
        kind: ConfigErrorKind::Syntax,
        message: format!(
            "toolnexus: invalid MCP config {source}:{}:{}: {}",
            e.line, e.column, e.message
        ),
    })
}

fn from_object(top: &Map<String, Value>) -> Result<Config, ConfigError> {
    for wrapper in WRAPPERS {
        match top.get(wrapper) {
            None => {}
            // A bare map may hold a server that happens to be called `mcp` or `servers`.
            Some(Value::Object(map)) if looks_like_server(map) => {}
            // VS Code's settings.json nests its servers as `"mcp": { "servers": {...} }`, beside
            // other keys of its own (`inputs`); an opencode server called `servers` is one entry.
            Some(Value::Object(map)) if wrapper == "mcp" && is_vscode_mcp(map) => {
                let inner = map["servers"].as_object().expect("checked above");
                return Ok(servers(inner.iter(), "mcp.servers"));
            }
            // opencode's own `{env:VAR}` is read as `${VAR}` in its entries (`mcp`) only.
            Some(Value::Object(map)) if wrapper == "mcp" => {
                let map: Map<String, Value> = map
                    .iter()
                    .map(|(name, entry)| (name.clone(), vars::opencode_env(entry)))
                    .collect();
                return Ok(servers(map.iter(), wrapper));
            }
            Some(Value::Object(map)) => return Ok(servers(map.iter(), wrapper)),
            Some(Value::Null) => return Ok(servers(std::iter::empty(), wrapper)),
            Some(other) => {
                return Err(type_error(format!(
                    "toolnexus: MCP config key {wrapper:?} must be an object of servers, got {}",
                    type_name(other)
                )));
            }
        }
    }
    // `parseMcpConfig`'s own output loads back whole, servers named like a reserved key too.
    let normalised = top.values().all(is_normalised_entry);
    let bare = top.iter().filter(|(key, value)| match value {
        // docs/listing.md: the reserved siblings belong to the rest of an agent config, whatever they hold.
        _ if !normalised && RESERVED.contains(&key.as_str()) => false,
        Value::Object(_) => true,
        // `$schema` and friends are editor metadata, not misplaced servers.
        _ => !key.starts_with('$'),
    });
    Ok(servers(bare, ""))
}

/// True for an entry as `parseMcpConfig` gives it back ([`normalised_json`]): its `type` is
/// `local`, `remote` or `invalid`, and `enabled` is a boolean.
fn is_normalised_entry(value: &Value) -> bool {
    value.as_object().is_some_and(|entry| {
        entry.get("enabled").is_some_and(Value::is_boolean)
            && matches!(
                entry.get("type").and_then(Value::as_str),
                Some("local" | "remote" | "invalid")
            )
    })
}

/// True for VS Code's `"mcp": { "servers": {...}, "inputs": [...] }`: `servers` is a map of server
/// entries (every value an object), not itself one server entry (an opencode server named
/// `servers` has `type`/`command`/`url`).
fn is_vscode_mcp(map: &Map<String, Value>) -> bool {
    map.get("servers")
        .and_then(Value::as_object)
        .is_some_and(|servers| {
            !looks_like_server(servers) && servers.values().all(Value::is_object)
        })
}

/// True for a server entry (its `command`/`url`/`type` are scalars or arrays), false for a map of
/// servers, whose values are all objects.
fn looks_like_server(map: &Map<String, Value>) -> bool {
    map.get("type").is_some_and(Value::is_string)
        || ["command", "url", "serverUrl", "httpUrl"]
            .iter()
            .any(|k| map.get(*k).is_some_and(|v| !v.is_object() && !v.is_null()))
}

fn servers<'a>(entries: impl Iterator<Item = (&'a String, &'a Value)>, prefix: &str) -> Config {
    let mut config = Config {
        servers: Vec::new(),
        warnings: Vec::new(),
    };
    for (name, value) in entries {
        let path = quote::key_path(prefix, name);
        match value {
            Value::Object(obj) => config.servers.push(entry::normalise(name, obj, &path)),
            other => config.warnings.push(format!(
                "toolnexus: skipped MCP server {} ({path}): expected an object, got {}",
                quote::quote(name, quote::QUOTE_CHARS),
                type_name(other)
            )),
        }
    }
    config
}

fn type_error(message: String) -> ConfigError {
    ConfigError {
        kind: ConfigErrorKind::Type,
        message,
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The normalised server map `parseMcpConfig` returns, in config order, variables unexpanded.
/// `load(ConfigInput::Value(..))` of it yields the same entries (invalid ones stay invalid).
pub fn normalised_json(config: &Config) -> Value {
    let pairs = |pairs: &[(String, String)]| {
        Value::Object(
            pairs
                .iter()
                .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
                .collect(),
        )
    };
    let mut out = Map::new();
    for server in &config.servers {
        let mut o = Map::new();
        match &server.spec {
            Ok(ServerSpec::Local {
                command,
                environment,
                cwd,
            }) => {
                o.insert("type".into(), "local".into());
                o.insert("command".into(), command.clone().into());
                o.insert("environment".into(), pairs(environment));
                if let Some(cwd) = cwd {
                    o.insert("cwd".into(), cwd.as_str().into());
                }
            }
            Ok(ServerSpec::Remote {
                url,
                transport,
                headers,
            }) => {
                o.insert("type".into(), "remote".into());
                o.insert("url".into(), url.as_str().into());
                o.insert("transport".into(), transport.as_str().into());
                o.insert("headers".into(), pairs(headers));
            }
            Err(reason) => {
                o.insert("type".into(), "invalid".into());
                o.insert("error".into(), reason.0.as_str().into());
            }
        }
        o.insert("enabled".into(), server.enabled.into());
        o.insert("timeout".into(), server.timeout_ms.into());
        if let Some(protocol) = server.protocol {
            o.insert("protocol".into(), protocol.as_str().into());
        }
        if let Some(auth) = &server.auth {
            o.insert("auth".into(), auth.to_json());
        }
        if let Some(tools) = &server.tools {
            let tools = tools.iter().map(|(k, on)| (k.clone(), Value::Bool(*on)));
            o.insert("tools".into(), Value::Object(tools.collect()));
        }
        out.insert(server.name.clone(), Value::Object(o));
    }
    Value::Object(out)
}
