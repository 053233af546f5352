//! toolnexus: MCP servers for Node.js agents.
//!
//! Layout: `config` parses and normalises `mcp.json`, `connect` owns connections to MCP servers
//! (transports, handshake, listing, calling, teardown), `serve` exposes tools as an MCP server,
//! `gateway` relays loaded servers through it, `compat` patches where rmcp falls short, and `js`
//! is the thin napi boundary (conversions, AbortSignal bridge, thread-safe callbacks). Rooms are
//! crate-private (so rustc reports dead code) but for what the integration tests under `tests/`
//! use (`config`, `serve`) and the napi boundary.

mod bounds;
pub(crate) mod compat;
pub mod config;
pub(crate) mod connect;
pub(crate) mod gateway;
pub mod js;
pub(crate) mod memory;
pub(crate) mod search;
pub mod serve;
pub(crate) mod surface;
pub(crate) mod tool_result;
pub(crate) mod tools;
