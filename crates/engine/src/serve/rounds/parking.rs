//! Where runs wait for their retry: [`Parking`]'s methods (park, take, spend), and which parked
//! run makes room for a new one when the space is full ([`make_room`]).
#![allow(deprecated)] // sampling and roots are deprecated by SEP-2577 but still served.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

use rmcp::model::InputRequiredResult;
use serde_json::{Map, json};

use super::{Limits, MAX_SPENT, Parked, Parking, Running, Sealed, SubjectKind, new_state};
use crate::serve::seal;

/// What [`make_room`] weighs of a parked run.
struct Waiting<'a> {
    handle: &'a str,
    owner: Option<&'a str>,
    since: Instant,
    portable: bool,
}

/// Which parked run, if any, makes room for a new run of `owner` when the space is full.
///
/// A run whose call its sealed state can continue (`portable`) is only a shortcut: dropping it
/// makes its retry run the call again. Behind a balancer most retries reach another replica and
/// leave their run here unclaimed. So the room comes from the newcomer's own runs or from
/// another principal's holding at least as many as the newcomer then would, the heaviest first
/// (the newcomer's own between equals): a principal that floods the space drops its own oldest
/// runs, never another's. A run that cannot be continued elsewhere is never dropped (the call is refused).
fn make_room<'a>(
    waiting: impl Iterator<Item = Waiting<'a>>,
    owner: Option<&str>,
) -> Option<String> {
    let waiting: Vec<Waiting<'a>> = waiting.collect();
    let mut held: HashMap<Option<&str>, usize> = HashMap::new();
    for run in &waiting {
        *held.entry(run.owner).or_default() += 1;
    }
    let newcomer = held.get(&owner).copied().unwrap_or(0) + 1;
    let mut owners: Vec<(Option<&str>, usize)> = held
        .into_iter()
        .filter(|&(who, count)| who == owner || count >= newcomer)
        .collect();
    // The heaviest first; between equals, the newcomer's own, then in a stable order.
    owners.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then_with(|| (b.0 == owner).cmp(&(a.0 == owner)))
            .then_with(|| a.0.cmp(&b.0))
    });
    owners.into_iter().find_map(|(candidate, _)| {
        waiting
            .iter()
            .filter(|run| run.owner == candidate && run.portable)
            .min_by_key(|run| run.since)
            .map(|run| run.handle.to_string())
    })
}

impl Parking {
    pub(crate) fn new(limits: Limits) -> Self {
        Self {
            runs: Mutex::default(),
            limits,
            spent: Mutex::default(),
        }
    }

    /// Marks the sealed state of `handle` (good until `expires`, ms since the epoch) retried
    /// here: false when it was already, so a replayed retry is refused instead of running the
    /// call again. Once per replica: another replica sharing the key has its own record, unless
    /// they share a state store too (see `drive::retry`, which asks it after this).
    pub(crate) fn spend(&self, handle: &str, expires: u64) -> bool {
        let mut spent = self.spent.lock().unwrap_or_else(|e| e.into_inner());
        let now = seal::now_millis();
        while let Some((old, until)) = spent.order.front().cloned() {
            if until >= now && spent.until.len() < MAX_SPENT {
                break;
            }
            spent.order.pop_front();
            if spent.until.get(&old) == Some(&until) {
                spent.until.remove(&old);
            }
        }
        if spent.until.contains_key(handle) {
            return false;
        }
        spent.until.insert(handle.to_string(), expires);
        spent.order.push_back((handle.to_string(), expires));
        true
    }

    /// Forgets that `handle` was retried here: its retry could not be checked against the shared
    /// store, so it did not go on, and the same state may be retried again.
    pub(crate) fn unspend(&self, handle: &str) {
        let mut spent = self.spent.lock().unwrap_or_else(|e| e.into_inner());
        spent.until.remove(handle);
        // Its place in `order` goes when it would have expired (a later spend re-adds it).
    }

    /// Parks `run` until its retry and answers the call with what it waits on.
    pub(crate) fn park(self: &Arc<Self>, mut run: Running) -> Result<InputRequiredResult, String> {
        let mut requests = Map::new();
        for pending in &run.pending {
            requests.insert(pending.key.clone(), pending.request());
        }
        run.round += 1;
        let handle = new_state();
        let (state_out, portable) = match seal::key_of(&run.ctx.request()) {
            Some(key) => {
                let sealed = Sealed::of(&run, &handle, self.limits.timeout);
                (sealed.seal(&key), sealed.answers.is_some())
            }
            None => (handle.clone(), false),
        };
        let state = handle;
        let owner = crate::serve::caller::owner_of(&run.ctx.request());
        {
            let mut runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
            let timeout = self.limits.timeout;
            runs.retain(|_, parked| parked.since.elapsed() < timeout);
            if runs.len() >= self.limits.max {
                let waiting = runs.iter().map(|(handle, parked)| Waiting {
                    handle,
                    owner: parked.owner.as_deref(),
                    since: parked.since,
                    portable: parked.portable,
                });
                match make_room(waiting, owner.as_deref()) {
                    Some(victim) => drop(runs.remove(&victim)),
                    None => {
                        return Err(format!(
                            "{} calls are already waiting for their clients' input; try again later",
                            runs.len()
                        ));
                    }
                }
            }
            let parked = Parked {
                since: Instant::now(),
                run,
                portable,
                owner,
            };
            runs.insert(state.clone(), parked);
        }
        // A client that never retries: the run is dropped (aborted) when its time is up.
        let parking: Weak<Self> = Arc::downgrade(self);
        let (key, timeout) = (state.clone(), self.limits.timeout);
        tokio::spawn(async move {
            tokio::time::sleep(timeout).await;
            if let Some(parking) = parking.upgrade() {
                let expired = parking
                    .runs
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&key);
                drop(expired);
            }
        });
        serde_json::from_value(json!({
            "resultType": "input_required",
            "inputRequests": requests,
            "requestState": state_out,
        }))
        .map_err(|e| format!("input requests could not be sent: {e}"))
    }

    /// The run parked under `state`, taken out for its retry, if it is one of `kind` `name`;
    /// a retry naming another leaves it waiting and learns whose run it is.
    pub(crate) fn take(
        &self,
        state: &str,
        kind: SubjectKind,
        name: &str,
        owner: Option<&str>,
    ) -> Result<Running, Option<String>> {
        let mut runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
        match runs.get(state).map(|parked| &parked.run) {
            Some(run) if run.ctx.owner().as_deref() != owner => return Err(None),
            Some(run) if run.subject.kind != kind || run.subject.name != name => {
                let of = &run.subject;
                return Err(Some(format!("{} \"{}\"", of.kind.call_of(), of.name)));
            }
            Some(_) => {}
            None => return Err(None),
        }
        match runs.remove(state) {
            Some(parked) if parked.since.elapsed() < self.limits.timeout => Ok(parked.run),
            _ => Err(None),
        }
    }

    #[cfg(test)]
    pub(crate) fn count(&self) -> usize {
        self.runs.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Ends every waiting run (its retry can no longer arrive): each is aborted and its input
    /// requests fail, so nothing of it is left pending on the JavaScript side either.
    pub(crate) fn clear(&self) {
        let runs = std::mem::take(&mut *self.runs.lock().unwrap_or_else(|e| e.into_inner()));
        drop(runs);
    }
}

#[cfg(test)]
mod room_tests {
    use std::time::{Duration, Instant};

    use super::{Waiting, make_room};

    /// Parked runs as (handle, owner, age in seconds, portable).
    fn room(runs: &[(&str, Option<&str>, u64, bool)], owner: Option<&str>) -> Option<String> {
        let now = Instant::now() + Duration::from_secs(1000);
        make_room(
            runs.iter().map(|&(handle, who, age, portable)| Waiting {
                handle,
                owner: who,
                since: now - Duration::from_secs(age),
                portable,
            }),
            owner,
        )
    }

    #[test]
    fn a_flooding_principal_drops_its_own_runs_never_anothers() {
        let (mallory, alice, bob) = (Some("mallory"), Some("alice"), Some("bob"));
        let full = [
            ("a1", alice, 100, true),
            ("m1", mallory, 90, true),
            ("m2", mallory, 80, true),
            ("m3", mallory, 70, true),
            ("b1", bob, 60, true),
        ];
        // Mallory's next run drops Mallory's oldest, though Alice's is older.
        assert_eq!(room(&full, mallory).as_deref(), Some("m1"));
        // Bob (one held) drops from the heaviest: Mallory's oldest.
        assert_eq!(room(&full, bob).as_deref(), Some("m1"));
        // A newcomer with none drops from the heaviest too.
        assert_eq!(room(&full, Some("carol")).as_deref(), Some("m1"));
        // Alice's oldest is never the one dropped for anyone else.
        for who in [mallory, bob, Some("carol"), None] {
            assert_ne!(room(&full, who).as_deref(), Some("a1"));
        }
    }

    #[test]
    fn only_from_whoever_holds_at_least_as_many_and_only_portable_runs() {
        let (alice, bob) = (Some("alice"), Some("bob"));
        // Equal holdings: the newcomer drops its own oldest, not the other's.
        let even = [("a1", alice, 100, true), ("b1", bob, 90, true)];
        assert_eq!(room(&even, bob).as_deref(), Some("b1"));
        assert_eq!(room(&even, alice).as_deref(), Some("a1"));
        // Bob's runs cannot be continued elsewhere: Alice (one) cannot take Bob's (three), nor
        // drop her own, which is not portable either; Bob's own newcomer is refused too.
        let pinned = [
            ("a1", alice, 100, false),
            ("b1", bob, 90, false),
            ("b2", bob, 80, false),
            ("b3", bob, 70, false),
        ];
        assert_eq!(room(&pinned, alice), None);
        assert_eq!(room(&pinned, bob), None);
        // Without auth everyone is one owner: the oldest portable run, as before.
        let anonymous = [
            ("x", None, 50, false),
            ("y", None, 40, true),
            ("z", None, 30, true),
        ];
        assert_eq!(room(&anonymous, None).as_deref(), Some("y"));
    }
}
