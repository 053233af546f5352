//! An entry's `auth` object: a pre-registered OAuth client and what to ask for, as Cursor's and
//! VS Code's configs carry it (`clientId`, `clientSecret`, `scopes`, `redirectPort`), plus
//! `clientMetadataUrl` for an app that hosts a Client ID Metadata Document.

use super::error::Invalid;
use serde_json::{Map, Value};

/// Values are kept unexpanded (like headers); `${VAR}` is expanded when the server connects.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct OAuthSettings {
    pub(crate) client_id: Option<String>,
    pub(crate) client_secret: Option<String>,
    pub(crate) client_metadata_url: Option<String>,
    pub(crate) scopes: Vec<String>,
    pub(crate) redirect_port: Option<u16>,
}

impl OAuthSettings {
    /// The same settings with `${VAR}` expanded in every text field.
    pub(crate) fn expanded(&self, expand: &mut dyn FnMut(&str) -> String) -> Self {
        Self {
            client_id: self.client_id.as_deref().map(&mut *expand),
            client_secret: self.client_secret.as_deref().map(&mut *expand),
            client_metadata_url: self.client_metadata_url.as_deref().map(&mut *expand),
            scopes: self.scopes.iter().map(|s| expand(s)).collect(),
            redirect_port: self.redirect_port,
        }
    }

    /// As `parseMcpConfig` gives it back (`load` of this yields the same settings).
    pub(crate) fn to_json(&self) -> Value {
        let mut o = Map::new();
        let mut text = |key: &str, value: &Option<String>| {
            if let Some(value) = value {
                o.insert(key.into(), value.as_str().into());
            }
        };
        text("clientId", &self.client_id);
        text("clientSecret", &self.client_secret);
        text("clientMetadataUrl", &self.client_metadata_url);
        if !self.scopes.is_empty() {
            o.insert("scopes".into(), self.scopes.clone().into());
        }
        if let Some(port) = self.redirect_port {
            o.insert("redirectPort".into(), port.into());
        }
        Value::Object(o)
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
    // Cursor writes CLIENT_ID / CLIENT_SECRET.
    let text = |keys: &[&str]| -> Result<Option<String>, Invalid> {
        for key in keys {
            match auth.get(*key) {
                None | Some(Value::Null) => continue,
                Some(Value::String(s)) if !s.is_empty() => return Ok(Some(s.clone())),
                Some(_) => {
                    return Err(Invalid(format!("{field}.{key} must be a non-empty string")));
                }
            }
        }
        Ok(None)
    };
    let scopes = match auth.get("scopes").or_else(|| auth.get("scope")) {
        None | Some(Value::Null) => Vec::new(),
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
    let redirect_port = match auth.get("redirectPort") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => match n.as_u64() {
            Some(port) if (1..=65535).contains(&port) => Some(port as u16),
            _ => {
                return Err(Invalid(format!(
                    "{field}.redirectPort must be a port number (1 to 65535)"
                )));
            }
        },
        Some(_) => {
            return Err(Invalid(format!(
                "{field}.redirectPort must be a port number (1 to 65535)"
            )));
        }
    };
    Ok(Some(OAuthSettings {
        client_id: text(&["clientId", "CLIENT_ID", "client_id"])?,
        client_secret: text(&["clientSecret", "CLIENT_SECRET", "client_secret"])?,
        client_metadata_url: text(&["clientMetadataUrl"])?,
        scopes,
        redirect_port,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parsed(v: Value) -> Result<Option<OAuthSettings>, Invalid> {
        parse(v.as_object().unwrap(), "mcpServers.a")
    }

    #[test]
    fn reads_every_field_and_cursor_spelling() {
        let s = parsed(json!({"auth": {"CLIENT_ID": "id", "clientSecret": "${S}", "scopes": ["a", "b"], "redirectPort": 8787}}))
            .unwrap()
            .unwrap();
        assert_eq!(s.client_id.as_deref(), Some("id"));
        assert_eq!(s.client_secret.as_deref(), Some("${S}"));
        assert_eq!(s.scopes, ["a", "b"]);
        assert_eq!(s.redirect_port, Some(8787));
        assert_eq!(
            parsed(json!({"auth": {"scopes": "x y"}}))
                .unwrap()
                .unwrap()
                .scopes,
            ["x", "y"]
        );
        assert_eq!(parsed(json!({})).unwrap(), None);
    }

    #[test]
    fn bad_fields_are_named_without_their_values() {
        let e = parsed(json!({"auth": {"clientSecret": 12345}})).unwrap_err();
        assert_eq!(
            e,
            "mcpServers.a.auth.clientSecret must be a non-empty string"
        );
        let e = parsed(json!({"auth": {"redirectPort": 70000}})).unwrap_err();
        assert_eq!(
            e,
            "mcpServers.a.auth.redirectPort must be a port number (1 to 65535)"
        );
        assert_eq!(
            parsed(json!({"auth": true})).unwrap_err(),
            "mcpServers.a.auth must be an object"
        );
    }
}
