//! The gateway: what a toolkit over an `mcp.json` relays of its loaded servers, served as one
//! MCP server by `serve`.
//!
//! - [`tool`]: a loaded server's tool served again ([`tool::LoadedTool`], [`tool::relayed`]):
//!   its call goes straight down the server's connection, with the calling client hearing the
//!   upstream's progress, logs and questions, and a task upstream followed within the call;
//! - [`upstream`]: a loaded session as the upstream of the served surface (resources,
//!   templates, prompts, their reads, completions and subscriptions).
//!
//! The served side (`serve::surface`, `serve::subscriptions`, `serve::changes`) composes what
//! these give; `js` only hands the loaded tools over.

pub mod tool;
pub mod upstream;

#[cfg(test)]
mod tests;
