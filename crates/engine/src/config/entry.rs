//! One server entry, in any client's dialect, to a [`ServerEntry`].
//!
//! A wrong type fails only this entry, with a reason naming the field path. Reasons quote keys
//! and `type` names but never values of env, headers or args, which may hold secrets.

use super::error::Invalid;
use serde_json::{Map, Value};

use super::quote::{QUOTE_CHARS, key_path, quote, shorten};
use super::spec::{
    DISCOVER_REVISION, HANDSHAKE_REVISIONS, Kind, Protocol, RemoteTransport, ServerSpec,
};

pub(super) use crate::bounds::DEFAULT_TIMEOUT_MS;
pub(crate) use crate::bounds::MAX_TIMEOUT_MS;

#[derive(Debug, Clone, PartialEq)]
pub struct ServerEntry {
    pub name: String,
    pub(crate) enabled: bool,
    pub(crate) timeout_ms: u64,
    /// Per-server filter of original tool names, in config order.
    pub(crate) tools: Option<Vec<(String, bool)>>,
    /// The `protocol` field as given; `None` leaves the era to the transport's default.
    pub(crate) protocol: Option<Protocol>,
    /// The `auth` object: a pre-registered OAuth client, scopes, the redirect port.
    pub(crate) auth: Option<super::auth::OAuthSettings>,
    /// `Err(why)` when a known field has the wrong type; its words name the field path,
    /// e.g. `mcpServers.github.command must be a string or an array of strings`.
    pub spec: Result<ServerSpec, Invalid>,
}

/// How much of our own reason a round-tripped `{type: "invalid", error}` entry keeps.
const REASON_CHARS: usize = 1000;

/// Keys that carry a URL, in the order they are looked for (Claude/Cursor/VS Code, Windsurf,
/// Gemini's streamable-HTTP-only key).
const URL_KEYS: [&str; 3] = ["url", "serverUrl", "httpUrl"];

type Pairs = Vec<(String, String)>;

pub(super) fn normalise(name: &str, obj: &Map<String, Value>, path: &str) -> ServerEntry {
    let enabled = enabled(obj, path);
    let timeout = timeout(obj, path);
    let tools = tools(obj, path);
    let spec = spec(obj, path);
    let protocol = protocol(obj, path, spec.as_ref().ok());
    let auth = super::auth::parse(obj, path);
    let spec = spec.and_then(|spec| {
        // A bad command/url/type is the headline; other field errors follow in reading order.
        enabled
            .as_ref()
            .err()
            .or(timeout.as_ref().err())
            .or(tools.as_ref().err())
            .or(protocol.as_ref().err())
            .or(auth.as_ref().err())
            .map_or(Ok(spec), |e| Err(e.clone()))
    });
    ServerEntry {
        name: name.to_string(),
        enabled: enabled.unwrap_or(true),
        timeout_ms: timeout.unwrap_or(DEFAULT_TIMEOUT_MS),
        tools: tools.unwrap_or(None),
        protocol: protocol.unwrap_or(None),
        auth: auth.unwrap_or(None),
        spec,
    }
}

/// JSON `null` reads as "not given" for every optional field.
fn get<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    obj.get(key).filter(|v| !v.is_null())
}

fn enabled(obj: &Map<String, Value>, path: &str) -> Result<bool, Invalid> {
    let flag = |key: &str, absent: bool| match get(obj, key) {
        None => Ok(absent),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(Invalid(format!("{}.{key} must be true or false", path))),
    };
    Ok(flag("enabled", true)? && !flag("disabled", false)?)
}

fn timeout(obj: &Map<String, Value>, path: &str) -> Result<u64, Invalid> {
    let bad = || Invalid(format!("{path}.timeout must be a number of milliseconds"));
    match get(obj, "timeout") {
        None => Ok(DEFAULT_TIMEOUT_MS),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(ms) if ms > MAX_TIMEOUT_MS as f64 => Err(Invalid(format!(
                "{path}.timeout must be at most {MAX_TIMEOUT_MS} milliseconds (about 24.8 days)"
            ))),
            Some(ms) if ms.is_finite() && ms >= 0.0 => Ok(ms.ceil() as u64),
            _ => Err(bad()),
        },
        Some(_) => Err(bad()),
    }
}

fn tools(obj: &Map<String, Value>, path: &str) -> Result<Option<Vec<(String, bool)>>, Invalid> {
    let Some(value) = get(obj, "tools") else {
        return Ok(None);
    };
    let Value::Object(map) = value else {
        return Err(Invalid(format!(
            "{path}.tools must be an object of tool names to true or false"
        )));
    };
    let field = format!("{path}.tools");
    map.iter()
        .map(|(tool, on)| match on {
            Value::Bool(b) => Ok((tool.clone(), *b)),
            _ => Err(Invalid(format!(
                "{} must be true or false",
                key_path(&field, tool)
            ))),
        })
        .collect::<Result<_, _>>()
        .map(Some)
}

/// `protocol`: `"auto"`, `"2026-07-28"`, or a revision whose handshake we can offer. Legacy SSE
/// has only the handshake, so pinning the discover era on it is a mistake worth naming.
fn protocol(
    obj: &Map<String, Value>,
    path: &str,
    spec: Option<&ServerSpec>,
) -> Result<Option<Protocol>, Invalid> {
    let field = format!("{path}.protocol");
    let Some(value) = get(obj, "protocol") else {
        return Ok(None);
    };
    let Value::String(text) = value else {
        return Err(Invalid(format!("{field} must be a string")));
    };
    let protocol = Protocol::parse(text).ok_or_else(|| {
        format!(
            "{field} {} is not supported (expected auto, {DISCOVER_REVISION}, {})",
            quote(text, QUOTE_CHARS),
            HANDSHAKE_REVISIONS.join(", ")
        )
    })?;
    let sse = matches!(
        spec,
        Some(ServerSpec::Remote {
            transport: RemoteTransport::Sse,
            ..
        })
    );
    if sse && protocol == Protocol::Discover {
        return Err(Invalid(format!(
            "{field} {DISCOVER_REVISION} needs streamable HTTP or stdio; legacy SSE has only the \
             initialize handshake"
        )));
    }
    Ok(Some(protocol))
}

fn spec(obj: &Map<String, Value>, path: &str) -> Result<ServerSpec, Invalid> {
    if get(obj, "type").and_then(Value::as_str) == Some("invalid") {
        // Our own normalised output for a broken entry: keep its reason on a round trip.
        return Err(Invalid(match get(obj, "error") {
            Some(Value::String(reason)) => shorten(reason, REASON_CHARS),
            _ => format!("{path} is marked invalid"),
        }));
    }
    let declared = kind(get(obj, "type"), &format!("{path}.type"))?;
    // `transport` is our normalised key; Claude Desktop samples also nest it as {type: ...}.
    let transport = match get(obj, "transport") {
        Some(Value::Object(t)) => kind(get(t, "type"), &format!("{path}.transport.type"))?,
        other => kind(other, &format!("{path}.transport"))?,
    };
    let kind = match (declared, transport) {
        (Some(Kind::Remote(RemoteTransport::Auto)), Some(Kind::Remote(t))) => Kind::Remote(t),
        (Some(k), _) | (None, Some(k)) => k,
        (None, None) if URL_KEYS.iter().any(|k| get(obj, k).is_some()) => {
            Kind::Remote(RemoteTransport::Auto)
        }
        (None, None) if get(obj, "command").is_some() => Kind::Local,
        (None, None) => {
            return Err(Invalid(format!(
                "{path} needs a command (local server) or a url (remote server)"
            )));
        }
    };
    match kind {
        Kind::Local => local(obj, path),
        Kind::Remote(transport) => remote(obj, path, transport),
    }
}

fn kind(value: Option<&Value>, field: &str) -> Result<Option<Kind>, Invalid> {
    match value {
        None => Ok(None),
        Some(Value::String(s)) => Kind::parse(s).map(Some).ok_or_else(|| {
            Invalid(format!(
                "{field} {} is not supported (expected local, stdio, remote, http, \
                 streamable-http or sse)",
                quote(s, QUOTE_CHARS)
            ))
        }),
        Some(_) => Err(Invalid(format!("{field} must be a string"))),
    }
}

fn local(obj: &Map<String, Value>, path: &str) -> Result<ServerSpec, Invalid> {
    let field = format!("{path}.command");
    let mut environment = Pairs::new();
    let mut command = match get(obj, "command") {
        None => return Err(Invalid(format!("{field} is required for a local server"))),
        Some(Value::String(program)) => vec![program.clone()],
        Some(Value::Array(items)) => strings(items, &field)?,
        // Zed: {path, args, env}; its env ranks below the entry's own env/environment.
        Some(Value::Object(zed)) => {
            let Some(Value::String(program)) = get(zed, "path") else {
                return Err(Invalid(format!("{field}.path must be a string")));
            };
            let mut command = vec![program.clone()];
            command.extend(args(zed, &field)?);
            merge(
                &mut environment,
                string_map(get(zed, "env"), &format!("{field}.env"))?,
            );
            command
        }
        Some(_) => {
            return Err(Invalid(format!(
                "{field} must be a string or an array of strings"
            )));
        }
    };
    if command.first().is_none_or(|program| program.is_empty()) {
        return Err(Invalid(format!("{field} must not be empty")));
    }
    command.extend(args(obj, path)?);
    merge(
        &mut environment,
        string_map(get(obj, "env"), &format!("{path}.env"))?,
    );
    let own = string_map(get(obj, "environment"), &format!("{path}.environment"))?;
    merge(&mut environment, own);
    let cwd = match get(obj, "cwd") {
        None => None,
        Some(Value::String(dir)) => Some(dir.clone()).filter(|d| !d.is_empty()),
        Some(_) => return Err(Invalid(format!("{path}.cwd must be a string"))),
    };
    Ok(ServerSpec::Local {
        command,
        environment,
        cwd,
    })
}

fn remote(
    obj: &Map<String, Value>,
    path: &str,
    transport: RemoteTransport,
) -> Result<ServerSpec, Invalid> {
    let Some((key, value)) = URL_KEYS.iter().find_map(|k| get(obj, k).map(|v| (*k, v))) else {
        return Err(Invalid(format!(
            "{path}.url is required for a remote server"
        )));
    };
    let url = match value {
        Value::String(url) if !url.is_empty() => url.clone(),
        _ => return Err(Invalid(format!("{path}.{key} must be a non-empty string"))),
    };
    let transport = match (key, transport) {
        // Gemini CLI: `httpUrl` is streamable HTTP; its plain `url` stays auto-detected.
        ("httpUrl", RemoteTransport::Auto) => RemoteTransport::StreamableHttp,
        _ => transport,
    };
    let headers = string_map(get(obj, "headers"), &format!("{path}.headers"))?;
    Ok(ServerSpec::Remote {
        url,
        transport,
        headers,
    })
}

fn args(obj: &Map<String, Value>, path: &str) -> Result<Vec<String>, Invalid> {
    let field = format!("{path}.args");
    match get(obj, "args") {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => strings(items, &field),
        Some(_) => Err(Invalid(format!("{field} must be an array of strings"))),
    }
}

/// Array elements; numbers and booleans are written as text, as a shell would pass them.
fn strings(items: &[Value], field: &str) -> Result<Vec<String>, Invalid> {
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            scalar(item).ok_or_else(|| Invalid(format!("{field}[{i}] must be a string")))
        })
        .collect()
}

/// `env`/`environment`/`headers`: an object whose values are text (numbers and booleans allowed).
fn string_map(value: Option<&Value>, field: &str) -> Result<Pairs, Invalid> {
    match value {
        None => Ok(Pairs::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| {
                scalar(v)
                    .map(|v| (k.clone(), v))
                    .ok_or_else(|| Invalid(format!("{} must be a string", key_path(field, k))))
            })
            .collect(),
        Some(_) => Err(Invalid(format!("{field} must be an object of strings"))),
    }
}

fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Later pairs win per key, keeping the position where the key first appeared. Indexed, so an
/// env of 100 000 keys costs milliseconds, not minutes.
fn merge(into: &mut Pairs, later: Pairs) {
    let mut position: std::collections::HashMap<String, usize> = into
        .iter()
        .enumerate()
        .map(|(i, (k, _))| (k.clone(), i))
        .collect();
    for (key, value) in later {
        match position.get(&key) {
            Some(&i) => into[i].1 = value,
            None => {
                position.insert(key.clone(), into.len());
                into.push((key, value));
            }
        }
    }
}
