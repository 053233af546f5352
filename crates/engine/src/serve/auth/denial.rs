//! A refused request: its status, its `WWW-Authenticate` challenge (RFC 6750) and JSON body.

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode, header};
use serde_json::json;

/// Why a request is refused, in words (never the token).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Denial {
    status: StatusCode,
    /// The body's `error`: "unauthorized", "invalid_token", "invalid_request",
    /// "insufficient_scope", "forbidden" or "server_error".
    error: &'static str,
    description: String,
    /// `WWW-Authenticate`, when the status has one.
    challenge: Option<String>,
    /// For the server's own log (a failed check's cause); never sent.
    detail: Option<String>,
    /// Who the token proved to be, when it proved someone the request is still refused to
    /// (insufficient scope): for the server's own log; never sent.
    subject: Option<String>,
}

/// What every challenge of one guard carries.
#[derive(Debug, Clone, Default)]
pub(crate) struct Challenge {
    /// The PRM URL, when serving with OAuth.
    pub(crate) resource_metadata: Option<String>,
    /// `requiredScopes` joined by spaces, when there are some.
    pub(crate) scope: Option<String>,
}

impl Challenge {
    /// 401 with no token presented: `Bearer realm="toolnexus"[, resource_metadata=…][, scope=…]`.
    pub(crate) fn missing(&self) -> Denial {
        let description = "this server needs a bearer token (Authorization: Bearer <token>)";
        self.unauthorized("unauthorized", None, description.into())
    }

    /// 401 for a token that is not accepted, with `error="invalid_token"`.
    pub(crate) fn invalid_token(&self, description: String) -> Denial {
        self.unauthorized("invalid_token", Some("invalid_token"), description)
    }

    /// 401 for an `Authorization` header that is not `Bearer <token>`.
    pub(crate) fn invalid_request(&self, description: String) -> Denial {
        self.unauthorized("invalid_request", Some("invalid_request"), description)
    }

    fn unauthorized(&self, error: &'static str, code: Option<&str>, description: String) -> Denial {
        let mut challenge = String::from("Bearer realm=\"toolnexus\"");
        if let Some(url) = &self.resource_metadata {
            challenge.push_str(&format!(", resource_metadata=\"{}\"", quotable(url)));
        }
        if let Some(code) = code {
            challenge.push_str(&format!(
                ", error=\"{code}\", error_description=\"{}\"",
                quotable(&description)
            ));
        }
        if let Some(scope) = &self.scope {
            challenge.push_str(&format!(", scope=\"{}\"", quotable(scope)));
        }
        Denial {
            status: StatusCode::UNAUTHORIZED,
            error,
            description,
            challenge: Some(challenge),
            detail: None,
            subject: None,
        }
    }

    /// 403: the token lacks some of the required scopes.
    pub(crate) fn insufficient_scope(&self, missing: &[&str]) -> Denial {
        let scope = self.scope.clone().unwrap_or_default();
        let mut challenge = format!(
            "Bearer error=\"insufficient_scope\", scope=\"{}\"",
            quotable(&scope)
        );
        if let Some(url) = &self.resource_metadata {
            challenge.push_str(&format!(", resource_metadata=\"{}\"", quotable(url)));
        }
        let description = match missing {
            [one] => format!("the token lacks the scope {one}"),
            many => format!("the token lacks the scopes {}", many.join(", ")),
        };
        Denial {
            status: StatusCode::FORBIDDEN,
            error: "insufficient_scope",
            description,
            challenge: Some(challenge),
            detail: None,
            subject: None,
        }
    }
}

impl Denial {
    /// 500: the token could not be checked (a verifier that failed, an issuer out of reach).
    /// `detail` is for the server's log only.
    pub(crate) fn server_error(detail: String) -> Denial {
        Denial {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            error: "server_error",
            description: "the token could not be checked".into(),
            challenge: None,
            detail: Some(detail),
            subject: None,
        }
    }

    /// 403 for a request naming a session opened by another principal.
    pub(crate) fn other_session() -> Denial {
        Denial {
            status: StatusCode::FORBIDDEN,
            error: "forbidden",
            description: "this session belongs to another principal".into(),
            challenge: None,
            detail: None,
            subject: None,
        }
    }

    #[cfg(test)]
    pub(crate) fn status(&self) -> StatusCode {
        self.status
    }

    /// What the body's `error_description` says.
    pub(crate) fn description(&self) -> &str {
        &self.description
    }

    /// Why the check failed, for the server's log (a 500's cause); never part of the response.
    pub(crate) fn detail(&self) -> Option<&str> {
        self.detail.as_deref()
    }

    /// Who was refused, for the server's log, when the token proved someone.
    pub(crate) fn subject(&self) -> Option<&str> {
        self.subject.as_deref()
    }

    /// The same refusal, naming who was refused in the server's log.
    pub(crate) fn of_subject(mut self, subject: &str) -> Denial {
        self.subject = Some(subject.to_string());
        self
    }

    /// The `WWW-Authenticate` value, when the status has one (401, 403 insufficient_scope).
    #[cfg(test)]
    pub(crate) fn challenge(&self) -> Option<&str> {
        self.challenge.as_deref()
    }

    /// The HTTP response: status, JSON body, and `WWW-Authenticate` when there is one.
    pub(crate) fn response(&self) -> Response<Bytes> {
        let body = json!({ "error": self.error, "error_description": self.description });
        let mut response = Response::new(Bytes::from(body.to_string()));
        *response.status_mut() = self.status;
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        if let Some(value) = self
            .challenge
            .as_deref()
            .and_then(|c| HeaderValue::from_str(c).ok())
        {
            headers.insert(header::WWW_AUTHENTICATE, value);
        }
        response
    }
}

/// Text fit for an RFC 6750 quoted attribute (%x20-21 / %x23-5B / %x5D-7E): `"` becomes `'`,
/// `\` becomes `/`, anything else outside printable ASCII `?`.
fn quotable(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '"' => '\'',
            '\\' => '/',
            ' '..='~' => c,
            _ => '?',
        })
        .collect()
}

/// Why an OAuth check did not accept a token.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// The token is not good: words for the 401.
    Invalid(String),
    /// The token could not be checked (the issuer out of reach): words for the log.
    Unchecked(String),
}
