//! A small map that forgets its oldest entries past a bound (the portable sessions' tables).
//!
//! The same key goes in and out many times (every request of a session puts its opened state
//! in and takes it out again), so the queue of keys in insertion order names each key with the
//! number of the insertion it records: a key taken or put in again leaves its older mentions
//! stale, and they are dropped as they come to the front or when the stale ones outnumber the
//! live. Each operation costs O(1), amortised.

use std::collections::{HashMap, VecDeque};

/// A small map that forgets its oldest entries past a bound.
pub(super) struct Bounded<V> {
    max: usize,
    /// Each key's value, with the number of the insertion that put it there.
    map: HashMap<String, (u64, V)>,
    /// Keys in insertion order, each with its insertion's number (stale when the map's differs).
    order: VecDeque<(u64, String)>,
    inserted: u64,
}

impl<V> Bounded<V> {
    pub(super) fn new(max: usize) -> Self {
        Self {
            max: max.max(1),
            map: HashMap::new(),
            order: VecDeque::new(),
            inserted: 0,
        }
    }

    /// Whether the queue's mention `(n, key)` is the key's current insertion.
    fn is_current(map: &HashMap<String, (u64, V)>, (n, key): &(u64, String)) -> bool {
        map.get(key).is_some_and(|(at, _)| at == n)
    }

    /// Puts `value` under `key` (as the newest entry, whether or not the key was there), then
    /// forgets the oldest entries past the bound.
    pub(super) fn insert(&mut self, key: String, value: V) {
        self.inserted += 1;
        let n = self.inserted;
        self.map.insert(key.clone(), (n, value));
        self.order.push_back((n, key));
        while self.map.len() > self.max {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            if Self::is_current(&self.map, &oldest) {
                self.map.remove(&oldest.1);
            }
        }
        // Stale mentions (of keys taken or put in again): dropped once they outnumber the live.
        if self.order.len() > 2 * self.max {
            let map = &self.map;
            self.order.retain(|mention| Self::is_current(map, mention));
        }
    }

    pub(super) fn take(&mut self, key: &str) -> Option<V> {
        self.map.remove(key).map(|(_, value)| value)
    }

    /// Forgets the oldest entries while `stale` says so of them (entries go in in time order).
    pub(super) fn forget_while(&mut self, stale: impl Fn(&V) -> bool) {
        while let Some(oldest) = self.order.front() {
            if let Some((n, value)) = self.map.get(&oldest.1)
                && *n == oldest.0
            {
                if !stale(value) {
                    break;
                }
                self.map.remove(&oldest.1);
            }
            self.order.pop_front();
        }
    }

    pub(super) fn contains(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }

    #[cfg(test)]
    fn queued(&self) -> usize {
        self.order.len()
    }
}

#[cfg(test)]
mod tests {
    use super::Bounded;

    #[test]
    fn forgets_the_oldest_past_its_bound() {
        let mut b = Bounded::new(2);
        b.insert("a".into(), 1);
        b.insert("b".into(), 2);
        b.insert("c".into(), 3);
        assert!(!b.contains("a"));
        assert_eq!(b.take("b"), Some(2));
        assert_eq!(b.take("c"), Some(3));
        assert_eq!(b.take("c"), None);
    }

    #[test]
    fn a_key_put_in_again_is_the_newest() {
        let mut b = Bounded::new(2);
        b.insert("a".into(), 1);
        b.insert("b".into(), 2);
        b.insert("a".into(), 3);
        b.insert("c".into(), 4);
        // "b" was the oldest once "a" went in again.
        assert!(!b.contains("b"));
        assert_eq!(b.take("a"), Some(3));
        assert_eq!(b.take("c"), Some(4));
    }

    #[test]
    fn one_key_put_in_and_taken_over_and_over_stays_small() {
        // A session's every request: its state in, then out (sometimes two at once).
        let mut b = Bounded::new(1024);
        for i in 0..100_000u64 {
            b.insert("session".into(), i);
            if i % 3 != 0 {
                assert_eq!(b.take("session"), Some(i));
            }
            assert!(b.queued() <= 2 * 1024 + 1, "{} queued at {i}", b.queued());
        }
        b.insert("other".into(), 0);
        assert!(b.contains("other"));
    }

    #[test]
    fn forget_while_stops_at_the_first_fresh_entry() {
        let mut b = Bounded::new(8);
        b.insert("old".into(), 1);
        b.insert("again".into(), 2);
        b.insert("fresh".into(), 10);
        b.insert("again".into(), 11);
        b.forget_while(|&v| v < 5);
        assert!(!b.contains("old"));
        assert!(b.contains("fresh"));
        assert!(b.contains("again"));
        b.forget_while(|&v| v < 11);
        assert!(!b.contains("fresh"));
        assert!(b.contains("again"));
    }
}
