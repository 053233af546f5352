//! Remote servers: streamable HTTP (rmcp's transport over reqwest with rustls), and the legacy
//! HTTP+SSE transport tried when streamable HTTP fails on the same URL.

use std::collections::HashMap;
use std::error::Error as StdError;
use std::sync::OnceLock;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

/// One reqwest client for the process: connection pools and TLS roots are built once.
pub fn client() -> reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            reqwest::Client::builder()
                .user_agent(concat!("toolnexus/", env!("CARGO_PKG_VERSION")))
                .build()
                .unwrap_or_default()
        })
        .clone()
}

/// Builds a header map; a header that is not valid HTTP is a reason naming it (never its value).
pub fn header_map(headers: &[(String, String)]) -> Result<HeaderMap, String> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let key = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("header name {name:?} is not a valid HTTP header name"))?;
        let value = HeaderValue::from_str(value)
            .map_err(|_| format!("header {name:?} has a value that is not valid in HTTP"))?;
        map.insert(key, value);
    }
    Ok(map)
}

pub fn header_hash_map(map: &HeaderMap) -> HashMap<HeaderName, HeaderValue> {
    map.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// The URL without query string or userinfo, which may carry secrets.
pub fn redact_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.set_query(None);
            parsed.set_fragment(None);
            parsed.to_string()
        }
        Err(_) => "<invalid URL>".to_string(),
    }
}

pub fn describe_status(status: reqwest::StatusCode, url: &str) -> String {
    format!("HTTP {status} from {}", redact_url(url))
}

pub fn describe_reqwest(error: &reqwest::Error, url: &str) -> String {
    let url = redact_url(url);
    if error.is_timeout() {
        return format!("request to {url} timed out");
    }
    if error.is_connect() {
        return format!("cannot connect to {url}: {}", innermost(error));
    }
    format!("request to {url} failed: {}", innermost(error))
}

/// The most specific message in an error chain (e.g. "Connection refused (os error 111)").
pub fn innermost(error: &(dyn StdError + 'static)) -> String {
    let mut current = error;
    while let Some(next) = current.source() {
        current = next;
    }
    current.to_string()
}

/// A short reason from an rmcp transport error chain: the HTTP status when there is one, else
/// the innermost cause. Bodies are cut to their first line.
pub fn describe_chain(error: &(dyn StdError + 'static), url: &str) -> String {
    let mut current: Option<&(dyn StdError + 'static)> = Some(error);
    let mut messages = Vec::new();
    while let Some(e) = current {
        if let Some(re) = e.downcast_ref::<reqwest::Error>() {
            return describe_reqwest(re, url);
        }
        messages.push(e.to_string());
        current = e.source();
    }
    if let Some(http) = messages
        .iter()
        .find_map(|m| m.find("HTTP ").map(|i| &m[i..]))
    {
        let first_line = http.lines().next().unwrap_or(http);
        let short: String = first_line.chars().take(160).collect();
        return format!("{short} from {}", redact_url(url));
    }
    messages
        .last()
        .cloned()
        .unwrap_or_else(|| error.to_string())
}
