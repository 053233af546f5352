//! Who made a request: a [`Principal`], and how one is read from a token's accepted claims.

use serde_json::{Map, Value, json};

use super::jwt;

/// Who made a request.
#[derive(Debug, Clone, PartialEq)]
pub struct Principal {
    pub subject: String,
    pub scopes: Vec<String>,
    /// The token's claims (a JSON object; empty for static tokens).
    pub claims: Value,
    /// The OAuth issuer that vouched for the subject; None for static tokens and token checks.
    pub issuer: Option<String>,
}

impl Principal {
    /// Who a session belongs to: issuer and subject (an issuer URL never holds a space).
    pub(crate) fn key(&self) -> String {
        format!("{} {}", self.issuer.as_deref().unwrap_or(""), self.subject)
    }

    /// `{subject, scopes, claims}`, as JavaScript sees it.
    pub fn to_json(&self) -> Value {
        json!({ "subject": self.subject, "scopes": self.scopes, "claims": self.claims })
    }
}

/// A principal from accepted claims: `sub` (an introspection answer may give `client_id`
/// instead, for a client's own token), the scopes, the claims.
pub(super) fn principal(
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
