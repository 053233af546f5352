//! Every timeout and size bound, named, in one place: a section per area.

use std::time::Duration;

// connecting
//
// Configs.

/// The largest MCP config read from a file or given as text (16 MiB).
pub const MAX_CONFIG_BYTES: u64 = 16 * 1024 * 1024;
/// A server's timeout when its config gives none: each phase (start, listing, a call) gets it.
pub(crate) const DEFAULT_TIMEOUT_MS: u64 = 30_000;
/// The longest timeout a config may give (what a JavaScript timer can hold).
pub(crate) const MAX_TIMEOUT_MS: u64 = 2_147_483_647;

// Sessions and their phases.

/// A closing HTTP session gets at most this long to send its DELETE (less when the server's
/// timeout is shorter: closing is a phase too).
pub(crate) const HTTP_CLOSE_BOUND: Duration = Duration::from_secs(3);
/// The discover probe of `protocol: "auto"` takes at most half the phase's timeout, and never
/// more than this (rmcp's own probe bound).
pub(crate) const PROBE_BOUND: Duration = Duration::from_secs(10);
/// How long the user gets to authorise a server by OAuth (outside the server's timeout).
pub(crate) const USER_WAIT: Duration = Duration::from_secs(300);
/// One OAuth HTTP request (discovery, registration, token exchange).
pub(crate) const OAUTH_REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
/// The POST of one client message on a legacy SSE connection.
pub(crate) const SSE_POST_TIMEOUT: Duration = Duration::from_secs(60);
/// At most this many `tools/list` pages are followed.
pub(crate) const MAX_LIST_PAGES: usize = 1000;
/// The most items one listing of one server keeps, per kind (tools, resources, resource
/// templates, prompts); the rest are dropped with a warning, and no later page is read.
pub(crate) const MAX_LIST_ITEMS: usize = 10_000;
/// The most JSON one listing of one server keeps, per kind (its items' text together).
pub(crate) const MAX_LIST_BYTES: usize = 32 * 1024 * 1024;
/// The largest single tool a listing keeps (8 MiB of JSON).
pub(crate) const MAX_TOOL_BYTES: usize = 8 * 1024 * 1024;
/// The largest single resource, resource template or prompt a listing keeps (1 MiB of JSON).
pub(crate) const MAX_SURFACE_ITEM_BYTES: usize = 1 << 20;
/// How many distinct resource URIs one live server follows (`subscribe`).
pub(crate) const MAX_RESOURCE_SUBSCRIPTIONS: usize = 1024;
/// The most values one completion gives (rmcp's `CompletionInfo::MAX_VALUES`, the spec's 100).
pub(crate) const MAX_COMPLETION_VALUES: usize = rmcp::model::CompletionInfo::MAX_VALUES;
/// A server's `notifications/tools/list_changed` is acted on this long after the last one of a
/// burst, and a re-listing follows the one before by at least `RELIST_MIN_INTERVAL`.
pub(crate) const RELIST_DEBOUNCE: Duration = Duration::from_millis(20);
pub(crate) const RELIST_MIN_INTERVAL: Duration = Duration::from_millis(100);

// Tool calls run as tasks.

/// A server's suggested `pollInterval` is kept within these bounds (one given as nothing, or
/// as something else than a whole number of milliseconds, is `TASK_POLL_DEFAULT`).
pub(crate) const TASK_POLL_FLOOR: Duration = Duration::from_millis(10);
pub(crate) const TASK_POLL_CAP: Duration = Duration::from_secs(5);
pub(crate) const TASK_POLL_DEFAULT: Duration = Duration::from_secs(1);
/// How long after a task's last change its server's poll interval is kept as it is; past it,
/// each poll that hears nothing new doubles the wait (up to `TASK_POLL_CAP`).
pub(crate) const TASK_POLL_GRACE: Duration = Duration::from_secs(1);
/// A task's `notifications/tasks/status` queued for its call; past it the call polls instead.
pub(crate) const TASK_STATUS_QUEUE: usize = 64;
/// How long `tasks/cancel` gets once a task call is aborted or timed out.
pub(crate) const TASK_CANCEL_BOUND: Duration = Duration::from_secs(2);
/// The longest task id and status message kept (longer ones are refused / cut).
pub(crate) const TASK_MAX_ID_CHARS: usize = 1024;
pub(crate) const TASK_MAX_MESSAGE_CHARS: usize = 4096;

// Stdio children.

/// The longest line (one message) a stdio server may send. As rmcp's own bound, and the
/// streamable HTTP client's event bound, so what is acceptable over HTTP is acceptable over stdio.
pub(crate) const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
/// Bytes of lines read and not yet taken by rmcp's side, past which a reader stops reading (the
/// server then blocks on its full pipe).
#[cfg_attr(not(unix), allow(dead_code))] // unix-only paths
pub(crate) const STDOUT_QUEUE_BYTES: usize = 16 * 1024 * 1024;
/// How many lines of a server's stray stdout are kept for a failure reason, and how much of each
/// line (or of a bad answer) is quoted.
pub(crate) const STDOUT_NOISE_LINES: usize = 3;
pub(crate) const STDOUT_QUOTE_CHARS: usize = 200;
/// How many of rmcp's requests awaiting an answer the framing remembers (older ones, timed out
/// long ago, are forgotten first).
pub(crate) const MAX_PENDING_REQUESTS: usize = 4096;
/// How much of a child's stderr is kept for failure reasons, and how much of it is quoted.
pub(crate) const STDERR_TAIL_BYTES: usize = 4096;
pub(crate) const STDERR_QUOTE_CHARS: usize = 1200;
/// How long a child gets to exit on its own after end of input, and again after SIGTERM.
pub(crate) const EXIT_GRACE: Duration = Duration::from_millis(100);
/// How long the server itself gets to be reaped once killed.
pub(crate) const REAP_BOUND: Duration = Duration::from_secs(2);
/// How long a killed process tree gets to be gone before what is left is killed again.
#[cfg_attr(not(unix), allow(dead_code))] // unix-only paths
pub(crate) const TREE_END_BOUND: Duration = Duration::from_secs(2);
/// How often a killed tree is looked at until its processes are gone.
#[cfg_attr(not(unix), allow(dead_code))] // unix-only paths
pub(crate) const TREE_POLL_INTERVAL: Duration = Duration::from_millis(2);
/// A failed server's exit is waited for this long, to say it in the reason.
pub(crate) const EXIT_WAIT_ON_FAILURE: Duration = Duration::from_millis(300);
/// A server that closed the connection mid-call: its exit is waited for this long.
pub(crate) const EXIT_WAIT_MID_CALL: Duration = Duration::from_millis(500);
/// Once a child has exited, its stderr drain gets this long to reach the end. Not shorter: the
/// drain is a task of the runtime, and while many servers start at once the runtime's threads
/// are busy forking them (each fork of a large Node process takes milliseconds), so a drain
/// given 500 ms sometimes had not yet read a crashed server's last words (faults-http's 100
/// servers, beside a CPU hog: 1 in 8). It costs only a server that exits while something it
/// started keeps its stderr open.
pub(crate) const STDERR_DRAIN_WAIT: Duration = Duration::from_secs(2);

// serving

/// How many (client, resource URI) subscriptions one served endpoint keeps.
pub(crate) const SERVE_MAX_SUBSCRIPTIONS: usize = 4096;
/// The `ttlMs` served lists and reads carry when neither the config nor an upstream gives one.
pub(crate) const SERVE_DEFAULT_TTL_MS: u64 = 0;
/// A served HTTP request body larger than this is refused (tool arguments can carry whole
/// documents, so be generous; the cap only stops runaway bodies).
pub(crate) const SERVE_MAX_BODY: usize = 16 * 1024 * 1024;
/// How long `stop()` lets in-flight requests finish before cutting them off.
pub(crate) const SERVE_DRAIN: Duration = Duration::from_secs(5);
/// A client has this long to send a request's headers.
pub(crate) const SERVE_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// A request body that sends nothing for this long is abandoned.
pub(crate) const SERVE_BODY_STALL_TIMEOUT: Duration = Duration::from_secs(15);
/// A connection with no request in flight and no bytes either way for this long is closed.
pub(crate) const SERVE_CONNECTION_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// Connections never exceed this, whatever the descriptor limit.
pub(crate) const SERVE_MAX_CONNECTIONS: usize = 4096;
/// Out of descriptors: the pause after evicting an idle connection, and when there was none.
pub(crate) const SERVE_ACCEPT_PAUSE_EVICTED: Duration = Duration::from_millis(2);
pub(crate) const SERVE_ACCEPT_PAUSE_FULL: Duration = Duration::from_millis(20);
/// A session no request has named for this long expires (`sessionIdleTimeout`).
pub(crate) const SERVE_SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(5 * 60);
/// Live sessions never exceed this (`maxSessions`); a new one ends the idlest.
pub(crate) const SERVE_MAX_SESSIONS: usize = 500;
/// Expired sessions are looked for every quarter of the idle timeout, within these bounds.
pub(crate) const SERVE_SWEEP_MIN: Duration = Duration::from_millis(10);
pub(crate) const SERVE_SWEEP_MAX: Duration = Duration::from_secs(15);
/// After this many sessions ended, freed memory is handed back to the system...
pub(crate) const SERVE_TRIM_AFTER_SESSIONS: usize = 256;
/// ...at most this often.
pub(crate) const SERVE_MIN_TRIM_GAP: Duration = Duration::from_secs(1);
/// How many 2026-07-28 runs may wait for their retry at once, across all clients of a server.
pub(crate) const SERVE_MAX_PARKED: usize = 1024;
/// How long such a run waits for its retry before it is dropped (and its `run` aborted).
pub(crate) const SERVE_PARK_TIMEOUT: Duration = Duration::from_secs(600);
/// How many retried `requestState`s (with a state key) one replica remembers, so that a replay
/// is refused: each until its state expires; past this count the oldest are forgotten early.
pub(crate) const SERVE_MAX_SPENT_STATES: usize = 65_536;
/// How many tasks a served server keeps at once (running or ended, not yet expired), across all
/// clients.
pub(crate) const SERVE_MAX_TASKS: usize = 1024;
/// How many of those one owner (a session, or a principal) may hold at once, so one client
/// cannot take every slot.
pub(crate) const SERVE_MAX_TASKS_PER_OWNER: usize = 128;
/// The shortest ttl a task gets (a ttl of 0 would be gone before its id could be read).
pub(crate) const SERVE_TASK_MIN_TTL: Duration = Duration::from_secs(1);
/// A task's ttl when its client asks for none...
pub(crate) const SERVE_TASK_DEFAULT_TTL: Duration = Duration::from_secs(600);
/// ...and the most it may ask for (a task is removed when its ttl passes).
pub(crate) const SERVE_TASK_MAX_TTL: Duration = Duration::from_secs(3600);
/// The most bytes of results ended tasks keep together, per server: past it the tasks that
/// ended first are forgotten (as if expired).
pub(crate) const SERVE_TASK_RESULT_BYTES: usize = 256 * 1024 * 1024;
/// How often a served task's client is asked to poll it.
pub(crate) const SERVE_TASK_POLL_INTERVAL: Duration = Duration::from_millis(500);
/// The most a sealed `requestState` carries of a call's earlier answers (serialized bytes): a
/// call whose answers outgrow it can be continued only by the replica that holds its run.
pub(crate) const SERVE_STATE_MAX_ANSWERS: usize = 256 * 1024;
/// How many incoming messages of an SDK transport may wait for the server before `push`
/// refuses more.
pub(crate) const SERVE_BRIDGE_BACKLOG: usize = 1024;
/// How many problems one invalid-arguments message names, so a huge bad input stays a short
/// answer.
pub(crate) const SERVE_MAX_ARGUMENT_PROBLEMS: usize = 5;
/// A schema with more `properties` than this is not compiled whole (a compiled validator costs
/// far more memory than the schema): each call is checked against the schema with only the
/// properties its arguments name, which `properties` makes the same check.
pub(crate) const SERVE_MAX_COMPILED_PROPERTIES: usize = 1000;
/// How long a forwarded call's result waits for the upstream's progress and logs, relayed before
/// it, to reach the client (a client that stopped reading cannot hold the result back).
pub(crate) const SERVE_RELAY_FLUSH: Duration = Duration::from_secs(5);
/// A portable handshake-era session id (serving with a state key) is accepted this long after
/// it was issued, on any replica sharing the key. An active session's id is issued again
/// (see [`SERVE_PORTABLE_SESSION_RENEW`]), so the lifetime bounds how long a session may idle.
pub(crate) const SERVE_PORTABLE_SESSION_LIFETIME: Duration = Duration::from_secs(24 * 60 * 60);
/// A request naming a portable session id older than this is answered with the session's id
/// issued anew (the same session, a fresh `issued`): clients take the newest `Mcp-Session-Id`.
pub(crate) const SERVE_PORTABLE_SESSION_RENEW: Duration = Duration::from_secs(60 * 60);
/// How many sessions ended by DELETE one replica keeps refusing, each for the lifetime (after
/// which its ids have expired anyway); past this count the oldest are forgotten early. Other
/// replicas accept their ids until the lifetime ends.
pub(crate) const SERVE_PORTABLE_DENIED: usize = 65_536;
/// How many opened session states (and fresh sessions' handshakes) wait for rmcp at once.
pub(crate) const SERVE_PORTABLE_PENDING: usize = 1024;
/// A client's answer forwarded to the replica whose request it answers.
pub(crate) const SERVE_FORWARD_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one operation on a shared state store (`stateStore`) may take: past it the request
/// that needed it fails in words.
pub(crate) const SERVE_STORE_TIMEOUT: Duration = Duration::from_secs(2);
/// A task in a shared state store is held by the replica running it for this long at a time
/// (its lease): a task whose runner stops renewing it (it died, or lost the store) is ended
/// `failed` by the next replica that reads it.
pub(crate) const SERVE_TASK_LEASE: Duration = Duration::from_secs(6);
/// How often the runner renews its lease...
pub(crate) const SERVE_TASK_LEASE_RENEW: Duration = Duration::from_secs(2);
/// ...and how often it asks the store whether its task was cancelled or answered elsewhere (a
/// `tasks/result` on another replica asks as often whether the task ended).
pub(crate) const SERVE_TASK_STORE_POLL: Duration = Duration::from_millis(250);
/// The most bytes of one task's record (its result, failure or input requests) a shared store
/// keeps: a larger result ends the task `failed`, in words.
pub(crate) const SERVE_STORE_TASK_BYTES: usize = 4 * 1024 * 1024;
/// How many of one client's tasks `tasks/list` reads from a shared store.
pub(crate) const SERVE_STORE_TASK_LIST: usize = 1024;
/// How many messages (a client's answers) wait for a task's runner at once in a shared store.
pub(crate) const SERVE_STORE_TASK_INBOX: usize = 64;
/// How long a served HTTP server's `close()` waits for its endpoint to stop.
pub const SERVE_STOP_BOUND: Duration = Duration::from_secs(10);

// Serving auth: the tokens the guard reads, its requests to an OAuth issuer.

/// A presented token longer than this is refused unread (16 KiB).
pub(crate) const AUTH_MAX_TOKEN_BYTES: usize = 16 * 1024;
/// One request to the OAuth issuer (metadata, keys, introspection).
pub(crate) const AUTH_FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// The largest answer read from the issuer (256 KiB).
pub(crate) const AUTH_FETCH_MAX_BYTES: usize = 256 * 1024;
/// A token naming an unknown key refetches the key set at most this often.
pub(crate) const AUTH_KEYS_REFETCH_MIN: Duration = Duration::from_secs(10);
/// The key set is fetched again when it is older than this.
pub(crate) const AUTH_KEYS_REFRESH_AFTER: Duration = Duration::from_secs(15 * 60);
/// An introspection answer is reused at most this long (never past the token's `exp`)...
pub(crate) const AUTH_INTROSPECTION_TTL: Duration = Duration::from_secs(60);
/// ...for at most this many tokens.
pub(crate) const AUTH_INTROSPECTION_CACHE_ENTRIES: usize = 1000;
/// The most leeway `clockSkew` may give.
pub(crate) const AUTH_MAX_CLOCK_SKEW: Duration = Duration::from_secs(600);
/// An app's token check (`auth.tokens` as a function) that has not answered by then fails the
/// request (500), so a stalled backend cannot hold connections for ever.
pub const AUTH_VERIFY_TIMEOUT: Duration = Duration::from_secs(10);
/// Rate limits keep at most this many callers' buckets; newcomers past it share one.
pub(crate) const SERVE_LIMIT_MAX_CALLERS: usize = 100_000;
/// A caller not seen for this long is forgotten (its bucket would be full again anyway).
pub(crate) const SERVE_LIMIT_FORGET_AFTER: Duration = Duration::from_secs(10 * 60);
/// A policy hook (`beforeCall`, `afterCall`) that has not answered by then fails its call in
/// words, so a stalled policy cannot hold calls for ever.
pub const HOOK_TIMEOUT: Duration = Duration::from_secs(10);

// the JavaScript boundary

/// How long a loaded stdio server's transport gets to hand its stdout over to the chosen reader
/// (past it, the stdout stays with the transport and is read on the runtime).
#[cfg_attr(not(unix), allow(dead_code))] // unix-only paths
pub const STDOUT_HANDOVER_BOUND: Duration = Duration::from_secs(1);
