//! A session's link to the direct road, once its handshake is done: what a call answered there
//! needs of its session. A leaf: the table holds links, the direct road makes and uses them.

use std::collections::HashMap;
use std::sync::Mutex;

use rmcp::model::RequestId;
use rmcp::service::{Peer, RoleServer};
use tokio_util::sync::CancellationToken;

use crate::serve::context::SessionLogLevel;

/// What a call needs of its session: the peer (rmcp's way to the session's stream), the log
/// level the session asked for, and the calls in flight here (for `notifications/cancelled`).
pub(crate) struct Link {
    pub(crate) peer: Peer<RoleServer>,
    pub(crate) log_level: SessionLogLevel,
    /// Cancelled when the session ends, like rmcp's session loop token its calls descend from.
    pub(crate) ended: CancellationToken,
    pub(crate) calls: Mutex<HashMap<RequestId, CancellationToken>>,
    /// The session's number (its `ToolServer`'s): whose handshake-era tasks a call makes.
    pub(crate) session: u64,
}

impl Link {
    /// Whether the session still speaks the handshake era (a 2026-07-28 session takes rmcp's
    /// road for everything) and has not ended.
    pub(crate) fn open_for_calls(&self) -> bool {
        let handshake_era = self
            .peer
            .peer_info()
            .is_some_and(|info| info.protocol_version.as_str() < "2026-07-28");
        handshake_era && !self.ended.is_cancelled()
    }

    /// Whether the session's client declared it can be asked for input (elicitation, sampling
    /// or roots).
    pub(crate) fn client_can_be_asked(&self) -> bool {
        self.peer.peer_info().is_some_and(|info| {
            let c = &info.capabilities;
            c.elicitation.is_some() || c.sampling.is_some() || c.roots.is_some()
        })
    }

    pub(crate) fn calls(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, CancellationToken>> {
        self.calls.lock().unwrap_or_else(|e| e.into_inner())
    }
}
