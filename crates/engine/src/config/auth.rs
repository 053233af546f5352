//! An entry's `auth` object: how the client signs in when a remote server asks for OAuth.
//!
//! - A person at a browser (the default, the authorisation-code grant): a pre-registered client
//!   and what to ask for, as Cursor's and VS Code's configs carry it (`clientId`,
//!   `clientSecret`, `scopes`, `redirectPort`), plus `clientMetadataUrl` for an app that hosts
//!   a Client ID Metadata Document.
//! - A machine: `grant: "client_credentials"` with `clientSecret` or a `privateKey`
//!   (`private_key_jwt`); `grant: "jwt-bearer"` with a workload's `assertion` (workload identity
//!   federation); or `enterprise: { … }`, an enterprise IdP's ID token exchanged for an ID-JAG.
//! - `dpop`: `true` binds every token to a key of this client (RFC 9449), `false` never does;
//!   absent, tokens are bound when the authorisation server supports it.
//!
//! Secrets come inline (usually as `${VAR}`), from a file (`…File`, read on every use, so a
//! rotated Kubernetes token is picked up) or from an environment variable (`…Env`).

use super::error::Invalid;
use serde_json::{Map, Value};

/// How a machine signs in: the grant of its token requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Grant {
    #[default]
    AuthorizationCode,
    ClientCredentials,
    JwtBearer,
    Enterprise,
}

impl Grant {
    /// The word the config uses (`None` for the implied enterprise grant).
    fn word(self) -> Option<&'static str> {
        match self {
            Grant::AuthorizationCode => Some("authorization_code"),
            Grant::ClientCredentials => Some("client_credentials"),
            Grant::JwtBearer => Some("jwt-bearer"),
            Grant::Enterprise => None,
        }
    }

    /// A grant that runs with no person: no browser, no redirect listener.
    pub(crate) fn is_machine(self) -> bool {
        self != Grant::AuthorizationCode
    }
}

/// A secret as the config gives it: inline (after `${VAR}` expansion), a file's path, or an
/// environment variable's name. Read only when used; its value never appears in a reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Secret {
    Inline(String),
    File(String),
    Env(String),
}

/// Files holding a secret are at most this long (a PEM key or a JWT is a few KiB).
const SECRET_FILE_BYTES: u64 = 64 * 1024;

impl Secret {
    /// The secret's value; `what` names it in a failure ("the workload token").
    pub(crate) fn read(&self, what: &str) -> Result<String, String> {
        let value = match self {
            Secret::Inline(value) => value.clone(),
            Secret::Env(name) => {
                std::env::var(name).map_err(|_| format!("{what} variable {name} is not set"))?
            }
            Secret::File(path) => {
                use std::io::Read;
                let file = std::fs::File::open(path).map_err(|e| match e.kind() {
                    std::io::ErrorKind::NotFound => format!("{what} file {path} is missing"),
                    _ => format!("{what} file {path} cannot be read: {}", io_words(&e)),
                })?;
                let mut text = String::new();
                file.take(SECRET_FILE_BYTES + 1)
                    .read_to_string(&mut text)
                    .map_err(|e| format!("{what} file {path} cannot be read: {}", io_words(&e)))?;
                if text.len() as u64 > SECRET_FILE_BYTES {
                    return Err(format!(
                        "{what} file {path} is over {} KiB",
                        SECRET_FILE_BYTES / 1024
                    ));
                }
                text
            }
        };
        let value = value.trim().to_string();
        if value.is_empty() {
            return Err(match self {
                Secret::File(path) => format!("{what} file {path} is empty"),
                Secret::Env(name) => format!("{what} variable {name} is empty"),
                Secret::Inline(_) => format!("{what} is empty"),
            });
        }
        Ok(value)
    }

    fn expanded(&self, expand: &mut dyn FnMut(&str) -> String) -> Self {
        match self {
            Secret::Inline(v) => Secret::Inline(expand(v)),
            Secret::File(p) => Secret::File(expand(p)),
            Secret::Env(n) => Secret::Env(n.clone()),
        }
    }

    fn to_json(&self, o: &mut Map<String, Value>, key: &str) {
        let (key, value) = match self {
            Secret::Inline(v) => (key.to_string(), v),
            Secret::File(p) => (format!("{key}File"), p),
            Secret::Env(n) => (format!("{key}Env"), n),
        };
        o.insert(key, value.as_str().into());
    }
}

/// An I/O error in words, without the `(os error N)` tail.
fn io_words(e: &std::io::Error) -> String {
    let text = e.to_string();
    text.split(" (os error").next().unwrap_or(&text).to_string()
}

/// `enterprise`: the IdP that issued the user's ID token, and this client there.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct EnterpriseSettings {
    pub(crate) idp_issuer: String,
    pub(crate) idp_token_endpoint: String,
    pub(crate) idp_client_id: String,
    pub(crate) idp_client_secret: Option<String>,
    pub(crate) id_token: Secret,
}

/// Values are kept unexpanded (like headers); `${VAR}` is expanded when the server connects.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct OAuthSettings {
    pub(crate) grant: Grant,
    pub(crate) client_id: Option<String>,
    pub(crate) client_secret: Option<String>,
    pub(crate) client_metadata_url: Option<String>,
    pub(crate) scopes: Vec<String>,
    pub(crate) redirect_port: Option<u16>,
    /// `client_credentials` with `private_key_jwt`: the PEM key and its JWS algorithm.
    pub(crate) private_key: Option<Secret>,
    pub(crate) signing_algorithm: Option<String>,
    /// `jwt-bearer`: the workload's JWT.
    pub(crate) assertion: Option<Secret>,
    pub(crate) enterprise: Option<EnterpriseSettings>,
    pub(crate) dpop: Option<bool>,
}

/// The JWS algorithms a `privateKey` may sign client assertions with.
pub(crate) const SIGNING_ALGORITHMS: [&str; 8] = [
    "ES256", "ES384", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512",
];

const KNOWN: [&str; 18] = [
    "grant",
    "clientId",
    "clientSecret",
    "clientMetadataUrl",
    "scopes",
    "redirectPort",
    "privateKey",
    "privateKeyFile",
    "privateKeyEnv",
    "signingAlgorithm",
    "assertion",
    "assertionFile",
    "assertionEnv",
    "enterprise",
    "dpop",
    // Cursor's spellings, and the singular.
    "CLIENT_ID",
    "CLIENT_SECRET",
    "scope",
];
/// Also taken: the OAuth parameter names.
const ALIASES: [&str; 2] = ["client_id", "client_secret"];

const ENTERPRISE_KNOWN: [&str; 7] = [
    "idpIssuer",
    "idpTokenEndpoint",
    "idpClientId",
    "idpClientSecret",
    "idToken",
    "idTokenFile",
    "idTokenEnv",
];

impl OAuthSettings {
    /// The same settings with `${VAR}` expanded in every text field.
    pub(crate) fn expanded(&self, expand: &mut dyn FnMut(&str) -> String) -> Self {
        Self {
            grant: self.grant,
            client_id: self.client_id.as_deref().map(&mut *expand),
            client_secret: self.client_secret.as_deref().map(&mut *expand),
            client_metadata_url: self.client_metadata_url.as_deref().map(&mut *expand),
            scopes: self.scopes.iter().map(|s| expand(s)).collect(),
            redirect_port: self.redirect_port,
            private_key: self.private_key.as_ref().map(|s| s.expanded(expand)),
            signing_algorithm: self.signing_algorithm.clone(),
            assertion: self.assertion.as_ref().map(|s| s.expanded(expand)),
            enterprise: self.enterprise.as_ref().map(|e| EnterpriseSettings {
                idp_issuer: expand(&e.idp_issuer),
                idp_token_endpoint: expand(&e.idp_token_endpoint),
                idp_client_id: expand(&e.idp_client_id),
                idp_client_secret: e.idp_client_secret.as_deref().map(&mut *expand),
                id_token: e.id_token.expanded(expand),
            }),
            dpop: self.dpop,
        }
    }

    /// As `parseMcpConfig` gives it back (`load` of this yields the same settings).
    pub(crate) fn to_json(&self) -> Value {
        let mut o = Map::new();
        if self.grant != Grant::AuthorizationCode
            && let Some(word) = self.grant.word()
        {
            o.insert("grant".into(), word.into());
        }
        let text = |o: &mut Map<String, Value>, key: &str, value: &Option<String>| {
            if let Some(value) = value {
                o.insert(key.into(), value.as_str().into());
            }
        };
        text(&mut o, "clientId", &self.client_id);
        text(&mut o, "clientSecret", &self.client_secret);
        text(&mut o, "clientMetadataUrl", &self.client_metadata_url);
        if !self.scopes.is_empty() {
            o.insert("scopes".into(), self.scopes.clone().into());
        }
        if let Some(port) = self.redirect_port {
            o.insert("redirectPort".into(), port.into());
        }
        if let Some(key) = &self.private_key {
            key.to_json(&mut o, "privateKey");
        }
        text(&mut o, "signingAlgorithm", &self.signing_algorithm);
        if let Some(assertion) = &self.assertion {
            assertion.to_json(&mut o, "assertion");
        }
        if let Some(e) = &self.enterprise {
            let mut inner = Map::new();
            text(&mut inner, "idpIssuer", &Some(e.idp_issuer.clone()));
            text(
                &mut inner,
                "idpTokenEndpoint",
                &Some(e.idp_token_endpoint.clone()),
            );
            text(&mut inner, "idpClientId", &Some(e.idp_client_id.clone()));
            text(&mut inner, "idpClientSecret", &e.idp_client_secret);
            e.id_token.to_json(&mut inner, "idToken");
            o.insert("enterprise".into(), Value::Object(inner));
        }
        if let Some(dpop) = self.dpop {
            o.insert("dpop".into(), dpop.into());
        }
        Value::Object(o)
    }
}

/// Reads the fields of one object (`auth`, or `auth.enterprise`), naming them by path.
struct Fields<'a> {
    obj: &'a Map<String, Value>,
    field: String,
}

impl Fields<'_> {
    fn get(&self, key: &str) -> Option<&Value> {
        self.obj.get(key).filter(|v| !v.is_null())
    }

    fn text(&self, keys: &[&str]) -> Result<Option<String>, Invalid> {
        for key in keys {
            match self.get(key) {
                None => continue,
                Some(Value::String(s)) if !s.is_empty() => return Ok(Some(s.clone())),
                Some(_) => {
                    return Err(Invalid(format!(
                        "{}.{key} must be a non-empty string",
                        self.field
                    )));
                }
            }
        }
        Ok(None)
    }

    /// `key`, `keyFile` or `keyEnv`: at most one of them.
    fn secret(&self, key: &str) -> Result<Option<Secret>, Invalid> {
        let (file, env) = (format!("{key}File"), format!("{key}Env"));
        let given: Vec<&str> = [key, file.as_str(), env.as_str()]
            .into_iter()
            .filter(|k| self.get(k).is_some())
            .collect();
        if given.len() > 1 {
            return Err(Invalid(format!(
                "{}: give only one of {}",
                self.field,
                given.join(", ")
            )));
        }
        Ok(if let Some(v) = self.text(&[key])? {
            Some(Secret::Inline(v))
        } else if let Some(path) = self.text(&[&file])? {
            Some(Secret::File(path))
        } else {
            self.text(&[&env])?.map(Secret::Env)
        })
    }

    fn unknown(&self, known: &[&str]) -> Result<(), Invalid> {
        match self.obj.keys().find(|k| !known.contains(&k.as_str())) {
            None => Ok(()),
            Some(key) => Err(Invalid(format!(
                "{} has an unknown field {}",
                self.field,
                super::quote::quote(key, super::quote::QUOTE_CHARS)
            ))),
        }
    }
}

/// `auth` of one entry; `Ok(None)` when absent. Reasons name the field, never a value.
pub(super) fn parse(
    obj: &Map<String, Value>,
    path: &str,
) -> Result<Option<OAuthSettings>, Invalid> {
    let field = format!("{path}.auth");
    let auth = match obj.get("auth") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(auth)) => auth,
        Some(_) => return Err(Invalid(format!("{field} must be an object"))),
    };
    let fields = Fields {
        obj: auth,
        field: field.clone(),
    };
    let known: Vec<&str> = KNOWN.iter().chain(ALIASES.iter()).copied().collect();
    fields.unknown(&known)?;
    let scopes = match fields.get("scopes").or_else(|| fields.get("scope")) {
        None => Vec::new(),
        Some(Value::String(s)) => s.split_whitespace().map(String::from).collect(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::String(s) if !s.is_empty() => Ok(s.clone()),
                _ => Err(Invalid(format!(
                    "{field}.scopes must be an array of strings"
                ))),
            })
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(Invalid(format!(
                "{field}.scopes must be an array of strings"
            )));
        }
    };
    let redirect_port = match fields.get("redirectPort") {
        None => None,
        Some(Value::Number(n)) if n.as_u64().is_some_and(|p| (1..=65535).contains(&p)) => {
            n.as_u64().map(|p| p as u16)
        }
        Some(_) => {
            return Err(Invalid(format!(
                "{field}.redirectPort must be a port number (1 to 65535)"
            )));
        }
    };
    let dpop = match fields.get("dpop") {
        None => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => return Err(Invalid(format!("{field}.dpop must be true or false"))),
    };
    let enterprise = match fields.get("enterprise") {
        None => None,
        Some(Value::Object(inner)) => Some(enterprise(inner, &format!("{field}.enterprise"))?),
        Some(_) => return Err(Invalid(format!("{field}.enterprise must be an object"))),
    };
    let grant = match (fields.text(&["grant"])?.as_deref(), &enterprise) {
        (Some(_), Some(_)) => {
            return Err(Invalid(format!(
                "{field}: enterprise implies its own grant; remove grant"
            )));
        }
        (None, Some(_)) => Grant::Enterprise,
        (None | Some("authorization_code"), None) => Grant::AuthorizationCode,
        (Some("client_credentials"), None) => Grant::ClientCredentials,
        (Some("jwt-bearer" | "urn:ietf:params:oauth:grant-type:jwt-bearer"), None) => {
            Grant::JwtBearer
        }
        (Some(_), None) => {
            return Err(Invalid(format!(
                "{field}.grant must be \"authorization_code\", \"client_credentials\" or \"jwt-bearer\""
            )));
        }
    };
    let settings = OAuthSettings {
        grant,
        client_id: fields.text(&["clientId", "CLIENT_ID", "client_id"])?,
        client_secret: fields.text(&["clientSecret", "CLIENT_SECRET", "client_secret"])?,
        client_metadata_url: fields.text(&["clientMetadataUrl"])?,
        scopes,
        redirect_port,
        private_key: fields.secret("privateKey")?,
        signing_algorithm: fields.text(&["signingAlgorithm"])?,
        assertion: fields.secret("assertion")?,
        enterprise,
        dpop,
    };
    consistent(&settings, &field)?;
    Ok(Some(settings))
}

fn enterprise(inner: &Map<String, Value>, field: &str) -> Result<EnterpriseSettings, Invalid> {
    let fields = Fields {
        obj: inner,
        field: field.to_string(),
    };
    fields.unknown(&ENTERPRISE_KNOWN)?;
    let required = |key: &str| {
        fields
            .text(&[key])?
            .ok_or_else(|| Invalid(format!("{field}.{key} is required")))
    };
    Ok(EnterpriseSettings {
        idp_issuer: required("idpIssuer")?,
        idp_token_endpoint: required("idpTokenEndpoint")?,
        idp_client_id: required("idpClientId")?,
        idp_client_secret: fields.text(&["idpClientSecret"])?,
        id_token: fields.secret("idToken")?.ok_or_else(|| {
            Invalid(format!(
                "{field} needs the user's ID token: idToken, idTokenFile or idTokenEnv"
            ))
        })?,
    })
}

/// What each grant needs, and what it cannot use.
fn consistent(s: &OAuthSettings, field: &str) -> Result<(), Invalid> {
    let refuse = |what: &str, why: &str| Err(Invalid(format!("{field}.{what} {why}")));
    let grant = match s.grant {
        Grant::Enterprise => "the enterprise grant".to_string(),
        other => format!("grant {:?}", other.word().unwrap_or_default()),
    };
    if s.grant.is_machine() {
        if s.redirect_port.is_some() {
            return refuse(
                "redirectPort",
                &format!("is not used by {grant} (no browser)"),
            );
        }
        if s.client_metadata_url.is_some() {
            return refuse(
                "clientMetadataUrl",
                &format!("is not used by {grant} (no registration)"),
            );
        }
    }
    if s.grant != Grant::ClientCredentials {
        if s.private_key.is_some() {
            return refuse("privateKey", "is only for grant \"client_credentials\"");
        }
        if s.signing_algorithm.is_some() {
            return refuse(
                "signingAlgorithm",
                "is only for grant \"client_credentials\" with a privateKey",
            );
        }
    }
    if s.grant != Grant::JwtBearer && s.assertion.is_some() {
        return refuse("assertion", "is only for grant \"jwt-bearer\"");
    }
    match s.grant {
        Grant::AuthorizationCode | Grant::JwtBearer => {}
        Grant::ClientCredentials | Grant::Enterprise if s.client_id.is_none() => {
            return refuse("clientId", &format!("is required by {grant}"));
        }
        _ => {}
    }
    match s.grant {
        Grant::ClientCredentials => match (&s.client_secret, &s.private_key) {
            (None, None) => {
                return Err(Invalid(format!(
                    "{field}: grant \"client_credentials\" needs clientSecret or privateKey"
                )));
            }
            (Some(_), Some(_)) => {
                return Err(Invalid(format!(
                    "{field}: give clientSecret or privateKey, not both"
                )));
            }
            _ => {}
        },
        Grant::JwtBearer if s.assertion.is_none() => {
            return Err(Invalid(format!(
                "{field}: grant \"jwt-bearer\" needs the workload's token: assertion, assertionFile or assertionEnv"
            )));
        }
        _ => {}
    }
    if s.signing_algorithm.is_some() && s.private_key.is_none() {
        return refuse("signingAlgorithm", "is only for a privateKey");
    }
    if s.grant == Grant::Enterprise && s.dpop == Some(true) {
        return refuse(
            "dpop",
            "cannot be true with enterprise: its exchange takes bearer tokens only",
        );
    }
    if s.grant == Grant::JwtBearer && s.client_secret.is_some() && s.client_id.is_none() {
        return refuse("clientSecret", "needs the clientId it authenticates");
    }
    if let Some(alg) = &s.signing_algorithm
        && !SIGNING_ALGORITHMS.contains(&alg.as_str())
    {
        return refuse(
            "signingAlgorithm",
            &format!("must be one of {}", SIGNING_ALGORITHMS.join(", ")),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests;
