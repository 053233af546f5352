//! What both eras of task following share: the poll backoff, the front's status reports, the
//! task's time, and the front a task call's progress token is relayed to.

use std::sync::Arc;
use std::time::Duration;

use super::failure::NoResult;
use crate::bounds::{TASK_POLL_CAP, TASK_POLL_FLOOR, TASK_POLL_GRACE};
use crate::connect::relay::Front;
use crate::connect::relay::TaskUpdate;

/// How long to wait before the next `tasks/get`: the server's `pollInterval` while the task
/// changes and for [`TASK_POLL_GRACE`] after its last change, then doubled after each poll that
/// heard nothing new (up to [`TASK_POLL_CAP`]). A short status is still heard at the server's
/// pace, and a server suggesting 0 ms cannot make a call poll it a hundred times a second for
/// its whole life.
pub(super) struct Backoff {
    quiet_since: tokio::time::Instant,
    doublings: u32,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            quiet_since: tokio::time::Instant::now(),
            doublings: 0,
        }
    }
}

impl Backoff {
    pub(super) fn interval(&self, suggested: Duration) -> Duration {
        let doubled = suggested.saturating_mul(1 << self.doublings.min(16));
        doubled.min(TASK_POLL_CAP.max(suggested))
    }

    /// A poll heard the task as it was (`changed` false) or not.
    pub(super) fn heard(&mut self, changed: bool) {
        if changed {
            self.quiet_since = tokio::time::Instant::now();
            self.doublings = 0;
        } else if self.quiet_since.elapsed() >= TASK_POLL_GRACE {
            self.doublings = self.doublings.saturating_add(1);
        }
    }
}

/// A suggested poll interval (ms) within [`TASK_POLL_FLOOR`] and [`TASK_POLL_CAP`].
pub(super) fn bounded_poll(ms: f64) -> Duration {
    let ms = ms.clamp(0.0, TASK_POLL_CAP.as_millis() as f64);
    Duration::from_millis(ms.round() as u64).clamp(TASK_POLL_FLOOR, TASK_POLL_CAP)
}

/// Tells the front about a change of status (not the same status twice).
pub(super) fn report(
    front: Option<&Arc<dyn Front>>,
    last: &mut Option<TaskUpdate>,
    update: &TaskUpdate,
) {
    if last.as_ref() == Some(update) {
        return;
    }
    *last = Some(update.clone());
    if let Some(front) = front {
        front.status(update);
    }
}

/// What remains of a task call's time, or that it is up.
pub(super) fn remaining(
    deadline: tokio::time::Instant,
    timeout: Duration,
) -> Result<Duration, NoResult> {
    let left = deadline.saturating_duration_since(tokio::time::Instant::now());
    if left.is_zero() {
        Err(NoResult::TimedOut(timeout))
    } else {
        Ok(left)
    }
}

/// A task call's own front for its progress token: the call's front (when it has one) hears
/// what it would hear of a call, and each progress restarts the task's timeout.
pub(super) struct TaskFront {
    pub(super) front: Option<Arc<dyn Front>>,
    pub(super) progressed: tokio::sync::Notify,
}

#[allow(deprecated)] // the Front trait names logging and sampling (SEP-2577).
impl Front for TaskFront {
    fn progress(&self, param: rmcp::model::ProgressNotificationParam) {
        self.progressed.notify_one();
        if let Some(front) = &self.front {
            front.progress(param);
        }
    }

    fn log(&self, param: rmcp::model::LoggingMessageNotificationParam) {
        if let Some(front) = &self.front {
            front.log(param);
        }
    }

    fn elicit(
        &self,
        params: rmcp::model::ElicitRequestParams,
    ) -> futures::future::BoxFuture<'static, Option<rmcp::model::ElicitResult>> {
        match &self.front {
            Some(front) => front.elicit(params),
            None => Box::pin(async { None }),
        }
    }

    fn sample(
        &self,
        params: rmcp::model::CreateMessageRequestParams,
    ) -> futures::future::BoxFuture<'static, Option<rmcp::model::CreateMessageResult>> {
        match &self.front {
            Some(front) => front.sample(params),
            None => Box::pin(async { None }),
        }
    }
}

/// A request of the task that timed out timed out the whole task (its words name the call's
/// timeout, not what was left of it).
pub(super) fn whole(why: NoResult, timeout: Duration) -> NoResult {
    match why {
        NoResult::TimedOut(_) => NoResult::TimedOut(timeout),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polling_backs_off_while_nothing_changes() {
        let mut backoff = Backoff::default();
        let ten = Duration::from_millis(10);
        // Within the grace after a change: the server's pace.
        backoff.heard(false);
        assert_eq!(backoff.interval(ten), ten);
        // Quiet for longer: doubled after each poll that heard nothing new, up to the cap.
        backoff.quiet_since -= TASK_POLL_GRACE;
        let mut waits = Vec::new();
        for _ in 0..12 {
            backoff.heard(false);
            waits.push(backoff.interval(ten).as_millis());
        }
        assert_eq!(
            waits,
            [
                20, 40, 80, 160, 320, 640, 1280, 2560, 5000, 5000, 5000, 5000
            ]
        );
        backoff.heard(true);
        assert_eq!(
            backoff.interval(ten),
            ten,
            "a change: back to the server's interval"
        );
        // A suggestion over the cap (the server's, capped already) is never shortened.
        assert_eq!(backoff.interval(TASK_POLL_CAP), TASK_POLL_CAP);
    }
}
