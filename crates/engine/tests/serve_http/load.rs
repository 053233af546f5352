//! Under load: calls run concurrently, half-sent requests never lock a client out, and stop
//! waits for calls in flight, then refuses.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::join_all;
use rmcp::model::CallToolRequestParams;
use serde_json::json;
use tokio::io::AsyncWriteExt;

use super::common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_run_concurrently() {
    let (handle, url, _) = start().await;
    let client = Arc::new(rmcp_client(&url, auto()).await);
    let started = Instant::now();
    let calls = (0..20).map(|_| {
        let client = client.clone();
        async move {
            client
                .call_tool(CallToolRequestParams::new("sleepy"))
                .await
                .unwrap()
        }
    });
    let results = join_all(calls).await;
    let elapsed = started.elapsed();
    for r in &results {
        assert_eq!(
            serde_json::to_value(&r.content).unwrap(),
            text("slept")["content"]
        );
    }
    assert!(
        elapsed < Duration::from_millis(3000),
        "20 × 200 ms calls took {elapsed:?}"
    );
    handle.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_sent_requests_never_lock_a_client_out() {
    let (handle, url, _) = start().await;
    let addr = handle.local_addr();
    // Far more stalled connections than the server keeps: each sends half a request line and
    // stops. The idlest are evicted to make room, so a real client still gets through.
    let mut stalled = Vec::new();
    for _ in 0..300 {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.")
            .await
            .unwrap();
        stalled.push(s);
    }
    let client = rmcp_client(&url, auto()).await;
    let args = json!({"a": 1, "b": 1}).as_object().unwrap().clone();
    let r = client
        .call_tool(CallToolRequestParams::new("add").with_arguments(args))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&r.content).unwrap(),
        text("2")["content"]
    );
    client.cancel().await.unwrap();
    drop(stalled);
    handle.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_waits_for_in_flight_then_refuses() {
    let (handle, url, _) = start().await;
    let addr = handle.local_addr();
    let client = rmcp_client(&url, auto()).await;
    let call = tokio::spawn(async move {
        let r = client.call_tool(CallToolRequestParams::new("sleepy")).await;
        (r, client)
    });
    tokio::time::sleep(Duration::from_millis(80)).await;
    let started = Instant::now();
    handle.stop().await;
    assert!(
        started.elapsed() >= Duration::from_millis(50),
        "stop returned after {:?}",
        started.elapsed()
    );
    // Answered, not cut off.
    let (result, client) = call.await.unwrap();
    assert_eq!(
        serde_json::to_value(&result.unwrap().content).unwrap(),
        text("slept")["content"]
    );
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
    handle.stop().await; // idempotent
    drop(client);
}
