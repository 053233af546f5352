//! The OAuth issuer as this resource server sees it: its metadata (RFC 8414, then OpenID
//! discovery), its signing keys (JWKS, refetched on an unknown `kid`), its introspection
//! endpoint (RFC 7662) for opaque tokens.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine;
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::Url;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::fetch::{Fetcher, secure_url, shown};
use super::jwt::{self, Choice, Expected, KeySet};
use super::limits::*;
use super::{OAuthOptions, Principal};

/// Why an OAuth check did not accept a token.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// The token is not good: words for the 401.
    Invalid(String),
    /// The token could not be checked (the issuer out of reach): words for the log.
    Unchecked(String),
}

/// How often keys are fetched again (tests shorten them).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timing {
    pub refetch_min: Duration,
    pub refresh_after: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            refetch_min: KEYS_REFETCH_MIN,
            refresh_after: KEYS_REFRESH_AFTER,
        }
    }
}

pub(crate) struct Issuer {
    pub issuer: String,
    pub audience: String,
    skew: u64,
    keys: Option<KeyCache>,
    introspection: Option<Introspector>,
}

impl Issuer {
    /// Reads the issuer's metadata when something must come from it, then fetches its keys.
    pub async fn discover(
        options: &OAuthOptions,
        audience: String,
        timing: Timing,
    ) -> Result<Issuer, String> {
        let issuer = options.issuer.clone();
        let issuer_url = secure_url(&issuer, "OAuth issuer")?;
        if options.clock_skew > MAX_CLOCK_SKEW {
            return Err("the OAuth clock skew must be at most 600 seconds".into());
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

    pub async fn verify(&self, token: &str) -> Result<Principal, Refusal> {
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

/// A principal from accepted claims: `sub` (an introspection answer may give `client_id`
/// instead, for a client's own token), the scopes, the claims.
fn principal(
    issuer: &str,
    claims: Map<String, Value>,
    introspected: bool,
) -> Result<Principal, String> {
    let subject = match (claims.get("sub"), claims.get("client_id")) {
        (Some(Value::String(sub)), _) if !sub.is_empty() => sub.clone(),
        (None, Some(Value::String(client))) if introspected && !client.is_empty() => client.clone(),
        _ => return Err("the token names no subject (sub)".into()),
    };
    Ok(Principal {
        subject,
        scopes: jwt::scopes(&claims),
        claims: Value::Object(claims),
        issuer: Some(issuer.to_string()),
    })
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

/// A remembered introspection answer.
struct Remembered {
    outcome: Result<Principal, String>,
    until: Instant,
}

/// RFC 7662 introspection with client_secret_basic, answers remembered by the token's SHA-256.
struct Introspector {
    fetcher: Fetcher,
    endpoint: Url,
    /// base64(urlencode(id) ":" urlencode(secret)), RFC 6749 §2.3.1.
    basic: String,
    cache: Mutex<HashMap<[u8; 32], Remembered>>,
}

impl Introspector {
    fn new(fetcher: Fetcher, endpoint: Url, client_id: &str, secret: &str) -> Introspector {
        let form = |s: &str| utf8_percent_encode(s, NON_ALPHANUMERIC).to_string();
        let basic = base64::engine::general_purpose::STANDARD.encode(format!(
            "{}:{}",
            form(client_id),
            form(secret)
        ));
        Introspector {
            fetcher,
            endpoint,
            basic,
            cache: Mutex::new(HashMap::new()),
        }
    }

    async fn verify(&self, token: &str, expected: &Expected<'_>) -> Result<Principal, Refusal> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some(outcome) = self.remembered(&digest) {
            return outcome.map_err(Refusal::Invalid);
        }
        let form = format!(
            "token={}&token_type_hint=access_token",
            utf8_percent_encode(token, NON_ALPHANUMERIC)
        );
        let answer = self
            .fetcher
            .post_form(&self.endpoint, &self.basic, form)
            .await
            .map_err(|why| Refusal::Unchecked(format!("cannot introspect the token: {why}")))?;
        let Value::Object(claims) = answer else {
            let why = format!(
                "{} did not answer with a JSON object",
                shown(&self.endpoint)
            );
            return Err(Refusal::Unchecked(format!(
                "cannot introspect the token: {why}"
            )));
        };
        let outcome = if claims.get("active") != Some(&Value::Bool(true)) {
            Err("the token is not active".to_string())
        } else {
            expected
                .check(&claims, false)
                .and_then(|()| principal(expected.issuer, claims, true))
        };
        self.remember(digest, &outcome, expected.now);
        outcome.map_err(Refusal::Invalid)
    }

    fn remembered(&self, digest: &[u8; 32]) -> Option<Result<Principal, String>> {
        let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        let entry = cache.get(digest)?;
        (Instant::now() < entry.until).then(|| entry.outcome.clone())
    }

    fn remember(&self, digest: [u8; 32], outcome: &Result<Principal, String>, now: u64) {
        let mut ttl = INTROSPECTION_TTL;
        if let Ok(principal) = outcome
            && let Some(exp) = principal.claims.get("exp").and_then(Value::as_f64)
        {
            let left = (exp - now as f64).max(0.0);
            ttl = ttl.min(Duration::from_secs_f64(left.min(ttl.as_secs_f64())));
        }
        if ttl.is_zero() {
            return;
        }
        let now = Instant::now();
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() >= INTROSPECTION_CACHE_ENTRIES {
            cache.retain(|_, entry| entry.until > now);
        }
        if cache.len() >= INTROSPECTION_CACHE_ENTRIES
            && let Some(soonest) = cache
                .iter()
                .min_by_key(|(_, entry)| entry.until)
                .map(|(key, _)| *key)
        {
            cache.remove(&soonest);
        }
        cache.insert(
            digest,
            Remembered {
                outcome: outcome.clone(),
                until: now + ttl,
            },
        );
    }
}
