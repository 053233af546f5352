//! Which MCP era a connection speaks, and getting there: the `initialize` handshake (2025-11-25
//! and older revisions), `server/discover` (2026-07-28), or a discover probe that falls back to
//! the handshake when the server does not know it.

use std::time::Duration;

use rmcp::model::ProtocolVersion;
use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService,
};
use rmcp::transport::IntoTransport;
use serde_json::{Map, Value};

use super::client::ClientSide;
use super::error::ConnectError;
use super::reason::{self, Cause};
use crate::config::{LATEST_HANDSHAKE, Protocol};

pub(crate) type Service = RunningService<RoleClient, ClientSide>;

/// How a session is established.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Lifecycle {
    /// `initialize`, offering this revision.
    Handshake(ProtocolVersion),
    /// `server/discover` only.
    Discover,
    /// `server/discover` first, `initialize` (offering 2025-11-25) when the server is older.
    Auto,
}

/// What carries the messages; each has its own default era.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Carrier {
    Stdio,
    StreamableHttp,
    LegacySse,
}

impl Lifecycle {
    /// The lifecycle for a server's `protocol` (absent: auto for streamable HTTP, the handshake
    /// elsewhere, since some stdio servers exit on any request before `initialize`). Legacy SSE
    /// predates discover, so it always shakes hands.
    pub(crate) fn choose(protocol: Option<Protocol>, carrier: Carrier) -> Lifecycle {
        let handshake = |revision: &str| Lifecycle::Handshake(revision_version(revision));
        match (protocol, carrier) {
            (Some(Protocol::Handshake(revision)), _) => handshake(revision),
            (_, Carrier::LegacySse) | (None, Carrier::Stdio) => handshake(LATEST_HANDSHAKE),
            (None, Carrier::StreamableHttp) | (Some(Protocol::Auto), _) => Lifecycle::Auto,
            (Some(Protocol::Discover), _) => Lifecycle::Discover,
        }
    }

    /// The name a timeout reason gives this phase.
    pub(crate) fn phase_name(&self) -> &'static str {
        match self {
            Lifecycle::Discover => "server/discover",
            _ => "initialize",
        }
    }
}

fn revision_version(revision: &str) -> ProtocolVersion {
    ProtocolVersion::KNOWN_VERSIONS
        .iter()
        .find(|v| v.as_str() == revision)
        .cloned()
        .unwrap_or(ProtocolVersion::LATEST_WITH_INITIALIZE)
}

/// How long the discover probe may go unanswered before the server counts as one that only
/// shakes hands: half the phase's timeout, so the handshake keeps the other half, and never more
/// than rmcp's own probe bound.
pub(crate) fn probe_bound(timeout: Duration) -> Duration {
    (timeout / 2).min(crate::bounds::PROBE_BOUND)
}

/// One start of a session over one transport.
pub(crate) async fn start<T, E, A>(
    handler: &ClientSide,
    transport: T,
    lifecycle: &Lifecycle,
) -> Result<Service, ClientInitializeError>
where
    T: IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let modern = || vec![ProtocolVersion::V_2026_07_28];
    let (offer, mode) = match lifecycle {
        Lifecycle::Handshake(version) => (version.clone(), ClientLifecycleMode::Initialize),
        Lifecycle::Discover => (
            ProtocolVersion::LATEST_WITH_INITIALIZE,
            ClientLifecycleMode::Discover {
                preferred_versions: modern(),
            },
        ),
        Lifecycle::Auto => (
            ProtocolVersion::LATEST_WITH_INITIALIZE,
            ClientLifecycleMode::Auto {
                preferred_versions: modern(),
                legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
            },
        ),
    };
    // The 2026-07-28 tasks extension is declared where that revision may be spoken.
    let extensions = !matches!(lifecycle, Lifecycle::Handshake(_));
    handler
        .offering(offer, extensions)
        .serve_with_lifecycle(transport, mode)
        .await
}

/// How the discover probe of [`Lifecycle::Auto`] ended.
pub(crate) enum Probe {
    Connected(Service),
    /// The handshake is worth a try on a fresh connection: the probe went unanswered, the server
    /// closed the connection on it (some servers exit on any request before `initialize`), or
    /// it speaks only handshake revisions.
    TryHandshake,
    Failed(Box<ClientInitializeError>),
}

/// [`Lifecycle::Auto`] bounded by `bound`. A server that closes during the probe is worth a
/// handshake only where the connection can be made again as new (`closed_is_legacy`: stdio,
/// whose child is spawned again).
pub(crate) async fn probe<T, E, A>(
    handler: &ClientSide,
    transport: T,
    bound: Duration,
    closed_is_legacy: bool,
) -> Probe
where
    T: IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    match tokio::time::timeout(bound, start(handler, transport, &Lifecycle::Auto)).await {
        Ok(Ok(service)) => Probe::Connected(service),
        Err(_unanswered) => Probe::TryHandshake,
        Ok(Err(error)) if only_handshake_revisions(&error) => Probe::TryHandshake,
        Ok(Err(error)) if closed_is_legacy && closed(&error) => Probe::TryHandshake,
        Ok(Err(error)) => Probe::Failed(Box::new(error)),
    }
}

fn closed(error: &ClientInitializeError) -> bool {
    match error {
        ClientInitializeError::ConnectionClosed(_)
        | ClientInitializeError::TransportError { .. } => true,
        ClientInitializeError::LegacyFallbackFailed { fallback, .. } => closed(fallback),
        _ => false,
    }
}

/// A discover answer listing only revisions that have a handshake: `initialize` will do.
fn only_handshake_revisions(error: &ClientInitializeError) -> bool {
    match error {
        ClientInitializeError::NoCompatibleProtocolVersion {
            server_supported, ..
        } => server_supported
            .iter()
            .any(|v| v.has_initialize() && ProtocolVersion::KNOWN_VERSIONS.contains(v)),
        _ => false,
    }
}

/// Why a start failed, with what the lifecycle adds: a server that answers `server/discover`
/// with an error when the discover era is pinned does not speak it.
pub(crate) fn describe(error: &ClientInitializeError, lifecycle: &Lifecycle) -> Cause {
    match (error, lifecycle) {
        (ClientInitializeError::JsonRpcError(data), Lifecycle::Discover) => Cause::Words(format!(
            "server does not speak protocol 2026-07-28 (server/discover answered error {}: {})",
            data.code.0,
            reason::bounded(&data.message)
        )),
        _ => reason::init_error(error),
    }
}

/// rmcp accepts whatever version a server's `initialize` names; toolnexus speaks only the ones
/// it knows.
pub(crate) fn check_negotiated(service: &Service) -> Result<(), ConnectError> {
    let Some(info) = service.peer_info() else {
        return Err(ConnectError::Protocol(
            "server sent no initialize result".into(),
        ));
    };
    let version = &info.protocol_version;
    if ProtocolVersion::KNOWN_VERSIONS.contains(version) {
        Ok(())
    } else {
        Err(ConnectError::Protocol(format!(
            "server chose protocol version {}, which toolnexus does not support",
            reason::bounded(version.as_str())
        )))
    }
}

/// What a connected server said about itself: `{ protocolVersion, name, version, title?,
/// instructions? }` (name and version are `""` when a 2026-07-28 server gave no identity).
pub(crate) fn server_info(service: &Service) -> Option<Value> {
    let info = service.peer_info()?;
    let mut out = Map::new();
    out.insert(
        "protocolVersion".into(),
        info.protocol_version.as_str().into(),
    );
    let identity = info.server_info.as_ref();
    out.insert(
        "name".into(),
        identity.map_or("", |i| i.name.as_str()).into(),
    );
    out.insert(
        "version".into(),
        identity.map_or("", |i| i.version.as_str()).into(),
    );
    if let Some(title) = identity.and_then(|i| i.title.as_deref()) {
        out.insert("title".into(), title.into());
    }
    if let Some(instructions) = info.instructions.as_deref() {
        out.insert("instructions".into(), instructions.into());
    }
    Some(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_carrier_has_its_default_era() {
        let v = |s: &str| Lifecycle::Handshake(revision_version(s));
        use Carrier::*;
        assert_eq!(Lifecycle::choose(None, StreamableHttp), Lifecycle::Auto);
        assert_eq!(Lifecycle::choose(None, Stdio), v("2025-11-25"));
        assert_eq!(Lifecycle::choose(None, LegacySse), v("2025-11-25"));
        assert_eq!(
            Lifecycle::choose(Some(Protocol::Auto), Stdio),
            Lifecycle::Auto
        );
        assert_eq!(
            Lifecycle::choose(Some(Protocol::Auto), LegacySse),
            v("2025-11-25")
        );
        assert_eq!(
            Lifecycle::choose(Some(Protocol::Discover), Stdio),
            Lifecycle::Discover
        );
        assert_eq!(
            Lifecycle::choose(Some(Protocol::Handshake("2024-11-05")), StreamableHttp),
            v("2024-11-05")
        );
        assert_eq!(
            Lifecycle::choose(Some(Protocol::Handshake("2025-06-18")), LegacySse),
            v("2025-06-18")
        );
        assert_eq!(
            revision_version("2025-03-26"),
            ProtocolVersion::V_2025_03_26
        );
    }

    #[test]
    fn the_probe_leaves_the_handshake_half_the_time() {
        assert_eq!(
            probe_bound(Duration::from_secs(30)),
            Duration::from_secs(10)
        );
        assert_eq!(
            probe_bound(Duration::from_millis(4000)),
            Duration::from_millis(2000)
        );
    }
}
