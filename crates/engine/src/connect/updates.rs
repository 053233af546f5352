//! `notifications/resources/updated` of one server, handed to the listeners subscribed to each
//! URI (both eras deliver here: the handshake era through the client handler, 2026-07-28
//! through a `subscriptions/listen` stream).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Told the URI of an updated resource.
pub(crate) type UpdateListener = Arc<dyn Fn(&str) + Send + Sync>;

/// The listeners of one server's resources, by URI.
#[derive(Default)]
pub(crate) struct ResourceUpdates {
    listeners: Mutex<HashMap<String, Vec<(u64, UpdateListener)>>>,
    next: std::sync::atomic::AtomicU64,
}

impl ResourceUpdates {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<(u64, UpdateListener)>>> {
        self.listeners.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a listener of `uri`; its id removes it.
    pub(crate) fn add(&self, uri: &str, listener: UpdateListener) -> u64 {
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.lock()
            .entry(uri.to_string())
            .or_default()
            .push((id, listener));
        id
    }

    /// Removes a listener; `true` when it was the last one of its URI.
    pub(crate) fn remove(&self, uri: &str, id: u64) -> bool {
        let mut listeners = self.lock();
        let Some(list) = listeners.get_mut(uri) else {
            return false;
        };
        let before = list.len();
        list.retain(|(i, _)| *i != id);
        let removed = list.len() < before;
        if list.is_empty() {
            listeners.remove(uri);
        }
        removed && !listeners.contains_key(uri)
    }

    /// Whether `uri` has a listener.
    pub(crate) fn has(&self, uri: &str) -> bool {
        self.lock().contains_key(uri)
    }

    /// Tells every listener of `uri` (outside the lock: a listener may subscribe or leave).
    pub(crate) fn deliver(&self, uri: &str) {
        let listeners: Vec<UpdateListener> = match self.lock().get(uri) {
            Some(list) => list.iter().map(|(_, l)| l.clone()).collect(),
            None => return,
        };
        for listener in listeners {
            listener(uri);
        }
    }

    #[cfg(test)]
    /// How many URIs have listeners.
    pub(crate) fn count(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn listeners_are_told_and_the_last_one_out_says_so() {
        let updates = ResourceUpdates::default();
        let heard = Arc::new(AtomicUsize::new(0));
        let counter = |heard: &Arc<AtomicUsize>| -> UpdateListener {
            let heard = heard.clone();
            Arc::new(move |uri: &str| {
                assert_eq!(uri, "a://x");
                heard.fetch_add(1, Ordering::SeqCst);
            })
        };
        let one = updates.add("a://x", counter(&heard));
        let two = updates.add("a://x", counter(&heard));
        updates.deliver("a://x");
        updates.deliver("a://other");
        assert_eq!(heard.load(Ordering::SeqCst), 2);
        assert_eq!(updates.count(), 1);
        assert!(!updates.remove("a://x", one));
        assert!(
            !updates.remove("a://x", one),
            "removing twice is not the last"
        );
        assert!(updates.remove("a://x", two));
        assert!(!updates.has("a://x"));
        assert_eq!(updates.count(), 0);
        updates.deliver("a://x");
        assert_eq!(heard.load(Ordering::SeqCst), 2);
    }
}
