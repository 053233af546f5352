//! The guard as an OAuth resource server, against a real issuer on loopback: discovery and why an
//! issuer cannot be used, the protected resource metadata, required scopes and the challenges,
//! introspection, static tokens beside OAuth.

use base64::Engine;
use http::{HeaderMap, StatusCode, header};
use serde_json::{Value, json};

use super::test_issuer::*;
use super::*;

#[tokio::test]
async fn required_scopes_and_the_challenges() {
    let issuer = TestIssuer::start("", keys()).await;
    let mut options = oauth(&issuer);
    options.required_scopes = vec!["read".into(), "mcp".into()];
    let guard = Guard::new(with_oauth(options), ENDPOINT).await.unwrap();
    let token = signed(&claims(&issuer.issuer));
    let denial = guard.check(&bearer(&token)).await.unwrap_err();
    assert_eq!(denial.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        denial.challenge().unwrap(),
        format!(
            "Bearer error=\"insufficient_scope\", scope=\"read mcp\", resource_metadata=\"{PRM}\""
        )
    );
    let body: Value = serde_json::from_slice(denial.response().body()).unwrap();
    assert_eq!(
        body,
        json!({"error": "insufficient_scope", "error_description": "the token lacks the scope mcp"})
    );
    let missing = guard.check(&HeaderMap::new()).await.unwrap_err();
    assert_eq!(
        missing.challenge().unwrap(),
        format!("Bearer realm=\"toolnexus\", resource_metadata=\"{PRM}\", scope=\"read mcp\"")
    );
    let expired = {
        let mut c = claims(&issuer.issuer);
        c["exp"] = json!(now() - 3600);
        signed(&c)
    };
    let denial = guard.check(&bearer(&expired)).await.unwrap_err();
    assert_eq!(
        denial.response().headers()[header::WWW_AUTHENTICATE],
        format!(
            "Bearer realm=\"toolnexus\", resource_metadata=\"{PRM}\", error=\"invalid_token\", error_description=\"the token has expired\", scope=\"read mcp\""
        )
    );
    let mut enough = claims(&issuer.issuer);
    enough["scope"] = json!("mcp read");
    let token = signed(&enough);
    assert!(guard.check(&bearer(&token)).await.is_ok());
}

#[tokio::test]
async fn the_protected_resource_metadata() {
    let issuer = TestIssuer::start("", keys()).await;
    let mut options = oauth(&issuer);
    options.required_scopes = vec!["mcp".into()];
    let rule = |scope: &str| Some(vec![(scope.to_string(), vec!["*".to_string()])]);
    let mut auth = with_oauth(options);
    auth.policy = AccessPolicy::new(rule("tools:all"), rule("*"), None);
    let guard = Guard::new(auth, ENDPOINT).await.unwrap();
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource/any/thing",
    ] {
        let response = guard.metadata_response(path).unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()[header::ACCESS_CONTROL_ALLOW_ORIGIN], "*");
        assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");
        let document: Value = serde_json::from_slice(response.body()).unwrap();
        assert_eq!(
            document,
            json!({
                "resource": ENDPOINT,
                "authorization_servers": [issuer.issuer],
                "bearer_methods_supported": ["header"],
                "resource_name": "toolnexus",
                "scopes_supported": ["mcp", "tools:all"],
            })
        );
    }
    for other in [
        "/.well-known/oauth-protected-resourcex",
        "/mcp",
        "/.well-known/oauth-authorization-server",
    ] {
        assert!(guard.metadata_response(other).is_none(), "{other}");
    }
    // Without OAuth there is no such document.
    let tokens = AuthOptions {
        tokens: vec![StaticToken {
            token: "t".into(),
            subject: "s".into(),
            scopes: vec![],
        }],
        verifier: None,
        oauth: None,
        policy: AccessPolicy::default(),
    };
    let plain = Guard::new(tokens, ENDPOINT).await.unwrap();
    assert!(
        plain
            .metadata_response("/.well-known/oauth-protected-resource")
            .is_none()
    );
}

#[tokio::test]
async fn discovery_falls_back_to_openid_and_inserts_the_issuer_path() {
    let issuer = TestIssuer::start("/tenant/a", keys()).await;
    {
        let mut state = issuer.state.lock().unwrap();
        state.openid = state.rfc8414.take();
    }
    let guard = guard(&issuer).await;
    assert_eq!(
        issuer.requests(),
        vec![
            "/.well-known/oauth-authorization-server/tenant/a",
            "/tenant/a/.well-known/openid-configuration",
            "/jwks",
        ]
    );
    let token = signed(&claims(&issuer.issuer));
    assert!(guard.check(&bearer(&token)).await.is_ok());
}

#[tokio::test]
async fn guard_new_says_why_the_issuer_cannot_be_used() {
    let issuer = TestIssuer::start("", keys()).await;
    issuer.state.lock().unwrap().rfc8414 = Some(json!({"issuer": issuer.issuer}));
    let no_jwks = Guard::new(with_oauth(oauth(&issuer)), ENDPOINT).await;
    assert_eq!(
        no_jwks.err().unwrap(),
        format!("the OAuth issuer {} publishes no jwks_uri", issuer.issuer)
    );

    issuer.state.lock().unwrap().rfc8414 = Some(json!({"issuer": "https://other.example"}));
    let other = Guard::new(with_oauth(oauth(&issuer)), ENDPOINT).await;
    assert_eq!(
        other.err().unwrap(),
        format!(
            "the OAuth issuer {} publishes metadata for another issuer (https://other.example)",
            issuer.issuer
        )
    );

    let mut too_big = oauth(&issuer);
    too_big.jwks_uri = Some(format!("{}/big", issuer.origin));
    let big = Guard::new(with_oauth(too_big), ENDPOINT).await;
    assert_eq!(
        big.err().unwrap(),
        format!(
            "cannot fetch the keys of the OAuth issuer {}: {}/big answered with more than 256 KiB",
            issuer.issuer, issuer.origin
        )
    );

    let mut remote = oauth(&issuer);
    remote.issuer = "http://auth.example.com".into();
    let plain_http = Guard::new(with_oauth(remote), ENDPOINT).await;
    assert_eq!(
        plain_http.err().unwrap(),
        "the OAuth issuer http://auth.example.com must be an https URL (http only for loopback hosts)"
    );

    // A port nothing listens on.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let gone = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let mut away = oauth(&issuer);
    away.issuer = gone.clone();
    let unreachable = Guard::new(with_oauth(away), ENDPOINT).await.err().unwrap();
    assert_eq!(
        unreachable,
        format!(
            "cannot reach the OAuth issuer {gone}: {gone}/.well-known/oauth-authorization-server could not be reached: connection refused; {gone}/.well-known/openid-configuration could not be reached: connection refused"
        )
    );
}

#[tokio::test]
async fn opaque_tokens_are_introspected() {
    let issuer = TestIssuer::start("", keys()).await;
    {
        let mut state = issuer.state.lock().unwrap();
        let answer = |sub: &str, aud: &str| {
            json!({"active": true, "sub": sub, "scope": "read", "iss": issuer.issuer,
                   "aud": aud, "exp": now() + 600, "client_id": "app"})
        };
        state
            .introspection
            .insert("opaque-1".into(), answer("bob", ENDPOINT));
        state.introspection.insert(
            "opaque-3".into(),
            answer("eve", "https://elsewhere.example"),
        );
    }
    let mut options = oauth(&issuer);
    options.introspection = Some(Introspection {
        client_id: "client one".into(),
        client_secret: "s&cret".into(),
        endpoint: None,
    });
    let guard = Guard::new(with_oauth(options), ENDPOINT).await.unwrap();
    let bob = guard.check(&bearer("opaque-1")).await.unwrap();
    assert_eq!(bob.subject, "bob");
    assert_eq!(bob.scopes, vec!["read"]);
    assert_eq!(bob.claims["client_id"], "app");
    // Remembered: the second check does not ask again.
    assert!(guard.check(&bearer("opaque-1")).await.is_ok());
    let basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode("client%20one:s%26cret")
    );
    assert_eq!(
        issuer.state.lock().unwrap().introspected,
        vec![(
            basic,
            "token=opaque%2D1&token_type_hint=access_token".to_string()
        )]
    );
    assert_eq!(refused(&guard, "opaque-2").await, "the token is not active");
    assert_eq!(
        refused(&guard, "opaque-3").await,
        "the token is for another audience"
    );
    // JWTs are still checked locally.
    let token = signed(&claims(&issuer.issuer));
    assert_eq!(guard.check(&bearer(&token)).await.unwrap().subject, "alice");
    assert_eq!(issuer.state.lock().unwrap().introspected.len(), 3);
}

#[tokio::test]
async fn static_tokens_win_then_oauth() {
    let issuer = TestIssuer::start("", keys()).await;
    let mut auth = with_oauth(oauth(&issuer));
    auth.tokens = vec![StaticToken {
        token: "ci-token".into(),
        subject: "ci".into(),
        scopes: vec![],
    }];
    let guard = Guard::new(auth, ENDPOINT).await.unwrap();
    assert_eq!(
        guard.check(&bearer("ci-token")).await.unwrap().subject,
        "ci"
    );
    let token = signed(&claims(&issuer.issuer));
    assert_eq!(guard.check(&bearer(&token)).await.unwrap().subject, "alice");
    let denial = guard.check(&bearer("ci-tokem")).await.unwrap_err();
    assert_eq!(
        denial.challenge().unwrap(),
        format!(
            "Bearer realm=\"toolnexus\", resource_metadata=\"{PRM}\", error=\"invalid_token\", error_description=\"the token is not a valid JWT\""
        )
    );
}

#[tokio::test]
async fn an_issuer_without_keys_serves_by_introspection_alone() {
    let issuer = TestIssuer::start("", keys()).await;
    {
        let mut state = issuer.state.lock().unwrap();
        let metadata = state.rfc8414.as_mut().unwrap();
        metadata.as_object_mut().unwrap().remove("jwks_uri");
    }
    let mut options = oauth(&issuer);
    options.introspection = Some(Introspection {
        client_id: "app".into(),
        client_secret: "secret".into(),
        endpoint: None,
    });
    let guard = Guard::new(with_oauth(options), ENDPOINT).await.unwrap();
    let token = signed(&claims(&issuer.issuer));
    issuer.state.lock().unwrap().introspection.insert(
        token.clone(),
        json!({"active": true, "sub": "carol", "exp": now() + 60}),
    );
    assert_eq!(guard.check(&bearer(&token)).await.unwrap().subject, "carol");
    assert_eq!(issuer.jwks_fetches(), 0);
}
