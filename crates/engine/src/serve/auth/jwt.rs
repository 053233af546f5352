//! JWT access tokens: the header and claims read and checked here, the signature by
//! jsonwebtoken (aws-lc-rs) against a key of the issuer's JWKS.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::{Map, Value};

/// The key type an algorithm needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Rsa,
    /// EC on this curve.
    Ec(&'static str),
    /// OKP Ed25519.
    Ed,
}

/// Accepted algorithms (never `none`, never HMAC) and the key type each needs.
fn accepted(alg: &str) -> Option<(Algorithm, Family)> {
    Some(match alg {
        "RS256" => (Algorithm::RS256, Family::Rsa),
        "RS384" => (Algorithm::RS384, Family::Rsa),
        "RS512" => (Algorithm::RS512, Family::Rsa),
        "PS256" => (Algorithm::PS256, Family::Rsa),
        "PS384" => (Algorithm::PS384, Family::Rsa),
        "PS512" => (Algorithm::PS512, Family::Rsa),
        "ES256" => (Algorithm::ES256, Family::Ec("P-256")),
        "ES384" => (Algorithm::ES384, Family::Ec("P-384")),
        "EdDSA" => (Algorithm::EdDSA, Family::Ed),
        _ => return None,
    })
}

/// One usable signing key of the issuer.
struct Key {
    kid: Option<String>,
    family: Family,
    /// The JWK's `alg`, when it names one: then only that algorithm may use it.
    alg: Option<String>,
    key: DecodingKey,
}

/// The usable signing keys of a JWKS document (keys for encryption, of other types, or that do
/// not parse are left out).
pub(crate) struct KeySet {
    keys: Vec<Key>,
}

/// Which key a token's header points at.
pub(crate) enum Choice<'a> {
    Key(&'a DecodingKey),
    /// No key has the token's `kid` (or, without one, none fits): worth a refetch.
    Unknown,
    /// Words: why no key can be used (not worth a refetch).
    Refused(String),
}

impl KeySet {
    pub(crate) fn parse(document: &Value) -> Result<KeySet, String> {
        let Some(entries) = document.get("keys").and_then(Value::as_array) else {
            return Err("its key set has no \"keys\" list".into());
        };
        let keys = entries.iter().filter_map(parse_key).collect();
        Ok(KeySet { keys })
    }

    fn choose(&self, header: &Header) -> Choice<'_> {
        let fits = |key: &&Key| {
            key.family == header.family && key.alg.as_deref().is_none_or(|a| a == header.alg_name)
        };
        match &header.kid {
            Some(kid) => {
                let mut named = self.keys.iter().filter(|k| k.kid.as_deref() == Some(kid));
                if named.clone().next().is_none() {
                    return Choice::Unknown;
                }
                match named.find(fits) {
                    Some(key) => Choice::Key(&key.key),
                    None => Choice::Refused(format!(
                        "the token's algorithm {} does not fit the issuer's key {kid}",
                        header.alg_name
                    )),
                }
            }
            None => {
                let mut fitting = self.keys.iter().filter(fits);
                match (fitting.next(), fitting.next()) {
                    (Some(key), None) => Choice::Key(&key.key),
                    (None, _) => Choice::Unknown,
                    (Some(_), Some(_)) => Choice::Refused(
                        "the token does not say which of the issuer's keys signed it (no kid)"
                            .into(),
                    ),
                }
            }
        }
    }
}

fn parse_key(value: &Value) -> Option<Key> {
    let text = |name: &str| value.get(name).and_then(Value::as_str);
    if text("use").is_some_and(|u| u != "sig") {
        return None;
    }
    let family = match (text("kty")?, text("crv")) {
        ("RSA", _) => Family::Rsa,
        ("EC", Some("P-256")) => Family::Ec("P-256"),
        ("EC", Some("P-384")) => Family::Ec("P-384"),
        ("OKP", Some("Ed25519")) => Family::Ed,
        _ => return None,
    };
    let alg = text("alg").map(str::to_string);
    if let Some(alg) = &alg
        && accepted(alg).is_none_or(|(_, f)| f != family)
    {
        return None;
    }
    let jwk: Jwk = serde_json::from_value(value.clone()).ok()?;
    let key = DecodingKey::from_jwk(&jwk).ok()?;
    Some(Key {
        kid: text("kid").map(str::to_string),
        family,
        alg,
        key,
    })
}

/// A JWT's header, as far as checking it goes.
pub(crate) struct Header {
    alg: Algorithm,
    pub(crate) alg_name: String,
    family: Family,
    pub(crate) kid: Option<String>,
}

/// A JWT taken apart: its header checked, its claims read, its signature not yet checked.
pub(crate) struct Jwt<'t> {
    pub(crate) header: Header,
    pub(crate) claims: Map<String, Value>,
    signed: &'t str,
    signature: &'t str,
}

/// True when `token` has the shape of a JWS: three dot-separated base64url parts (the last may be
/// empty, as an unsigned token's is).
pub(crate) fn looks_like_jwt(token: &str) -> bool {
    let parts: Vec<&str> = token.split('.').collect();
    let b64url = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    parts.len() == 3
        && !parts[0].is_empty()
        && !parts[1].is_empty()
        && parts.iter().all(|p| b64url(p))
}

fn json_part(part: &str) -> Option<Map<String, Value>> {
    let bytes = URL_SAFE_NO_PAD.decode(part).ok()?;
    match serde_json::from_slice(&bytes).ok()? {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

/// Reads a JWT's header and claims; words when the header is not one this server accepts.
pub(crate) fn parse(token: &str) -> Result<Jwt<'_>, String> {
    let not_jwt = || "the token is not a valid JWT".to_string();
    let (signed, signature) = token.rsplit_once('.').ok_or_else(not_jwt)?;
    let (header_part, claims_part) = signed.split_once('.').ok_or_else(not_jwt)?;
    let header = json_part(header_part).ok_or_else(not_jwt)?;
    let alg_name = match header.get("alg") {
        Some(Value::String(alg)) => alg.clone(),
        _ => return Err("the token's header names no algorithm".into()),
    };
    let Some((alg, family)) = accepted(&alg_name) else {
        return Err(format!(
            "the token's algorithm {} is not accepted",
            crate::connect::reason::bounded(&alg_name)
        ));
    };
    match header.get("typ") {
        None => {}
        Some(Value::String(typ))
            if ["JWT", "at+jwt", "application/at+jwt"]
                .iter()
                .any(|t| t.eq_ignore_ascii_case(typ)) => {}
        Some(_) => return Err("the token's type (typ) is not an access token".into()),
    }
    if header.contains_key("crit") {
        return Err("the token has critical header parameters this server does not know".into());
    }
    let kid = match header.get("kid") {
        None => None,
        Some(Value::String(kid)) => Some(kid.clone()),
        Some(_) => return Err(not_jwt()),
    };
    let claims = json_part(claims_part).ok_or_else(not_jwt)?;
    Ok(Jwt {
        header: Header {
            alg,
            alg_name,
            family,
            kid,
        },
        claims,
        signed,
        signature,
    })
}

impl Jwt<'_> {
    /// The key of `keys` the header points at.
    pub(crate) fn choose<'k>(&self, keys: &'k KeySet) -> Choice<'k> {
        keys.choose(&self.header)
    }

    /// Whether `key` made the signature.
    pub(crate) fn signed_by(&self, key: &DecodingKey) -> bool {
        jsonwebtoken::crypto::verify(self.signature, self.signed.as_bytes(), key, self.header.alg)
            .unwrap_or(false)
    }
}

/// What the claims of an accepted token must say.
pub(crate) struct Expected<'a> {
    pub(crate) issuer: &'a str,
    pub(crate) audience: &'a str,
    /// Leeway on `exp`, `nbf` and `iat`, in seconds.
    pub(crate) skew: u64,
    /// Seconds since the epoch.
    pub(crate) now: u64,
}

impl Expected<'_> {
    /// Checks `iss`, `aud` and the times. `required`: a JWT must carry `iss`, `aud` and `exp`; an
    /// introspection answer is checked on what it carries.
    pub(crate) fn check(&self, claims: &Map<String, Value>, required: bool) -> Result<(), String> {
        match claims.get("iss") {
            None if !required => {}
            Some(Value::String(iss)) if iss == self.issuer => {}
            _ => return Err(format!("the token's issuer is not {}", self.issuer)),
        }
        match claims.get("aud") {
            None if !required => {}
            None => return Err("the token names no audience (aud)".into()),
            Some(aud) => {
                let ours = |v: &Value| v.as_str() == Some(self.audience);
                let fits = match aud {
                    Value::Array(list) => list.iter().any(ours),
                    one => ours(one),
                };
                if !fits {
                    return Err("the token is for another audience".into());
                }
            }
        }
        let time = |name: &str| -> Result<Option<f64>, String> {
            match claims.get(name) {
                None => Ok(None),
                Some(v) => v
                    .as_f64()
                    .map(Some)
                    .ok_or_else(|| format!("the token's {name} is not a time")),
            }
        };
        let (now, skew) = (self.now as f64, self.skew as f64);
        match time("exp")? {
            None if required => return Err("the token has no expiry (exp)".into()),
            Some(exp) if exp + skew <= now => return Err("the token has expired".into()),
            _ => {}
        }
        if time("nbf")?.is_some_and(|nbf| nbf - skew > now) {
            return Err("the token is not valid yet (nbf)".into());
        }
        if time("iat")?.is_some_and(|iat| iat - skew > now) {
            return Err("the token was issued in the future (iat)".into());
        }
        Ok(())
    }
}

/// The token's scopes: `scope` (space-separated), else `scp` (a string or a list).
pub(crate) fn scopes(claims: &Map<String, Value>) -> Vec<String> {
    let split = |s: &str| s.split_whitespace().map(str::to_string).collect();
    match (claims.get("scope"), claims.get("scp")) {
        (Some(Value::String(s)), _) => split(s),
        (_, Some(Value::String(s))) => split(s),
        (_, Some(Value::Array(list))) => list
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}
