//! Sealed state: what a served endpoint hands a client so that any replica sharing its state
//! key can carry on (a 2026-07-28 `requestState`, a portable handshake-era `Mcp-Session-Id`, the
//! id of a request sent to the client on a session's stream).
//!
//! Sealing is AES-256-GCM from aws-lc-rs (already in the tree through rustls): a random 96-bit
//! nonce per seal, and what the sealed text is for (its [`Purpose`]) as associated data, so a
//! session id is never accepted as a `requestState` or the other way round. A key is derived
//! from each configured secret with SHA-256 under a label; the first key seals and every key
//! opens, so keys rotate by putting the new one first and dropping the old one once no client
//! can still hold state it sealed.

use std::sync::Arc;

use aws_lc_rs::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rmcp::service::{RequestContext, RoleServer};
use serde::Serialize;
use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};

/// The shortest secret accepted (bytes).
pub(crate) const MIN_SECRET: usize = 16;
/// How many secrets (keys in rotation) one endpoint may hold.
pub(crate) const MAX_KEYS: usize = 16;
/// The longest sealed text opened (what a client sends back is refused beyond it).
pub(crate) const MAX_SEALED: usize = 1 << 20;
/// The longest sealed text a shared store gives back that is opened: the sealed size of the
/// largest task record it keeps (base64 of nonce, record and tag).
const MAX_STORED: usize = (crate::bounds::SERVE_STORE_TASK_BYTES + 64).div_ceil(3) * 4;

/// What a sealed text is for: opened only as that.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Purpose {
    /// A 2026-07-28 input-required round's `requestState`.
    RequestState,
    /// A portable handshake-era session id.
    Session,
    /// The id of a request sent to the client on a portable session's stream.
    RequestId,
    /// A value kept in a shared state store (see `serve::store`), under its key name (which is
    /// part of the associated data, so a value moved to another key opens as nothing).
    Stored,
}

impl Purpose {
    fn label(self) -> &'static [u8] {
        match self {
            Self::RequestState => b"toolnexus requestState v1",
            Self::Session => b"toolnexus session v1",
            Self::RequestId => b"toolnexus request id v1",
            Self::Stored => b"toolnexus stored v1",
        }
    }
}

/// The state key of an endpoint: the keys replicas share (the first seals, all open).
pub struct StateKey {
    keys: Vec<LessSafeKey>,
    /// The key a shared store's key names are made with (from the first secret), so the store
    /// learns nothing from them.
    names: aws_lc_rs::hmac::Key,
}

impl std::fmt::Debug for StateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StateKey({} keys)", self.keys.len())
    }
}

impl StateKey {
    /// The key of `secrets` (first seals). Each must be at least [`MIN_SECRET`] bytes.
    pub fn new(secrets: &[Vec<u8>]) -> Result<Self, String> {
        if secrets.is_empty() {
            return Err("stateKey has no key".into());
        }
        if secrets.len() > MAX_KEYS {
            return Err(format!(
                "stateKey has {} keys; at most {MAX_KEYS} can be in rotation",
                secrets.len()
            ));
        }
        let mut keys = Vec::with_capacity(secrets.len());
        let mut names = Sha256::new();
        names.update(b"toolnexus store names v1\0");
        names.update(&secrets[0]);
        let names = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, &names.finalize());
        for (i, secret) in secrets.iter().enumerate() {
            if secret.len() < MIN_SECRET {
                return Err(format!(
                    "stateKey key {} is {} bytes; a key must be at least {MIN_SECRET} bytes \
                     (32 random bytes are best, e.g. `openssl rand -base64 32`)",
                    i + 1,
                    secret.len()
                ));
            }
            let mut hash = Sha256::new();
            hash.update(b"toolnexus state key v1\0");
            hash.update(secret);
            let bytes = hash.finalize();
            let key = UnboundKey::new(&AES_256_GCM, &bytes)
                .map_err(|_| "stateKey could not be made into a key".to_string())?;
            keys.push(LessSafeKey::new(key));
        }
        Ok(Self { keys, names })
    }

    /// The name a shared store keeps `what` under: a keyed digest (HMAC-SHA-256, hex), the
    /// same on every replica whose first key is this one's, telling the store nothing.
    pub(crate) fn name(&self, what: &str) -> String {
        aws_lc_rs::hmac::sign(&self.names, what.as_bytes())
            .as_ref()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// `plain` sealed to be kept in a shared store under the key `name`.
    pub(crate) fn seal_stored(&self, name: &str, plain: &[u8]) -> String {
        self.seal_with(Aad::from(stored_aad(name).as_slice()), plain)
    }

    /// What a value kept under `name` holds, when it was sealed for that name with one of the
    /// keys; None for anything else (a forged value, or one moved from another key).
    pub(crate) fn open_stored(&self, name: &str, sealed: &str) -> Option<Vec<u8>> {
        self.open_within(&stored_aad(name), sealed, MAX_STORED)
    }

    /// `plain` sealed for `purpose` with the first key: URL-safe text.
    pub(crate) fn seal(&self, purpose: Purpose, plain: &[u8]) -> String {
        self.seal_with(Aad::from(purpose.label()), plain)
    }

    fn seal_with(&self, aad: Aad<&[u8]>, plain: &[u8]) -> String {
        let mut nonce = [0u8; NONCE_LEN];
        random(&mut nonce);
        let mut sealed = plain.to_vec();
        // Sealing in place with a valid key and a fresh nonce cannot fail but for a message
        // over GCM's 64 GiB limit, which nothing here comes near.
        let _ = self.keys[0].seal_in_place_append_tag(
            Nonce::assume_unique_for_key(nonce),
            aad,
            &mut sealed,
        );
        let mut out = Vec::with_capacity(NONCE_LEN + sealed.len());
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&sealed);
        URL_SAFE_NO_PAD.encode(out)
    }

    /// What `sealed` holds, when one of the keys sealed it for `purpose`; None for anything
    /// changed, foreign, too long or sealed for another purpose.
    pub(crate) fn open(&self, purpose: Purpose, sealed: &str) -> Option<Vec<u8>> {
        self.open_with(purpose.label(), sealed)
    }

    fn open_with(&self, aad: &[u8], sealed: &str) -> Option<Vec<u8>> {
        self.open_within(aad, sealed, MAX_SEALED)
    }

    fn open_within(&self, aad: &[u8], sealed: &str, max: usize) -> Option<Vec<u8>> {
        if sealed.len() > max {
            return None;
        }
        let bytes = URL_SAFE_NO_PAD.decode(sealed).ok()?;
        if bytes.len() < NONCE_LEN {
            return None;
        }
        let (nonce, body) = bytes.split_at(NONCE_LEN);
        let nonce: [u8; NONCE_LEN] = nonce.try_into().ok()?;
        self.keys.iter().find_map(|key| {
            let mut body = body.to_vec();
            let plain = key
                .open_in_place(
                    Nonce::assume_unique_for_key(nonce),
                    Aad::from(aad),
                    &mut body,
                )
                .ok()?;
            Some(plain.to_vec())
        })
    }

    /// `value` as JSON, sealed.
    pub(crate) fn seal_json<T: Serialize>(&self, purpose: Purpose, value: &T) -> String {
        self.seal(purpose, &serde_json::to_vec(value).unwrap_or_default())
    }

    /// A sealed JSON value, when it opens and has the shape of `T`.
    pub(crate) fn open_json<T: DeserializeOwned>(
        &self,
        purpose: Purpose,
        sealed: &str,
    ) -> Option<T> {
        serde_json::from_slice(&self.open(purpose, sealed)?).ok()
    }
}

/// The associated data of a value kept under `name` in a shared store.
fn stored_aad(name: &str) -> Vec<u8> {
    let mut aad = Purpose::Stored.label().to_vec();
    aad.push(0);
    aad.extend_from_slice(name.as_bytes());
    aad
}

/// The state key of the endpoint the request `context` answers came through, if it has one.
pub(crate) fn key_of(context: &RequestContext<RoleServer>) -> Option<Arc<StateKey>> {
    super::caller::from_front(context)
}

/// SHA-256 of `bytes`, hex.
pub(crate) fn digest(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Seconds since the Unix epoch (0 before it).
pub(crate) fn now_secs() -> u64 {
    now_millis() / 1000
}

/// Milliseconds since the Unix epoch (0 before it).
pub(crate) fn now_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn random(bytes: &mut [u8]) {
    if getrandom::fill(bytes).is_err() {
        // No system randomness: aws-lc's own generator.
        let _ = aws_lc_rs::rand::fill(bytes);
    }
}

/// `value` as canonical JSON (object keys sorted, at every depth), so two spellings of the same
/// arguments hash the same.
pub(crate) fn canonical(value: &serde_json::Value) -> String {
    use serde_json::Value;
    fn write(value: &Value, out: &mut String) {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                out.push('{');
                for (i, key) in keys.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&Value::String(key.clone()).to_string());
                    out.push(':');
                    write(&map[key], out);
                }
                out.push('}');
            }
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write(item, out);
                }
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut out = String::new();
    write(value, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(secret: &str) -> StateKey {
        StateKey::new(&[secret.as_bytes().to_vec()]).unwrap()
    }

    #[test]
    fn seals_and_opens_for_its_purpose_only() {
        let k = key("0123456789abcdef0123456789abcdef");
        let sealed = k.seal(Purpose::RequestState, b"hello");
        assert_eq!(k.open(Purpose::RequestState, &sealed).unwrap(), b"hello");
        assert!(k.open(Purpose::Session, &sealed).is_none());
        // Two seals of the same text differ (fresh nonce).
        assert_ne!(sealed, k.seal(Purpose::RequestState, b"hello"));
    }

    #[test]
    fn a_flipped_byte_or_another_key_opens_nothing() {
        let k = key("0123456789abcdef0123456789abcdef");
        let sealed = k.seal(Purpose::RequestState, b"hello world");
        let mut bytes = URL_SAFE_NO_PAD.decode(&sealed).unwrap();
        for i in 0..bytes.len() {
            bytes[i] ^= 1;
            let changed = URL_SAFE_NO_PAD.encode(&bytes);
            assert!(
                k.open(Purpose::RequestState, &changed).is_none(),
                "byte {i}"
            );
            bytes[i] ^= 1;
        }
        let other = key("another key of thirty-two bytes!");
        assert!(other.open(Purpose::RequestState, &sealed).is_none());
        assert!(
            k.open(Purpose::RequestState, "not base64 at all!")
                .is_none()
        );
        assert!(k.open(Purpose::RequestState, "").is_none());
    }

    #[test]
    fn rotation_the_first_seals_and_all_open() {
        let old = key("the old key, sixteen+ bytes");
        let sealed_old = old.seal(Purpose::Session, b"s");
        let both = StateKey::new(&[
            b"the new key, sixteen+ bytes".to_vec(),
            b"the old key, sixteen+ bytes".to_vec(),
        ])
        .unwrap();
        assert_eq!(both.open(Purpose::Session, &sealed_old).unwrap(), b"s");
        let sealed_new = both.seal(Purpose::Session, b"t");
        assert!(old.open(Purpose::Session, &sealed_new).is_none());
    }

    #[test]
    fn short_or_missing_keys_are_refused_in_words() {
        let e = StateKey::new(&[b"short".to_vec()]).unwrap_err();
        assert!(e.contains("at least 16 bytes"), "{e}");
        assert_eq!(StateKey::new(&[]).unwrap_err(), "stateKey has no key");
    }

    #[test]
    fn stored_values_open_under_their_own_name_only() {
        let k = key("0123456789abcdef0123456789abcdef");
        let sealed = k.seal_stored("toolnexus:spent:a", b"v");
        assert_eq!(k.open_stored("toolnexus:spent:a", &sealed).unwrap(), b"v");
        assert!(k.open_stored("toolnexus:spent:b", &sealed).is_none());
        assert!(k.open(Purpose::Stored, &sealed).is_none());
        assert!(
            key("another key of thirty-two bytes!")
                .open_stored("toolnexus:spent:a", &sealed)
                .is_none()
        );
        // Names are keyed: the same on every replica with the key, another with another key.
        assert_eq!(
            k.name("h"),
            key("0123456789abcdef0123456789abcdef").name("h")
        );
        assert_ne!(
            k.name("h"),
            key("another key of thirty-two bytes!").name("h")
        );
        assert_ne!(k.name("h"), digest(b"h"));
        assert_eq!(k.name("h").len(), 64);
    }

    #[test]
    fn canonical_json_sorts_keys_at_every_depth() {
        let a = serde_json::json!({"b": 1, "a": {"y": [1, {"q": 2, "p": 1}], "x": "s"}});
        assert_eq!(
            canonical(&a),
            r#"{"a":{"x":"s","y":[1,{"p":1,"q":2}]},"b":1}"#
        );
    }
}
