//! The task engine on its own: runs of native callers, no transport.
