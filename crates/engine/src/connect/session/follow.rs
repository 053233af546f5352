//! Following a live server's lists: on `notifications/tools/list_changed` (or
//! `prompts/list_changed`, `resources/list_changed`) the server is listed again and the
//! session follows. Handshake-era servers send the notifications unprompted (rmcp hands them to
//! `ClientSide`); a 2026-07-28 server sends them only on a `subscriptions/listen` stream, which
//! is opened here when the server says it can, and whose notifications are counted as the
//! handshake era's are.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use crate::connect::tool_info::ToolInfo;
use crate::surface::{Kind, Listed};
use rmcp::model::{ProtocolVersion, ServerNotification, SubscriptionFilter};
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

/// What one follower re-lists.
#[derive(Clone)]
enum Relist {
    Tools(Option<ToolsHook>),
    /// These kinds, one after the other (resources and their templates change together).
    Surface(&'static [Kind], Option<SurfaceHook>),
}

impl Session {
    /// From now on, a server's list changes re-list it: its tools on
    /// `notifications/tools/list_changed` (`tools` told, the generation bumped, when they
    /// differ), its prompts on `prompts/list_changed`, its resources, resource templates and skills on
    /// `resources/list_changed` (`surface` told of each kind that differs, the surface
    /// generation bumped). Notifications are coalesced: at most one re-list per server and kind
    /// is in flight, each starts [`DEBOUNCE`] after the notification and [`MIN_INTERVAL`] after
    /// the last. A re-listing that fails keeps what it had; the next notification tries again.
    /// Must run inside the runtime; the followers end when the session closes or is dropped.
    pub fn follow_changes(
        self: &Arc<Self>,
        tools: Option<ToolsHook>,
        surface: Option<SurfaceHook>,
    ) {
        for server in &self.servers {
            let mut followers: Vec<(watch::Receiver<u64>, Relist)> = Vec::new();
            if let Some(changes) = take(&server.changes) {
                followers.push((changes, Relist::Tools(tools.clone())));
            }
            if let Some([prompts, resources]) = take(&server.surface_changes) {
                followers.push((prompts, Relist::Surface(&[Kind::Prompts], surface.clone())));
                // Skills are resources (SEP-2640): they change with them.
                let all = &[Kind::Resources, Kind::ResourceTemplates, Kind::Skills];
                followers.push((resources, Relist::Surface(all, surface.clone())));
            }
            if followers.is_empty() {
                continue;
            }
            for (changes, relist) in followers {
                let follower = follow(
                    Arc::downgrade(self),
                    Arc::downgrade(server),
                    changes,
                    self.closed.clone(),
                    relist,
                );
                tokio::spawn(follower);
            }
            tokio::spawn(pump(Arc::downgrade(server), self.closed.clone()));
        }
    }
}

async fn follow(
    session: Weak<Session>,
    server: Weak<LiveServer>,
    mut changes: watch::Receiver<u64>,
    closed: CancellationToken,
    relist: Relist,
) {
    let mut last: Option<tokio::time::Instant> = None;
    loop {
        tokio::select! {
            changed = changes.changed() => if changed.is_err() { return },
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
        tokio::select! {
            going = relist_once(&session, &server, &relist) => if !going { return },
            _ = closed.cancelled() => return,
        }
    }
}

/// One re-list; `false` when the session is gone.
async fn relist_once(session: &Weak<Session>, server: &LiveServer, relist: &Relist) -> bool {
    match relist {
        Relist::Tools(hook) => {
            let listed = crate::connect::listing::list_tools(server.road(), server.timeout).await;
            let Ok((tools, hints, _)) = listed else {
                return true;
            };
            *server.tool_hints.lock().unwrap_or_else(|e| e.into_inner()) =
                (hints, std::time::Instant::now());
            let tools = crate::connect::tool_info::apply_filter(server.filter.as_deref(), tools);
            {
                let mut listing = server.listing.lock().unwrap_or_else(|e| e.into_inner());
                if *listing == tools {
                    return true;
                }
                *listing = tools.clone();
            }
            let Some(session) = session.upgrade() else {
                return false;
            };
            session.generation.fetch_add(1, Ordering::AcqRel);
            if let Some(hook) = hook {
                hook(&server.name, &tools);
            }
        }
        Relist::Surface(kinds, hook) => {
            for &kind in *kinds {
                let declared = server.caps.as_ref().is_some_and(|caps| kind.declared(caps));
                if !declared {
                    continue;
                }
                let listed =
                    crate::connect::listing::list_kind(server.road(), kind, server.timeout);
                let Ok(listed) = listed.await else { continue };
                {
                    let mut surface = server.surface.lock().unwrap_or_else(|e| e.into_inner());
                    let same = *surface.get(kind) == listed;
                    // Unchanged, it is fresh again all the same.
                    surface.set(kind, listed.clone());
                    if same {
                        continue;
                    }
                }
                let Some(session) = session.upgrade() else {
                    return false;
                };
                session.surface_generation.fetch_add(1, Ordering::AcqRel);
                if let Some(hook) = hook {
                    hook(&server.name, kind, &listed);
                }
            }
        }
    }
    true
}

/// A 2026-07-28 server that announces `listChanged` for its tools, prompts or resources is
/// asked for those notifications on one `subscriptions/listen` stream (acknowledged within the
/// server's timeout), each counted as the handshake era's notification is; older servers and
/// servers that refuse get none.
async fn pump(server: Weak<LiveServer>, closed: CancellationToken) {
    let Some(live) = server.upgrade() else { return };
    let subscribed = tokio::select! {
        subscribed = subscribe(&live) => subscribed,
        _ = closed.cancelled() => return,
    };
    drop(live);
    let Some(mut subscription) = subscribed else {
        return;
    };
    loop {
        let next = tokio::select! {
            next = subscription.next() => next,
            _ = closed.cancelled() => return,
        };
        let Ok(Some(notification)) = next else { return };
        let Some(live) = server.upgrade() else { return };
        let client = &live.client;
        match notification {
            ServerNotification::ToolListChangedNotification(_) => client.tools_changed.notify(),
            ServerNotification::PromptListChangedNotification(_) => client.prompts_changed.notify(),
            ServerNotification::ResourceListChangedNotification(_) => {
                client.resources_changed.notify()
            }
            _ => {}
        }
    }
}

async fn subscribe(server: &LiveServer) -> Option<Subscription> {
    let info = server.peer.peer_info()?;
    if info.protocol_version != ProtocolVersion::V_2026_07_28 {
        return None;
    }
    let caps = &info.capabilities;
    let tools = caps.tools.as_ref().and_then(|t| t.list_changed) == Some(true);
    let prompts = caps.prompts.as_ref().and_then(|p| p.list_changed) == Some(true);
    let resources = caps.resources.as_ref().and_then(|r| r.list_changed) == Some(true);
    if !(tools || prompts || resources) {
        return None;
    }
    let mut filter = SubscriptionFilter::builder();
    if tools {
        filter = filter.tools_list_changed();
    }
    if prompts {
        filter = filter.prompts_list_changed();
    }
    if resources {
        filter = filter.resources_list_changed();
    }
    tokio::time::timeout(server.timeout, server.peer.listen(filter.build()))
        .await
        .ok()?
        .ok()
}

fn take<T>(slot: &std::sync::Mutex<Option<T>>) -> Option<T> {
    slot.lock().unwrap_or_else(|e| e.into_inner()).take()
}
