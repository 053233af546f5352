//! RFC 7662 introspection of opaque tokens (and of every token when the issuer publishes no
//! keys): client_secret_basic, answers remembered for a while by the token's SHA-256.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine;
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::Url;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::denial::Refusal;
use super::fetch::{Fetcher, shown};
use super::jwt::Expected;
use super::principal::{Principal, principal};
use crate::bounds::{AUTH_INTROSPECTION_CACHE_ENTRIES, AUTH_INTROSPECTION_TTL};

/// A remembered introspection answer.
struct Remembered {
    outcome: Result<Principal, String>,
    until: Instant,
}

/// RFC 7662 introspection with client_secret_basic, answers remembered by the token's SHA-256.
pub(super) struct Introspector {
    fetcher: Fetcher,
    endpoint: Url,
    /// base64(urlencode(id) ":" urlencode(secret)), RFC 6749 §2.3.1.
    basic: String,
    cache: Mutex<HashMap<[u8; 32], Remembered>>,
}

impl Introspector {
    pub(crate) fn new(
        fetcher: Fetcher,
        endpoint: Url,
        client_id: &str,
        secret: &str,
    ) -> Introspector {
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

    pub(crate) async fn verify(
        &self,
        token: &str,
        expected: &Expected<'_>,
    ) -> Result<Principal, Refusal> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some(outcome) = self.remembered(&digest) {
            return outcome.map_err(Refusal::Invalid);
        }
        let form = format!(
            "token={}&token_type_hint=access_token",
            utf8_percent_encode(token, NON_ALPHANUMERIC)
        );
        let unchecked =
            |why: String| Refusal::Unchecked(format!("cannot introspect the token: {why}"));
        let answer = self
            .fetcher
            .post_form(&self.endpoint, &self.basic, form)
            .await
            .map_err(unchecked)?;
        let Value::Object(claims) = answer else {
            let endpoint = shown(&self.endpoint);
            return Err(unchecked(format!(
                "{endpoint} did not answer with a JSON object"
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
        let mut ttl = AUTH_INTROSPECTION_TTL;
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
        if cache.len() >= AUTH_INTROSPECTION_CACHE_ENTRIES {
            cache.retain(|_, entry| entry.until > now);
        }
        if cache.len() >= AUTH_INTROSPECTION_CACHE_ENTRIES
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
