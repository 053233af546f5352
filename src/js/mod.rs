//! The thin JavaScript boundary: conversions, the AbortSignal bridge and callbacks.

use napi_derive::napi;

/// Replaces every character outside `[A-Za-z0-9_-]` by `_` (one per UTF-16 code unit).
#[napi]
pub fn sanitize(value: String) -> String {
    crate::config::sanitize::sanitize(&value)
}
