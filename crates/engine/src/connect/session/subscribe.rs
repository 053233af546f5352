//! Following a live server's resources: the first listener of a URI subscribes the server to
//! it (`resources/subscribe` in the handshake era; a `subscriptions/listen` stream for that URI
//! in 2026-07-28), the last one gone unsubscribes it. Updates reach the listeners through
//! [`crate::connect::updates::ResourceUpdates`].

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::model::{
    ProtocolVersion, ServerNotification, SubscribeRequestParams, SubscriptionFilter,
    UnsubscribeRequestParams,
};
use tokio_util::sync::CancellationToken;

use super::surface::UpstreamSub;
use super::{LiveServer, Subscribed};
use crate::bounds::MAX_RESOURCE_SUBSCRIPTIONS;
use crate::connect::updates::UpdateListener;
use crate::surface::SurfaceError;

impl LiveServer {
    pub(super) async fn subscribe_upstream(
        self: &Arc<Self>,
        uri: &str,
        listener: UpdateListener,
    ) -> Result<UpstreamSub, SurfaceError> {
        let can = self
            .caps
            .as_ref()
            .and_then(|caps| caps.resources.as_ref())
            .is_some_and(|resources| resources.subscribe == Some(true));
        if !can {
            return Err(SurfaceError::words(format!(
                "server {:?} does not support resource subscriptions",
                self.name
            )));
        }
        let runtime = tokio::runtime::Handle::current();
        let mut subs = self.subs.lock().await;
        if !subs.contains_key(uri) {
            if subs.len() >= MAX_RESOURCE_SUBSCRIPTIONS {
                return Err(SurfaceError::words(format!(
                    "server {:?}: too many resource subscriptions (at most {MAX_RESOURCE_SUBSCRIPTIONS} URIs)",
                    self.name
                )));
            }
            // Listening before subscribing: an update the server sends right after answering
            // (or even before) reaches the listener. A failed subscribe takes it back.
            let id = self.updates.add(uri, listener);
            match self.open_upstream(uri).await {
                Ok(upstream) => subs.insert(uri.to_string(), upstream),
                Err(e) => {
                    self.updates.remove(uri, id);
                    return Err(e);
                }
            };
            return Ok(UpstreamSub {
                server: Arc::downgrade(self),
                uri: uri.to_string(),
                id,
                runtime,
            });
        }
        let id = self.updates.add(uri, listener);
        Ok(UpstreamSub {
            server: Arc::downgrade(self),
            uri: uri.to_string(),
            id,
            runtime,
        })
    }

    /// Subscribes the server to `uri`, within its timeout.
    async fn open_upstream(self: &Arc<Self>, uri: &str) -> Result<Subscribed, SurfaceError> {
        let failed =
            |why: String| SurfaceError::words(format!("resources/subscribe failed: {why}"));
        let timed_out = || failed(format!("timed out after {} ms", self.timeout.as_millis()));
        if self.protocol != Some(ProtocolVersion::V_2026_07_28) {
            #[allow(deprecated)] // legacy-only, and this is a legacy session
            let subscribed = self.peer.subscribe(SubscribeRequestParams::new(uri));
            return match tokio::time::timeout(self.timeout, subscribed).await {
                Err(_) => Err(timed_out()),
                Ok(Err(rmcp::service::ServiceError::McpError(e))) => Err((&e).into()),
                Ok(Err(e)) => Err(failed(
                    crate::connect::reason::service_error(&e).to_string(),
                )),
                Ok(Ok(())) => Ok(Subscribed::Legacy),
            };
        }
        let filter = SubscriptionFilter::builder()
            .resource_subscription(uri)
            .build();
        let mut subscription =
            match tokio::time::timeout(self.timeout, self.peer.listen(filter)).await {
                Err(_) => return Err(timed_out()),
                Ok(Err(rmcp::service::ServiceError::McpError(e))) => return Err((&e).into()),
                Ok(Err(e)) => {
                    return Err(failed(
                        crate::connect::reason::service_error(&e).to_string(),
                    ));
                }
                Ok(Ok(subscription)) => subscription,
            };
        let accepted = subscription
            .acknowledged()
            .resource_subscriptions
            .as_ref()
            .is_some_and(|uris| uris.iter().any(|u| u == uri));
        if !accepted {
            return Err(SurfaceError::words(format!(
                "server {:?} did not accept a subscription to {uri}",
                self.name
            )));
        }
        static STREAMS: AtomicU64 = AtomicU64::new(0);
        let stream = STREAMS.fetch_add(1, Ordering::Relaxed);
        let stop = CancellationToken::new();
        let server = Arc::downgrade(self);
        let (uri, ended) = (uri.to_string(), stop.clone());
        tokio::spawn(async move {
            loop {
                let next = tokio::select! {
                    next = subscription.next() => next,
                    _ = ended.cancelled() => return,
                };
                let Some(server) = server.upgrade() else {
                    return;
                };
                match next {
                    Ok(Some(ServerNotification::ResourceUpdatedNotification(n))) => {
                        server.updates.deliver(&n.params.uri)
                    }
                    Ok(Some(_)) => {}
                    // The stream ended: a later subscribe opens a new one.
                    Ok(None) | Err(_) => {
                        let mut subs = server.subs.lock().await;
                        if matches!(subs.get(&uri), Some(Subscribed::Listen(_, s)) if *s == stream)
                        {
                            subs.remove(&uri);
                        }
                        return;
                    }
                }
            }
        });
        Ok(Subscribed::Listen(stop, stream))
    }

    /// The last listener of `uri` is gone: the server is unsubscribed (unless a listener came
    /// back meanwhile), within its timeout.
    pub(super) async fn unsubscribe_upstream(&self, uri: &str) {
        let mut subs = self.subs.lock().await;
        if self.updates.has(uri) {
            return;
        }
        match subs.remove(uri) {
            Some(Subscribed::Listen(stop, _)) => stop.cancel(),
            Some(Subscribed::Legacy) => {
                #[allow(deprecated)] // legacy-only, and this is a legacy session
                let unsubscribed = self.peer.unsubscribe(UnsubscribeRequestParams::new(uri));
                let _ = tokio::time::timeout(self.timeout, unsubscribed).await;
            }
            None => {}
        }
    }
}
