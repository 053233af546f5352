//! toolnexus: MCP servers for Node.js agents.
//!
//! Layout: `config` parses and normalises `mcp.json`, `connect` owns connections to MCP servers
//! (transports, handshake, listing, calling, teardown), `serve` exposes tools as an MCP server, `gateway` relays loaded servers through it,
//! and `js` is the thin napi boundary (conversions, AbortSignal bridge, thread-safe callbacks).

mod bounds;
pub mod compat;
pub mod config;
pub mod connect;
pub mod gateway;
pub mod js;
pub mod memory;
pub mod search;
pub mod serve;
pub mod surface;
pub mod tool_result;
pub mod tools;
