//! STUB for integration (replaced by the h5/A branch): the API of /tmp/auth-design.md.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use serde_json::{Value, json};

#[derive(Debug, Clone)]
pub struct Principal {
    pub subject: String,
    pub scopes: Vec<String>,
    pub claims: Value,
    pub issuer: Option<String>,
}

impl Principal {
    pub fn key(&self) -> String {
        format!(
            "{}\u{0}{}",
            self.issuer.as_deref().unwrap_or(""),
            self.subject
        )
    }
    pub fn to_json(&self) -> Value {
        json!({ "subject": self.subject, "scopes": self.scopes, "claims": self.claims })
    }
}

pub trait TokenVerifier: Send + Sync + 'static {
    fn verify(&self, token: String) -> BoxFuture<'static, Result<Option<Principal>, String>>;
}

pub struct StaticToken {
    pub token: String,
    pub subject: String,
    pub scopes: Vec<String>,
}

pub struct OAuthOptions {
    pub issuer: String,
    pub audience: Option<String>,
    pub required_scopes: Vec<String>,
    pub jwks_uri: Option<String>,
    pub introspection: Option<Introspection>,
    pub clock_skew: Duration,
}

pub struct Introspection {
    pub client_id: String,
    pub client_secret: String,
    pub endpoint: Option<String>,
}

#[derive(Debug, Clone, Copy)]
pub enum Kind {
    Tool,
    Prompt,
    Resource,
}

#[derive(Default)]
pub struct AccessPolicy {
    tools: Option<Vec<(String, Vec<String>)>>,
    prompts: Option<Vec<(String, Vec<String>)>>,
    resources: Option<Vec<(String, Vec<String>)>>,
}

impl AccessPolicy {
    pub fn new(
        tools: Option<Vec<(String, Vec<String>)>>,
        prompts: Option<Vec<(String, Vec<String>)>>,
        resources: Option<Vec<(String, Vec<String>)>>,
    ) -> Self {
        Self {
            tools,
            prompts,
            resources,
        }
    }
    pub fn is_open(&self, kind: Kind) -> bool {
        self.rules(kind).is_none()
    }
    fn rules(&self, kind: Kind) -> Option<&Vec<(String, Vec<String>)>> {
        match kind {
            Kind::Tool => self.tools.as_ref(),
            Kind::Prompt => self.prompts.as_ref(),
            Kind::Resource => self.resources.as_ref(),
        }
    }
    pub fn allows(&self, kind: Kind, principal: Option<&Principal>, name: &str) -> bool {
        let Some(rules) = self.rules(kind) else {
            return true;
        };
        let Some(p) = principal else { return false };
        rules.iter().any(|(scope, globs)| {
            (scope == "*" || p.scopes.iter().any(|s| s == scope))
                && globs.iter().any(|g| g == "*" || g == name)
        })
    }
}

pub struct AuthOptions {
    pub tokens: Vec<StaticToken>,
    pub verifier: Option<Arc<dyn TokenVerifier>>,
    pub oauth: Option<OAuthOptions>,
    pub policy: AccessPolicy,
}

pub struct Guard {
    options: AuthOptions,
}

pub struct Denial {
    status: http::StatusCode,
    description: String,
}

impl Denial {
    pub fn status(&self) -> http::StatusCode {
        self.status
    }
    pub fn response(&self) -> http::Response<Bytes> {
        let body = json!({"error": "invalid_token", "error_description": self.description});
        let mut r = http::Response::new(Bytes::from(body.to_string()));
        *r.status_mut() = self.status;
        r.headers_mut().insert(
            http::header::WWW_AUTHENTICATE,
            http::HeaderValue::from_static("Bearer realm=\"toolnexus\""),
        );
        r.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/json"),
        );
        r
    }
}

impl Guard {
    pub async fn new(options: AuthOptions, _endpoint_url: &str) -> Result<Guard, String> {
        Ok(Guard { options })
    }
    pub async fn check(&self, headers: &http::HeaderMap) -> Result<Arc<Principal>, Denial> {
        let deny = |d: &str| Denial {
            status: http::StatusCode::UNAUTHORIZED,
            description: d.to_string(),
        };
        let token = headers
            .get(http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .ok_or_else(|| deny("no bearer token"))?;
        for t in &self.options.tokens {
            if t.token == token {
                return Ok(Arc::new(Principal {
                    subject: t.subject.clone(),
                    scopes: t.scopes.clone(),
                    claims: json!({}),
                    issuer: None,
                }));
            }
        }
        if let Some(v) = &self.options.verifier {
            match v.verify(token.to_string()).await {
                Ok(Some(p)) => return Ok(Arc::new(p)),
                Ok(None) => {}
                Err(e) => {
                    return Err(Denial {
                        status: http::StatusCode::INTERNAL_SERVER_ERROR,
                        description: e,
                    });
                }
            }
        }
        Err(deny("the token is not valid"))
    }
    pub fn metadata_response(&self, _path: &str) -> Option<http::Response<Bytes>> {
        None
    }
    pub fn policy(&self) -> &AccessPolicy {
        &self.options.policy
    }
}
