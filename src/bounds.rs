//! Every timeout and bound of the engine, named in one place.

use std::time::Duration;

// serving

/// A served HTTP request body larger than this is refused (tool arguments can carry whole
/// documents, so be generous; the cap only stops runaway bodies).
pub const SERVE_MAX_BODY: usize = 16 * 1024 * 1024;
/// How long `stop()` lets in-flight requests finish before cutting them off.
pub const SERVE_DRAIN: Duration = Duration::from_secs(5);
/// A client has this long to send a request's headers.
pub const SERVE_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// A request body that sends nothing for this long is abandoned.
pub const SERVE_BODY_STALL_TIMEOUT: Duration = Duration::from_secs(15);
/// A connection with no request in flight and no bytes either way for this long is closed.
pub const SERVE_CONNECTION_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// Connections never exceed this, whatever the descriptor limit.
pub const SERVE_MAX_CONNECTIONS: usize = 4096;
/// Out of descriptors: the pause after evicting an idle connection, and when there was none.
pub const SERVE_ACCEPT_PAUSE_EVICTED: Duration = Duration::from_millis(2);
pub const SERVE_ACCEPT_PAUSE_FULL: Duration = Duration::from_millis(20);
/// A session no request has named for this long expires (`sessionIdleTimeout`).
pub const SERVE_SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(5 * 60);
/// Live sessions never exceed this (`maxSessions`); a new one ends the idlest.
pub const SERVE_MAX_SESSIONS: usize = 500;
/// Expired sessions are looked for every quarter of the idle timeout, within these bounds.
pub const SERVE_SWEEP_MIN: Duration = Duration::from_millis(10);
pub const SERVE_SWEEP_MAX: Duration = Duration::from_secs(15);
/// After this many sessions ended, freed memory is handed back to the system...
pub const SERVE_TRIM_AFTER_SESSIONS: usize = 256;
/// ...at most this often.
pub const SERVE_MIN_TRIM_GAP: Duration = Duration::from_secs(1);
/// How many 2026-07-28 runs may wait for their retry at once, across all clients of a server.
pub const SERVE_MAX_PARKED: usize = 1024;
/// How long such a run waits for its retry before it is dropped (and its `run` aborted).
pub const SERVE_PARK_TIMEOUT: Duration = Duration::from_secs(600);
/// How many incoming messages of an SDK transport may wait for the server before `push`
/// refuses more.
pub const SERVE_BRIDGE_BACKLOG: usize = 1024;
/// How many problems one invalid-arguments message names, so a huge bad input stays a short
/// answer.
pub const SERVE_MAX_ARGUMENT_PROBLEMS: usize = 5;
/// A schema with more `properties` than this is not compiled whole (a compiled validator costs
/// far more memory than the schema): each call is checked against the schema with only the
/// properties its arguments name, which `properties` makes the same check.
pub const SERVE_MAX_COMPILED_PROPERTIES: usize = 1000;
