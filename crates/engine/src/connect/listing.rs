//! Listing a server's tools: every page, following `nextCursor`, as [`ToolInfo`]s (each tool
//! kept as its JSON text, see [`super::tool_info`]).
//!
//! A stdio server in the handshake era is asked through its direct requests
//! ([`super::stdio::direct`]), and each page is read straight from its JSON text. rmcp reads a page into its typed `ServerJsonRpcMessage` (serde buffers the whole result to try
//! the untagged result kinds, so the page is read twice), and each typed `Tool` is then turned
//! back into JSON. Here a page is read once, from text to text: the tool's schemas and `_meta`
//! are passed on as the text they came as (read only to their first level), and rmcp's own
//! types read where rmcp checks a shape (annotations, icons), so a page is accepted or refused
//! as rmcp would, and each tool comes out as [`typed_tool_info`] makes it from rmcp's `Tool`:
//! same keys, same order.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use futures::future::MaybeDone;

use rmcp::model::{Icon, ToolAnnotations};
use rmcp::service::{Peer, RoleClient};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::error::{self, ConnectError};
use super::reason;
use super::road::Road;
use super::stdio::direct::Direct;
use super::tool_info::{RawObject, ToolInfo, ToolRefused, check_size, object_text, text_of};
use crate::tools::{SCHEMA_COMPLETION, complete_schema};

pub(crate) use crate::bounds::MAX_LIST_PAGES;
use crate::surface::{Hints, scope_of};

mod paging;
mod surface;
pub(crate) use crate::surface::Truncated;
use paging::{Budget, Cursors, Merged, failed, page_params, too_many_pages, typed_page_params};
#[cfg(test)]
pub(crate) use surface::read_surface_page;
pub(crate) use surface::{list_kind, list_surface};

/// Every tool the server lists, following `nextCursor`, as `ToolInfo`s. The
/// listing is one phase: `timeout` bounds all of its pages together, so a server that pages
/// slowly (or hands out fresh cursors forever) fails at the timeout, not after it per page.
/// The caching hints of all pages come merged.
pub(crate) async fn list_tools(
    road: Road<'_>,
    timeout: Duration,
) -> Result<ListedTools, ConnectError> {
    let listing = async {
        match road {
            Road::Direct(direct) => list_pipelined(direct).await,
            Road::Rmcp(peer) => list_typed(peer).await,
        }
    };
    let listing = error::phase("tools/list", timeout, listing);
    crate::telemetry::listing("tools/list", listing, error::ConnectError::error_type).await
}

/// A server's tools as listed: the tools, their pages' caching hints merged, and what the
/// listing's bound left out.
pub(crate) type ListedTools = (Vec<ToolInfo>, Hints, Option<Truncated>);

/// rmcp's typed requests, one page after another.
async fn list_typed(peer: &Peer<RoleClient>) -> Result<ListedTools, ConnectError> {
    let mut tools = Vec::new();
    let mut hints = Merged::default();
    let mut cursors = Cursors::of("tools/list");
    let mut cursor: Option<String> = None;
    let mut budget = Budget::default();
    for _ in 0..MAX_LIST_PAGES {
        let page = rmcp_page(peer, cursor.take()).await?;
        let kept = page
            .tools
            .into_iter()
            .filter(|t| budget.keep(t.json().get().len()));
        tools.extend(kept);
        hints.add(page.hints);
        match page.next_cursor {
            Some(_) if budget.spent() => return Ok((tools, hints.get(), budget.truncated(true))),
            None => return Ok((tools, hints.get(), budget.truncated(false))),
            Some(next) => cursor = Some(cursors.check(next)?),
        }
    }
    Err(too_many_pages("tools/list"))
}

/// Direct requests, pipelined: once a page's `nextCursor` is read (a scan that skips over its
/// tools), the next page is asked for, and this page's tools are read while the server makes
/// the next one. So reading the tools costs the listing only on its last page.
///
/// The next page's request is polled once, to write it, before this page's tools are read. Its
/// answer may already be there on that poll, so the request is held in a [`MaybeDone`], which
/// keeps an answer taken early: a finished future is never polled again.
async fn list_pipelined(direct: &Direct) -> Result<ListedTools, ConnectError> {
    let mut tools = Vec::new();
    let mut hints = Merged::default();
    let mut cursors = Cursors::of("tools/list");
    let mut budget = Budget::default();
    let mut asked = Box::pin(futures::future::maybe_done(ask(direct, None)));
    for _ in 0..MAX_LIST_PAGES {
        let result = answer(asked.as_mut()).await?;
        let head = read_head(result.get())?;
        hints.add(head.hints());
        if budget.spent() {
            // Over the bound on the page before: this one is only counted.
            let more = head.next_cursor.is_some();
            read_tools(head.tools.get(), &mut budget)?;
            return Ok((tools, hints.get(), budget.truncated(more)));
        }
        let next = match head.next_cursor {
            None => None,
            Some(cursor) => {
                let mut next = Box::pin(futures::future::maybe_done(ask(
                    direct,
                    Some(cursors.check(cursor)?),
                )));
                // Polled once, the request is written; its answer is taken after the read.
                let _ = futures::poll!(next.as_mut());
                Some(next)
            }
        };
        tools.extend(read_tools(head.tools.get(), &mut budget)?);
        match next {
            None => return Ok((tools, hints.get(), budget.truncated(false))),
            Some(next) => asked = next,
        }
    }
    Err(too_many_pages("tools/list"))
}

type AskResult = Result<Box<serde_json::value::RawValue>, ConnectError>;

/// A page request's answer: awaited if it is still pending, taken if it came on an earlier poll.
async fn answer<F: Future<Output = AskResult>>(mut asked: Pin<&mut MaybeDone<F>>) -> AskResult {
    asked.as_mut().await;
    asked.take_output().unwrap_or_else(|| {
        Err(ConnectError::Internal(
            "tools/list failed: the page's answer was already taken".into(),
        ))
    })
}

/// One page asked for directly: its raw result.
async fn ask(direct: &Direct, cursor: Option<String>) -> AskResult {
    let params = page_params(cursor);
    // The listing's phase is its one timeout (and words it); dropped by it, the request is
    // forgotten.
    direct
        .request("tools/list", params, Duration::MAX)
        .await
        .map_err(|failure| error::request(FAILED, failed(&failure)))
}

/// What a listing's request failure says first.
const FAILED: &str = "tools/list failed: ";

/// A listed tool that cannot be kept (see [`check_size`]).
fn refused(why: ToolRefused) -> ConnectError {
    ConnectError::Protocol(format!("{FAILED}{why}"))
}

/// One page through rmcp's typed request.
async fn rmcp_page(peer: &Peer<RoleClient>, cursor: Option<String>) -> Result<Page, ConnectError> {
    let page = peer
        .list_tools(Some(typed_page_params(cursor)))
        .await
        .map_err(|e| error::request(FAILED, reason::service_error(&e)))?;
    let tools = page
        .tools
        .into_iter()
        .map(|tool| ToolInfo::from_value(&typed_tool_info(tool)))
        .collect::<Result<_, _>>()
        .map_err(refused)?;
    Ok(Page {
        tools,
        next_cursor: page.next_cursor,
        hints: Hints {
            ttl_ms: page.ttl_ms,
            scope: page.cache_scope,
        },
    })
}

/// One page of a listing.
pub(crate) struct Page {
    pub(crate) tools: Vec<ToolInfo>,
    pub(crate) next_cursor: Option<String>,
    /// Its `ttlMs` and `cacheScope`.
    pub(crate) hints: Hints,
}

/// rmcp's `Tool` (3.11), with the schemas and `_meta` kept as the JSON text they came as (read
/// only to their first level), plus the `execution` rmcp has no field for.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", expecting = "a tool object")]
struct WireTool<'a> {
    name: String,
    title: Option<String>,
    description: Option<String>,
    #[serde(borrow)]
    input_schema: RawObject<'a>,
    #[serde(borrow)]
    output_schema: Option<RawObject<'a>>,
    annotations: Option<ToolAnnotations>,
    icons: Option<Vec<Icon>>,
    #[serde(rename = "_meta", borrow)]
    meta: Option<RawObject<'a>>,
    #[serde(borrow)]
    execution: Option<&'a RawValue>,
}

/// A page's tools, not read yet, and its cursor.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", expecting = "an object with \"tools\"")]
struct PageHead<'a> {
    #[serde(borrow)]
    tools: &'a serde_json::value::RawValue,
    #[serde(default)]
    next_cursor: Option<String>,
    /// The caching hints, read leniently: a bad hint never refuses the page.
    #[serde(default, borrow)]
    ttl_ms: Option<&'a RawValue>,
    #[serde(default, borrow)]
    cache_scope: Option<&'a RawValue>,
}

impl PageHead<'_> {
    fn hints(&self) -> Hints {
        let value = |raw: Option<&RawValue>| {
            raw.and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok())
        };
        let ttl = value(self.ttl_ms).map(|ttl| Map::from_iter([("ttlMs".to_string(), ttl)]));
        Hints {
            ttl_ms: Hints::of(&Value::Object(ttl.unwrap_or_default())).ttl_ms,
            scope: scope_of(value(self.cache_scope).as_ref()),
        }
    }
}

#[cfg(test)]
/// Reads a `tools/list` result (the `result` member's JSON text).
pub(crate) fn read_page(result: &str) -> Result<Page, ConnectError> {
    let head = read_head(result)?;
    Ok(Page {
        hints: head.hints(),
        tools: read_tools(head.tools.get(), &mut Budget::default())?,
        next_cursor: head.next_cursor,
    })
}

fn read_head(result: &str) -> Result<PageHead<'_>, ConnectError> {
    serde_json::from_str(result).map_err(not_a_listing)
}

/// Each tool of a page, read from its text to its text: a tool's schemas are never held as
/// values here (see [`super::tool_info`]); a tool over [`super::tool_info::MAX_TOOL_BYTES`] is
/// refused, naming it.
fn read_tools(tools: &str, budget: &mut Budget) -> Result<Vec<ToolInfo>, ConnectError> {
    #[derive(Deserialize)]
    struct Named {
        name: String,
    }
    let tools: Vec<&RawValue> = serde_json::from_str(tools).map_err(not_a_listing)?;
    tools
        .into_iter()
        .filter(|raw| budget.keep(raw.get().len()))
        .map(|raw| {
            let text = raw.get();
            check_size(text.len(), || {
                serde_json::from_str::<Named>(text)
                    .map(|n| n.name)
                    .unwrap_or_default()
            })
            .map_err(refused)?;
            let tool: WireTool<'_> = serde_json::from_str(text).map_err(not_a_listing)?;
            let name = tool.name.clone();
            ToolInfo::named(name, tool_info(tool)).map_err(refused)
        })
        .collect()
}

fn not_a_listing(e: serde_json::Error) -> ConnectError {
    // rmcp's own types name themselves in serde's words ("expected struct Icon").
    let why = e.to_string();
    let why = match why.find("expected struct ") {
        Some(at) => {
            let rest = &why[at + "expected struct ".len()..];
            let end = rest
                .find(|c: char| !c.is_alphanumeric())
                .unwrap_or(rest.len());
            format!("{}expected an object{}", &why[..at], &rest[end..])
        }
        None => why,
    };
    ConnectError::Protocol(format!(
        "{FAILED}the server's answer is not a tool listing ({})",
        reason::bounded(&why)
    ))
}

/// As [`typed_tool_info`] makes a `ToolInfo` from rmcp's `Tool`, as text: rmcp's serialised
/// field order, the schema completed with `type` and `properties`, a missing description as `""`
/// (last), and `execution` last.
fn tool_info(tool: WireTool<'_>) -> String {
    let name = text_of(&tool.name);
    let title = tool.title.as_ref().map(text_of);
    let description = tool.description.as_ref().map(text_of);
    let schema = {
        let mut members: Vec<(&str, &str)> = tool
            .input_schema
            .0
            .iter()
            .map(|(k, v)| (k.as_str(), v.get()))
            .collect();
        for (key, empty) in SCHEMA_COMPLETION {
            if !members.iter().any(|(k, _)| *k == key) {
                members.push((key, empty));
            }
        }
        object_text(&members)
    };
    let object = |o: &RawObject<'_>| {
        let members: Vec<(&str, &str)> = o.0.iter().map(|(k, v)| (k.as_str(), v.get())).collect();
        object_text(&members)
    };
    let output = tool.output_schema.as_ref().map(object);
    let annotations = tool.annotations.as_ref().map(text_of);
    let icons = tool.icons.as_ref().map(text_of);
    let meta = tool.meta.as_ref().map(object);
    let mut info: Vec<(&str, &str)> = vec![("name", &name)];
    info.extend(title.as_deref().map(|t| ("title", t)));
    info.extend(description.as_deref().map(|d| ("description", d)));
    info.push(("inputSchema", &schema));
    info.extend(output.as_deref().map(|o| ("outputSchema", o)));
    info.extend(annotations.as_deref().map(|a| ("annotations", a)));
    info.extend(icons.as_deref().map(|i| ("icons", i)));
    info.extend(meta.as_deref().map(|m| ("_meta", m)));
    if description.is_none() {
        info.push(("description", "\"\""));
    }
    info.extend(tool.execution.map(|e| ("execution", e.get())));
    object_text(&info)
}

/// A listed tool as `ToolInfo`: original name, description ("" when absent), an input schema
/// with `type: "object"` and `properties` ensured, and every other field the server gave
/// (`title`, `annotations`, `outputSchema`, `icons`, `_meta`), as it gave them.
fn typed_tool_info(tool: rmcp::model::Tool) -> Value {
    let mut info = match serde_json::to_value(&tool) {
        Ok(Value::Object(info)) => info,
        _ => Map::new(),
    };
    // The schema as serialised just now, completed in place (not cloned from the typed tool: a
    // big listing spends a good part of its time copying schemas).
    let schema = info
        .entry("inputSchema")
        .or_insert_with(|| Value::Object(Map::new()));
    if !schema.is_object() {
        *schema = Value::Object(Map::new());
    }
    if let Value::Object(schema) = schema {
        complete_schema(schema);
    }
    info.insert("name".into(), Value::String(tool.name.into_owned()));
    info.insert(
        "description".into(),
        Value::String(tool.description.map(|d| d.into_owned()).unwrap_or_default()),
    );
    crate::compat::execution::untuck(&mut info);
    Value::Object(info)
}

#[cfg(test)]
mod tests;
