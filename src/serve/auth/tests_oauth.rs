//! The guard as an OAuth resource server, against a real issuer on loopback: discovery, JWT
//! rules, key rotation, introspection, the protected resource metadata.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::{HeaderMap, HeaderValue, StatusCode, header};
use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use serde_json::{Value, json};

use super::test_issuer::TestIssuer;
use super::test_keys::*;
use super::*;

const ENDPOINT: &str = "http://127.0.0.1:9/mcp";
const PRM: &str = "http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp";

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn rsa_jwk(kid: &str, n: &str) -> Value {
    json!({"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256", "n": n, "e": "AQAB"})
}

fn keys() -> Value {
    json!({"keys": [
        rsa_jwk("rsa1", RSA1_N),
        {"kty": "EC", "kid": "ec", "crv": "P-256", "x": EC_X, "y": EC_Y},
        {"kty": "OKP", "kid": "ed", "crv": "Ed25519", "x": ED_X},
        // An encryption key is never used to check signatures.
        {"kty": "RSA", "kid": "enc", "use": "enc", "n": RSA2_N, "e": "AQAB"},
    ]})
}

fn sign(alg: Algorithm, kid: Option<&str>, pem: &str, claims: &Value) -> String {
    let key = match alg {
        Algorithm::ES256 | Algorithm::ES384 => EncodingKey::from_ec_pem(pem.as_bytes()),
        Algorithm::EdDSA => EncodingKey::from_ed_pem(pem.as_bytes()),
        _ => EncodingKey::from_rsa_pem(pem.as_bytes()),
    }
    .unwrap();
    let mut header = Header::new(alg);
    header.kid = kid.map(str::to_string);
    encode(&header, claims, &key).unwrap()
}

fn claims(issuer: &str) -> Value {
    json!({
        "iss": issuer, "aud": ENDPOINT, "sub": "alice", "scope": "read write",
        "exp": now() + 600, "iat": now(), "team": "a",
    })
}

fn oauth(issuer: &TestIssuer) -> OAuthOptions {
    OAuthOptions {
        issuer: issuer.issuer.clone(),
        audience: None,
        required_scopes: vec![],
        jwks_uri: None,
        introspection: None,
        clock_skew: Duration::from_secs(60),
    }
}

fn with_oauth(oauth: OAuthOptions) -> AuthOptions {
    AuthOptions {
        tokens: vec![],
        verifier: None,
        oauth: Some(oauth),
        policy: AccessPolicy::default(),
    }
}

async fn guard(issuer: &TestIssuer) -> Guard {
    Guard::new(with_oauth(oauth(issuer)), ENDPOINT)
        .await
        .unwrap()
}

fn bearer(token: &str) -> HeaderMap {
    let mut map = HeaderMap::new();
    let value = HeaderValue::from_str(&format!("Bearer {token}")).unwrap();
    map.insert(header::AUTHORIZATION, value);
    map
}

async fn refused(guard: &Guard, token: &str) -> String {
    let denial = guard.check(&bearer(token)).await.unwrap_err();
    assert_eq!(denial.status(), StatusCode::UNAUTHORIZED);
    denial.description().to_string()
}

#[tokio::test]
async fn a_good_token_is_its_principal() {
    let issuer = TestIssuer::start("", keys()).await;
    let guard = guard(&issuer).await;
    let token = sign(
        Algorithm::RS256,
        Some("rsa1"),
        RSA1_PRIVATE,
        &claims(&issuer.issuer),
    );
    let principal = guard.check(&bearer(&token)).await.unwrap();
    assert_eq!(principal.subject, "alice");
    assert_eq!(principal.scopes, vec!["read", "write"]);
    assert_eq!(principal.claims["team"], "a");
    assert_eq!(principal.claims["aud"], ENDPOINT);
    assert_eq!(principal.issuer.as_deref(), Some(issuer.issuer.as_str()));
    assert_eq!(principal.key(), format!("{} alice", issuer.issuer));
    // Discovery read RFC 8414's metadata, then the keys.
    assert_eq!(
        issuer.requests(),
        vec!["/.well-known/oauth-authorization-server", "/jwks"]
    );

    // P-256 and Ed25519 keys; `scp` as a list; an audience list; typ at+jwt.
    let mut other = claims(&issuer.issuer);
    other["aud"] = json!(["someone-else", ENDPOINT]);
    other.as_object_mut().unwrap().remove("scope");
    other["scp"] = json!(["a", "b"]);
    let es = sign(Algorithm::ES256, Some("ec"), EC_PRIVATE, &other);
    assert_eq!(
        guard.check(&bearer(&es)).await.unwrap().scopes,
        vec!["a", "b"]
    );
    let mut header = Header::new(Algorithm::EdDSA);
    header.typ = Some("at+jwt".into());
    let key = EncodingKey::from_ed_pem(ED_PRIVATE.as_bytes()).unwrap();
    let ed = encode(&header, &other, &key).unwrap();
    // Without a kid, the only key of a fitting type is used.
    assert_eq!(guard.check(&bearer(&ed)).await.unwrap().subject, "alice");
    assert_eq!(issuer.jwks_fetches(), 1);
}

#[tokio::test]
async fn claims_that_do_not_fit_are_refused() {
    let issuer = TestIssuer::start("", keys()).await;
    let guard = guard(&issuer).await;
    let with = |change: &dyn Fn(&mut Value)| {
        let mut c = claims(&issuer.issuer);
        change(&mut c);
        sign(Algorithm::RS256, Some("rsa1"), RSA1_PRIVATE, &c)
    };
    let cases: Vec<(String, String)> = vec![
        (
            with(&|c| c["exp"] = json!(now() - 61)),
            "the token has expired".into(),
        ),
        (
            with(&|c| c["nbf"] = json!(now() + 120)),
            "the token is not valid yet (nbf)".into(),
        ),
        (
            with(&|c| c["iat"] = json!(now() + 120)),
            "the token was issued in the future (iat)".into(),
        ),
        (
            with(&|c| c["aud"] = json!("http://127.0.0.1:9/other")),
            "the token is for another audience".into(),
        ),
        (
            with(&|c| c["aud"] = json!(["a", "b"])),
            "the token is for another audience".into(),
        ),
        (
            with(&|c| {
                c.as_object_mut().unwrap().remove("aud");
            }),
            "the token names no audience (aud)".into(),
        ),
        (
            with(&|c| c["iss"] = json!("https://evil.example")),
            format!("the token's issuer is not {}", issuer.issuer),
        ),
        (
            with(&|c| {
                c.as_object_mut().unwrap().remove("exp");
            }),
            "the token has no expiry (exp)".into(),
        ),
        (
            with(&|c| {
                c.as_object_mut().unwrap().remove("sub");
            }),
            "the token names no subject (sub)".into(),
        ),
        (
            with(&|c| c["exp"] = json!("tomorrow")),
            "the token's exp is not a time".into(),
        ),
    ];
    for (token, words) in cases {
        assert_eq!(refused(&guard, &token).await, words);
    }
    // Within the clock skew, an expired token still passes.
    let recent = with(&|c| c["exp"] = json!(now() - 30));
    assert!(guard.check(&bearer(&recent)).await.is_ok());
}

#[tokio::test]
async fn tokens_not_signed_by_the_issuer_are_refused() {
    let issuer = TestIssuer::start("", keys()).await;
    let guard = guard(&issuer).await;
    let good = claims(&issuer.issuer);
    let not_ours = "the token is not signed by a key of the issuer";
    // A foreign key claiming a known kid.
    let foreign = sign(Algorithm::RS256, Some("rsa1"), RSA2_PRIVATE, &good);
    assert_eq!(refused(&guard, &foreign).await, not_ours);
    // alg none, by hand.
    let part = |v: &Value| URL_SAFE_NO_PAD.encode(v.to_string());
    let none = format!(
        "{}.{}.",
        part(&json!({"alg": "none", "typ": "JWT"})),
        part(&good)
    );
    assert_eq!(
        refused(&guard, &none).await,
        "the token's algorithm none is not accepted"
    );
    // HS256 keyed with the public key (the classic confusion).
    let mut header = Header::new(Algorithm::HS256);
    header.kid = Some("rsa1".into());
    let secret = EncodingKey::from_secret(RSA1_PUBLIC.as_bytes()).unwrap();
    let hs = encode(&header, &good, &secret).unwrap();
    assert_eq!(
        refused(&guard, &hs).await,
        "the token's algorithm HS256 is not accepted"
    );
    // An algorithm that does not fit the named key.
    let es_on_rsa = sign(Algorithm::ES256, Some("rsa1"), EC_PRIVATE, &good);
    assert_eq!(
        refused(&guard, &es_on_rsa).await,
        "the token's algorithm ES256 does not fit the issuer's key rsa1"
    );
    // A key for encryption only is not a signing key.
    let enc = sign(Algorithm::RS256, Some("enc"), RSA2_PRIVATE, &good);
    assert_eq!(refused(&guard, &enc).await, not_ours);
    let mut typ = Header::new(Algorithm::RS256);
    typ.typ = Some("id_token+jwt".into());
    let key = EncodingKey::from_rsa_pem(RSA1_PRIVATE.as_bytes()).unwrap();
    let id_token = encode(&typ, &good, &key).unwrap();
    assert_eq!(
        refused(&guard, &id_token).await,
        "the token's type (typ) is not an access token"
    );
    for garbage in ["garbage", "a.b.c", "eyJhbGciOiJSUzI1NiJ9.e30", "....."] {
        assert_eq!(
            refused(&guard, garbage).await,
            "the token is not a valid JWT"
        );
    }
}

#[tokio::test]
async fn an_unknown_kid_refetches_once_and_accepts_a_rotated_key() {
    let issuer = TestIssuer::start("", keys()).await;
    let guard = guard(&issuer).await;
    let mut rotated = keys();
    rotated["keys"]
        .as_array_mut()
        .unwrap()
        .push(rsa_jwk("rsa2", RSA2_N));
    issuer.set_jwks(rotated);
    let token = sign(
        Algorithm::RS256,
        Some("rsa2"),
        RSA2_PRIVATE,
        &claims(&issuer.issuer),
    );
    assert_eq!(guard.check(&bearer(&token)).await.unwrap().subject, "alice");
    assert_eq!(issuer.jwks_fetches(), 2);
    // Known now: no more fetches.
    assert!(guard.check(&bearer(&token)).await.is_ok());
    assert_eq!(issuer.jwks_fetches(), 2);
}

#[tokio::test]
async fn a_flood_of_unknown_kids_fetches_at_most_once_per_window() {
    let issuer = TestIssuer::start("", keys()).await;
    let guard = guard(&issuer).await;
    let flood = |round: usize| {
        let guard = &guard;
        let claims = claims(&issuer.issuer);
        futures::future::join_all((0..20).map(move |i| {
            let kid = format!("unknown-{round}-{i}");
            let token = sign(Algorithm::RS256, Some(&kid), RSA2_PRIVATE, &claims);
            async move { guard.check(&bearer(&token)).await }
        }))
    };
    for result in flood(1).await {
        assert_eq!(
            result.unwrap_err().description(),
            "the token is not signed by a key of the issuer"
        );
    }
    assert_eq!(issuer.jwks_fetches(), 2);
    assert!(flood(2).await.iter().all(Result::is_err));
    assert_eq!(issuer.jwks_fetches(), 2);
}

#[tokio::test]
async fn keys_are_refreshed_when_old() {
    let issuer = TestIssuer::start("", keys()).await;
    let timing = Timing {
        refetch_min: Duration::ZERO,
        refresh_after: Duration::ZERO,
    };
    let guard = Guard::with_timing(with_oauth(oauth(&issuer)), ENDPOINT, timing)
        .await
        .unwrap();
    let token = sign(
        Algorithm::RS256,
        Some("rsa1"),
        RSA1_PRIVATE,
        &claims(&issuer.issuer),
    );
    assert!(guard.check(&bearer(&token)).await.is_ok());
    assert!(guard.check(&bearer(&token)).await.is_ok());
    assert_eq!(issuer.jwks_fetches(), 3);
}

#[tokio::test]
async fn required_scopes_and_the_challenges() {
    let issuer = TestIssuer::start("", keys()).await;
    let mut options = oauth(&issuer);
    options.required_scopes = vec!["read".into(), "mcp".into()];
    let guard = Guard::new(with_oauth(options), ENDPOINT).await.unwrap();
    let token = sign(
        Algorithm::RS256,
        Some("rsa1"),
        RSA1_PRIVATE,
        &claims(&issuer.issuer),
    );
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
        sign(Algorithm::RS256, Some("rsa1"), RSA1_PRIVATE, &c)
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
    let token = sign(Algorithm::RS256, Some("rsa1"), RSA1_PRIVATE, &enough);
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
    let token = sign(
        Algorithm::RS256,
        Some("rsa1"),
        RSA1_PRIVATE,
        &claims(&issuer.issuer),
    );
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
    let token = sign(
        Algorithm::RS256,
        Some("rsa1"),
        RSA1_PRIVATE,
        &claims(&issuer.issuer),
    );
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
    let token = sign(
        Algorithm::RS256,
        Some("rsa1"),
        RSA1_PRIVATE,
        &claims(&issuer.issuer),
    );
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
    let token = sign(
        Algorithm::RS256,
        Some("rsa1"),
        RSA1_PRIVATE,
        &claims(&issuer.issuer),
    );
    issuer.state.lock().unwrap().introspection.insert(
        token.clone(),
        json!({"active": true, "sub": "carol", "exp": now() + 60}),
    );
    assert_eq!(guard.check(&bearer(&token)).await.unwrap().subject, "carol");
    assert_eq!(issuer.jwks_fetches(), 0);
}
