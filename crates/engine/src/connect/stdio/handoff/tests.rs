//! Handing stdout away over a real pipe: the bytes the transport had buffered (a whole line and
//! half of one) reach the new reader (the thread reader of `read_on_thread`), answers to direct requests settle in its feed, other
//! lines reach rmcp's `receive`, and a transport that ended gives nothing.

use std::time::Duration;

use rmcp::model::ServerJsonRpcMessage;
use rmcp::transport::Transport;
use serde_json::Map;
use tokio::io::AsyncWriteExt;
use tokio::net::unix::pipe;

use super::*;
use crate::connect::stdio::framing::LineTransport;

const BOUND: Duration = Duration::from_secs(10);
const PING: &str = r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;

fn transport() -> (LineTransport<pipe::Receiver>, pipe::Sender) {
    let (server_out, ours) = pipe::pipe().unwrap();
    let (stdin, _server_in) = tokio::io::duplex(1024);
    let report = Arc::new(StdoutReport::default());
    let transport =
        LineTransport::new(ours, stdin, report).handing_off(pipe::Receiver::into_nonblocking_fd);
    (transport, server_out)
}

/// The shipped thread reader ([`read_blocking`]) on a thread of its own.
fn read_all(taken: Taken) -> std::thread::JoinHandle<Flow> {
    let runtime = tokio::runtime::Handle::current();
    std::thread::spawn(move || read_blocking(&runtime, taken))
}

#[tokio::test]
async fn bytes_buffered_at_the_handoff_reach_the_new_reader() {
    let (mut transport, mut server_out) = transport();
    let direct = transport.direct();
    let handoff = transport.handoff();
    let (answered, answer) = tokio::sync::oneshot::channel();
    let id = direct.new_id();
    direct.send(
        id,
        "tools/call",
        Map::new(),
        BOUND,
        Box::new(move |a| {
            let _ = answered.send(a.map(|raw| raw.get().to_string()));
        }),
    );
    // One write: a whole line, then half of the next.
    let (head, tail) = PING.split_at(20);
    server_out
        .write_all(format!("{PING}\n{PING}\n{head}").as_bytes())
        .await
        .unwrap();
    let first = tokio::time::timeout(BOUND, transport.receive())
        .await
        .unwrap();
    assert!(matches!(first, Some(ServerJsonRpcMessage::Notification(_))));
    // rmcp's loop goes on receiving while stdout is asked for.
    let (messages, mut received) = tokio::sync::mpsc::unbounded_channel();
    let receiving = tokio::spawn(async move {
        while let Some(message) = transport.receive().await {
            let _ = messages.send(message);
        }
    });
    let taken = tokio::time::timeout(BOUND, handoff.take())
        .await
        .unwrap()
        .expect("stdout given");
    // The reader Bun and Deno get: a thread of its own, blocking reads.
    read_on_thread(taken);
    let answer_line = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[]}}}}"#);
    server_out
        .write_all(format!("{tail}\n{answer_line}\n").as_bytes())
        .await
        .unwrap();
    // The second whole line (buffered) and the one completed after the hand-off: both to rmcp.
    for _ in 0..2 {
        let message = tokio::time::timeout(BOUND, received.recv()).await.unwrap();
        assert!(
            matches!(message, Some(ServerJsonRpcMessage::Notification(_))),
            "{message:?}"
        );
    }
    let answer = tokio::time::timeout(BOUND, answer).await.unwrap().unwrap();
    assert_eq!(answer, Ok(r#"{"content":[]}"#.to_string()));
    // End of file: the reader's thread ends (dropping the feed), rmcp sees the end, and stdout
    // can no longer be asked for.
    drop(server_out);
    tokio::time::timeout(BOUND, receiving)
        .await
        .unwrap()
        .unwrap();
    assert!(handoff.take().await.is_none());
}

// The writer runs while the test waits for the reader thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_over_the_bound_after_the_handoff_stops_the_reader_and_ends_rmcp() {
    let (mut transport, mut server_out) = transport();
    let handoff = transport.handoff();
    let receiving = tokio::spawn(async move { transport.receive().await.is_none() });
    let taken = tokio::time::timeout(BOUND, handoff.take())
        .await
        .unwrap()
        .unwrap();
    let report = taken.feed.report.clone();
    let reader = read_all(taken);
    let writing = tokio::spawn(async move {
        let chunk = vec![b'x'; 1024 * 1024];
        for _ in 0..17 {
            if server_out.write_all(&chunk).await.is_err() {
                break;
            }
        }
    });
    assert_eq!(reader.join().unwrap(), Flow::Stop);
    assert!(
        tokio::time::timeout(BOUND, receiving)
            .await
            .unwrap()
            .unwrap()
    );
    assert_eq!(
        report.violation().as_deref(),
        Some("sent an invalid message: a line over 16 MiB long")
    );
    writing.abort();
}
