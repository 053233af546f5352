//! A small map that forgets its oldest entries past a bound (the portable sessions' tables).

use std::collections::{HashMap, VecDeque};

/// A small map that forgets its oldest entries past a bound.
pub(super) struct Bounded<V> {
    max: usize,
    map: HashMap<String, V>,
    order: VecDeque<String>,
}

impl<V> Bounded<V> {
    pub(super) fn new(max: usize) -> Self {
        Self {
            max,
            map: HashMap::new(),
            order: VecDeque::new(),
        }
    }

    pub(super) fn insert(&mut self, key: String, value: V) {
        if self.map.insert(key.clone(), value).is_none() {
            self.order.push_back(key);
        }
        while self.map.len() > self.max.max(1) {
            match self.order.pop_front() {
                Some(old) => {
                    self.map.remove(&old);
                }
                None => break,
            }
        }
        // Keys taken meanwhile linger in the order: drop them once they outnumber the live.
        if self.order.len() > 2 * self.max.max(1) {
            let map = &self.map;
            self.order.retain(|k| map.contains_key(k));
        }
    }

    pub(super) fn take(&mut self, key: &str) -> Option<V> {
        self.map.remove(key)
    }

    /// Forgets the oldest entries while `stale` says so of them (entries go in in time order).
    pub(super) fn forget_while(&mut self, stale: impl Fn(&V) -> bool) {
        while let Some(old) = self.order.front() {
            match self.map.get(old) {
                Some(value) if !stale(value) => break,
                Some(_) => {
                    self.map.remove(old);
                }
                None => {}
            }
            self.order.pop_front();
        }
    }

    pub(super) fn contains(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }
}
