//! Connections to MCP servers: transports, handshake, listing, calling and teardown.
//!
//! A [`Connection`] is started (a child spawned, or nothing yet for HTTP), initialised, used, and
//! always ended through [`Connection::shutdown`], whatever happened: success, failure, timeout,
//! abort and deadline share that one teardown path.

pub mod auth;
pub mod client;
mod connection;
pub mod elicit;
pub(crate) mod error;
pub(crate) mod execution;
pub(crate) mod http;
pub mod inventory;
pub(crate) mod lifecycle;
pub(crate) mod listing;
pub mod naming;
pub mod reaper;
pub(crate) mod reason;
pub mod relay;
mod remote;
pub(crate) mod road;
pub mod session;
pub(crate) mod sse;
pub mod stdio;
pub mod tool_info;
pub(crate) mod updates;
