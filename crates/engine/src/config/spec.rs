//! The canonical shape of one server, whatever dialect it was written in.

use super::quote::{QUOTE_CHARS, quote, shorten};
use super::vars;

#[derive(Debug, Clone, PartialEq)]
pub enum ServerSpec {
    Local {
        command: Vec<String>,
        environment: Vec<(String, String)>,
        cwd: Option<String>,
    },
    Remote {
        url: String,
        transport: RemoteTransport,
        headers: Vec<(String, String)>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RemoteTransport {
    /// Streamable HTTP first, legacy SSE when that fails on the same URL.
    Auto,
    StreamableHttp,
    Sse,
}

impl RemoteTransport {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RemoteTransport::Auto => "auto",
            RemoteTransport::StreamableHttp => "streamable-http",
            RemoteTransport::Sse => "sse",
        }
    }
}

/// Which MCP era a server is spoken to in (its `protocol` field). Absent, streamable HTTP uses
/// [`Protocol::Auto`] and stdio and legacy SSE the handshake offering [`LATEST_HANDSHAKE`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Protocol {
    /// `server/discover` first; the `initialize` handshake when the server does not know it.
    Auto,
    /// Only the 2026-07-28 era: `server/discover` and per-request metadata, no handshake.
    Discover,
    /// Only the `initialize` handshake, offering this revision (one of [`HANDSHAKE_REVISIONS`]).
    Handshake(&'static str),
}

/// The revision without a handshake that `protocol` may pin.
pub(crate) const DISCOVER_REVISION: &str = "2026-07-28";
/// Revisions whose `initialize` toolnexus can offer, newest first.
pub(crate) const HANDSHAKE_REVISIONS: [&str; 4] =
    ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/// What a handshake offers when nothing else is asked for.
pub(crate) const LATEST_HANDSHAKE: &str = HANDSHAKE_REVISIONS[0];

impl Protocol {
    pub(crate) fn parse(value: &str) -> Option<Protocol> {
        match value {
            "auto" => Some(Protocol::Auto),
            DISCOVER_REVISION => Some(Protocol::Discover),
            _ => HANDSHAKE_REVISIONS
                .iter()
                .find(|r| **r == value)
                .map(|r| Protocol::Handshake(r)),
        }
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Protocol::Auto => "auto",
            Protocol::Discover => DISCOVER_REVISION,
            Protocol::Handshake(revision) => revision,
        }
    }
}

/// What a `type` (or `transport`) value asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Kind {
    Local,
    Remote(RemoteTransport),
}

impl Kind {
    /// Case, `-` and `_` are ignored, so `streamableHttp`, `streamable-http` and `SSE` all work.
    pub(super) fn parse(value: &str) -> Option<Kind> {
        let key: String = value
            .chars()
            .filter(|c| *c != '-' && *c != '_')
            .map(|c| c.to_ascii_lowercase())
            .collect();
        Some(match key.as_str() {
            "local" | "stdio" => Kind::Local,
            "remote" | "auto" => Kind::Remote(RemoteTransport::Auto),
            "http" | "streamablehttp" => Kind::Remote(RemoteTransport::StreamableHttp),
            "sse" => Kind::Remote(RemoteTransport::Sse),
            _ => return None,
        })
    }
}

impl ServerSpec {
    /// A copy with variables expanded from the process environment in every place a secret or
    /// path may live (url, header values, command, environment values, cwd). Each unset variable
    /// adds one warning naming it and `server`; values never appear in warnings.
    pub(crate) fn expanded(&self, server: &str, warnings: &mut Vec<String>) -> ServerSpec {
        self.expand_by(server, warnings, &|s, missing| vars::expand(s, missing))
    }

    /// As [`ServerSpec::expanded`], with variables looked up by `lookup` instead.
    pub fn expanded_with(
        &self,
        server: &str,
        lookup: &dyn Fn(&str) -> Option<String>,
        warnings: &mut Vec<String>,
    ) -> ServerSpec {
        self.expand_by(server, warnings, &|s, missing| {
            vars::expand_with(s, lookup, missing)
        })
    }

    fn expand_by(
        &self,
        server: &str,
        warnings: &mut Vec<String>,
        expand: &dyn Fn(&str, &mut Vec<String>) -> String,
    ) -> ServerSpec {
        let mut missing = Vec::new();
        let mut x = |s: &str| expand(s, &mut missing);
        let spec = match self {
            ServerSpec::Local {
                command,
                environment,
                cwd,
            } => ServerSpec::Local {
                command: command.iter().map(|c| x(c)).collect(),
                environment: environment.iter().map(|(k, v)| (k.clone(), x(v))).collect(),
                cwd: cwd.as_deref().map(&mut x),
            },
            ServerSpec::Remote {
                url,
                transport,
                headers,
            } => ServerSpec::Remote {
                url: x(url),
                transport: *transport,
                headers: headers.iter().map(|(k, v)| (k.clone(), x(v))).collect(),
            },
        };
        for name in missing {
            warnings.push(format!(
                "toolnexus: environment variable {} is not set (server {}); using \"\"",
                shorten(&name, QUOTE_CHARS),
                quote(server, QUOTE_CHARS)
            ));
        }
        spec
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(name: &str) -> Option<String> {
        (name == "TOKEN").then(|| "s3cret".to_string())
    }

    #[test]
    fn kind_spellings() {
        use RemoteTransport::*;
        assert_eq!(Kind::parse("stdio"), Some(Kind::Local));
        assert_eq!(Kind::parse("local"), Some(Kind::Local));
        assert_eq!(Kind::parse("remote"), Some(Kind::Remote(Auto)));
        assert_eq!(Kind::parse("http"), Some(Kind::Remote(StreamableHttp)));
        assert_eq!(
            Kind::parse("streamable-http"),
            Some(Kind::Remote(StreamableHttp))
        );
        assert_eq!(
            Kind::parse("streamableHttp"),
            Some(Kind::Remote(StreamableHttp))
        );
        assert_eq!(
            Kind::parse("streamable_http"),
            Some(Kind::Remote(StreamableHttp))
        );
        assert_eq!(Kind::parse("SSE"), Some(Kind::Remote(Sse)));
        assert_eq!(Kind::parse("websocket"), None);
        assert_eq!(Kind::parse(""), None);
    }

    #[test]
    fn expands_every_field_and_warns_by_name() {
        let local = ServerSpec::Local {
            command: vec!["${BIN:-npx}".into(), "--token=${TOKEN}".into()],
            environment: vec![
                ("A".into(), "${TOKEN}".into()),
                ("B".into(), "${GONE}".into()),
            ],
            cwd: Some("${ROOT}/x".into()),
        };
        let mut warnings = Vec::new();
        let out = local.expanded_with("github", &lookup, &mut warnings);
        assert_eq!(
            out,
            ServerSpec::Local {
                command: vec!["npx".into(), "--token=s3cret".into()],
                environment: vec![("A".into(), "s3cret".into()), ("B".into(), String::new())],
                cwd: Some("/x".into()),
            }
        );
        assert_eq!(
            warnings,
            vec![
                "toolnexus: environment variable GONE is not set (server \"github\"); using \"\"",
                "toolnexus: environment variable ROOT is not set (server \"github\"); using \"\"",
            ]
        );
        assert!(warnings.iter().all(|w| !w.contains("s3cret")));
    }

    #[test]
    fn expands_remote_url_and_header_values_only() {
        let remote = ServerSpec::Remote {
            url: "https://h/${env:TOKEN}/${input:id}".into(),
            transport: RemoteTransport::Sse,
            headers: vec![("X-${TOKEN}".into(), "Bearer ${TOKEN}".into())],
        };
        let mut warnings = Vec::new();
        let out = remote.expanded_with("r", &lookup, &mut warnings);
        assert_eq!(
            out,
            ServerSpec::Remote {
                url: "https://h/s3cret/${input:id}".into(),
                transport: RemoteTransport::Sse,
                headers: vec![("X-${TOKEN}".into(), "Bearer s3cret".into())],
            }
        );
        assert!(warnings.is_empty());
    }
}
