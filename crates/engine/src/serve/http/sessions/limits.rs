//! The bounds on an endpoint's sessions, and when the sweeps hand memory back.

use std::time::{Duration, Instant};

use crate::bounds;

/// The bounds on the sessions of one endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLimits {
    pub idle_timeout: Duration,
    pub max_sessions: usize,
}

impl SessionLimits {
    /// How often to look for expired sessions: often enough that their memory comes back soon
    /// after they expire (a request to one is answered 404 at once regardless).
    pub(crate) fn sweep_period(&self) -> Duration {
        (self.idle_timeout / 4).clamp(bounds::SERVE_SWEEP_MIN, bounds::SERVE_SWEEP_MAX)
    }
}

impl Default for SessionLimits {
    fn default() -> Self {
        Self {
            idle_timeout: bounds::SERVE_SESSION_IDLE_TIMEOUT,
            max_sessions: bounds::SERVE_MAX_SESSIONS,
        }
    }
}

/// What the sweeps of one endpoint remember: how many sessions ended since the last trim,
/// and when that was.
#[derive(Default)]
pub(crate) struct SweepState {
    ended: usize,
    last_trim: Option<Instant>,
}

impl SweepState {
    /// `n` more sessions ended (expired or evicted).
    pub(crate) fn ended(&mut self, n: usize) {
        self.ended += n;
    }

    /// Whether to trim now (and if so, counting starts again).
    pub(crate) fn trim_due(&mut self) -> bool {
        let due = self
            .last_trim
            .is_none_or(|at| at.elapsed() >= bounds::SERVE_MIN_TRIM_GAP);
        if self.ended < bounds::SERVE_TRIM_AFTER_SESSIONS || !due {
            return false;
        }
        self.ended = 0;
        self.last_trim = Some(Instant::now());
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_is_trimmed_after_many_sessions_ended_and_not_more_than_once_a_second() {
        let mut state = SweepState::default();
        state.ended(bounds::SERVE_TRIM_AFTER_SESSIONS - 1);
        assert!(!state.trim_due());
        state.ended(1);
        assert!(state.trim_due());
        assert!(!state.trim_due(), "counting starts again");
        state.ended(bounds::SERVE_TRIM_AFTER_SESSIONS);
        assert!(!state.trim_due(), "a second trim waits for the gap");
    }
}
