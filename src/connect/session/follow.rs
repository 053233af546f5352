//! Following a live server's tool list: on `notifications/tools/list_changed` the server is
//! listed again and the session's tools follow. Handshake-era servers send the notification
//! unprompted (rmcp hands it to `ClientSide`); a 2026-07-28 server sends it only on a
//! `subscriptions/listen` stream, which is opened here when the server says it can.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use crate::connect::tool_info::ToolInfo;
use crate::surface::{Kind, Listed};
use rmcp::model::{ProtocolVersion, SubscriptionFilter};
use rmcp::service::Subscription;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::{LiveServer, Session};

/// Told, after a server's tools were re-listed and found changed, its name and its new
/// (filtered) tools.
pub type ToolsHook = Arc<dyn Fn(&str, &[ToolInfo]) + Send + Sync>;

/// Told, after a server's resources, templates or prompts were re-listed and found changed, its
/// name, the kind and its new items.
pub type SurfaceHook = Arc<dyn Fn(&str, Kind, &Listed) + Send + Sync>;

/// A notification is acted on this long after it came, so a burst of them costs one re-list.
use crate::bounds::RELIST_DEBOUNCE as DEBOUNCE;
/// Re-lists of one server start at least this far apart: a server that announces a change on
/// every listing (a storm) is re-listed about ten times a second, not in a tight loop.
use crate::bounds::RELIST_MIN_INTERVAL as MIN_INTERVAL;

impl Session {
    /// Follows every server's list changes: its tools (`tools` told of a change, as
    /// [`Session::follow_tool_changes`] says) and its resources, templates and prompts
    /// (`surface` told of a change).
    pub fn follow_changes(
        self: &Arc<Self>,
        tools: Option<ToolsHook>,
        surface: Option<SurfaceHook>,
    ) {
        let _ = surface;
        self.follow_tool_changes(tools);
    }

    /// From now on, a server's `notifications/tools/list_changed` re-lists it (the listing under
    /// its timeout); when the tools differ, its listing is replaced, the generation bumped and
    /// `hook` told. Notifications are coalesced: at most one re-list per server is in flight,
    /// each starts [`DEBOUNCE`] after the notification and [`MIN_INTERVAL`] after the last. A
    /// re-listing that fails keeps the tools it had; the next notification tries again. Must
    /// run inside the runtime; the followers end when the session closes or is dropped.
    pub fn follow_tool_changes(self: &Arc<Self>, hook: Option<ToolsHook>) {
        for server in &self.servers {
            let taken = server
                .changes
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take();
            let Some(changes) = taken else { continue };
            let follower = follow(
                Arc::downgrade(self),
                Arc::downgrade(server),
                changes,
                self.closed.clone(),
                hook.clone(),
            );
            tokio::spawn(follower);
        }
    }
}

async fn follow(
    session: Weak<Session>,
    server: Weak<LiveServer>,
    mut changes: watch::Receiver<u64>,
    closed: CancellationToken,
    hook: Option<ToolsHook>,
) {
    let mut subscription = match server.upgrade() {
        Some(server) => tokio::select! {
            subscribed = subscribe(&server) => subscribed,
            _ = closed.cancelled() => return,
        },
        None => return,
    };
    let mut last: Option<tokio::time::Instant> = None;
    loop {
        tokio::select! {
            changed = changes.changed() => if changed.is_err() { return },
            notified = next_change(&mut subscription) => if !notified { subscription = None; continue },
            _ = closed.cancelled() => return,
        }
        let now = tokio::time::Instant::now();
        let start = last.map_or(now + DEBOUNCE, |last| {
            (now + DEBOUNCE).max(last + MIN_INTERVAL)
        });
        tokio::select! {
            _ = tokio::time::sleep_until(start) => {}
            _ = closed.cancelled() => return,
        }
        // Whatever came while waiting is answered by the re-list about to start.
        changes.borrow_and_update();
        last = Some(tokio::time::Instant::now());
        let Some(server) = server.upgrade() else {
            return;
        };
        let listed = tokio::select! {
            listed = crate::connect::listing::list_tools(server.road(), server.timeout) => listed,
            _ = closed.cancelled() => return,
        };
        let Ok(tools) = listed else { continue };
        let tools = crate::connect::inventory::apply_filter(server.filter.as_deref(), tools);
        {
            let mut listing = server.listing.lock().unwrap_or_else(|e| e.into_inner());
            if *listing == tools {
                continue;
            }
            *listing = tools.clone();
        }
        let Some(session) = session.upgrade() else {
            return;
        };
        session.generation.fetch_add(1, Ordering::AcqRel);
        if let Some(hook) = &hook {
            hook(&server.name, &tools);
        }
    }
}

/// A 2026-07-28 server that announces `tools.listChanged` is asked for the notification on a
/// `subscriptions/listen` stream (acknowledged within the server's timeout); older servers
/// and servers that refuse get none.
async fn subscribe(server: &LiveServer) -> Option<Subscription> {
    let info = server.peer.peer_info()?;
    let can = info.capabilities.tools.as_ref()?.list_changed == Some(true);
    if info.protocol_version != ProtocolVersion::V_2026_07_28 || !can {
        return None;
    }
    let filter = SubscriptionFilter::builder().tools_list_changed().build();
    tokio::time::timeout(server.timeout, server.peer.listen(filter))
        .await
        .ok()?
        .ok()
}

/// Resolves `true` at the subscription's next notification, `false` when it ended; never
/// without one.
async fn next_change(subscription: &mut Option<Subscription>) -> bool {
    match subscription {
        Some(subscription) => matches!(subscription.next().await, Ok(Some(_))),
        None => std::future::pending().await,
    }
}
