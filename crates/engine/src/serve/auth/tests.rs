//! The guard without OAuth: bearer parsing, static tokens, a token check, denials, the policy.

use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use http::{HeaderMap, HeaderValue, StatusCode, header};
use serde_json::{Value, json};

use super::*;

fn headers(authorization: &[&str]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for value in authorization {
        map.append(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
    }
    map
}

fn token(token: &str, subject: &str, scopes: &[&str]) -> StaticToken {
    StaticToken {
        token: token.into(),
        subject: subject.into(),
        scopes: scopes.iter().map(|s| s.to_string()).collect(),
    }
}

fn options(tokens: Vec<StaticToken>) -> AuthOptions {
    AuthOptions {
        tokens,
        verifier: None,
        oauth: None,
        policy: AccessPolicy::default(),
    }
}

async fn static_guard() -> Guard {
    let tokens = vec![
        token("s3cret-token-one", "ci", &["deploy"]),
        token("another-token", "token-2", &[]),
    ];
    Guard::new(options(tokens), "http://127.0.0.1:9/mcp")
        .await
        .unwrap()
}

fn body(denial: &Denial) -> Value {
    serde_json::from_slice(denial.response().body()).unwrap()
}

fn challenge(denial: &Denial) -> String {
    let response = denial.response();
    let value = response.headers().get(header::WWW_AUTHENTICATE).unwrap();
    value.to_str().unwrap().to_string()
}

#[tokio::test]
async fn a_static_token_is_its_principal() {
    let guard = static_guard().await;
    let principal = guard
        .check(&headers(&["Bearer s3cret-token-one"]))
        .await
        .unwrap();
    assert_eq!(principal.subject, "ci");
    assert_eq!(principal.scopes, vec!["deploy".to_string()]);
    assert_eq!(principal.claims, json!({}));
    assert_eq!(principal.issuer, None);
    assert_eq!(principal.key(), " ci");
    assert_eq!(
        principal.to_json(),
        json!({"subject": "ci", "scopes": ["deploy"], "claims": {}})
    );
    // The scheme is case-insensitive (RFC 7235).
    let second = guard.check(&headers(&["bearer another-token"])).await;
    assert_eq!(second.unwrap().subject, "token-2");
}

#[tokio::test]
async fn a_wrong_static_token_is_refused_without_echo() {
    let guard = static_guard().await;
    for wrong in [
        "s3cret-token-onf",
        "s3cret-token-on",
        "s3cret-token-one-and-more",
        "x",
    ] {
        let denial = guard
            .check(&headers(&[&format!("Bearer {wrong}")]))
            .await
            .unwrap_err();
        assert_eq!(denial.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            body(&denial),
            json!({"error": "invalid_token", "error_description": "the token is not one this server accepts"})
        );
        assert_eq!(
            challenge(&denial),
            "Bearer realm=\"toolnexus\", error=\"invalid_token\", error_description=\"the token is not one this server accepts\""
        );
        let response = denial.response();
        assert!(!String::from_utf8_lossy(response.body()).contains(wrong));
    }
}

#[tokio::test]
async fn no_token_is_401_unauthorized() {
    let guard = static_guard().await;
    let denial = guard.check(&HeaderMap::new()).await.unwrap_err();
    assert_eq!(denial.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(challenge(&denial), "Bearer realm=\"toolnexus\"");
    assert_eq!(
        body(&denial),
        json!({"error": "unauthorized", "error_description": "this server needs a bearer token (Authorization: Bearer <token>)"})
    );
    let response = denial.response();
    assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");
}

#[tokio::test]
async fn an_authorization_that_is_not_bearer_is_invalid_request() {
    let guard = static_guard().await;
    for value in [
        "Basic czNjcmV0LXRva2VuLW9uZQ==",
        "Bearer",
        "Bearer ",
        "s3cret-token-one",
        "Bearer s3cret token",
    ] {
        let denial = guard.check(&headers(&[value])).await.unwrap_err();
        assert_eq!(denial.status(), StatusCode::UNAUTHORIZED, "{value}");
        assert_eq!(
            challenge(&denial),
            "Bearer realm=\"toolnexus\", error=\"invalid_request\", error_description=\"the Authorization header is not Bearer <token>\""
        );
        assert_eq!(body(&denial)["error"], "invalid_request");
    }
    let two = headers(&["Bearer s3cret-token-one", "Bearer another-token"]);
    let denial = guard.check(&two).await.unwrap_err();
    assert_eq!(
        denial.description(),
        "the request has more than one Authorization header"
    );
}

#[tokio::test]
async fn a_token_over_16_kib_is_refused_unread() {
    let guard = static_guard().await;
    let long = format!("Bearer {}", "a".repeat(16 * 1024 + 1));
    let denial = guard.check(&headers(&[&long])).await.unwrap_err();
    assert_eq!(denial.description(), "the token is longer than 16 KiB");
}

#[tokio::test]
async fn guard_options_are_checked() {
    let none = Guard::new(options(vec![]), "http://127.0.0.1:9/mcp").await;
    assert_eq!(
        none.err().unwrap(),
        "auth needs tokens, a token check or oauth"
    );
    let empty = Guard::new(options(vec![token("", "a", &[])]), "http://127.0.0.1:9/mcp").await;
    assert_eq!(empty.err().unwrap(), "an auth token is empty");
}

/// A token check: "good" is alice, "broken" fails (its words quoting the token), else None.
struct Check;

impl TokenVerifier for Check {
    fn verify(&self, token: String) -> BoxFuture<'static, Result<Option<Principal>, String>> {
        async move {
            match token.as_str() {
                "good" => Ok(Some(Principal {
                    subject: "alice".into(),
                    scopes: vec!["read".into()],
                    claims: json!({"team": "a"}),
                    issuer: None,
                })),
                "broken" => Err("database down while looking up broken".into()),
                _ => Ok(None),
            }
        }
        .boxed()
    }
}

#[tokio::test]
async fn a_token_check_accepts_refuses_or_fails() {
    let mut with_check = options(vec![token("static", "ci", &[])]);
    with_check.verifier = Some(Arc::new(Check));
    let guard = Guard::new(with_check, "http://127.0.0.1:9/mcp")
        .await
        .unwrap();
    let alice = guard.check(&headers(&["Bearer good"])).await.unwrap();
    assert_eq!(alice.subject, "alice");
    assert_eq!(alice.claims, json!({"team": "a"}));
    // A static token wins without asking the check.
    let ci = guard.check(&headers(&["Bearer static"])).await.unwrap();
    assert_eq!(ci.subject, "ci");
    let refused = guard.check(&headers(&["Bearer other"])).await.unwrap_err();
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        refused.description(),
        "the token is not one this server accepts"
    );
    let failed = guard.check(&headers(&["Bearer broken"])).await.unwrap_err();
    assert_eq!(failed.status(), StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(
        body(&failed),
        json!({"error": "server_error", "error_description": "the token could not be checked"})
    );
    assert_eq!(failed.challenge(), None);
    assert_eq!(
        failed.detail(),
        Some("the token check failed: database down while looking up <token>")
    );
}

#[test]
fn the_session_denial() {
    let denial = Denial::other_session();
    assert_eq!(denial.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        body(&denial),
        json!({"error": "forbidden", "error_description": "this session belongs to another principal"})
    );
    assert!(
        denial
            .response()
            .headers()
            .get(header::WWW_AUTHENTICATE)
            .is_none()
    );
}

#[test]
fn globs() {
    use super::policy::glob_matches;
    let cases = [
        ("*", "anything", true),
        ("*", "", true),
        ("github_*", "github_search", true),
        ("github_*", "gitlab_search", false),
        ("*_search", "github_search", true),
        ("a?c", "abc", true),
        ("a?c", "ac", false),
        ("a?c", "abbc", false),
        ("a*b*c", "aXXbYYc", true),
        ("a*b*c", "aXXbYY", false),
        ("exact", "exact", true),
        ("exact", "exactly", false),
        ("file:///docs/*", "file:///docs/a/b.md", true),
        ("?", "é", true),
        ("**a", "bba", true),
    ];
    for (glob, name, expected) in cases {
        assert_eq!(glob_matches(glob, name), expected, "{glob} on {name}");
    }
    // Many stars stay linear.
    let stars = format!("{}b", "*a".repeat(50));
    assert!(!glob_matches(&stars, &"a".repeat(200)));
}

fn caller(scopes: &[&str]) -> Principal {
    Principal {
        subject: "u".into(),
        scopes: scopes.iter().map(|s| s.to_string()).collect(),
        claims: json!({}),
        issuer: None,
    }
}

#[test]
fn the_policy_by_scope() {
    let rule = |scope: &str, globs: &[&str]| {
        (
            scope.to_string(),
            globs.iter().map(|g| g.to_string()).collect::<Vec<_>>(),
        )
    };
    let policy = AccessPolicy::new(
        Some(vec![
            rule("read", &["*_get", "*_list"]),
            rule("admin", &["*"]),
            rule("*", &["ping"]),
        ]),
        None,
        Some(vec![rule("docs", &["file:///docs/*"])]),
    );
    let reader = caller(&["read"]);
    let admin = caller(&["admin"]);
    let nobody = caller(&[]);
    assert!(policy.allows(Kind::Tool, Some(&reader), "issue_get"));
    assert!(!policy.allows(Kind::Tool, Some(&reader), "issue_delete"));
    assert!(policy.allows(Kind::Tool, Some(&reader), "ping"));
    assert!(policy.allows(Kind::Tool, Some(&admin), "issue_delete"));
    assert!(policy.allows(Kind::Tool, Some(&nobody), "ping"));
    assert!(!policy.allows(Kind::Tool, Some(&nobody), "issue_get"));
    assert!(!policy.allows(Kind::Tool, None, "ping"));
    // No prompt policy: everyone sees every prompt.
    assert!(policy.is_open(Kind::Prompt));
    assert!(policy.allows(Kind::Prompt, Some(&nobody), "anything"));
    assert!(policy.allows(Kind::Prompt, None, "anything"));
    assert!(!policy.is_open(Kind::Resource));
    assert!(policy.allows(
        Kind::Resource,
        Some(&caller(&["docs"])),
        "file:///docs/a.md"
    ));
    assert!(!policy.allows(Kind::Resource, Some(&admin), "file:///docs/a.md"));
    assert_eq!(policy.scopes(), vec!["read", "admin", "docs"]);
    assert!(AccessPolicy::default().is_open(Kind::Tool));
}

#[test]
fn the_guard_is_shared_across_tasks() {
    fn send_sync<T: Send + Sync>(_: &T) {}
    fn send<T: Send>(_: T) {}
    let guard = futures::executor::block_on(static_guard());
    send_sync(&guard);
    let map = HeaderMap::new();
    send(guard.check(&map));
    send(Guard::new(options(vec![]), "http://127.0.0.1:9/mcp"));
}
