//! `source.searchTools` / `toolkit.searchTools`: a [`engine::search::Index`] over a list of
//! tools, built once per version of the list (lib/search.js keeps it while the list is the
//! same), searched from JavaScript. A loadMcp tool is read from its listing in Rust; the app's
//! own tools bring their name, description and input schema.

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::{Value, json};

use super::bounded::JsonValue;
use super::mcp_tools::LoadedTool;
use engine::search::{Doc, Index};

/// One tool to index (internal): a loadMcp tool's handle, or an own tool's fields.
#[napi(object, object_to_js = false)]
pub struct IndexedTool {
    pub name: String,
    #[napi(ts_type = "unknown")]
    pub mcp: Option<ExternalRef<Arc<LoadedTool>>>,
    pub description: Option<String>,
    pub title: Option<String>,
    #[napi(ts_type = "unknown")]
    pub input_schema: Option<JsonValue>,
}

/// One match: the position of the tool in the list indexed, its server and its score.
#[napi(object)]
pub struct IndexHit {
    pub index: u32,
    pub server: Option<String>,
    pub score: f64,
}

/// A ranked index over a list of tools (internal; see lib/search.js).
#[napi]
pub struct ToolIndex {
    index: Index,
    servers: Vec<Option<String>>,
}

#[napi]
impl ToolIndex {
    #[napi(constructor)]
    pub fn new(tools: Vec<IndexedTool>) -> Self {
        let mut servers = Vec::with_capacity(tools.len());
        let docs = tools
            .into_iter()
            .map(|tool| match tool.mcp {
                Some(handle) => {
                    let server = handle.server.name.clone();
                    let doc =
                        Doc::from_listing(&tool.name, Some(&server), &handle.listing.to_value());
                    servers.push(Some(server));
                    doc
                }
                None => {
                    let listing = json!({
                        "name": tool.name,
                        "title": tool.title,
                        "description": tool.description,
                        "inputSchema": tool.input_schema.map(|s| s.0).unwrap_or(Value::Null),
                    });
                    servers.push(None);
                    Doc::from_listing(&tool.name, None, &listing)
                }
            })
            .collect();
        Self {
            index: Index::new(docs),
            servers,
        }
    }

    /// The best `limit` matches of `query`, best first; `servers` keeps only those servers' tools.
    #[napi]
    pub fn search(&self, query: String, limit: u32, servers: Option<Vec<String>>) -> Vec<IndexHit> {
        self.index
            .search(&query, limit as usize, servers.as_deref())
            .into_iter()
            .map(|hit| IndexHit {
                index: hit.index as u32,
                server: self.servers.get(hit.index).cloned().flatten(),
                score: hit.score,
            })
            .collect()
    }
}
