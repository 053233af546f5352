//! The engine of toolnexus, with no Node.js in it: `cargo test` of this crate needs no Node.
//!
//! Layout: `config` parses and normalises `mcp.json`, `connect` owns connections to MCP servers
//! (transports, handshake, listing, calling, teardown), `serve` exposes tools as an MCP server,
//! `gateway` relays loaded servers through it, and `compat` patches where rmcp falls short. The
//! napi binding (the `toolnexus` crate at the repository root) only converts and wires; what it
//! reaches is `pub` here, and everything else is crate-private, so rustc reports dead code.
//! `unreachable_pub` (denied with the rest of the warnings in `npm test`) keeps it so: a `pub`
//! item that the binding cannot reach is an error.

#![warn(unreachable_pub)]

pub mod bounds;
pub(crate) mod compat;
pub mod config;
pub mod connect;
pub mod gateway;
pub(crate) mod memory;
pub mod search;
pub mod serve;
pub mod skills;
pub mod surface;
pub mod telemetry;
pub mod tool_result;
pub mod tools;
