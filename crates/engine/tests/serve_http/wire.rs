//! The wire rules: sessions enforced, stateless mode, Host/Origin checks and paths, and what a
//! non-loopback bind must say (its hosts, its auth).

use rmcp::service::ClientLifecycleMode;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolnexus_engine::serve::http::{ServeOptions, serve_http};
use toolnexus_engine::serve::{ServerIdentity, ToolServer};

use super::common::*;

#[tokio::test]
async fn sessions_are_enforced() {
    let (handle, url, _) = start().await;
    let init = post(&url, &initialize(), &[]).await;
    assert_eq!(init.status, 200);
    let session = init.session.expect("initialize hands out a session id");
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let with = |id: &str| {
        [
            ("mcp-session-id", id.to_string()),
            ("mcp-protocol-version", "2025-11-25".into()),
        ]
    };
    let ok = with(&session);
    let ok: Vec<(&str, &str)> = ok.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let r = post(
        &url,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        &ok,
    )
    .await;
    assert_eq!(r.status, 202);
    let r = post(&url, &list, &ok).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.message["result"]["tools"][0]["name"], "add");

    // An id we never issued is 404.
    let forged = with("00000000-0000-4000-8000-000000000000");
    let forged: Vec<(&str, &str)> = forged.iter().map(|(k, v)| (*k, v.as_str())).collect();
    assert_eq!(post(&url, &list, &forged).await.status, 404);
    // A handshake-era request with no session at all is refused.
    let bare = post(&url, &list, &[("mcp-protocol-version", "2025-11-25")]).await;
    assert_eq!(bare.status, 400, "{}", bare.text);

    // One that ended (DELETE) is 404 from then on.
    let deleted = client()
        .delete(&url)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert!(deleted.status().is_success(), "{}", deleted.status());
    assert_eq!(post(&url, &list, &ok).await.status, 404);
    handle.stop().await;
}

#[tokio::test]
async fn stateless_mode_serves_the_handshake_era_without_sessions() {
    let (handle, url, records) = start_with(ServeOptions {
        stateless: true,
        ..Default::default()
    })
    .await;
    let init = post(&url, &initialize(), &[]).await;
    assert_eq!(init.status, 200, "{}", init.text);
    assert_eq!(init.session, None, "stateless: no session id");
    assert_eq!(init.message["result"]["protocolVersion"], "2025-11-25");
    // Any request stands alone, as if it reached another replica.
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 40, "b": 2}}});
    let r = post(&url, &call, &[("mcp-protocol-version", "2025-11-25")]).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.message["result"]["content"], text("42")["content"]);
    // And rmcp's own clients of both eras work unchanged.
    let legacy = rmcp_client(&url, ClientLifecycleMode::Initialize).await;
    let modern = rmcp_client(&url, auto()).await;
    for client in [&legacy, &modern] {
        let tools = client.list_all_tools().await.unwrap();
        assert_eq!(tools.len(), 3);
    }
    assert_eq!(records.lock().unwrap().len(), 1);
    legacy.cancel().await.unwrap();
    modern.cancel().await.unwrap();
    handle.stop().await;
}

/// Sends `head` (and `body`) on a fresh connection and returns the HTTP status.
async fn raw_status(addr: std::net::SocketAddr, host: &str, extra: &str) -> u16 {
    let body = initialize().to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\n{extra}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    response[9..12].parse().unwrap()
}

#[tokio::test]
async fn dns_rebinding_protection_and_paths() {
    let (handle, url, _) = start().await;
    let addr = handle.local_addr();
    let port = addr.port();
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
    ] {
        assert_eq!(raw_status(addr, &host, "").await, 200, "{host}");
    }
    assert_eq!(
        raw_status(addr, &format!("evil.example:{port}"), "").await,
        403
    );
    assert_eq!(raw_status(addr, "evil.example", "").await, 403);
    let local = format!("127.0.0.1:{port}");
    let origin = format!("Origin: http://localhost:{port}\r\n");
    assert_eq!(raw_status(addr, &local, &origin).await, 200);
    assert_eq!(
        raw_status(addr, &local, "Origin: http://evil.example\r\n").await,
        403
    );
    assert_eq!(raw_status(addr, &local, "Origin: null\r\n").await, 403);
    for path in ["/", "/other", "/mcp/extra"] {
        let url = format!("{}{path}", handle.url());
        assert_eq!(post(&url, &initialize(), &[]).await.status, 404, "{path}");
    }
    let parse = client()
        .post(&url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body("{\"jsonrpc\": ")
        .send()
        .await
        .unwrap();
    assert_eq!(parse.status().as_u16(), 400);
    let body: Value = parse.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32700);
    handle.stop().await;
}

#[tokio::test]
async fn a_non_loopback_bind_must_name_its_hosts() {
    // Binding every interface is not allowed in tests; the rule is checked before any bind.
    let options = ServeOptions {
        auth: toolnexus_engine::serve::http::Auth::Open,
        ..ServeOptions::default()
    };
    let err = match serve_http(
        "0.0.0.0:0",
        ToolServer::new(ServerIdentity::default(), vec![], None),
        options,
    )
    .await
    {
        Ok(_) => panic!("served a non-loopback bind without allowedHosts"),
        Err(e) => e,
    };
    assert!(err.contains("needs allowedHosts"), "{err}");
}

#[tokio::test]
async fn a_non_loopback_bind_needs_auth_or_says_none() {
    let options = ServeOptions {
        allowed_hosts: Some(vec!["*".into()]),
        ..ServeOptions::default()
    };
    let err = match serve_http(
        "0.0.0.0:0",
        ToolServer::new(ServerIdentity::default(), vec![], None),
        options,
    )
    .await
    {
        Ok(_) => panic!("served a non-loopback bind without auth"),
        Err(e) => e,
    };
    assert!(err.starts_with("serving on 0.0.0.0:"), "{err}");
    assert!(
        err.ends_with(
            "(not a loopback address) needs auth: { tokens } or { oauth }, or auth: \"none\" to \
             let anyone who can reach it use every tool (--no-auth on the CLI)"
        ),
        "{err}"
    );
}
