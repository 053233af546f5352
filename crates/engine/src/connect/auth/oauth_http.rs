//! The HTTP client of every OAuth request one server's sign-in makes (rmcp's discovery,
//! registration and token requests, and the grants written here), as rmcp's [`OAuthHttpClient`]:
//!
//! - DPoP: once the server's tokens are bound ([`Dpop::active`]), every token request carries a
//!   fresh proof, and a `400 use_dpop_nonce` is answered once more with a proof carrying the
//!   nonce the authorisation server gave (RFC 9449 §8);
//! - the address policy rmcp's own client applies to discovered URLs: a host may resolve to a
//!   loopback or private address only when the server's URL names one of that class, and
//!   link-local and other reserved addresses (cloud metadata services) are never reached;
//! - the `resource` of the protected-resource metadata it fetched (wherever the challenge
//!   pointed), which the machine grants ask
//!   for (rmcp keeps its own copy private);
//! - response bodies bounded.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use rmcp::transport::auth::{
    OAuthHttpClient, OAuthHttpClientFuture, OAuthHttpRedirectPolicy, OAuthHttpRequest,
};

use super::dpop::{DPOP, DPOP_NONCE, Dpop, asks_for_nonce};

/// Redirects an OAuth request follows (rmcp's limit).
const MAX_REDIRECTS: usize = 10;

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

/// The IPv4 address an IPv6 address carries (mapped, compatible, NAT64 `64:ff9b::/96`, 6to4),
/// as rmcp reads it.
fn embedded_ipv4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    let [a, b, c, d, e, f, g, h] = v6.segments();
    let low = Ipv4Addr::from((u32::from(g) << 16) | u32::from(h));
    match [a, b, c, d, e, f] {
        [0, 0, 0, 0, 0, 0xffff] | [0x64, 0xff9b, 0, 0, 0, 0] => Some(low),
        [0, 0, 0, 0, 0, 0] if !v6.is_loopback() && !v6.is_unspecified() => Some(low),
        [0x2002, ..] => Some(Ipv4Addr::from((u32::from(b) << 16) | u32::from(c))),
        _ => None,
    }
}

/// rmcp's classes (its `metadata_resolver::AddressClass`, which it keeps private): an address
/// is public unless rmcp disallows it for metadata, then loopback, private, or blocked.
fn class(ip: IpAddr) -> Class {
    let ip = match ip {
        IpAddr::V6(v6) => embedded_ipv4(v6).map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    };
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            let shared = a == 100 && (64..=127).contains(&b);
            let disallowed = v4.is_private()
                || v4.is_loopback()
                || v4.is_link_local()
                || v4.is_broadcast()
                || v4.is_unspecified()
                || v4.is_multicast()
                || a == 0
                || shared
                || (a == 198 && matches!(b, 18 | 19));
            if !disallowed {
                Class::Public
            } else if v4.is_loopback() {
                Class::Loopback
            } else if v4.is_private() || shared {
                Class::Private
            } else {
                Class::Blocked
            }
        }
        IpAddr::V6(v6) => {
            let segments = v6.segments();
            let unique_local = segments[0] & 0xfe00 == 0xfc00;
            let disallowed = v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || segments[0] & 0xffc0 == 0xfe80
                || unique_local
                // Teredo, local-use NAT64.
                || segments[..2] == [0x2001, 0]
                || segments[..3] == [0x64, 0xff9b, 1];
            if !disallowed {
                Class::Public
            } else if v6.is_loopback() {
                Class::Loopback
            } else if unique_local {
                Class::Private
            } else {
                Class::Blocked
            }
        }
    }
}

/// `localhost` and its subdomains, as rmcp counts them loopback.
fn is_localhost(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    host == "localhost" || host.ends_with(".localhost")
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
            (None, Some(host)) if is_localhost(host) => vec![Class::Loopback],
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
        if self.base_ip == Some(ip) {
            return true;
        }
        match class(ip) {
            Class::Public => true,
            Class::Blocked => false,
            other => self.classes.contains(&other),
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
        // Every hop of a redirect is checked too: the resolver never sees an address literal.
        let hops = policy.clone();
        let follow = reqwest::redirect::Policy::custom(move |attempt| {
            if !hops.allows_url(attempt.url()) {
                let host = attempt.url().host_str().unwrap_or("?").to_string();
                attempt.error(format!(
                    "a redirect to {host} is not an address this server may reach"
                ))
            } else if attempt.previous().len() > MAX_REDIRECTS {
                attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
            } else {
                attempt.follow()
            }
        });
        Self {
            follow: build(follow),
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

    /// Keeps what protected-resource metadata says: its `resource`, and whether the server
    /// takes DPoP-bound tokens (RFC 9449 §5.2 via RFC 9728).
    fn note_resource_metadata(&self, bytes: &[u8]) {
        // Protected-resource metadata names its authorisation servers (at a well-known path,
        // or wherever the challenge's `resource_metadata` pointed).
        let Ok(prm) = serde_json::from_slice::<serde_json::Value>(bytes) else {
            return;
        };
        if prm.get("authorization_servers").is_none() && prm.get("authorization_server").is_none() {
            return;
        }
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
    async fn send(
        &self,
        request: http::Request<Vec<u8>>,
        follow: bool,
        timeout: Duration,
    ) -> Result<http::Response<Vec<u8>>, String> {
        let (parts, body) = request.into_parts();
        self.send_with(parts, &|| Ok(body.clone()), follow, timeout)
            .await
    }

    /// The same, with a body made again for a nonce retry (a client assertion is never sent
    /// twice).
    pub(crate) async fn send_with(
        &self,
        parts: http::request::Parts,
        make_body: &(dyn Fn() -> Result<Vec<u8>, String> + Sync),
        follow: bool,
        timeout: Duration,
    ) -> Result<http::Response<Vec<u8>>, String> {
        let url = reqwest::Url::parse(&parts.uri.to_string()).map_err(|e| e.to_string())?;
        if !self.policy.allows_url(&url) {
            return Err(format!(
                "OAuth request to {} refused: not an address this server may reach",
                url.host_str().unwrap_or("?")
            ));
        }
        let client = if follow { &self.follow } else { &self.stop };
        let mut retried = false;
        loop {
            let body = make_body()?;
            let token_request = parts.method == http::Method::POST
                && String::from_utf8_lossy(&body).contains("grant_type=");
            let mut builder = client
                .request(parts.method.clone(), url.clone())
                .headers(parts.headers.clone())
                .timeout(timeout)
                .body(body);
            let dpop = self.dpop.as_deref().filter(|d| d.active() && token_request);
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
            if status.is_success() {
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
    if e.is_redirect() {
        // The redirect policy's own words are the innermost cause.
        let mut why = String::from("too many redirects");
        let mut cause = std::error::Error::source(e);
        while let Some(inner) = cause {
            why = inner.to_string();
            cause = inner.source();
        }
        return format!("{host} redirected the request: {why}");
    }
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
        // IPv4 carried in IPv6 (NAT64, 6to4, compatible), Teredo, the benchmarking range.
        for blocked in [
            "64:ff9b::a9fe:a9fe",
            "2002:a9fe:a9fe::1",
            "::169.254.169.254",
            "2001:0::1",
            "64:ff9b:1::1",
            "198.18.0.1",
        ] {
            assert!(!public.allows(ip(blocked)), "{blocked}");
        }
        assert!(
            !public.allows(ip("64:ff9b::7f00:1")),
            "loopback through NAT64"
        );
        assert!(local.allows(ip("64:ff9b::7f00:1")));
        let named = Policy::new(&reqwest::Url::parse("http://mcp.localhost./mcp").unwrap());
        assert!(named.allows(ip("127.0.0.1")));
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

    /// A server on 127.0.0.1 that answers every request with a redirect to `location`.
    async fn redirecting(location: &'static str) -> String {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let mut buf = [0u8; 4096];
                let _ = socket.read(&mut buf).await;
                let answer = format!(
                    "HTTP/1.1 302 Found\r\nlocation: {location}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                );
                let _ = socket.write_all(answer.as_bytes()).await;
            }
        });
        format!("http://127.0.0.1:{port}")
    }

    #[tokio::test]
    async fn a_redirect_is_checked_hop_by_hop() {
        let base = redirecting("http://169.254.169.254/latest/meta-data").await;
        let http = OAuthHttp::new(&format!("{base}/mcp"), None);
        let request = http::Request::get(format!("{base}/.well-known/oauth-authorization-server"))
            .body(Vec::new())
            .unwrap();
        let refused = http
            .send(request, true, Duration::from_secs(5))
            .await
            .unwrap_err();
        assert_eq!(
            refused,
            "127.0.0.1 redirected the request: a redirect to 169.254.169.254 is not an address this server may reach"
        );
    }
}
