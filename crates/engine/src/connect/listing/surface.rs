//! Listing a server's resources, resource templates and prompts: each kind every page, bounded
//! as tools are (one phase, [`MAX_LIST_PAGES`], no repeated cursor, no item over
//! [`MAX_SURFACE_ITEM_BYTES`]). On the direct road every field the server sent is kept; rmcp's
//! typed road keeps the fields its types know.
//!
//! Unlike a `tools/list` failure, a kind that fails to list leaves the server connected: that
//! kind is `[]`, and a warning says why.

use std::collections::HashMap;
use std::time::Duration;

use rmcp::model::ServerCapabilities;
use rmcp::service::{Peer, RoleClient, ServiceError};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::paging::failed;
use super::paging::{Budget, Cursors, Merged, page_params, too_many_pages, typed_page_params};
use crate::bounds::MAX_LIST_PAGES;
use crate::bounds::MAX_SURFACE_ITEM_BYTES;
use crate::connect::error::{self, ConnectError};
use crate::connect::reason;
use crate::connect::road::Road;
use crate::connect::stdio::direct::{Direct, Failure};
use crate::surface::{Hints, Kind, Listed, SurfaceListing, scope_of};

/// What a failed listing of `kind` says first.
fn failed_prefix(kind: Kind) -> &'static str {
    match kind {
        Kind::Resources => "resources/list failed: ",
        Kind::ResourceTemplates => "resources/templates/list failed: ",
        Kind::Prompts => "prompts/list failed: ",
        Kind::Skills => "skills/list failed: ",
    }
}

/// Every item of `kind` the server lists, following `nextCursor`, all pages within `timeout`.
pub(crate) async fn list_kind(
    road: Road<'_>,
    kind: Kind,
    timeout: Duration,
) -> Result<Listed, ConnectError> {
    let listing = async {
        let mut items = Vec::new();
        let mut hints = Merged::default();
        let mut cursors = Cursors::of(kind.method());
        let mut cursor: Option<String> = None;
        let mut budget = Budget::default();
        for _ in 0..MAX_LIST_PAGES {
            let page = match road {
                Road::Direct(direct) => {
                    direct_page(direct, kind, cursor.take(), &mut budget).await?
                }
                Road::Rmcp(peer) => rmcp_page(peer, kind, cursor.take(), &mut budget).await?,
            };
            items.extend(page.items);
            hints.add(page.hints);
            match page.next_cursor {
                Some(_) if budget.spent() => {
                    return Ok(Listed::new(items, hints.get()).with(budget.truncated(true)));
                }
                None => return Ok(Listed::new(items, hints.get()).with(budget.truncated(false))),
                Some(next) => cursor = Some(cursors.check(next)?),
            }
        }
        Err(too_many_pages(kind.method()))
    };
    let listing = crate::connect::error::phase(kind.method(), timeout, listing);
    crate::telemetry::listing(kind.method(), listing, ConnectError::error_type).await
}

/// Every kind the capabilities declare, concurrently (so about one timeout in all); a kind not
/// declared is `[]`, and so is a kind that failed to list, with a warning naming it.
pub(crate) async fn list_surface(
    road: Road<'_>,
    server: &str,
    caps: Option<&ServerCapabilities>,
    timeout: Duration,
) -> (SurfaceListing, Vec<String>) {
    let one = |kind: Kind| async move {
        if !caps.is_some_and(|caps| kind.declared(caps)) {
            return (kind, Ok(Listed::default()));
        }
        (kind, list_kind(road, kind, timeout).await)
    };
    let (a, b, c, d) = futures::join!(
        one(Kind::Resources),
        one(Kind::ResourceTemplates),
        one(Kind::Prompts),
        one(Kind::Skills)
    );
    let mut surface = SurfaceListing::default();
    let mut warnings = Vec::new();
    for (kind, listed) in [a, b, c, d] {
        match listed {
            Ok(listed) => {
                if let Some(truncated) = listed.truncated {
                    warnings.push(truncated.warning(server, kind.plural()));
                }
                surface.set(kind, listed)
            }
            Err(error) => warnings.push(left_out(server, kind, &error)),
        }
    }
    (surface, warnings)
}

/// The warning of a kind that failed to list.
pub(crate) fn left_out(server: &str, kind: Kind, error: &ConnectError) -> String {
    let why = match error {
        ConnectError::Timeout { after, .. } => {
            format!("{} timed out after {} ms", kind.method(), after.as_millis())
        }
        other => {
            let text = other.to_string();
            if text.starts_with(kind.method()) {
                text
            } else {
                format!("{}{text}", failed_prefix(kind))
            }
        }
    };
    format!(
        "toolnexus: server {server:?}: {why}; its {} are left out",
        kind.plural()
    )
}

/// One page of a kind.
pub(crate) struct SurfacePage {
    pub(crate) items: Vec<Map<String, Value>>,
    pub(crate) next_cursor: Option<String>,
    pub(crate) hints: Hints,
}

async fn direct_page(
    direct: &Direct,
    kind: Kind,
    cursor: Option<String>,
    budget: &mut Budget,
) -> Result<SurfacePage, ConnectError> {
    let params = page_params(cursor);
    // The listing's phase is its one timeout (and words it).
    let result = match direct.request(kind.method(), params, Duration::MAX).await {
        Ok(result) => result,
        Err(Failure::JsonRpc { code, .. }) if no_templates(kind, code) => return Ok(nothing()),
        Err(failure) => return Err(error::request(failed_prefix(kind), failed(&failure))),
    };
    read_page_within(kind, result.get(), budget)
}

/// A server that declares resources but has no `resources/templates/list` (method not found)
/// has no templates: that is no failure.
fn no_templates(kind: Kind, code: i32) -> bool {
    kind == Kind::ResourceTemplates && code == rmcp::model::ErrorCode::METHOD_NOT_FOUND.0
}

fn nothing() -> SurfacePage {
    SurfacePage {
        items: Vec::new(),
        next_cursor: None,
        hints: Hints::default(),
    }
}

#[cfg(test)]
/// Reads a page of `kind` (the `result` member's JSON text), every field of its items kept.
pub(crate) fn read_surface_page(kind: Kind, result: &str) -> Result<SurfacePage, ConnectError> {
    read_page_within(kind, result, &mut Budget::default())
}

/// [`read_surface_page`], keeping only the items `budget` has room for (the others are never
/// read past their extent).
fn read_page_within(
    kind: Kind,
    result: &str,
    budget: &mut Budget,
) -> Result<SurfacePage, ConnectError> {
    let page: HashMap<String, &RawValue> =
        serde_json::from_str(result).map_err(|e| not_a_listing(kind, &e.to_string()))?;
    let raw_items: Vec<&RawValue> = match page.get(kind.key()) {
        Some(items) => serde_json::from_str(items.get())
            .map_err(|e| not_a_listing(kind, &format!("{:?}: {e}", kind.key())))?,
        None => return Err(not_a_listing(kind, &format!("no {:?}", kind.key()))),
    };
    let items = raw_items
        .into_iter()
        .enumerate()
        .filter(|(_, raw)| budget.keep(raw.get().len()))
        .map(|(at, raw)| read_item(kind, at, raw.get()))
        .collect::<Result<_, _>>()?;
    let value = |key: &str| {
        page.get(key)
            .and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok())
    };
    let next_cursor = match value("nextCursor") {
        None | Some(Value::Null) => None,
        Some(Value::String(cursor)) => Some(cursor),
        Some(_) => return Err(not_a_listing(kind, "\"nextCursor\" is not a string")),
    };
    let mut hints = Hints::of(&Value::Object(Map::from_iter(
        value("ttlMs").map(|ttl| ("ttlMs".to_string(), ttl)),
    )));
    hints.scope = scope_of(value("cacheScope").as_ref());
    Ok(SurfacePage {
        items,
        next_cursor,
        hints,
    })
}

/// One listed item: within [`MAX_SURFACE_ITEM_BYTES`], an object whose id field and `name` are
/// strings.
fn read_item(kind: Kind, at: usize, text: &str) -> Result<Map<String, Value>, ConnectError> {
    if text.len() > MAX_SURFACE_ITEM_BYTES {
        #[derive(serde::Deserialize)]
        struct Id {
            uri: Option<String>,
            #[serde(rename = "uriTemplate")]
            uri_template: Option<String>,
            name: Option<String>,
        }
        let id = serde_json::from_str::<Id>(text)
            .ok()
            .and_then(|id| match kind {
                Kind::Resources | Kind::Skills => id.uri,
                Kind::ResourceTemplates => id.uri_template,
                Kind::Prompts => id.name,
            });
        let which = match id {
            Some(id) => format!("{:?}", reason::bounded(&id)),
            None => format!("{at}"),
        };
        return Err(ConnectError::Protocol(format!(
            "{}{} {which} is {} bytes of JSON, over the {} MiB an item may be",
            failed_prefix(kind),
            kind.item_words(),
            text.len(),
            MAX_SURFACE_ITEM_BYTES >> 20
        )));
    }
    let item: Value =
        serde_json::from_str(text).map_err(|e| not_a_listing(kind, &e.to_string()))?;
    let Value::Object(item) = item else {
        return Err(not_a_listing(kind, &format!("item {at} is not an object")));
    };
    if kind == Kind::Skills {
        // A skill has no name of its own (its frontmatter names it): its entry is checked.
        crate::skills::entry(&item)
            .map_err(|why| not_a_listing(kind, &format!("item {at}: {why}")))?;
        return Ok(item);
    }
    for field in [kind.id_field(), "name"] {
        if !item.get(field).is_some_and(Value::is_string) {
            return Err(not_a_listing(
                kind,
                &format!("item {at}: {field:?} is missing or not a string"),
            ));
        }
    }
    Ok(item)
}

fn not_a_listing(kind: Kind, why: &str) -> ConnectError {
    ConnectError::Protocol(format!(
        "{}the server's answer is not a {} listing ({})",
        failed_prefix(kind),
        kind.method().trim_end_matches("/list"),
        reason::bounded(why)
    ))
}

/// One page through rmcp's typed request (rmcp's client cache may answer it within its TTL).
async fn rmcp_page(
    peer: &Peer<RoleClient>,
    kind: Kind,
    cursor: Option<String>,
    budget: &mut Budget,
) -> Result<SurfacePage, ConnectError> {
    let params = Some(typed_page_params(cursor));
    let answered = match kind {
        Kind::Resources => peer.list_resources(params).await.map(|page| {
            let items = values_of(&page.resources);
            (items, page.next_cursor, page.ttl_ms, page.cache_scope)
        }),
        Kind::ResourceTemplates => peer.list_resource_templates(params).await.map(|page| {
            let items = values_of(&page.resource_templates);
            (items, page.next_cursor, page.ttl_ms, page.cache_scope)
        }),
        Kind::Prompts => peer.list_prompts(params).await.map(|page| {
            let items = values_of(&page.prompts);
            (items, page.next_cursor, page.ttl_ms, page.cache_scope)
        }),
        Kind::Skills => peer.list_skills(params).await.map(|page| {
            let items = values_of(&page.skills);
            (items, page.next_cursor, page.ttl_ms, page.cache_scope)
        }),
    };
    let (values, next_cursor, ttl_ms, scope) = match answered {
        Ok(page) => page,
        Err(ServiceError::McpError(e)) if no_templates(kind, e.code.0) => return Ok(nothing()),
        Err(e) => {
            let why = reason::service_error(&e);
            return Err(error::request(failed_prefix(kind), why));
        }
    };
    Ok(SurfacePage {
        items: read_items(kind, values, budget)?,
        next_cursor,
        hints: Hints { ttl_ms, scope },
    })
}

/// Typed items, each checked as the direct road checks a page's items, as many as `budget`
/// keeps.
fn read_items(
    kind: Kind,
    values: Vec<String>,
    budget: &mut Budget,
) -> Result<Vec<Map<String, Value>>, ConnectError> {
    values
        .into_iter()
        .enumerate()
        .filter(|(_, text)| budget.keep(text.len()))
        .map(|(at, text)| read_item(kind, at, &text))
        .collect()
}

/// Typed items as their JSON text (checked as the direct road checks a page's items).
fn values_of<T: serde::Serialize>(items: &[T]) -> Vec<String> {
    items
        .iter()
        .map(|item| serde_json::to_string(item).unwrap_or_else(|_| "null".into()))
        .collect()
}
