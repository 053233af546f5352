//! Listing a server's tools: every page, following `nextCursor`, as `ToolInfo` objects.
//!
//! A stdio server in the handshake era is asked through its direct requests
//! ([`super::stdio::direct`]), and each page is read straight from its JSON text. rmcp reads a page into its typed `ServerJsonRpcMessage` (serde buffers the whole result to try
//! the untagged result kinds, so the page is read twice), and each typed `Tool` is then turned
//! back into JSON. Here a page is read once, into owned JSON where the tool is passed on as it
//! came (its schemas and `_meta`) and into rmcp's own types where rmcp checks a shape (annotations,
//! icons), so a page is accepted or refused as rmcp would, and each tool comes out as
//! [`typed_tool_info`] makes it from rmcp's `Tool`: same keys, same order.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use futures::future::MaybeDone;

use rmcp::model::{Icon, PaginatedRequestParams, ToolAnnotations};
use rmcp::service::{Peer, RoleClient};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::reason;
use super::stdio::direct::{Direct, Failure};

/// At most this many `tools/list` pages are followed.
pub const MAX_LIST_PAGES: usize = 1000;

/// Where a listing's pages come from.
#[derive(Clone, Copy)]
pub enum Lister<'a> {
    /// A stdio server's direct requests: each page read once, from its text.
    Direct(&'a Direct),
    /// rmcp's typed requests (HTTP, and the 2026-07-28 era).
    Rmcp(&'a Peer<RoleClient>),
}

/// Every tool the server lists, following `nextCursor`, as `ToolInfo` JSON objects. The
/// listing is one phase: `timeout` bounds all of its pages together, so a server that pages
/// slowly (or hands out fresh cursors forever) fails at the timeout, not after it per page.
pub async fn list_tools(lister: Lister<'_>, timeout: Duration) -> Result<Vec<Value>, String> {
    let listing = async {
        match lister {
            Lister::Direct(direct) => list_pipelined(direct).await,
            Lister::Rmcp(peer) => list_typed(peer).await,
        }
    };
    super::phase("tools/list", timeout, listing).await
}

/// rmcp's typed requests, one page after another.
async fn list_typed(peer: &Peer<RoleClient>) -> Result<Vec<Value>, String> {
    let mut tools = Vec::new();
    let mut cursors = Cursors::default();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_LIST_PAGES {
        let page = rmcp_page(peer, cursor.take()).await?;
        tools.extend(page.tools);
        match page.next_cursor {
            None => return Ok(tools),
            Some(next) => cursor = Some(cursors.check(next)?),
        }
    }
    Err(too_many_pages())
}

/// Direct requests, pipelined: once a page's `nextCursor` is read (a scan that skips over its
/// tools), the next page is asked for, and this page's tools are read while the server makes
/// the next one. So reading the tools costs the listing only on its last page.
///
/// The next page's request is polled once, to write it, before this page's tools are read. Its
/// answer may already be there on that poll, so the request is held in a [`MaybeDone`], which
/// keeps an answer taken early: a finished future is never polled again.
async fn list_pipelined(direct: &Direct) -> Result<Vec<Value>, String> {
    let mut tools = Vec::new();
    let mut cursors = Cursors::default();
    let mut asked = Box::pin(futures::future::maybe_done(ask(direct, None)));
    for _ in 0..MAX_LIST_PAGES {
        let result = answer(asked.as_mut()).await?;
        let head = read_head(result.get())?;
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
        tools.extend(read_tools(head.tools.get())?);
        match next {
            None => return Ok(tools),
            Some(next) => asked = next,
        }
    }
    Err(too_many_pages())
}

type AskResult = Result<Box<serde_json::value::RawValue>, String>;

/// A page request's answer: awaited if it is still pending, taken if it came on an earlier poll.
async fn answer<F: Future<Output = AskResult>>(mut asked: Pin<&mut MaybeDone<F>>) -> AskResult {
    asked.as_mut().await;
    asked
        .take_output()
        .unwrap_or_else(|| Err("tools/list failed: the page's answer was already taken".into()))
}

/// One page asked for directly: its raw result.
async fn ask(direct: &Direct, cursor: Option<String>) -> AskResult {
    let mut params = Map::new();
    if let Some(cursor) = cursor {
        params.insert("cursor".into(), Value::String(cursor));
    }
    // The listing's phase is its one timeout (and words it); dropped by it, the request is
    // forgotten.
    direct
        .request("tools/list", params, Duration::MAX)
        .await
        .map_err(|failure| format!("tools/list failed: {}", failed(&failure)))
}

/// The cursors seen so far: a server that repeats one would be paged forever.
#[derive(Default)]
struct Cursors(std::collections::HashSet<String>);

impl Cursors {
    fn check(&mut self, next: String) -> Result<String, String> {
        if self.0.insert(next.clone()) {
            Ok(next)
        } else {
            Err(format!(
                "tools/list repeated cursor {:?}; stopped paging",
                reason::bounded(&next)
            ))
        }
    }
}

fn too_many_pages() -> String {
    format!("tools/list returned more than {MAX_LIST_PAGES} pages")
}

/// One page through rmcp's typed request.
async fn rmcp_page(peer: &Peer<RoleClient>, cursor: Option<String>) -> Result<Page, String> {
    let params = PaginatedRequestParams::default().with_cursor(cursor);
    let page = peer
        .list_tools(Some(params))
        .await
        .map_err(|e| format!("tools/list failed: {}", reason::service_error(&e)))?;
    Ok(Page {
        tools: page.tools.into_iter().map(typed_tool_info).collect(),
        next_cursor: page.next_cursor,
    })
}

/// A direct request's failure in the words [`reason::service_error`] gives rmcp's.
fn failed(failure: &Failure) -> String {
    match failure {
        Failure::JsonRpc { code, message } => format!(
            "server answered with error {code}: {}",
            reason::bounded(message)
        ),
        Failure::TimedOut(after) => format!("timed out after {} ms", after.as_millis()),
        Failure::Aborted => "cancelled".into(),
        Failure::Closed => "connection closed".into(),
    }
}

/// One page of a listing.
pub struct Page {
    pub tools: Vec<Value>,
    pub next_cursor: Option<String>,
}

/// rmcp's `Tool` (3.11), with the schemas and `_meta` kept as the JSON they came as, plus the
/// `execution` rmcp has no field for.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", expecting = "a tool object")]
struct WireTool {
    name: String,
    title: Option<String>,
    description: Option<String>,
    input_schema: Map<String, Value>,
    output_schema: Option<Map<String, Value>>,
    annotations: Option<ToolAnnotations>,
    icons: Option<Vec<Icon>>,
    #[serde(rename = "_meta")]
    meta: Option<Map<String, Value>>,
    execution: Option<Value>,
}

/// A page's tools, not read yet, and its cursor.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", expecting = "an object with \"tools\"")]
struct PageHead<'a> {
    #[serde(borrow)]
    tools: &'a serde_json::value::RawValue,
    #[serde(default)]
    next_cursor: Option<String>,
}

/// Reads a `tools/list` result (the `result` member's JSON text).
pub fn read_page(result: &str) -> Result<Page, String> {
    let head = read_head(result)?;
    Ok(Page {
        tools: read_tools(head.tools.get())?,
        next_cursor: head.next_cursor,
    })
}

fn read_head(result: &str) -> Result<PageHead<'_>, String> {
    serde_json::from_str(result).map_err(not_a_listing)
}

fn read_tools(tools: &str) -> Result<Vec<Value>, String> {
    let tools: Vec<WireTool> = serde_json::from_str(tools).map_err(not_a_listing)?;
    Ok(tools.into_iter().map(tool_info).collect())
}

fn not_a_listing(e: serde_json::Error) -> String {
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
    format!(
        "tools/list failed: the server's answer is not a tool listing ({})",
        reason::bounded(&why)
    )
}

/// As [`typed_tool_info`] makes a `ToolInfo` from rmcp's `Tool`: rmcp's serialised field order,
/// the schema completed with `type` and `properties`, a missing description as `""` (last), and
/// `execution` last.
fn tool_info(tool: WireTool) -> Value {
    let mut info = Map::new();
    info.insert("name".into(), Value::String(tool.name));
    if let Some(title) = tool.title {
        info.insert("title".into(), Value::String(title));
    }
    let described = tool.description.is_some();
    if let Some(description) = tool.description {
        info.insert("description".into(), Value::String(description));
    }
    let mut schema = tool.input_schema;
    complete_schema(&mut schema);
    info.insert("inputSchema".into(), Value::Object(schema));
    if let Some(output) = tool.output_schema {
        info.insert("outputSchema".into(), Value::Object(output));
    }
    if let Some(annotations) = tool.annotations
        && let Ok(annotations) = serde_json::to_value(annotations)
    {
        info.insert("annotations".into(), annotations);
    }
    if let Some(icons) = tool.icons
        && let Ok(icons) = serde_json::to_value(icons)
    {
        info.insert("icons".into(), icons);
    }
    if let Some(meta) = tool.meta {
        info.insert("_meta".into(), Value::Object(meta));
    }
    if !described {
        info.insert("description".into(), Value::String(String::new()));
    }
    if let Some(execution) = tool.execution {
        info.insert("execution".into(), execution);
    }
    Value::Object(info)
}

/// A tool's input schema with `type: "object"` and `properties` ensured (added last).
fn complete_schema(schema: &mut Map<String, Value>) {
    schema
        .entry("type")
        .or_insert_with(|| Value::String("object".into()));
    schema
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
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
    super::execution::untuck(&mut info);
    Value::Object(info)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// What the typed path makes of the same page (execution tucked as the framing does).
    fn typed(page: &Value) -> Vec<Value> {
        let text = json!({"jsonrpc": "2.0", "id": 1, "result": page}).to_string();
        let text = crate::connect::execution::tuck(&text).unwrap_or(text);
        let message: Value = serde_json::from_str(&text).unwrap();
        let result: rmcp::model::ListToolsResult =
            serde_json::from_value(message["result"].clone()).unwrap();
        result
            .tools
            .into_iter()
            .map(super::typed_tool_info)
            .collect()
    }

    #[test]
    fn a_page_reads_as_the_typed_path_reads_it() {
        let page = json!({"tools": [
            {"name": "plain", "inputSchema": {}},
            {"name": "full", "title": "Full", "description": "d",
             "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
             "outputSchema": {"type": "object", "properties": {}},
             "annotations": {"title": "t", "readOnlyHint": true, "destructiveHint": false},
             "icons": [{"src": "https://example.com/i.png", "mimeType": "image/png", "sizes": ["48x48"]}],
             "_meta": {"x": 1},
             "execution": {"taskSupport": "required"}},
            {"name": "meta-only-execution", "inputSchema": {"type": "object"},
             "execution": {"taskSupport": "optional"}},
            {"name": "unknown fields", "inputSchema": {"type": "object"}, "extra": [1, 2],
             "description": null, "title": null},
        ], "nextCursor": "c2"});
        let read = read_page(&page.to_string()).unwrap();
        assert_eq!(read.next_cursor.as_deref(), Some("c2"));
        let typed = typed(&page);
        assert_eq!(read.tools, typed);
        // Same key order too (what `toolnexus list --json` prints).
        for (a, b) in read.tools.iter().zip(&typed) {
            assert_eq!(a.to_string(), b.to_string());
        }
    }

    #[test]
    fn a_page_rmcp_would_refuse_is_refused_in_words() {
        for (page, why) in [
            (
                json!({"tools": [{"name": "x"}]}),
                "missing field `inputSchema`",
            ),
            (
                json!({"tools": [{"name": "x", "inputSchema": []}]}),
                "invalid type",
            ),
            (json!({"tools": "no"}), "invalid type"),
            (json!([]), "expected an object with \"tools\""),
            (
                json!({"tools": [{"name": "x", "inputSchema": {}, "icons": [7]}]}),
                "expected an object at",
            ),
            (
                json!({"tools": [{"name": "x", "inputSchema": {}, "annotations": {"readOnlyHint": "yes"}}]}),
                "invalid type",
            ),
        ] {
            let err = read_page(&page.to_string()).err().unwrap();
            assert!(
                err.starts_with("tools/list failed: the server's answer is not a tool listing (")
                    && err.contains(why),
                "{err}"
            );
            let typed = serde_json::from_value::<rmcp::model::ListToolsResult>(page);
            assert!(typed.is_err(), "rmcp accepts what is refused here");
        }
    }
}
