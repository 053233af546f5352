//! Parsing and normalising `mcp.json` in every common client dialect.

pub mod sanitize;
