//! Telling clients that the served tool set changed: `notifications/tools/list_changed` to
//! every handshake-era client that completed `initialize`, and to every 2026-07-28 client
//! listening with `subscriptions/listen` (that era has no sessions to push to).

use std::sync::Mutex;

use rmcp::ErrorData;
use rmcp::model::SubscriptionFilter;
use rmcp::service::{Peer, RoleServer, SubscriptionContext};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

pub struct ToolChanges {
    /// Handshake-era clients, forgotten once their transport closed.
    peers: Mutex<Peers>,
    /// Counts changes, for listeners.
    version: watch::Sender<u64>,
    /// Cancelled (and replaced) when an endpoint stops, ending the listeners it has.
    listening: Mutex<CancellationToken>,
}

/// The clients to tell, and how many there were when the closed ones were last forgotten (so a
/// registration forgets them only when the list has doubled since: a burst of sessions costs
/// linear time, not quadratic).
#[derive(Default)]
struct Peers {
    all: Vec<Peer<RoleServer>>,
    kept: usize,
}

impl Peers {
    fn forget_closed(&mut self) {
        self.all.retain(|peer| !peer.is_transport_closed());
        self.kept = self.all.len();
    }
}

impl Default for ToolChanges {
    fn default() -> Self {
        Self {
            peers: Mutex::default(),
            version: watch::channel(0).0,
            listening: Mutex::default(),
        }
    }
}

impl ToolChanges {
    /// A client that completed the handshake.
    pub fn register(&self, peer: Peer<RoleServer>) {
        let mut peers = self.peers.lock().unwrap_or_else(|e| e.into_inner());
        if peers.all.len() >= 2 * peers.kept.max(16) {
            peers.forget_closed();
        }
        peers.all.push(peer);
    }

    /// Forgets the clients whose session ended (what each holds of it goes with it).
    pub fn forget_closed(&self) {
        let mut peers = self.peers.lock().unwrap_or_else(|e| e.into_inner());
        peers.forget_closed();
        peers.all.shrink_to_fit();
    }

    /// Tells every client; must run inside the runtime (each notification is sent on its own
    /// task, so a slow client holds up no one).
    pub fn announce(&self) {
        self.version.send_modify(|v| *v += 1);
        let peers = {
            let mut peers = self.peers.lock().unwrap_or_else(|e| e.into_inner());
            peers.forget_closed();
            peers.all.clone()
        };
        for peer in peers {
            tokio::spawn(async move {
                let _ = peer.notify_tool_list_changed().await;
            });
        }
    }

    /// What a `subscriptions/listen` may have: tool list changes only.
    pub fn accepted() -> SubscriptionFilter {
        SubscriptionFilter::builder().tools_list_changed().build()
    }

    /// Ends every `subscriptions/listen` in progress (with its final result), so an endpoint
    /// that stops need not wait for them; later ones are served as usual.
    pub fn end_listeners(&self) {
        let mut listening = self.listening.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::take(&mut *listening).cancel();
    }

    /// Serves one `subscriptions/listen` until the client cancels it or the server stops.
    pub async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let mut version = self.version.subscribe();
        let ended = self
            .listening
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let wants_tools = context.accepted().tools_list_changed == Some(true);
        loop {
            tokio::select! {
                _ = context.cancelled() => return Ok(()),
                _ = ended.cancelled() => return Ok(()),
                changed = version.changed() => {
                    if changed.is_err() {
                        return Ok(());
                    }
                    if wants_tools && context.sink().notify_tool_list_changed().await.is_err() {
                        return Ok(());
                    }
                }
            }
        }
    }
}
