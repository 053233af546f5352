//! The guard's bounds (kept beside it; `crate::bounds` may take them over).

use std::time::Duration;

/// One request to the OAuth issuer (metadata, keys, introspection).
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// The largest answer read from the issuer (256 KiB).
pub const FETCH_MAX_BYTES: usize = 256 * 1024;
/// A presented token longer than this is refused unread (16 KiB).
pub const MAX_TOKEN_BYTES: usize = 16 * 1024;
/// A token naming an unknown key refetches the key set at most this often.
pub const KEYS_REFETCH_MIN: Duration = Duration::from_secs(10);
/// The key set is fetched again when it is older than this.
pub const KEYS_REFRESH_AFTER: Duration = Duration::from_secs(15 * 60);
/// An introspection answer is reused at most this long (never past the token's `exp`)...
pub const INTROSPECTION_TTL: Duration = Duration::from_secs(60);
/// ...for at most this many tokens.
pub const INTROSPECTION_CACHE_ENTRIES: usize = 1000;
/// The most leeway `clockSkew` may give.
pub const MAX_CLOCK_SKEW: Duration = Duration::from_secs(600);
