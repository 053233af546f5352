//! Remote servers: streamable HTTP (rmcp's transport over reqwest with rustls), and the legacy
//! HTTP+SSE transport tried when streamable HTTP fails on the same URL.

use std::collections::HashMap;
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

/// The URL without query string or userinfo, which may carry secrets, and cut to a length a
/// reason can quote (a config may hold a megabyte-long URL).
pub fn redact_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.set_query(None);
            parsed.set_fragment(None);
            crate::config::quote::shorten(parsed.as_str(), crate::config::quote::QUOTE_CHARS)
        }
        Err(_) => "<invalid URL>".to_string(),
    }
}
