//! DPoP (RFC 9449): a P-256 key per server, kept with its tokens in the token store so a
//! refreshed token stays bound to it, and a fresh proof (a JWT signed by that key) on every
//! token request and every request to the server. rmcp has no DPoP, so this is built on
//! aws-lc-rs (the key and signature) and sha2 (the `ath` and the key's thumbprint).
//!
//! Nonces (RFC 9449 §8–9) are remembered per origin: the authorisation server's and the MCP
//! server's are different ones.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The header a proof travels in, and the one a server's nonce comes back in.
pub(crate) const DPOP: &str = "dpop";
pub(crate) const DPOP_NONCE: &str = "dpop-nonce";

/// A P-256 key pair, its PKCS#8 (as the token store keeps it) and its public JWK
/// (`{"crv","kty","x","y"}`: the members RFC 7638 hashes, in order).
struct Key {
    pair: EcdsaKeyPair,
    pkcs8: Vec<u8>,
    jwk: Value,
}

impl Key {
    fn from_pkcs8(pkcs8: Vec<u8>) -> Result<Self, String> {
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &pkcs8)
            .map_err(|_| "DPoP: the stored key is not a P-256 key".to_string())?;
        // An uncompressed point: 0x04, x (32 bytes), y (32 bytes).
        let point = pair.public_key().as_ref();
        if point.len() != 65 {
            return Err("DPoP: the key's public point is malformed".into());
        }
        let jwk = json!({
            "crv": "P-256",
            "kty": "EC",
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
            "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
        });
        Ok(Self { pair, pkcs8, jwk })
    }
}

/// One server's DPoP key (made when its tokens are first bound, or taken up from the token
/// store) and the nonces its servers gave.
#[derive(Default)]
pub(crate) struct Dpop {
    key: Mutex<Option<Arc<Key>>>,
    /// Whether this server's tokens are bound to the key (decided by config, by the
    /// authorisation server's metadata, or by a stored key).
    active: AtomicBool,
    nonces: Mutex<HashMap<String, String>>,
}

impl std::fmt::Debug for Dpop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Dpop { .. }")
    }
}

impl Dpop {
    fn key(&self) -> Option<Arc<Key>> {
        self.key.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Takes up the key a token store kept (base64 PKCS#8) with the server's tokens: they are
    /// bound to it.
    pub(crate) fn restore(&self, stored: &str) -> Result<(), String> {
        let pkcs8 = STANDARD
            .decode(stored)
            .map_err(|_| "DPoP: the stored key is not base64".to_string())?;
        *self.key.lock().unwrap_or_else(|e| e.into_inner()) =
            Some(Arc::new(Key::from_pkcs8(pkcs8)?));
        self.active.store(true, Ordering::SeqCst);
        Ok(())
    }

    /// The key as the token store keeps it, once there is one.
    pub(crate) fn stored(&self) -> Option<String> {
        self.key().map(|key| STANDARD.encode(&key.pkcs8))
    }

    /// The key's JWK thumbprint (RFC 7638), as a bound token's `cnf.jkt` names it.
    #[cfg(test)]
    pub(crate) fn thumbprint(&self) -> String {
        let jwk = self.key().map(|k| k.jwk.to_string()).unwrap_or_default();
        URL_SAFE_NO_PAD.encode(Sha256::digest(jwk.as_bytes()))
    }

    pub(crate) fn active(&self) -> bool {
        self.active.load(Ordering::SeqCst)
    }

    /// Binds the server's tokens from now on, to the key it has or a new one (without a key,
    /// which only a broken random source could cause, tokens stay unbound).
    pub(crate) fn activate(&self) {
        let mut key = self.key.lock().unwrap_or_else(|e| e.into_inner());
        if key.is_none() {
            *key = EcdsaKeyPair::generate_pkcs8(
                &ECDSA_P256_SHA256_FIXED_SIGNING,
                &SystemRandom::new(),
            )
            .ok()
            .and_then(|document| Key::from_pkcs8(document.as_ref().to_vec()).ok())
            .map(Arc::new);
        }
        self.active.store(key.is_some(), Ordering::SeqCst);
    }

    /// The authorisation server answered a proof with a plain bearer token: it does not bind.
    pub(crate) fn deactivate(&self) {
        self.active.store(false, Ordering::SeqCst);
    }

    /// The nonce `url`'s origin last gave, if any.
    pub(crate) fn nonce(&self, url: &str) -> Option<String> {
        let origin = origin(url)?;
        self.nonces
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&origin)
            .cloned()
    }

    /// Remembers the nonce `url`'s origin gave (bounded: a nonce is a short token).
    pub(crate) fn remember_nonce(&self, url: &str, nonce: &str) {
        let (Some(origin), true) = (origin(url), nonce.len() <= 1024) else {
            return;
        };
        self.nonces
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(origin, nonce.to_string());
    }

    /// A fresh proof for one request: `method` to `url` (its query and fragment dropped), with
    /// `ath` when it carries `access_token`, and the origin's nonce when it gave one. Empty
    /// (refused by any server) before the key exists, which [`Dpop::active`] rules out, or
    /// without a random source for its `jti`.
    pub(crate) fn proof(&self, method: &str, url: &str, access_token: Option<&str>) -> String {
        let Some(key) = self.key() else {
            return String::new();
        };
        let header = json!({ "typ": "dpop+jwt", "alg": "ES256", "jwk": key.jwk });
        let mut jti = [0u8; 16];
        if getrandom::fill(&mut jti).is_err() {
            return String::new();
        }
        let iat = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let mut claims = json!({
            "jti": URL_SAFE_NO_PAD.encode(jti),
            "htm": method,
            "htu": htu(url),
            "iat": iat,
        });
        if let Some(token) = access_token {
            claims["ath"] = URL_SAFE_NO_PAD
                .encode(Sha256::digest(token.as_bytes()))
                .into();
        }
        if let Some(nonce) = self.nonce(url) {
            claims["nonce"] = nonce.into();
        }
        let signing_input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        // Signing with a key that parsed cannot fail; an empty signature would only be refused.
        let signature = key
            .pair
            .sign(&SystemRandom::new(), signing_input.as_bytes())
            .map(|s| URL_SAFE_NO_PAD.encode(s.as_ref()))
            .unwrap_or_default();
        format!("{signing_input}.{signature}")
    }
}

/// The `htu` of a request: its URL without query and fragment.
fn htu(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut u) => {
            u.set_query(None);
            u.set_fragment(None);
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.to_string()
        }
        Err(_) => url.split(['?', '#']).next().unwrap_or(url).to_string(),
    }
}

fn origin(url: &str) -> Option<String> {
    Some(
        reqwest::Url::parse(url)
            .ok()?
            .origin()
            .ascii_serialization(),
    )
}

/// A token response whose token is bound (`token_type: DPoP`); an authorisation server that
/// answers a proof with a bearer token did not bind it (RFC 9449 §5).
pub(crate) fn bound_token(response: &rmcp::transport::auth::OAuthTokenResponse) -> bool {
    serde_json::to_value(response)
        .ok()
        .and_then(|v| {
            v.get("token_type")?
                .as_str()
                .map(|t| t.eq_ignore_ascii_case("dpop"))
        })
        .unwrap_or(false)
}

/// A challenge (`WWW-Authenticate`) or token error asking for a DPoP nonce.
pub(crate) fn asks_for_nonce(text: &str) -> bool {
    text.contains("use_dpop_nonce")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(part: &str) -> Value {
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
    }

    #[test]
    fn a_proof_is_signed_by_its_key_and_names_the_request() {
        let dpop = Dpop::default();
        dpop.activate();
        dpop.remember_nonce("https://mcp.example/other", "n-1");
        let proof = dpop.proof("GET", "https://user:pw@mcp.example/mcp?x=1#f", Some("at"));
        let parts: Vec<&str> = proof.split('.').collect();
        let (header, claims) = (decode(parts[0]), decode(parts[1]));
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(header["alg"], "ES256");
        assert!(header["jwk"].get("d").is_none());
        assert_eq!(claims["htm"], "GET");
        assert_eq!(claims["htu"], "https://mcp.example/mcp");
        assert_eq!(claims["nonce"], "n-1");
        assert_eq!(
            claims["ath"],
            URL_SAFE_NO_PAD.encode(Sha256::digest(b"at")).as_str()
        );
        // The signature verifies with the public key in the header.
        let x = URL_SAFE_NO_PAD
            .decode(header["jwk"]["x"].as_str().unwrap())
            .unwrap();
        let y = URL_SAFE_NO_PAD
            .decode(header["jwk"]["y"].as_str().unwrap())
            .unwrap();
        let point = [vec![4u8], x, y].concat();
        let public = aws_lc_rs::signature::UnparsedPublicKey::new(
            &aws_lc_rs::signature::ECDSA_P256_SHA256_FIXED,
            point,
        );
        let signature = URL_SAFE_NO_PAD.decode(parts[2]).unwrap();
        public
            .verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &signature)
            .unwrap();
        // Every proof is new.
        let again = decode(
            dpop.proof("GET", "https://mcp.example/mcp", None)
                .split('.')
                .nth(1)
                .unwrap(),
        );
        assert_ne!(again["jti"], claims["jti"]);
        assert!(again.get("ath").is_none());
    }

    #[test]
    fn a_stored_key_is_the_same_key() {
        let dpop = Dpop::default();
        assert_eq!(dpop.stored(), None, "no key until bound");
        dpop.activate();
        let again = Dpop::default();
        again.activate();
        assert_ne!(dpop.thumbprint(), again.thumbprint());
        again.deactivate();
        assert!(!again.active());
        again.restore(&dpop.stored().unwrap()).unwrap();
        assert_eq!(dpop.thumbprint(), again.thumbprint());
        assert!(again.active());
        assert_eq!(
            again.restore("not base64!").unwrap_err(),
            "DPoP: the stored key is not base64"
        );
    }
}
