//! The OAuth issuer as this resource server sees it: its metadata (RFC 8414, then OpenID
//! discovery), its signing keys (JWKS, refetched on an unknown `kid`), and its introspection
//! endpoint (RFC 7662, in `introspect`) for opaque tokens.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use reqwest::Url;
use serde_json::Value;

use super::denial::Refusal;
use super::fetch::{Fetcher, secure_url, shown};
use super::introspect::Introspector;
use super::jwt::{self, Choice, Expected, KeySet};
use super::principal::{Principal, principal};
use crate::bounds::{AUTH_KEYS_REFETCH_MIN, AUTH_KEYS_REFRESH_AFTER, AUTH_MAX_CLOCK_SKEW};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthOptions {
    pub issuer: String,
    /// Default: the endpoint's own URL.
    pub audience: Option<String>,
    pub required_scopes: Vec<String>,
    /// Default: the issuer metadata's `jwks_uri`.
    pub jwks_uri: Option<String>,
    pub introspection: Option<Introspection>,
    pub clock_skew: Duration,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Introspection {
    pub client_id: String,
    pub client_secret: String,
    /// Default: the issuer metadata's `introspection_endpoint`.
    pub endpoint: Option<String>,
}

/// How often keys are fetched again (tests shorten them).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timing {
    pub(crate) refetch_min: Duration,
    pub(crate) refresh_after: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            refetch_min: AUTH_KEYS_REFETCH_MIN,
            refresh_after: AUTH_KEYS_REFRESH_AFTER,
        }
    }
}

pub(crate) struct Issuer {
    pub(crate) issuer: String,
    pub(crate) audience: String,
    skew: u64,
    keys: Option<KeyCache>,
    introspection: Option<Introspector>,
}

impl Issuer {
    /// Reads the issuer's metadata when something must come from it, then fetches its keys.
    pub(crate) async fn discover(
        options: &OAuthOptions,
        audience: String,
        timing: Timing,
    ) -> Result<Issuer, String> {
        let issuer = options.issuer.clone();
        let issuer_url = secure_url(&issuer, "OAuth issuer")?;
        if options.clock_skew > AUTH_MAX_CLOCK_SKEW {
            let most = AUTH_MAX_CLOCK_SKEW.as_secs();
            return Err(format!(
                "the OAuth clock skew must be at most {most} seconds"
            ));
        }
        let fetcher = Fetcher::new();
        let needs_metadata = options.jwks_uri.is_none()
            || options
                .introspection
                .as_ref()
                .is_some_and(|i| i.endpoint.is_none());
        let metadata = match needs_metadata {
            true => Some(metadata(&fetcher, &issuer, &issuer_url).await?),
            false => None,
        };
        let published = |name: &str| {
            metadata
                .as_ref()
                .and_then(|m| m.get(name))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let jwks_uri = options.jwks_uri.clone().or_else(|| published("jwks_uri"));
        let introspection = match &options.introspection {
            None => None,
            Some(given) => {
                let endpoint = given
                    .endpoint
                    .clone()
                    .or_else(|| published("introspection_endpoint"))
                    .ok_or_else(|| {
                        format!("the OAuth issuer {issuer} publishes no introspection_endpoint")
                    })?;
                let endpoint = secure_url(&endpoint, "introspection endpoint")?;
                Some(Introspector::new(
                    fetcher.clone(),
                    endpoint,
                    &given.client_id,
                    &given.client_secret,
                ))
            }
        };
        let keys = match jwks_uri {
            Some(uri) => {
                let uri = secure_url(&uri, "JWKS URI")?;
                let set = fetch_keys(&fetcher, &uri).await.map_err(|why| {
                    format!("cannot fetch the keys of the OAuth issuer {issuer}: {why}")
                })?;
                Some(KeyCache::new(fetcher.clone(), uri, set, timing))
            }
            // Opaque tokens only: every token goes to introspection.
            None if introspection.is_some() => None,
            None => return Err(format!("the OAuth issuer {issuer} publishes no jwks_uri")),
        };
        Ok(Issuer {
            issuer,
            audience,
            skew: options.clock_skew.as_secs(),
            keys,
            introspection,
        })
    }

    fn expected(&self) -> Expected<'_> {
        Expected {
            issuer: &self.issuer,
            audience: &self.audience,
            skew: self.skew,
            now: now_secs(),
        }
    }

    pub(crate) async fn verify(&self, token: &str) -> Result<Principal, Refusal> {
        match (&self.keys, &self.introspection) {
            (Some(keys), _) if jwt::looks_like_jwt(token) => self.verify_jwt(keys, token).await,
            (_, Some(introspector)) => introspector.verify(token, &self.expected()).await,
            _ => Err(Refusal::Invalid("the token is not a valid JWT".into())),
        }
    }

    async fn verify_jwt(&self, cache: &KeyCache, token: &str) -> Result<Principal, Refusal> {
        let jwt = jwt::parse(token).map_err(Refusal::Invalid)?;
        let mut keys = cache.current();
        if keys.fetched.elapsed() >= cache.timing.refresh_after {
            keys = cache.refresh(keys).await;
        }
        let mut choice = jwt.choose(&keys.set);
        let fresh;
        if matches!(choice, Choice::Unknown) {
            fresh = cache.refetch(keys.generation).await;
            choice = jwt.choose(&fresh.set);
        }
        let not_ours = || Refusal::Invalid("the token is not signed by a key of the issuer".into());
        match choice {
            Choice::Key(key) if jwt.signed_by(key) => {}
            Choice::Key(_) | Choice::Unknown => return Err(not_ours()),
            Choice::Refused(why) => return Err(Refusal::Invalid(why)),
        }
        self.expected()
            .check(&jwt.claims, true)
            .map_err(Refusal::Invalid)?;
        principal(&self.issuer, jwt.claims, false).map_err(Refusal::Invalid)
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The issuer's metadata: RFC 8414's URL (the well-known path inserted before the issuer's
/// path), then OpenID discovery's (appended to the issuer). It must name the same issuer.
async fn metadata(fetcher: &Fetcher, issuer: &str, url: &Url) -> Result<Value, String> {
    let path = url.path().trim_end_matches('/');
    let mut rfc8414 = url.clone();
    rfc8414.set_path(&format!("/.well-known/oauth-authorization-server{path}"));
    let mut openid = url.clone();
    openid.set_path(&format!("{path}/.well-known/openid-configuration"));
    let mut reasons = Vec::new();
    for candidate in [rfc8414, openid] {
        match fetcher.get_json(&candidate).await {
            Ok(document) => {
                let named = document.get("issuer").and_then(Value::as_str);
                if named != Some(issuer) {
                    return Err(format!(
                        "the OAuth issuer {issuer} publishes metadata for another issuer ({})",
                        crate::connect::reason::bounded(named.unwrap_or("none"))
                    ));
                }
                return Ok(document);
            }
            Err(why) => reasons.push(why),
        }
    }
    Err(format!(
        "cannot reach the OAuth issuer {issuer}: {}",
        reasons.join("; ")
    ))
}

async fn fetch_keys(fetcher: &Fetcher, uri: &Url) -> Result<KeySet, String> {
    let document = fetcher.get_json(uri).await?;
    KeySet::parse(&document).map_err(|why| format!("{}: {why}", shown(uri)))
}

/// One fetch of the key set.
struct Keys {
    set: KeySet,
    fetched: Instant,
    /// Counts successful fetches: a waiter that sees it moved does not fetch again.
    generation: u64,
}

/// The issuer's keys, fetched again on an unknown `kid` at most once per `refetch_min`, one
/// fetch at a time (waiters share its result), and when older than `refresh_after`.
struct KeyCache {
    fetcher: Fetcher,
    uri: Url,
    current: RwLock<Arc<Keys>>,
    /// When the last refetch was tried (the first fetch, at start, does not count: a key
    /// rotated just then is found at once); held while fetching.
    last_attempt: tokio::sync::Mutex<Option<Instant>>,
    timing: Timing,
}

impl KeyCache {
    fn new(fetcher: Fetcher, uri: Url, set: KeySet, timing: Timing) -> KeyCache {
        let now = Instant::now();
        KeyCache {
            fetcher,
            uri,
            current: RwLock::new(Arc::new(Keys {
                set,
                fetched: now,
                generation: 0,
            })),
            last_attempt: tokio::sync::Mutex::new(None),
            timing,
        }
    }

    fn current(&self) -> Arc<Keys> {
        self.current
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// The keys after a refetch, or the ones there are when another caller fetched meanwhile or
    /// the last attempt was too recent (a failed fetch keeps the old keys). Waits for a fetch
    /// under way: a token naming an unknown key needs its result.
    async fn refetch(&self, seen: u64) -> Arc<Keys> {
        let last_attempt = self.last_attempt.lock().await;
        self.fetch_with(last_attempt, seen).await
    }

    /// The periodic refresh of `keys`: never waits for a fetch under way (the keys there are
    /// still serve).
    async fn refresh(&self, keys: Arc<Keys>) -> Arc<Keys> {
        match self.last_attempt.try_lock() {
            Ok(last_attempt) => self.fetch_with(last_attempt, keys.generation).await,
            Err(_) => keys,
        }
    }

    async fn fetch_with(
        &self,
        mut last_attempt: tokio::sync::MutexGuard<'_, Option<Instant>>,
        seen: u64,
    ) -> Arc<Keys> {
        let keys = self.current();
        let recent = last_attempt.is_some_and(|at| at.elapsed() < self.timing.refetch_min);
        if keys.generation != seen || recent {
            return keys;
        }
        *last_attempt = Some(Instant::now());
        let Ok(set) = fetch_keys(&self.fetcher, &self.uri).await else {
            return keys;
        };
        let fresh = Arc::new(Keys {
            set,
            fetched: Instant::now(),
            generation: keys.generation + 1,
        });
        *self
            .current
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = fresh.clone();
        fresh
    }
}
