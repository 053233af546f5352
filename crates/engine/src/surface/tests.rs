use rmcp::model::CacheScope;
use serde_json::{Map, Value, json};

use super::uri_template::{expand, matches, variables};
use super::*;

fn map(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap()
}

#[test]
fn hints_read_leniently_and_merge_as_rmcp_does() {
    let h = Hints::of(&json!({"ttlMs": 5000, "cacheScope": "public"}));
    assert_eq!(
        h,
        Hints {
            ttl_ms: Some(5000),
            scope: Some(CacheScope::Public)
        }
    );
    assert_eq!(Hints::of(&json!({"ttlMs": -3})).ttl_ms, Some(0));
    assert_eq!(Hints::of(&json!({"cacheScope": "nope"})).scope, None);
    assert_eq!(Hints::of(&json!({})), Hints::default());
    let private = Hints {
        ttl_ms: Some(100),
        scope: Some(CacheScope::Private),
    };
    assert_eq!(
        h.merge(private),
        Hints {
            ttl_ms: Some(100),
            scope: Some(CacheScope::Private)
        }
    );
    // One page without hints makes the whole listing hintless, but private still wins.
    assert_eq!(h.merge(Hints::default()), Hints::default());
    assert_eq!(
        Hints::default().merge(private).scope,
        Some(CacheScope::Private)
    );
    assert_eq!(
        Hints::default().served(Hints::default()),
        (0, CacheScope::Private)
    );
    assert_eq!(h.served(Hints::default()), (5000, CacheScope::Public));
    let configured = Hints {
        ttl_ms: Some(7),
        scope: None,
    };
    assert_eq!(h.served(configured), (7, CacheScope::Public));
}

#[test]
fn a_listing_expires_after_its_ttl_only() {
    let mut listed = Listed::new(vec![], Hints::default());
    assert!(!listed.expired());
    listed.hints.ttl_ms = Some(0);
    assert!(listed.expired());
    listed.hints.ttl_ms = Some(60_000);
    assert!(!listed.expired());
    assert!(!Listed::default().expired());
    // Equality ignores when it was listed.
    assert_eq!(
        Listed::new(vec![], Hints::default()),
        Listed::new(vec![], Hints::default())
    );
}

#[test]
fn completion_is_cut_at_100_values() {
    let values: Vec<String> = (0..101).map(|i| i.to_string()).collect();
    let info = completion(values, None, None);
    assert_eq!(info.values.len(), 100);
    assert_eq!(info.values[99], "99");
    assert_eq!(info.total, Some(101));
    assert_eq!(info.has_more, Some(true));
    let info = completion(vec!["a".into()], Some(3), Some(true));
    assert_eq!(
        serde_json::to_value(&info).unwrap(),
        json!({"values": ["a"], "total": 3, "hasMore": true})
    );
    assert_eq!(
        serde_json::to_value(completion(vec![], None, None)).unwrap(),
        json!({"values": []})
    );
}

#[test]
fn surface_errors_keep_the_servers_code_and_data() {
    let e = SurfaceError {
        code: Some(-32002),
        message: "Resource not found".into(),
        data: Some(json!({"uri": "x://y"})),
    };
    assert_eq!(
        e.to_json(),
        json!({"code": -32002, "message": "Resource not found", "data": {"uri": "x://y"}})
    );
    assert_eq!(e.to_error_data().code.0, -32002);
    let ours = SurfaceError::words("not yet");
    assert_eq!(ours.to_json(), json!({"message": "not yet"}));
    assert_eq!(ours.to_error_data().code.0, -32603);
    assert_eq!(SurfaceError::invalid_params("x").code, Some(-32602));
}

#[test]
fn results_parse_and_name_the_bad_field() {
    let read = read_result(json!({"contents": [{"uri": "a://b", "text": "hi"}]})).unwrap();
    assert_eq!(read.contents.len(), 1);
    let err = read_result(json!({"contents": 5})).unwrap_err();
    assert!(err.starts_with("invalid resource read result: "), "{err}");
    let prompt = prompt_result(json!({"messages": [
        {"role": "user", "content": {"type": "text", "text": "hi"}}
    ]}))
    .unwrap();
    assert_eq!(prompt.messages.len(), 1);
    let err = prompt_result(json!({})).unwrap_err();
    assert!(err.contains("messages"), "{err}");
}

#[test]
fn kinds_name_their_methods_keys_and_ids() {
    let methods: Vec<_> = Kind::ALL.iter().map(|k| k.method()).collect();
    assert_eq!(
        methods,
        [
            "resources/list",
            "resources/templates/list",
            "prompts/list",
            "skills/list"
        ]
    );
    let keys: Vec<_> = Kind::ALL.iter().map(|k| k.key()).collect();
    assert_eq!(
        keys,
        ["resources", "resourceTemplates", "prompts", "skills"]
    );
    let ids: Vec<_> = Kind::ALL.iter().map(|k| k.id_field()).collect();
    assert_eq!(ids, ["uri", "uriTemplate", "name", "uri"]);
    let caps: rmcp::model::ServerCapabilities =
        serde_json::from_value(json!({"prompts": {}})).unwrap();
    assert!(Kind::Prompts.declared(&caps));
    assert!(!Kind::Resources.declared(&caps));
    assert!(!Kind::ResourceTemplates.declared(&caps));
    // Skills need the extension, and resources beside it.
    let skills =
        |caps: serde_json::Value| Kind::Skills.declared(&serde_json::from_value(caps).unwrap());
    let ext = json!({"io.modelcontextprotocol/skills": {}});
    assert!(skills(json!({"resources": {}, "extensions": ext})));
    assert!(!skills(json!({"extensions": ext})));
    assert!(!skills(json!({"resources": {}})));
}

#[test]
fn templates_expand_at_levels_one_to_three() {
    let vars = map(json!({
        "var": "value", "hello": "Hello World!", "path": "/foo/bar", "x": 1024, "y": 768,
        "empty": "", "list": ["red", "green"]
    }));
    let cases = [
        ("{var}", "value"),
        ("{hello}", "Hello%20World%21"),
        ("{+hello}", "Hello%20World!"),
        ("{+path}/here", "/foo/bar/here"),
        ("{#path}", "#/foo/bar"),
        ("map?{x,y}", "map?1024,768"),
        ("{x,hello,y}", "1024,Hello%20World%21,768"),
        ("X{.var}", "X.value"),
        ("X{.x,y}", "X.1024.768"),
        ("{/var}", "/value"),
        ("{/var,x}/here", "/value/1024/here"),
        ("{;x,y}", ";x=1024;y=768"),
        ("{;x,y,empty}", ";x=1024;y=768;empty"),
        ("{?x,y}", "?x=1024&y=768"),
        ("{?x,y,empty}", "?x=1024&y=768&empty="),
        ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
        ("{var:3}", "val"),
        ("{undef}", ""),
        ("{?undef}", ""),
        ("{list}", "red,green"),
        ("{?list}", "?list=red,green"),
        ("test://template/{id}/data", "test://template//data"),
    ];
    for (template, want) in cases {
        assert_eq!(expand(template, &vars), want, "{template}");
    }
    let id = map(json!({"id": 123}));
    assert_eq!(
        expand("test://template/{id}/data", &id),
        "test://template/123/data"
    );
    assert_eq!(
        expand(
            "demo://resource/dynamic/text/{resourceId}",
            &map(json!({"resourceId": "5"}))
        ),
        "demo://resource/dynamic/text/5"
    );
}

#[test]
fn templates_match_back_to_their_values() {
    let got = |t: &str, u: &str| matches(t, u).map(Value::Object);
    assert_eq!(
        got("test://template/{id}/data", "test://template/123/data"),
        Some(json!({"id": "123"}))
    );
    assert_eq!(
        got(
            "demo://resource/dynamic/text/{resourceId}",
            "demo://resource/dynamic/text/7"
        ),
        Some(json!({"resourceId": "7"}))
    );
    assert_eq!(
        got(
            "demo://resource/dynamic/blob/{resourceId}",
            "demo://resource/dynamic/text/7"
        ),
        None
    );
    // A simple variable does not cross `/`; a reserved one does.
    assert_eq!(got("file:///{name}", "file:///a/b"), None);
    assert_eq!(
        got("file:///{+path}", "file:///a/b%20c"),
        Some(json!({"path": "a/b c"}))
    );
    assert_eq!(
        got("x://{a}/{b}", "x://one/two"),
        Some(json!({"a": "one", "b": "two"}))
    );
    assert_eq!(
        got("x://{a},{b}", "x://one,two"),
        Some(json!({"a": "one", "b": "two"}))
    );
    assert_eq!(
        got("x://h{/a,b}", "x://h/one/two"),
        Some(json!({"a": "one", "b": "two"}))
    );
    assert_eq!(
        got("x://h/report{.ext}", "x://h/report.pdf"),
        Some(json!({"ext": "pdf"}))
    );
    assert_eq!(
        got("x://s{?q,page}", "x://s?page=2&q=a%20b"),
        Some(json!({"page": "2", "q": "a b"}))
    );
    assert_eq!(got("x://s{?q,page}", "x://s"), Some(json!({})));
    assert_eq!(got("x://s{?q}", "x://s?other=1"), None);
    assert_eq!(
        got("x://s?a=1{&b}", "x://s?a=1&b=2"),
        Some(json!({"b": "2"}))
    );
    assert_eq!(
        got("x://doc{#section}", "x://doc#a/b"),
        Some(json!({"section": "a/b"}))
    );
    assert_eq!(got("x://doc{#section}", "x://doc"), Some(json!({})));
    assert_eq!(got("x://{a}", "y://b"), None);
    // Round trips.
    for (t, v) in [
        ("x://{a}/{+b}", json!({"a": "one two", "b": "p/q"})),
        ("x://h{/a}{?b,c}", json!({"a": "1", "b": "x&y", "c": "3"})),
    ] {
        let uri = expand(t, v.as_object().unwrap());
        assert_eq!(got(t, &uri), Some(v), "{t} {uri}");
    }
}

#[test]
fn template_variables_in_order_once_each() {
    assert_eq!(variables("x://{a}/{+b}{?c,a}"), ["a", "b", "c"]);
    assert_eq!(variables("x://{var:3}{list*}"), ["var", "list"]);
    assert!(variables("plain://uri").is_empty());
    // An unclosed brace is literal text.
    assert_eq!(expand("x://{a", &Map::new()), "x://{a");
    assert_eq!(matches("x://{a", "x://{a"), Some(Map::new()));
}

/// A front client sends the URI: a hostile one against a many-variable template stops at the
/// match budget (unmatched) instead of backtracking for minutes, and a legitimate one still
/// matches.
#[test]
fn hostile_uris_match_in_bounded_time() {
    let started = std::time::Instant::now();
    let dots = format!("x://{}", "a.".repeat(500));
    assert_eq!(matches("x://{a}.{b}.{c}/z", &dots), None);
    let slashes = format!("t://{}", "a/".repeat(100));
    assert_eq!(matches("t://{+a}/{+b}/{+c}/{+d}/z", &slashes), None);
    assert_eq!(
        matches("x://{a}", &format!("x://{}", "a".repeat(9000))),
        None
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(
        matches("x://{a}.{b}.{c}/z", "x://one.two.three/z").map(Value::Object),
        Some(json!({"a": "one", "b": "two", "c": "three"}))
    );
    assert_eq!(
        matches("t://{+a}/{+b}/z", "t://p/q/r/z").map(Value::Object),
        Some(json!({"a": "p/q", "b": "r"}))
    );
}
