//! Resource subscriptions on the served surface: `resources/subscribe` and `unsubscribe`
//! (handshake era) and `subscriptions/listen` (2026-07-28), a URI served upstream followed
//! there too.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::service::{RequestContext, RoleServer, SubscriptionContext};

use super::not_found;
use crate::serve::ToolServer;
use crate::serve::auth::Kind;
use crate::serve::caller::Sight;
use crate::serve::surface::{Owner, Surface, Upstream};

impl ToolServer {
    /// `resources/subscribe` (handshake era): a URI served upstream is followed there too.
    pub(in crate::serve) async fn follow(
        &self,
        uri: &str,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if !Sight::of(&context).sees(Kind::Resource, uri) {
            return Err(not_found(uri));
        }
        let owner = match self.surface().resolve(uri) {
            Some((Owner::Up(up), _)) => Some(up),
            _ => None,
        };
        let subs = &self.shared.subs;
        subs.subscribe(self.session, context.peer, uri, owner).await
    }

    pub(in crate::serve) async fn unfollow(&self, uri: &str) {
        self.shared.subs.unsubscribe(self.session, uri).await;
    }

    /// One `subscriptions/listen` (2026-07-28).
    pub(in crate::serve) async fn listen_all(
        &self,
        context: SubscriptionContext,
    ) -> Result<(), ErrorData> {
        let surface = self.surface();
        let sight = Sight::of(context.request_context());
        let upstream = upstream_owners(
            &surface,
            context.accepted().resource_subscriptions.as_deref(),
        )
        .into_iter()
        .filter(|(uri, _)| sight.sees(Kind::Resource, uri))
        .collect();
        let subs = self.shared.subs.clone();
        self.shared.changes.listen(context, &subs, upstream).await
    }
}

/// The accepted URIs an upstream serves, with that upstream.
fn upstream_owners(surface: &Surface, uris: Option<&[String]>) -> Vec<(String, Arc<dyn Upstream>)> {
    uris.unwrap_or_default()
        .iter()
        .filter_map(|uri| match surface.resolve(uri) {
            Some((Owner::Up(up), _)) => Some((uri.clone(), up)),
            _ => None,
        })
        .collect()
}
