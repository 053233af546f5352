//! Every timeout and size bound, named, in one place: a section per area.

use std::time::Duration;

// connecting
//
// Configs.

/// The largest MCP config read from a file or given as text (16 MiB).
pub const MAX_CONFIG_BYTES: u64 = 16 * 1024 * 1024;
/// A server's timeout when its config gives none: each phase (start, listing, a call) gets it.
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;
/// The longest timeout a config may give (what a JavaScript timer can hold).
pub const MAX_TIMEOUT_MS: u64 = 2_147_483_647;

// Sessions and their phases.

/// A closing HTTP session gets at most this long to send its DELETE (less when the server's
/// timeout is shorter: closing is a phase too).
pub const HTTP_CLOSE_BOUND: Duration = Duration::from_secs(3);
/// The discover probe of `protocol: "auto"` takes at most half the phase's timeout, and never
/// more than this (rmcp's own probe bound).
pub const PROBE_BOUND: Duration = Duration::from_secs(10);
/// How long the user gets to authorise a server by OAuth (outside the server's timeout).
pub const USER_WAIT: Duration = Duration::from_secs(300);
/// One OAuth HTTP request (discovery, registration, token exchange).
pub const OAUTH_REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
/// The POST of one client message on a legacy SSE connection.
pub const SSE_POST_TIMEOUT: Duration = Duration::from_secs(60);
/// At most this many `tools/list` pages are followed.
pub const MAX_LIST_PAGES: usize = 1000;
/// The largest single tool a listing keeps (8 MiB of JSON).
pub const MAX_TOOL_BYTES: usize = 8 * 1024 * 1024;
/// A server's `notifications/tools/list_changed` is acted on this long after the last one of a
/// burst, and a re-listing follows the one before by at least `RELIST_MIN_INTERVAL`.
pub const RELIST_DEBOUNCE: Duration = Duration::from_millis(20);
pub const RELIST_MIN_INTERVAL: Duration = Duration::from_millis(100);

// Stdio children.

/// The longest line (one message) a stdio server may send. As rmcp's own bound, and the
/// streamable HTTP client's event bound, so what is acceptable over HTTP is acceptable over stdio.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
/// Bytes of lines read and not yet taken by rmcp's side, past which a reader stops reading (the
/// server then blocks on its full pipe).
pub const STDOUT_QUEUE_BYTES: usize = 16 * 1024 * 1024;
/// How many lines of a server's stray stdout are kept for a failure reason, and how much of each
/// line (or of a bad answer) is quoted.
pub const STDOUT_NOISE_LINES: usize = 3;
pub const STDOUT_QUOTE_CHARS: usize = 200;
/// How many of rmcp's requests awaiting an answer the framing remembers (older ones, timed out
/// long ago, are forgotten first).
pub const MAX_PENDING_REQUESTS: usize = 4096;
/// How much of a child's stderr is kept for failure reasons, and how much of it is quoted.
pub const STDERR_TAIL_BYTES: usize = 4096;
pub const STDERR_QUOTE_CHARS: usize = 1200;
/// How long a child gets to exit on its own after end of input, and again after SIGTERM.
pub const EXIT_GRACE: Duration = Duration::from_millis(100);
/// How long the server itself gets to be reaped once killed.
pub const REAP_BOUND: Duration = Duration::from_secs(2);
/// How long a killed process tree gets to be gone before what is left is killed again.
pub const TREE_END_BOUND: Duration = Duration::from_secs(2);
/// How often a killed tree is looked at until its processes are gone.
pub const TREE_POLL_INTERVAL: Duration = Duration::from_millis(2);
/// A failed server's exit is waited for this long, to say it in the reason.
pub const EXIT_WAIT_ON_FAILURE: Duration = Duration::from_millis(300);
/// A server that closed the connection mid-call: its exit is waited for this long.
pub const EXIT_WAIT_MID_CALL: Duration = Duration::from_millis(500);
/// Once a child has exited, its stderr drain gets this long to reach the end.
pub const STDERR_DRAIN_WAIT: Duration = Duration::from_millis(500);
