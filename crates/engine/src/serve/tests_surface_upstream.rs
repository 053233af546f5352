//! The surface of a gateway over fake upstreams: prompts renamed `<server>_<prompt>` and
//! stable across rebuilds, the first of two equal URIs kept with one warning, reads and gets
//! sent to their owner by its own names, upstream hints merged, and upstream subscriptions
//! held once for all followers.

#![allow(deprecated)] // resources/subscribe is the handshake era's, and served.

use std::sync::Mutex;

use super::*;
use crate::connect::updates::UpdateListener;

/// An upstream server that lists what it is given, answers reads and gets by echoing, and
/// counts its subscriptions.
struct Fake {
    name: String,
    listing: UpstreamListing,
    hints: Hints,
    subscribed: AtomicUsize,
    unsubscribed: Arc<AtomicUsize>,
    listeners: Mutex<Vec<UpdateListener>>,
    /// Sends an update of the URI while answering its subscribe (a race a client must win).
    eager: std::sync::atomic::AtomicBool,
    /// A subscribe of a URI containing "slow" is answered once this is notified.
    slow: Arc<tokio::sync::Notify>,
}

struct Unsubscribe(Arc<AtomicUsize>);

impl Drop for Unsubscribe {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn fake(name: &str, resources: &[&str], prompts: &[&str], hints: Hints) -> Arc<Fake> {
    Arc::new(Fake {
        name: name.into(),
        listing: UpstreamListing {
            resources: resources
                .iter()
                .map(|u| obj(json!({"uri": u, "name": u})))
                .collect(),
            templates: vec![obj(
                json!({"uriTemplate": format!("{name}://item/{{id}}"), "name": "item"}),
            )],
            prompts: prompts
                .iter()
                .map(|p| obj(json!({"name": p, "description": "d"})))
                .collect(),
            declares_resources: true,
            declares_prompts: true,
            declares_completions: true,
            declares_skills: false,
        },
        hints,
        subscribed: AtomicUsize::new(0),
        unsubscribed: Arc::default(),
        listeners: Mutex::default(),
        eager: Default::default(),
        slow: Arc::default(),
    })
}

impl Upstream for Fake {
    fn name(&self) -> &str {
        &self.name
    }
    fn listing(&self) -> UpstreamListing {
        self.listing.clone()
    }
    fn hints(&self, _: ListKind) -> Hints {
        self.hints
    }
    fn expired(&self, _: ListKind) -> bool {
        false
    }
    fn refresh_if_stale(&self, _: ListKind) {}
    fn read(&self, uri: String, _: CallContext) -> BoxFuture<'static, Result<Value, ErrorData>> {
        let text = format!("{} read {uri}", self.name);
        // `x://only-<name>` is known to that server alone.
        if uri.starts_with("x://only-") && uri != format!("x://only-{}", self.name) {
            let missing = ErrorData::resource_not_found("no such resource", None);
            return async move { Err(missing) }.boxed();
        }
        async move { Ok(json!({"contents": [{"uri": uri, "text": text}], "ttlMs": 42})) }.boxed()
    }
    fn get_prompt(
        &self,
        name: String,
        _: Map<String, Value>,
        _: CallContext,
    ) -> BoxFuture<'static, Result<Value, ErrorData>> {
        let text = format!("{} got {name}", self.name);
        async move {
            Ok(json!({"messages": [{"role": "user", "content": {"type": "text", "text": text}}]}))
        }
        .boxed()
    }
    fn complete(
        &self,
        reference: Value,
        _: Value,
        _: Option<Value>,
        _: CallContext,
    ) -> BoxFuture<'static, Result<Value, ErrorData>> {
        let value = format!(
            "{} {}",
            self.name,
            reference["name"]
                .as_str()
                .or(reference["uri"].as_str())
                .unwrap_or("?")
        );
        async move { Ok(json!({"completion": {"values": [value]}})) }.boxed()
    }
    fn subscribe(
        &self,
        _uri: String,
        listener: UpdateListener,
    ) -> BoxFuture<'static, Result<Box<dyn Send + Sync>, ErrorData>> {
        self.subscribed.fetch_add(1, Ordering::SeqCst);
        if self.eager.load(Ordering::SeqCst) {
            listener(&_uri);
        }
        self.listeners.lock().unwrap().push(listener);
        let guard: Box<dyn Send + Sync> = Box::new(Unsubscribe(self.unsubscribed.clone()));
        let slow = _uri.contains("slow").then(|| self.slow.clone());
        async move {
            if let Some(slow) = slow {
                slow.notified().await;
            }
            Ok(guard)
        }
        .boxed()
    }
}

impl Fake {
    fn send_update(&self, uri: &str) {
        for listener in self.listeners.lock().unwrap().iter() {
            listener(uri);
        }
    }
}

fn ups(fakes: &[&Arc<Fake>]) -> Vec<Arc<dyn Upstream>> {
    fakes
        .iter()
        .map(|f| (*f).clone() as Arc<dyn Upstream>)
        .collect()
}

#[test]
fn prompts_are_renamed_and_the_first_uri_wins_with_one_warning() {
    let hints = Hints::default();
    let a = fake("a", &["x://shared", "x://a"], &["simple-prompt"], hints);
    let b = fake("b", &["x://shared"], &["simple-prompt"], hints);
    let mut namer = crate::connect::naming::Namer::default();
    let mut warned = Default::default();
    let (surface, warnings) =
        Surface::build(Vec::new(), ups(&[&a, &b]), &mut namer, hints, &mut warned);
    let names: Vec<_> = surface
        .prompts
        .iter()
        .map(|(p, _, o)| (p.name.as_str(), o.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("a_simple-prompt", "simple-prompt"),
            ("b_simple-prompt", "simple-prompt")
        ]
    );
    let uris: Vec<_> = surface
        .resources
        .iter()
        .map(|(r, _)| r.uri.as_str())
        .collect();
    assert_eq!(uris, ["x://shared", "x://a"]);
    assert_eq!(
        warnings,
        [
            "toolnexus: resource \"x://shared\" of server \"b\" is left out: server \"a\" lists the same URI"
        ]
    );
    // A rebuild keeps the names and says nothing again.
    let (again, warnings) =
        Surface::build(Vec::new(), ups(&[&a, &b]), &mut namer, hints, &mut warned);
    assert!(warnings.is_empty());
    assert_eq!(again.prompts[1].0.name, "b_simple-prompt");
    // Without `a`, `b`'s prompt keeps its name and its URI is served.
    let (alone, _) = Surface::build(Vec::new(), ups(&[&b]), &mut namer, hints, &mut warned);
    assert_eq!(alone.prompts[0].0.name, "b_simple-prompt");
    assert!(matches!(alone.resolve("x://shared"), Some((Owner::Up(up), None)) if up.name() == "b"));
}

#[test]
fn upstream_hints_merge_unless_configured() {
    let hints = |ttl, scope| Hints {
        ttl_ms: Some(ttl),
        scope: Some(scope),
    };
    let a = fake("a", &["x://a"], &[], hints(300, CacheScope::Public));
    let b = fake("b", &["x://b"], &[], hints(900, CacheScope::Public));
    let c = fake("c", &["x://c"], &[], hints(100, CacheScope::Private));
    let mut namer = crate::connect::naming::Namer::default();
    let mut warned = Default::default();
    let none = Hints::default();
    let (s, _) = Surface::build(Vec::new(), ups(&[&a, &b]), &mut namer, none, &mut warned);
    assert_eq!(s.hints(ListKind::Resources), (300, CacheScope::Public));
    let (s, _) = Surface::build(
        Vec::new(),
        ups(&[&a, &b, &c]),
        &mut namer,
        none,
        &mut warned,
    );
    assert_eq!(s.hints(ListKind::Resources), (100, CacheScope::Private));
    // No prompts upstream: nothing contributes, so nothing is promised.
    assert_eq!(s.hints(ListKind::Prompts), (0, CacheScope::Private));
    let configured = hints(5, CacheScope::Public);
    let (s, _) = Surface::build(Vec::new(), ups(&[&c]), &mut namer, configured, &mut warned);
    assert_eq!(s.hints(ListKind::Resources), (5, CacheScope::Public));
}

#[tokio::test]
async fn reads_gets_and_completions_reach_their_owner_by_its_own_names() {
    let hints = Hints::default();
    let a = fake("a", &["x://shared"], &["p"], hints);
    let b = fake("b", &["x://shared", "x://b"], &["p"], hints);
    let server = ToolServer::new(ServerIdentity::default(), Vec::new(), None);
    server.set_surface(Vec::new(), ups(&[&a, &b]), hints);
    for modern in [false, true] {
        let (client, _) = connect(&server, modern).await;
        let read = |uri: &str| {
            let request = ReadResourceRequestParams::new(uri);
            let peer = client.peer().clone();
            async move { peer.read_resource(request).await.unwrap() }
        };
        let shared = read("x://shared").await;
        assert_eq!(
            serde_json::to_value(&shared.contents).unwrap()[0]["text"],
            "a read x://shared"
        );
        // The upstream's own hints travel on; what it left out is filled in.
        assert_eq!(
            (shared.ttl_ms, shared.cache_scope),
            (Some(42), Some(CacheScope::Private))
        );
        // A URI no listing names: each server is asked in turn; the first that knows it answers.
        let unlisted = read("x://only-b").await;
        assert_eq!(
            serde_json::to_value(&unlisted.contents).unwrap()[0]["text"],
            "b read x://only-b"
        );
        let nobody = client
            .read_resource(ReadResourceRequestParams::new("x://only-c"))
            .await
            .unwrap_err();
        let (c, message, data) = code(nobody);
        assert_eq!(c, if modern { -32602 } else { -32002 });
        assert_eq!(
            (message.as_str(), data),
            (
                "Resource not found: x://only-c",
                Some(json!({"uri": "x://only-c"}))
            )
        );
        let templated = read("b://item/7").await;
        assert_eq!(
            serde_json::to_value(&templated.contents).unwrap()[0]["text"],
            "b read b://item/7"
        );
        let got = client
            .get_prompt(GetPromptRequestParams::new("b_p"))
            .await
            .unwrap();
        assert_eq!(
            serde_json::to_value(&got.messages).unwrap()[0]["content"]["text"],
            "b got p"
        );
        let info = client
            .complete_prompt_argument("a_p", "x", "", None)
            .await
            .unwrap();
        assert_eq!(info.values, ["a p"]);
        let info = client
            .complete_resource_argument("b://item/{id}", "id", "", None)
            .await
            .unwrap();
        assert_eq!(info.values, ["b b://item/{id}"]);
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn upstream_subscriptions_are_held_once_for_all_followers() {
    let hints = Hints::default();
    let a = fake("a", &["x://a"], &[], hints);
    let server = ToolServer::new(ServerIdentity::default(), Vec::new(), None);
    server.set_surface(Vec::new(), ups(&[&a]), hints);
    let (first, mut first_updates) = connect(&server, false).await;
    let (second, mut second_updates) = connect(&server, false).await;
    for client in [&first, &second] {
        for _ in 0..2 {
            client
                .subscribe(SubscribeRequestParams::new("x://a"))
                .await
                .unwrap();
        }
    }
    assert_eq!(
        a.subscribed.load(Ordering::SeqCst),
        1,
        "one upstream subscription"
    );
    assert_eq!(server.shared.subs.count(), 2);

    // An upstream update reaches both followers.
    a.send_update("x://a");
    let got = tokio::time::timeout(BOUND, first_updates.recv())
        .await
        .unwrap();
    assert_eq!(got.as_deref(), Some("x://a"));
    let got = tokio::time::timeout(BOUND, second_updates.recv())
        .await
        .unwrap();
    assert_eq!(got.as_deref(), Some("x://a"));

    // One unsubscribes: still held. The other's session ends: the next update forgets it,
    // and with the last follower gone the upstream subscription ends.
    first
        .unsubscribe(UnsubscribeRequestParams::new("x://a"))
        .await
        .unwrap();
    assert_eq!(a.unsubscribed.load(Ordering::SeqCst), 0);
    second.cancel().await.unwrap();
    first.cancel().await.unwrap();
    let deadline = tokio::time::Instant::now() + BOUND;
    while a.unsubscribed.load(Ordering::SeqCst) == 0 {
        a.send_update("x://a");
        assert!(
            tokio::time::Instant::now() < deadline,
            "the upstream subscription was kept"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(server.shared.subs.count(), 0);
    assert_eq!(server.shared.subs.upstream_count().await, 0);

    // The server's own updates reach a 2026-07-28 listener of that URI.
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
    assert_eq!(
        a.subscribed.load(Ordering::SeqCst),
        2,
        "the listener follows upstream"
    );
    a.send_update("x://a");
    let note = tokio::time::timeout(BOUND, listening.next())
        .await
        .unwrap()
        .unwrap();
    assert!(format!("{note:?}").contains("x://a"), "{note:?}");
    modern.cancel().await.unwrap();
}

/// Subscription races and leaks, over the same fake upstreams.
#[path = "tests_surface_subs.rs"]
mod subs;
