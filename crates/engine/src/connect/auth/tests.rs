//! OAuth for remote servers: what is asked, stored and refreshed.

use super::*;

fn stored(
    expires_in: Option<u64>,
    received_secs_ago: u64,
) -> rmcp::transport::auth::StoredCredentials {
    let mut token = serde_json::json!({"access_token": "at", "token_type": "bearer"});
    if let Some(lifetime) = expires_in {
        token["expires_in"] = lifetime.into();
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    rmcp::transport::auth::StoredCredentials::new(
        "client".into(),
        Some(serde_json::from_value(token).unwrap()),
        vec![],
        Some(now - received_secs_ago),
    )
}

#[test]
fn a_stored_token_is_sent_as_it_is_only_while_fresh() {
    assert_eq!(
        fresh_access_token(&stored(Some(3600), 60)).as_deref(),
        Some("at")
    );
    assert_eq!(
        fresh_access_token(&stored(Some(3600), 3580)),
        None,
        "within 30 s of expiry"
    );
    assert_eq!(fresh_access_token(&stored(Some(3600), 7200)), None);
    assert_eq!(
        fresh_access_token(&stored(None, 7200)).as_deref(),
        Some("at"),
        "no expiry given"
    );
}
