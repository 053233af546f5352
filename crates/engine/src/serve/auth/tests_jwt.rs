//! The guard checking an OAuth issuer's JWTs, against a real issuer on loopback: the claims a
//! token must carry, the keys and algorithms it must be signed with, key rotation and refresh.

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use serde_json::{Value, json};

use super::test_issuer::*;
use super::test_keys::*;
use super::*;

#[tokio::test]
async fn a_good_token_is_its_principal() {
    let issuer = TestIssuer::start("", keys()).await;
    let guard = guard(&issuer).await;
    let token = signed(&claims(&issuer.issuer));
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
        signed(&c)
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
    let token = signed(&claims(&issuer.issuer));
    assert!(guard.check(&bearer(&token)).await.is_ok());
    assert!(guard.check(&bearer(&token)).await.is_ok());
    assert_eq!(issuer.jwks_fetches(), 3);
}
