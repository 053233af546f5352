//! Gateway subscriptions over fake upstreams: an update sent while the upstream subscribe is
//! answered reaches the follower (both eras), stopping ends the upstream subscriptions, and a
//! slow upstream subscribe holds up no other URI.

#![allow(deprecated)] // resources/subscribe is the handshake era's, and served.

use super::*;

#[tokio::test]
async fn an_update_sent_while_subscribing_upstream_is_not_lost() {
    let hints = Hints::default();
    let a = fake("a", &["x://a"], &[], hints);
    a.eager.store(true, Ordering::SeqCst);
    let server = ToolServer::new(ServerIdentity::default(), Vec::new(), None);
    server.set_surface(Vec::new(), ups(&[&a]), hints);

    // Handshake era: the session follows the URI before the upstream subscribe is sent.
    let (legacy, mut updates) = connect(&server, false).await;
    legacy
        .subscribe(SubscribeRequestParams::new("x://a"))
        .await
        .unwrap();
    let got = tokio::time::timeout(BOUND, updates.recv()).await.unwrap();
    assert_eq!(got.as_deref(), Some("x://a"));
    legacy.cancel().await.unwrap();

    // 2026-07-28: the listener receives before it follows upstream.
    let server = ToolServer::new(ServerIdentity::default(), Vec::new(), None);
    server.set_surface(Vec::new(), ups(&[&a]), hints);
    let (modern, _) = connect(&server, true).await;
    let mut listening = modern
        .peer()
        .listen(
            rmcp::model::SubscriptionFilter::builder()
                .resource_subscription("x://a")
                .build(),
        )
        .await
        .unwrap();
    let note = tokio::time::timeout(BOUND, listening.next())
        .await
        .unwrap()
        .unwrap();
    assert!(format!("{note:?}").contains("x://a"), "{note:?}");
    modern.cancel().await.unwrap();
}

#[tokio::test]
async fn stopping_ends_the_upstream_subscriptions() {
    let hints = Hints::default();
    let a = fake("a", &["x://a"], &[], hints);
    let server = ToolServer::new(ServerIdentity::default(), Vec::new(), None);
    server.set_surface(Vec::new(), ups(&[&a]), hints);
    let (client, _updates) = connect(&server, false).await;
    client
        .subscribe(SubscribeRequestParams::new("x://a"))
        .await
        .unwrap();
    assert_eq!(server.shared.subs.upstream_count().await, 1);
    server.end_listeners();
    tokio::time::timeout(BOUND, async {
        while a.unsubscribed.load(Ordering::SeqCst) == 0 {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the upstream subscription outlived the stop");
    assert_eq!(server.shared.subs.count(), 0);
    assert_eq!(server.shared.subs.upstream_count().await, 0);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_slow_upstream_subscribe_holds_up_no_other_uri() {
    let hints = Hints::default();
    let a = fake("a", &["x://slow", "x://a"], &[], hints);
    let server = ToolServer::new(ServerIdentity::default(), Vec::new(), None);
    server.set_surface(Vec::new(), ups(&[&a]), hints);
    let (first, _first_updates) = connect(&server, false).await;
    let (second, _second_updates) = connect(&server, false).await;
    let slow = tokio::spawn(async move {
        first
            .subscribe(SubscribeRequestParams::new("x://slow"))
            .await
            .unwrap();
        first
    });
    tokio::time::timeout(BOUND, async {
        while a.subscribed.load(Ordering::SeqCst) == 0 {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the slow subscribe never reached upstream");
    tokio::time::timeout(
        BOUND,
        second.subscribe(SubscribeRequestParams::new("x://a")),
    )
    .await
    .expect("another URI waited for the slow upstream")
    .unwrap();
    assert_eq!(server.shared.subs.upstream_count().await, 1);
    a.slow.notify_one();
    let first = tokio::time::timeout(BOUND, slow).await.unwrap().unwrap();
    assert_eq!(server.shared.subs.upstream_count().await, 2);
    first.cancel().await.unwrap();
    second.cancel().await.unwrap();
}
