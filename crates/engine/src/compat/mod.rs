//! Where rmcp 3.11 falls short of what toolnexus needs, one file per gap: each says what rmcp
//! does, what the patch does instead, and has a test that fails once rmcp changes, so the patch
//! can be deleted.
//!
//! - [`execution`]: a listed tool's `execution` is dropped when rmcp reads a listing.
//!
//! Patches that live where they act, for now (each names its gap in its own docs):
//! - `serve::wire` and `serve::http::sessions`: the served `tools/list` puts `execution` back;
//! - `serve::task_legacy`: the 2025-11-25 task methods and `params.task`, which rmcp 3.x only
//!   knows as the 2026-07-28 extension;
//! - `serve::http`: a body rmcp cannot parse is a JSON-RPC parse error, not its 415;
//! - `connect::sse`: the 2024-11-05 HTTP+SSE client transport, which rmcp 3.x does not ship;
//! - `connect::http::streamable`: every request and stream ended with the connection (rmcp's
//!   worker does not watch its own cancellation on its first POST).

pub(crate) mod execution;
