//! Telling clients that a served listing changed: `notifications/{tools,prompts,resources}/list_changed`
//! to every handshake-era client that completed `initialize`, and to every 2026-07-28 client
//! listening with `subscriptions/listen` (that era has no sessions to push to), which also
//! hears `notifications/resources/updated` for the URIs it asked to follow.

use std::sync::{Arc, Mutex};

use rmcp::ErrorData;
use rmcp::model::SubscriptionFilter;
use rmcp::service::{Peer, RoleServer, SubscriptionContext};
use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;

use super::subscriptions::{MAX_SUBSCRIPTIONS, Subs};
use crate::gateway::upstream::Upstream;

/// Which listing changed (resource templates change with resources: MCP has one notification).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Change {
    Tools = 0,
    Prompts = 1,
    Resources = 2,
}

pub(crate) struct ToolChanges {
    /// Handshake-era clients, forgotten once their transport closed.
    peers: Mutex<Peers>,
    /// Counts changes by [`Change`], for listeners.
    version: watch::Sender<[u64; 3]>,
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
            version: watch::channel([0; 3]).0,
            listening: Mutex::default(),
        }
    }
}

impl ToolChanges {
    /// A client that completed the handshake.
    pub(crate) fn register(&self, peer: Peer<RoleServer>) {
        let mut peers = self.peers.lock().unwrap_or_else(|e| e.into_inner());
        if peers.all.len() >= 2 * peers.kept.max(16) {
            peers.forget_closed();
        }
        peers.all.push(peer);
    }

    /// Forgets the clients whose session ended (what each holds of it goes with it).
    pub(crate) fn forget_closed(&self) {
        let mut peers = self.peers.lock().unwrap_or_else(|e| e.into_inner());
        peers.forget_closed();
        peers.all.shrink_to_fit();
    }

    /// Tells every client of `change`; must run inside the runtime (each notification is sent
    /// on its own task, so a slow client holds up no one).
    pub(crate) fn announce(&self, change: Change) {
        self.version.send_modify(|v| v[change as usize] += 1);
        let peers = {
            let mut peers = self.peers.lock().unwrap_or_else(|e| e.into_inner());
            peers.forget_closed();
            peers.all.clone()
        };
        for peer in peers {
            tokio::spawn(async move {
                let _ = match change {
                    Change::Tools => peer.notify_tool_list_changed().await,
                    Change::Prompts => peer.notify_prompt_list_changed().await,
                    Change::Resources => peer.notify_resource_list_changed().await,
                };
            });
        }
    }

    /// What a `subscriptions/listen` may have: every list change, and the resources it asked
    /// to follow (bounded); rmcp keeps of it what the server announces.
    pub(crate) fn accepted(requested: &SubscriptionFilter) -> SubscriptionFilter {
        let mut accepted = SubscriptionFilter::builder()
            .tools_list_changed()
            .prompts_list_changed()
            .resources_list_changed()
            .build();
        accepted.resource_subscriptions = requested
            .resource_subscriptions
            .as_ref()
            .map(|uris| uris.iter().take(MAX_SUBSCRIPTIONS).cloned().collect());
        accepted
    }

    /// Ends every `subscriptions/listen` in progress (with its final result), so an endpoint
    /// that stops need not wait for them; later ones are served as usual.
    pub(crate) fn end_listeners(&self) {
        let mut listening = self.listening.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::take(&mut *listening).cancel();
    }

    /// Serves one `subscriptions/listen` until the client cancels it or the server stops.
    /// `upstream` are the accepted URIs an upstream serves: followed upstream while it lasts.
    pub(crate) async fn listen(
        &self,
        context: SubscriptionContext,
        subs: &Arc<Subs>,
        upstream: Vec<(String, Arc<dyn Upstream>)>,
    ) -> Result<(), ErrorData> {
        // Receiving before following upstream: an update sent right after the upstream
        // subscribe was answered is not lost.
        let updates = subs.updates();
        let mut retained = Vec::new();
        for (uri, owner) in upstream {
            // One that cannot be followed upstream is still accepted: the server's own
            // notifications for it still come.
            if subs.retain_upstream(&uri, owner).await.is_ok() {
                retained.push(uri);
            }
        }
        let result = self.listen_until_done(&context, updates).await;
        for uri in retained {
            subs.release(&uri).await;
        }
        result
    }

    async fn listen_until_done(
        &self,
        context: &SubscriptionContext,
        mut updates: broadcast::Receiver<String>,
    ) -> Result<(), ErrorData> {
        let mut version = self.version.subscribe();
        let mut seen = *version.borrow_and_update();
        let ended = self
            .listening
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let accepted = context.accepted().clone();
        let wants = [
            accepted.tools_list_changed == Some(true),
            accepted.prompts_list_changed == Some(true),
            accepted.resources_list_changed == Some(true),
        ];
        // Updates of a resource outside the caller's scopes are not sent.
        let sight = super::caller::Sight::of(context.request_context());
        let follows: std::collections::HashSet<String> = accepted
            .resource_subscriptions
            .unwrap_or_default()
            .into_iter()
            .filter(|uri| sight.sees(super::auth::Kind::Resource, uri))
            .collect();
        loop {
            tokio::select! {
                _ = context.cancelled() => return Ok(()),
                _ = ended.cancelled() => return Ok(()),
                changed = version.changed() => {
                    if changed.is_err() {
                        return Ok(());
                    }
                    let now = *version.borrow_and_update();
                    let sink = context.sink();
                    for (i, want) in wants.iter().enumerate() {
                        if !want || now[i] == seen[i] {
                            continue;
                        }
                        let sent = match i {
                            0 => sink.notify_tool_list_changed().await,
                            1 => sink.notify_prompt_list_changed().await,
                            _ => sink.notify_resource_list_changed().await,
                        };
                        if sent.is_err() {
                            return Ok(());
                        }
                    }
                    seen = now;
                }
                update = updates.recv() => match update {
                    Ok(uri) if follows.contains(&uri) => {
                        if context.sink().notify_resource_updated(uri).await.is_err() {
                            return Ok(());
                        }
                    }
                    Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => return Ok(()),
                },
            }
        }
    }
}
