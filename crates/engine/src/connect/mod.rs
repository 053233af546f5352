//! Connections to MCP servers: transports, handshake, listing, calling and teardown.
//!
//! A [`Connection`] is started (a child spawned, or nothing yet for HTTP), initialised, used, and
//! always ended through [`Connection::shutdown`], whatever happened: success, failure, timeout,
//! abort and deadline share that one teardown path.

pub mod auth;
pub mod client;
mod connection;
pub mod elicit;
pub mod error;
pub mod execution;
pub mod http;
pub mod inventory;
pub mod lifecycle;
pub mod listing;
pub mod naming;
pub mod reaper;
pub mod reason;
pub mod relay;
mod remote;
pub mod road;
pub mod session;
pub mod sse;
pub mod stdio;
pub mod tool_info;
pub mod updates;
