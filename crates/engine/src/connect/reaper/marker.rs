//! What marks a server's process tree: the marker variable, this process's token, a tree.

use std::sync::OnceLock;

/// The environment variable that marks every process of a server's tree (see [`tree`]).
pub(crate) const MARKER_VAR: &str = "TOOLNEXUS_TREE";

/// One stdio server's process tree.
#[derive(Clone, Debug)]
// The marker and start time are read where /proc tells them (Linux).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) struct Tree {
    /// The server's pid, which is also its process group id.
    pub(crate) leader: i32,
    /// This server's entry in [`MARKER_VAR`]: `<host token>.<n>`.
    pub(crate) marker: String,
    /// The server's start time (clock ticks since boot; 0 when unknown): nothing started
    /// earlier belongs to the tree, and a reused pid is told apart by it.
    pub(crate) started: u64,
}

/// This process's token: its pid and a random part, so that no other process's markers match.
pub(crate) fn host_token() -> &'static str {
    static TOKEN: OnceLock<String> = OnceLock::new();
    TOKEN.get_or_init(|| {
        use std::hash::{BuildHasher, Hasher};
        // RandomState is seeded from the operating system's randomness.
        let random = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        format!("tnx{}-{random:016x}", std::process::id())
    })
}
