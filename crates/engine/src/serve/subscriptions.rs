//! Served resource subscriptions: which handshake-era sessions follow which URI
//! (`resources/subscribe`), the stream of updates 2026-07-28 listeners read, and, for a
//! gateway, the upstream subscriptions behind them, counted so the first follower subscribes
//! upstream and the last one gone unsubscribes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use rmcp::ErrorData;
use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::{Peer, RoleServer};
use tokio::sync::broadcast;

use crate::gateway::upstream::Upstream;

pub(crate) use crate::bounds::SERVE_MAX_SUBSCRIPTIONS as MAX_SUBSCRIPTIONS;
/// Updates a slow 2026-07-28 listener may fall behind by before it misses some.
const UPDATES_BACKLOG: usize = 256;

struct Follower {
    session: u64,
    peer: Peer<RoleServer>,
    /// Whether this follower holds a count of the URI's upstream subscription.
    upstream: bool,
}

/// An upstream subscription, and how many followers hold it; or one being opened (whose
/// sender, dropped when the subscribe is answered, wakes those waiting for it).
enum Held {
    Ready {
        count: usize,
        /// The server it is held at ([`Upstream::identity`]), and the guard that holds it
        /// there; none while the URI has no upstream (gone with a reload) or is being moved.
        at: Option<(usize, Box<dyn Send + Sync>)>,
        /// Bumped at each move to another server: a move that finishes late is dropped.
        moves: u64,
    },
    Opening(u64, tokio::sync::watch::Receiver<()>),
}

pub(crate) struct Subs {
    legacy: Mutex<HashMap<String, Vec<Follower>>>,
    updates: broadcast::Sender<String>,
    /// Never held across an await: one slow upstream subscribe stalls no other URI.
    upstream: Mutex<HashMap<String, Held>>,
    opening: std::sync::atomic::AtomicU64,
}

impl Default for Subs {
    fn default() -> Self {
        Self {
            legacy: Mutex::default(),
            updates: broadcast::channel(UPDATES_BACKLOG).0,
            upstream: Mutex::default(),
            opening: Default::default(),
        }
    }
}

impl Subs {
    /// `resources/subscribe` of a handshake-era session; `owner` is the upstream that serves
    /// `uri`, if one does. Subscribing twice is subscribing once.
    pub(crate) async fn subscribe(
        self: &Arc<Self>,
        session: u64,
        peer: Peer<RoleServer>,
        uri: &str,
        owner: Option<Arc<dyn Upstream>>,
    ) -> Result<(), ErrorData> {
        self.forget_closed();
        {
            let mut legacy = self.legacy.lock().unwrap_or_else(|e| e.into_inner());
            if legacy
                .get(uri)
                .is_some_and(|f| f.iter().any(|f| f.session == session))
            {
                return Ok(());
            }
            if legacy.values().map(Vec::len).sum::<usize>() >= MAX_SUBSCRIPTIONS {
                return Err(ErrorData::internal_error(
                    format!("too many subscriptions (at most {MAX_SUBSCRIPTIONS})"),
                    None,
                ));
            }
            // Following before subscribing upstream: an update the upstream sends right after
            // answering reaches this session. A failed upstream subscribe takes it back.
            legacy.entry(uri.to_string()).or_default().push(Follower {
                session,
                peer,
                upstream: false,
            });
        }
        let Some(owner) = owner else {
            return Ok(());
        };
        let retained = self.retain_upstream(uri, owner).await;
        let mut legacy = self.legacy.lock().unwrap_or_else(|e| e.into_inner());
        let followers = legacy.get_mut(uri);
        let at = followers
            .as_ref()
            .and_then(|f| f.iter().position(|f| f.session == session && !f.upstream));
        match (retained, followers, at) {
            (Ok(()), Some(followers), Some(at)) => followers[at].upstream = true,
            // Unsubscribed (or its session ended) meanwhile: the count goes back.
            (Ok(()), _, _) => {
                drop(legacy);
                self.release_later(uri);
            }
            (Err(e), followers, at) => {
                if let (Some(followers), Some(at)) = (followers, at) {
                    followers.remove(at);
                    if followers.is_empty() {
                        legacy.remove(uri);
                    }
                }
                return Err(e);
            }
        }
        Ok(())
    }

    /// `resources/unsubscribe`: nothing when the session did not follow `uri`.
    pub(crate) async fn unsubscribe(&self, session: u64, uri: &str) {
        let removed = {
            let mut legacy = self.legacy.lock().unwrap_or_else(|e| e.into_inner());
            let Some(followers) = legacy.get_mut(uri) else {
                return;
            };
            let at = followers.iter().position(|f| f.session == session);
            let removed = at.map(|at| followers.remove(at));
            if followers.is_empty() {
                legacy.remove(uri);
            }
            removed
        };
        if removed.is_some_and(|f| f.upstream) {
            self.release(uri).await;
        }
    }

    /// Forgets the followers whose session ended, releasing what they held upstream. Must run
    /// inside the runtime.
    pub(crate) fn forget_closed(self: &Arc<Self>) {
        let mut released = Vec::new();
        {
            let mut legacy = self.legacy.lock().unwrap_or_else(|e| e.into_inner());
            legacy.retain(|uri, followers| {
                followers.retain(|f| {
                    let closed = f.peer.is_transport_closed();
                    if closed && f.upstream {
                        released.push(uri.clone());
                    }
                    !closed
                });
                !followers.is_empty()
            });
        }
        for uri in released {
            self.release_later(&uri);
        }
    }

    /// How many (session, URI) pairs are followed.
    #[cfg(test)]
    pub(crate) fn count(&self) -> usize {
        let legacy = self.legacy.lock().unwrap_or_else(|e| e.into_inner());
        legacy.values().map(Vec::len).sum()
    }

    /// How many URIs are followed upstream.
    #[cfg(test)]
    pub(crate) async fn upstream_count(&self) -> usize {
        let held = self.upstream.lock().unwrap_or_else(|e| e.into_inner());
        held.values()
            .filter(|h| matches!(h, Held::Ready { .. }))
            .count()
    }

    /// A receiver of every update from now on (for a 2026-07-28 listener).
    pub(crate) fn updates(&self) -> broadcast::Receiver<String> {
        self.updates.subscribe()
    }

    /// `uri` changed: every listener and following session hears of it. Sessions that ended
    /// are forgotten (and their upstream counts released). Must run inside the runtime.
    pub(crate) fn updated(self: &Arc<Self>, uri: &str) {
        let _ = self.updates.send(uri.to_string());
        let (peers, gone) = {
            let mut legacy = self.legacy.lock().unwrap_or_else(|e| e.into_inner());
            let Some(followers) = legacy.get_mut(uri) else {
                return;
            };
            let (closed, open): (Vec<_>, Vec<_>) = std::mem::take(followers)
                .into_iter()
                .partition(|f| f.peer.is_transport_closed());
            let peers: Vec<_> = open.iter().map(|f| f.peer.clone()).collect();
            *followers = open;
            if followers.is_empty() {
                legacy.remove(uri);
            }
            (peers, closed.iter().filter(|f| f.upstream).count())
        };
        for _ in 0..gone {
            self.release_later(uri);
        }
        for peer in peers {
            let param = ResourceUpdatedNotificationParam::new(uri);
            tokio::spawn(async move {
                let _ = peer.notify_resource_updated(param).await;
            });
        }
    }

    /// One more follower of `uri` at `owner`: the first subscribes upstream, and the
    /// upstream's updates reach this endpoint's followers.
    pub(crate) async fn retain_upstream(
        self: &Arc<Self>,
        uri: &str,
        owner: Arc<dyn Upstream>,
    ) -> Result<(), ErrorData> {
        let (id, _opening) = loop {
            let mut waiting = {
                let mut held = self.upstream.lock().unwrap_or_else(|e| e.into_inner());
                match held.get_mut(uri) {
                    Some(Held::Ready { count, .. }) => {
                        *count += 1;
                        return Ok(());
                    }
                    Some(Held::Opening(_, waiting)) => waiting.clone(),
                    None => {
                        let id = self
                            .opening
                            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let (tx, rx) = tokio::sync::watch::channel(());
                        held.insert(uri.to_string(), Held::Opening(id, rx));
                        break (id, tx);
                    }
                }
            };
            // Another follower is subscribing upstream: its outcome decides (a failure lets
            // this one try).
            let _ = waiting.changed().await;
        };
        let subscribed = self.subscribe_at(uri, &owner).await;
        let mut held = self.upstream.lock().unwrap_or_else(|e| e.into_inner());
        let ours = matches!(held.get(uri), Some(Held::Opening(i, _)) if *i == id);
        match subscribed {
            Ok(guard) if ours => {
                held.insert(
                    uri.to_string(),
                    Held::Ready {
                        count: 1,
                        at: Some((owner.identity(), guard)),
                        moves: 0,
                    },
                );
                Ok(())
            }
            // Cleared meanwhile (the endpoint stopped): the guard goes at once.
            Ok(_) => Ok(()),
            Err(e) => {
                if ours {
                    held.remove(uri);
                }
                Err(e)
            }
        }
    }

    /// `resources/subscribe` of `uri` at `owner`, whose updates reach this endpoint's followers.
    async fn subscribe_at(
        self: &Arc<Self>,
        uri: &str,
        owner: &Arc<dyn Upstream>,
    ) -> Result<Box<dyn Send + Sync>, ErrorData> {
        let subs: Weak<Self> = Arc::downgrade(self);
        let listener = Arc::new(move |updated: &str| {
            if let Some(subs) = subs.upgrade() {
                subs.updated(updated);
            }
        });
        owner.subscribe(uri.to_string(), listener).await
    }

    /// The served surface changed (a reload restarted, added or removed upstreams): each URI
    /// followed upstream is followed at the server that serves it now, `owner_of(uri)`. One
    /// still at the same server is left alone; one whose server restarted or changed is
    /// subscribed again there (the old guard goes, unsubscribing where that server still runs);
    /// one no upstream serves any more is let go upstream while its followers stay (a later
    /// surface may serve it again). Must run inside the runtime.
    pub(crate) fn rehome(self: &Arc<Self>, owner_of: impl Fn(&str) -> Option<Arc<dyn Upstream>>) {
        let mut moving = Vec::new();
        let mut gone = Vec::new();
        {
            let mut held = self.upstream.lock().unwrap_or_else(|e| e.into_inner());
            for (uri, entry) in held.iter_mut() {
                let Held::Ready { at, moves, .. } = entry else {
                    continue;
                };
                let now = owner_of(uri);
                // Held at the server that serves it now, or served by none and held nowhere.
                if at.as_ref().map(|(id, _)| *id) == now.as_ref().map(|o| o.identity()) {
                    continue;
                }
                *moves += 1;
                gone.extend(at.take());
                if let Some(owner) = now {
                    moving.push((uri.clone(), owner, *moves));
                }
            }
        }
        drop(gone);
        for (uri, owner, moved) in moving {
            let subs = self.clone();
            tokio::spawn(async move {
                // A server that cannot be followed is as one that was not: its followers stay,
                // and hear what this endpoint says itself.
                let Ok(guard) = subs.subscribe_at(&uri, &owner).await else {
                    return;
                };
                let mut held = subs.upstream.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(Held::Ready { at, moves, .. }) = held.get_mut(&uri)
                    && *moves == moved
                {
                    *at = Some((owner.identity(), guard));
                }
            });
        }
    }

    /// One follower of `uri` fewer: the last one gone ends the upstream subscription.
    pub(crate) async fn release(&self, uri: &str) {
        let gone = {
            let mut held = self.upstream.lock().unwrap_or_else(|e| e.into_inner());
            match held.get_mut(uri) {
                Some(Held::Ready { count, .. }) if *count <= 1 => held.remove(uri),
                Some(Held::Ready { count, .. }) => {
                    *count -= 1;
                    None
                }
                _ => None,
            }
        };
        drop(gone);
    }

    fn release_later(self: &Arc<Self>, uri: &str) {
        let (subs, uri) = (self.clone(), uri.to_string());
        tokio::spawn(async move { subs.release(&uri).await });
    }

    /// Ends every upstream subscription and forgets every follower (an endpoint stopped).
    pub(crate) async fn clear(&self) {
        self.legacy
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        let gone = std::mem::take(&mut *self.upstream.lock().unwrap_or_else(|e| e.into_inner()));
        drop(gone);
    }
}
