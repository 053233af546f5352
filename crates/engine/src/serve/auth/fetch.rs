//! The guard's requests to the OAuth issuer: https unless loopback, a time bound, a size cap.

use std::net::IpAddr;

use reqwest::Url;
use serde_json::Value;

use crate::bounds::{AUTH_FETCH_MAX_BYTES as FETCH_MAX_BYTES, AUTH_FETCH_TIMEOUT as FETCH_TIMEOUT};

/// True for `localhost` and loopback addresses, where plain http is allowed.
pub(crate) fn is_loopback(url: &Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match host.parse::<IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => {
            let name = host.to_ascii_lowercase();
            name == "localhost" || name.ends_with(".localhost")
        }
    }
}

/// `text` parsed as an https URL (http for loopback hosts); `what` names it in the words.
pub(crate) fn secure_url(text: &str, what: &str) -> Result<Url, String> {
    let url = Url::parse(text).map_err(|_| format!("the {what} {text} is not a URL"))?;
    match url.scheme() {
        "https" => Ok(url),
        "http" if is_loopback(&url) => Ok(url),
        _ => Err(format!(
            "the {what} {text} must be an https URL (http only for loopback hosts)"
        )),
    }
}

#[derive(Clone)]
pub(crate) struct Fetcher {
    client: reqwest::Client,
}

impl Fetcher {
    pub(crate) fn new() -> Fetcher {
        // Redirects are followed only to URLs that are as safe as the first one.
        let policy = reqwest::redirect::Policy::custom(|attempt| {
            let safe = attempt.url().scheme() == "https" || is_loopback(attempt.url());
            if attempt.previous().len() >= 5 || !safe {
                attempt.stop()
            } else {
                attempt.follow()
            }
        });
        let client = reqwest::Client::builder()
            .user_agent(concat!("toolnexus/", env!("CARGO_PKG_VERSION")))
            .timeout(FETCH_TIMEOUT)
            .redirect(policy)
            .build()
            .unwrap_or_default();
        Fetcher { client }
    }

    /// GET `url` as JSON.
    pub(crate) async fn get_json(&self, url: &Url) -> Result<Value, String> {
        let request = self
            .client
            .get(url.clone())
            .header(http::header::ACCEPT, "application/json");
        self.json(request, url).await
    }

    /// POST a form to `url` with HTTP Basic credentials, answered with JSON.
    pub(crate) async fn post_form(
        &self,
        url: &Url,
        basic: &str,
        form: String,
    ) -> Result<Value, String> {
        let request = self
            .client
            .post(url.clone())
            .header(http::header::ACCEPT, "application/json")
            .header(http::header::AUTHORIZATION, format!("Basic {basic}"))
            .header(
                http::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(form);
        self.json(request, url).await
    }

    async fn json(&self, request: reqwest::RequestBuilder, url: &Url) -> Result<Value, String> {
        let body = match tokio::time::timeout(FETCH_TIMEOUT, read(request)).await {
            Ok(result) => result.map_err(|why| format!("{} {why}", shown(url)))?,
            Err(_) => {
                let (url, secs) = (shown(url), FETCH_TIMEOUT.as_secs());
                return Err(format!("{url} did not answer within {secs} seconds"));
            }
        };
        serde_json::from_slice(&body)
            .map_err(|_| format!("{} did not answer with JSON", shown(url)))
    }
}

/// The answer's body, or why not (words that follow the URL).
async fn read(request: reqwest::RequestBuilder) -> Result<Vec<u8>, String> {
    let mut response = request.send().await.map_err(|error| {
        format!(
            "could not be reached: {}",
            crate::connect::reason::network(&error)
        )
    })?;
    let status = response.status();
    if !status.is_success() {
        let name = status.canonical_reason().unwrap_or("");
        return Err(format!("answered HTTP {} {name}", status.as_u16())
            .trim_end()
            .to_string());
    }
    let too_large = || format!("answered with more than {} KiB", FETCH_MAX_BYTES / 1024);
    if response
        .content_length()
        .is_some_and(|n| n > FETCH_MAX_BYTES as u64)
    {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|error| {
        format!(
            "broke off its answer: {}",
            crate::connect::reason::network(&error)
        )
    })? {
        if body.len() + chunk.len() > FETCH_MAX_BYTES {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// A URL as words name it: without userinfo, query or fragment.
pub(crate) fn shown(url: &Url) -> String {
    crate::connect::reason::redact_url(url.as_str())
}
