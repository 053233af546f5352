//! Content negotiation for a POSTed request: which of the two answers rmcp requires a client to
//! accept (JSON and an SSE stream) this client would rather have.

/// Whether the client would rather have JSON than an SSE stream: of the two media types
/// (which rmcp requires both of), JSON has the higher `q`, or the same and comes first.
pub(crate) fn prefers_json(headers: &http::HeaderMap) -> bool {
    let mut json = None;
    let mut sse = None;
    let entries = headers
        .get_all(http::header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','));
    for (position, entry) in entries.enumerate() {
        let mut parts = entry.split(';');
        let essence = parts.next().unwrap_or_default().trim();
        let q = parts
            .filter_map(|p| p.split_once('='))
            .find(|(name, _)| name.trim().eq_ignore_ascii_case("q"))
            .and_then(|(_, q)| q.trim().parse::<f32>().ok())
            .unwrap_or(1.0);
        let slot = if essence.eq_ignore_ascii_case("application/json") {
            &mut json
        } else if essence.eq_ignore_ascii_case("text/event-stream") {
            &mut sse
        } else {
            continue;
        };
        slot.get_or_insert((q, position));
    }
    match (json, sse) {
        (Some((qj, pj)), Some((qs, ps))) => qj > qs || (qj == qs && pj < ps),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::prefers_json;

    fn accept(values: &[&str]) -> http::HeaderMap {
        let mut headers = http::HeaderMap::new();
        for v in values {
            headers.append(http::header::ACCEPT, v.parse().unwrap());
        }
        headers
    }

    #[test]
    fn json_is_preferred_when_named_first_or_weighted_higher() {
        assert!(prefers_json(&accept(&[
            "application/json, text/event-stream"
        ])));
        assert!(prefers_json(&accept(&[
            "application/json",
            "text/event-stream"
        ])));
        assert!(prefers_json(&accept(&[
            "text/event-stream;q=0.5, application/json"
        ])));
        assert!(!prefers_json(&accept(&[
            "text/event-stream, application/json"
        ])));
        assert!(!prefers_json(&accept(&[
            "application/json;q=0.2, text/event-stream"
        ])));
        // Without both, rmcp refuses the request anyway.
        assert!(!prefers_json(&accept(&["application/json"])));
        assert!(!prefers_json(&accept(&[])));
    }
}
