//! A portable session's lifetime: an id in use renewed before it reaches it, an id ended by
//! DELETE refused for the lifetime and then forgotten.

use std::sync::Arc;

use serde_json::json;

use super::tests::{KEY, VERSION};
use crate::serve::seal::StateKey;

/// A sealed session id of `local` issued `age` seconds ago.
fn sealed_session(key: &StateKey, local: &str, age: u64) -> http::HeaderMap {
    let session = super::SealedSession {
        local: local.into(),
        params: serde_json::from_value(json!({"protocolVersion": VERSION, "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}))
        .unwrap(),
        owner: Some("issuer alice".into()),
        issued: crate::serve::seal::now_secs() - age,
    };
    let mut headers = http::HeaderMap::new();
    let sealed = key.seal_json(crate::serve::seal::Purpose::Session, &session);
    headers.insert("mcp-session-id", sealed.parse().unwrap());
    headers
}

#[tokio::test]
async fn a_session_in_use_is_renewed_and_never_reaches_its_lifetime() {
    use std::time::Duration;
    let key = Arc::new(StateKey::new(&[KEY.as_bytes().to_vec()]).unwrap());
    let portable = super::Portable::new(key.clone(), "http://127.0.0.1:1")
        .with_lifetime(Duration::from_secs(10))
        .with_renew(Duration::from_secs(5));
    let alice = Some("issuer alice");
    // Younger than the renewal age: the same id goes on.
    assert!(matches!(
        portable.inbound(&mut sealed_session(&key, "s", 1), alice),
        super::Inbound::Local { renewed: None, .. }
    ));
    // Older: the answer carries the same session issued now (its owner and handshake kept).
    let super::Inbound::Local { local, renewed } =
        portable.inbound(&mut sealed_session(&key, "s", 8), alice)
    else {
        panic!("an 8 s old id within a 10 s lifetime opens");
    };
    assert_eq!(local, "s");
    let renewed = renewed.expect("an id past the renewal age is renewed");
    let opened: super::SealedSession = key
        .open_json(
            crate::serve::seal::Purpose::Session,
            renewed.to_str().unwrap(),
        )
        .unwrap();
    assert_eq!(opened.local, "s");
    assert_eq!(opened.owner.as_deref(), Some("issuer alice"));
    assert_eq!(opened.params.client_info.name, "t");
    assert!(crate::serve::seal::now_secs() - opened.issued <= 1);
    // The renewed id opens where the old one (past the lifetime) no longer does.
    let mut headers = http::HeaderMap::new();
    headers.insert("mcp-session-id", renewed.clone());
    assert!(matches!(
        portable.inbound(&mut headers, alice),
        super::Inbound::Local { renewed: None, .. }
    ));
    assert!(matches!(
        portable.inbound(&mut sealed_session(&key, "s", 11), alice),
        super::Inbound::Refused(reply) if reply.status() == 404
    ));
    // Only a successful answer, and never DELETE's, carries it.
    let reply = |status: u16| {
        use http_body_util::BodyExt;
        let mut reply = http::Response::new(http_body_util::Full::new(bytes::Bytes::new()).boxed());
        *reply.status_mut() = http::StatusCode::from_u16(status).unwrap();
        reply
    };
    for (status, deleted, carries) in [
        (200, false, true),
        (202, false, true),
        (404, false, false),
        (200, true, false),
    ] {
        let mut answer = reply(status);
        portable.renew(&mut answer, renewed.clone(), deleted);
        assert_eq!(
            answer.headers().contains_key("mcp-session-id"),
            carries,
            "{status} {deleted}"
        );
    }
}

#[tokio::test]
async fn a_deleted_session_is_refused_for_the_lifetime_then_forgotten() {
    use std::time::Duration;
    let key = Arc::new(StateKey::new(&[KEY.as_bytes().to_vec()]).unwrap());
    let portable = super::Portable::new(key.clone(), "http://127.0.0.1:1")
        .with_lifetime(Duration::from_secs(100));
    let now = crate::serve::seal::now_secs();
    {
        let mut denied = super::lock(&portable.denied);
        denied.insert("old".into(), now - 100);
        denied.insert("recent".into(), now - 99);
    }
    assert!(
        !portable.is_denied("old", now),
        "ended a lifetime ago: its ids have expired"
    );
    assert!(portable.is_denied("recent", now));
    assert!(
        !super::lock(&portable.denied).contains("old"),
        "forgotten, not only ignored"
    );
    let alice = Some("issuer alice");
    assert!(matches!(
        portable.inbound(&mut sealed_session(&key, "recent", 1), alice),
        super::Inbound::Refused(reply) if reply.status() == 404
    ));
}
