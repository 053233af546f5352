//! The HTTP client of every OAuth request one server's sign-in makes (rmcp's discovery,
//! registration and token requests, and the grants written here), as rmcp's [`OAuthHttpClient`]:
//!
//! - DPoP: once the server's tokens are bound ([`Dpop::active`]), every token request carries a
//!   fresh proof, and a `400 use_dpop_nonce` is answered once more with a proof carrying the
//!   nonce the authorisation server gave (RFC 9449 §8);
//! - the address policy rmcp's own client applies to discovered URLs: a host may resolve to a
//!   loopback or private address only when the server's URL names one of that class, and
//!   link-local and other reserved addresses (cloud metadata services) are never reached;
//! - the `resource` of the protected-resource metadata it fetched, which the machine grants ask
//!   for (rmcp keeps its own copy private);
//! - response bodies bounded.

use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use rmcp::transport::auth::{
    OAuthHttpClient, OAuthHttpClientFuture, OAuthHttpRedirectPolicy, OAuthHttpRequest,
};

use super::dpop::{DPOP, DPOP_NONCE, Dpop, asks_for_nonce};

/// An OAuth answer (metadata, a token) is at most this long.
const BODY_BYTES: usize = 1024 * 1024;

/// Hosts of configured proxies are reached whatever they resolve to.
const PROXY_VARS: [&str; 6] = [
    "HTTP_PROXY",
    "http_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "ALL_PROXY",
    "all_proxy",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Public,
    Loopback,
    Private,
    Blocked,
}

fn class(ip: IpAddr) -> Class {
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    };
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            if v4.is_loopback() {
                Class::Loopback
            } else if v4.is_private() || (a == 100 && (64..=127).contains(&b)) {
                Class::Private
            } else if v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || a == 0
                || a >= 240
            {
                Class::Blocked
            } else {
                Class::Public
            }
        }
        IpAddr::V6(v6) => {
            let first = v6.segments()[0];
            if v6.is_loopback() {
                Class::Loopback
            } else if first & 0xfe00 == 0xfc00 {
                Class::Private
            } else if v6.is_unspecified() || v6.is_multicast() || first & 0xffc0 == 0xfe80 {
                Class::Blocked
            } else {
                Class::Public
            }
        }
    }
}

/// Which address classes a server's OAuth requests may reach.
#[derive(Clone)]
struct Policy {
    base_ip: Option<IpAddr>,
    classes: Vec<Class>,
    proxies: Arc<[String]>,
}

impl Policy {
    fn new(base: &reqwest::Url) -> Self {
        let base_ip = host_ip(base);
        let classes = match (base_ip, base.host_str()) {
            (Some(ip), _) => vec![class(ip)],
            (None, Some(host)) if host.eq_ignore_ascii_case("localhost") => vec![Class::Loopback],
            _ => Vec::new(),
        };
        let proxies = PROXY_VARS
            .iter()
            .filter_map(|var| std::env::var(var).ok())
            .filter_map(|p| {
                let p = if p.contains("://") {
                    p
                } else {
                    format!("http://{p}")
                };
                reqwest::Url::parse(&p)
                    .ok()?
                    .host_str()
                    .map(str::to_ascii_lowercase)
            })
            .collect();
        Self {
            base_ip,
            classes,
            proxies,
        }
    }

    fn allows(&self, ip: IpAddr) -> bool {
        match class(ip) {
            Class::Public => true,
            Class::Blocked => false,
            other => self.classes.contains(&other) || self.base_ip == Some(ip),
        }
    }

    /// A URL whose host is an address literal (the resolver never sees those).
    fn allows_url(&self, url: &reqwest::Url) -> bool {
        host_ip(url).is_none_or(|ip| self.allows(ip))
    }
}

/// The address a URL's host is written as, if it is one.
fn host_ip(url: &reqwest::Url) -> Option<IpAddr> {
    url.host_str()?.trim_matches(['[', ']']).parse().ok()
}

impl Resolve for Policy {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = self.clone();
        let host = name.as_str().to_ascii_lowercase();
        Box::pin(async move {
            let found: Vec<std::net::SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if policy.proxies.contains(&host) {
                return Ok(Box::new(found.into_iter()) as Addrs);
            }
            let allowed: Vec<_> = found
                .into_iter()
                .filter(|a| policy.allows(a.ip()))
                .collect();
            if allowed.is_empty() {
                return Err(format!("{host} resolves to no address this server may reach").into());
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}

/// One server's OAuth HTTP client.
pub(crate) struct OAuthHttp {
    follow: reqwest::Client,
    stop: reqwest::Client,
    policy: Policy,
    pub(crate) dpop: Option<Arc<Dpop>>,
    resource: Mutex<Option<String>>,
    /// The protected-resource metadata says the server takes DPoP-bound tokens.
    resource_takes_dpop: std::sync::atomic::AtomicBool,
}

impl OAuthHttp {
    pub(crate) fn new(base_url: &str, dpop: Option<Arc<Dpop>>) -> Self {
        // A URL that does not parse never connects; its policy allows only public addresses.
        let base = reqwest::Url::parse(base_url).unwrap_or_else(|_| {
            reqwest::Url::parse("https://invalid.invalid/").expect("static URL")
        });
        let policy = Policy::new(&base);
        let build = |redirect: reqwest::redirect::Policy| {
            reqwest::Client::builder()
                .user_agent(concat!("toolnexus/", env!("CARGO_PKG_VERSION")))
                .redirect(redirect)
                .dns_resolver(Arc::new(policy.clone()))
                .build()
                // Only a TLS backend that cannot start fails here; the policy's literal-address
                // check still applies.
                .unwrap_or_default()
        };
        Self {
            follow: build(reqwest::redirect::Policy::limited(5)),
            stop: build(reqwest::redirect::Policy::none()),
            policy,
            dpop,
            resource: Mutex::new(None),
            resource_takes_dpop: Default::default(),
        }
    }

    /// The `resource` the server's protected-resource metadata named, once fetched.
    pub(crate) fn resource(&self) -> Option<String> {
        self.resource
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The DPoP key, when this server's tokens are bound to it.
    pub(crate) fn bound(&self) -> Option<&Dpop> {
        self.dpop.as_deref().filter(|d| d.active())
    }

    /// Keeps what protected-resource metadata says: its `resource`, and whether the server
    /// takes DPoP-bound tokens (RFC 9449 §5.2 via RFC 9728).
    fn note_resource_metadata(&self, bytes: &[u8]) {
        let Ok(prm) = serde_json::from_slice::<serde_json::Value>(bytes) else {
            return;
        };
        if let Some(resource) = prm.get("resource").and_then(|r| r.as_str()) {
            *self.resource.lock().unwrap_or_else(|e| e.into_inner()) = Some(resource.into());
        }
        let takes = prm.get("dpop_bound_access_tokens_required") == Some(&true.into())
            || prm
                .get("dpop_signing_alg_values_supported")
                .and_then(|a| a.as_array())
                .is_some_and(|a| !a.is_empty());
        if takes {
            self.resource_takes_dpop
                .store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }

    /// Binds the server's tokens to its key when the entry asks (`dpop: true`), or, with `dpop`
    /// absent, when both sides take DPoP: the authorisation server lists ES256 in
    /// `dpop_signing_alg_values_supported`, and the MCP server challenged with the `DPoP`
    /// scheme or says so in its protected-resource metadata. (An authorisation server that
    /// offers DPoP says nothing of whether the server takes such tokens.)
    pub(crate) fn bind_if_supported(
        &self,
        wanted: Option<bool>,
        metadata: &rmcp::transport::auth::AuthorizationMetadata,
        challenge: Option<&str>,
    ) {
        let Some(dpop) = &self.dpop else {
            return;
        };
        let issuer_takes = metadata
            .additional_fields
            .get("dpop_signing_alg_values_supported")
            .and_then(serde_json::Value::as_array)
            .is_some_and(|algs| algs.iter().any(|a| a.as_str() == Some("ES256")));
        let server_takes = challenge.is_some_and(challenges_dpop)
            || self
                .resource_takes_dpop
                .load(std::sync::atomic::Ordering::SeqCst);
        if wanted == Some(true) || (wanted.is_none() && issuer_takes && server_takes) {
            dpop.activate();
        }
    }

    /// Sends one request (a token request gets its DPoP proof, and one nonce retry).
    pub(crate) async fn send(
        &self,
        request: http::Request<Vec<u8>>,
        follow: bool,
        timeout: Duration,
    ) -> Result<http::Response<Vec<u8>>, String> {
        let (parts, body) = request.into_parts();
        let url = reqwest::Url::parse(&parts.uri.to_string()).map_err(|e| e.to_string())?;
        if !self.policy.allows_url(&url) {
            return Err(format!(
                "OAuth request to {} refused: not an address this server may reach",
                url.host_str().unwrap_or("?")
            ));
        }
        let token_request = parts.method == http::Method::POST
            && String::from_utf8_lossy(&body).contains("grant_type=");
        let client = if follow { &self.follow } else { &self.stop };
        let mut retried = false;
        loop {
            let mut builder = client
                .request(parts.method.clone(), url.clone())
                .headers(parts.headers.clone())
                .timeout(timeout)
                .body(body.clone());
            let dpop = self.bound().filter(|_| token_request);
            if let Some(dpop) = dpop {
                builder =
                    builder.header(DPOP, dpop.proof(parts.method.as_str(), url.as_str(), None));
            }
            let response = builder.send().await.map_err(|e| error_words(&e))?;
            let status = response.status();
            let headers = response.headers().clone();
            let nonce = headers.get(DPOP_NONCE).and_then(|v| v.to_str().ok());
            if let (Some(dpop), Some(nonce)) = (&self.dpop, nonce) {
                dpop.remember_nonce(url.as_str(), nonce);
            }
            let bytes = bounded(response).await?;
            if dpop.is_some()
                && !retried
                && status == reqwest::StatusCode::BAD_REQUEST
                && nonce.is_some()
                && asks_for_nonce(&String::from_utf8_lossy(&bytes))
            {
                retried = true;
                continue;
            }
            if status.is_success() && url.path().contains("/.well-known/oauth-protected-resource") {
                self.note_resource_metadata(&bytes);
            }
            let mut answer = http::Response::builder().status(status.as_u16());
            for (name, value) in &headers {
                answer = answer.header(name, value);
            }
            return answer.body(bytes).map_err(|e| e.to_string());
        }
    }
}

/// A `WWW-Authenticate` with a `DPoP` challenge among its schemes.
fn challenges_dpop(challenge: &str) -> bool {
    challenge.split(',').any(|part| {
        let part = part.trim_start();
        part.len() >= 4
            && part[..4].eq_ignore_ascii_case("dpop")
            && part[4..].chars().next().is_none_or(char::is_whitespace)
    })
}

/// The body, at most [`BODY_BYTES`].
async fn bounded(mut response: reqwest::Response) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| error_words(&e))? {
        if bytes.len() + chunk.len() > BODY_BYTES {
            return Err(format!(
                "OAuth answer from {} is over {} KiB",
                response.url().host_str().unwrap_or("?"),
                BODY_BYTES / 1024
            ));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

/// A request that failed before an answer, in words (never a URL's query).
fn error_words(e: &reqwest::Error) -> String {
    let host = e
        .url()
        .and_then(|u| u.host_str())
        .unwrap_or("the server")
        .to_string();
    if e.is_timeout() {
        format!("{host} did not answer in time")
    } else if e.is_connect() {
        format!("{host} cannot be reached")
    } else {
        format!("the request to {host} failed")
    }
}

impl OAuthHttpClient for OAuthHttp {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(async move {
            let follow = request.redirect_policy == OAuthHttpRedirectPolicy::Follow;
            let timeout = request
                .timeout
                .unwrap_or(crate::bounds::OAUTH_REQUEST_TIMEOUT);
            self.send(request.request, follow, timeout)
                .await
                .map_err(|e| e.into())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_reached_only_within_the_servers_class() {
        let local = Policy::new(&reqwest::Url::parse("http://127.0.0.1:3000/mcp").unwrap());
        let public = Policy::new(&reqwest::Url::parse("https://mcp.example.com/mcp").unwrap());
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert!(local.allows(ip("127.0.0.1")));
        assert!(!public.allows(ip("127.0.0.1")));
        assert!(!public.allows(ip("10.0.0.9")));
        assert!(public.allows(ip("93.184.216.34")));
        // The cloud metadata service, however reached.
        assert!(!local.allows(ip("169.254.169.254")));
        assert!(!public.allows(ip("::ffff:169.254.169.254")));
        assert!(!public.allows(ip("fe80::1")));
        assert!(!public.allows_url(&reqwest::Url::parse("http://169.254.169.254/latest").unwrap()));
    }

    #[test]
    fn a_dpop_challenge_is_told_from_a_bearer_one() {
        assert!(challenges_dpop("DPoP resource_metadata=\"https://a/prm\""));
        assert!(challenges_dpop("Bearer realm=\"a\", DPoP algs=\"ES256\""));
        assert!(challenges_dpop("dpop"));
        assert!(!challenges_dpop(
            "Bearer resource_metadata=\"https://a/prm\""
        ));
        assert!(!challenges_dpop("DPoPish x=1"));
    }
}
