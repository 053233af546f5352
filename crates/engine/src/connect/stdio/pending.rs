//! The requests rmcp's side has sent a stdio server and not had answered yet, by id: the
//! framing checks that the answer to `initialize` is an initialize result, and that a bad
//! answer to one of ours is a broken framing rather than noise.

use std::collections::{HashMap, VecDeque};

use rmcp::model::RequestId;

use crate::bounds::MAX_PENDING_REQUESTS as MAX_PENDING;

/// Requests sent and not answered yet, by id, with whether each is the `initialize` request.
/// `order` is the sending order for forgetting the oldest; answered ids leave it lazily (taking
/// them out at once made every answer cost a scan of everything in flight).
#[derive(Default)]
pub(crate) struct Pending {
    initialize: HashMap<RequestId, bool>,
    order: VecDeque<RequestId>,
}

impl Pending {
    pub(crate) fn insert(&mut self, id: RequestId, initialize: bool) {
        if self.initialize.insert(id.clone(), initialize).is_none() {
            self.order.push_back(id);
        }
        while self.initialize.len() > MAX_PENDING {
            match self.order.pop_front() {
                Some(old) => {
                    self.initialize.remove(&old);
                }
                None => break,
            }
        }
        if self.order.len() > 2 * MAX_PENDING {
            let initialize = &self.initialize;
            self.order.retain(|id| initialize.contains_key(id));
        }
    }

    /// Whether `id` was pending (and whether it was `initialize`); it no longer is.
    pub(crate) fn take(&mut self, id: &RequestId) -> Option<bool> {
        self.initialize.remove(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_requests_are_bounded() {
        let mut pending = Pending::default();
        for id in 0..(MAX_PENDING as i64 + 10) {
            pending.insert(RequestId::Number(id), id == 0);
        }
        assert_eq!(pending.initialize.len(), MAX_PENDING);
        assert_eq!(pending.take(&RequestId::Number(0)), None);
        assert_eq!(
            pending.take(&RequestId::Number(MAX_PENDING as i64 + 9)),
            Some(false)
        );
    }
}
