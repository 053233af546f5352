//! The framing rules, over an in-memory pipe.

use super::*;
use crate::connect::stdio::screen::MAX_LINE_BYTES;
use tokio::io::AsyncWriteExt;

fn transport() -> (
    LineTransport<tokio::io::DuplexStream>,
    tokio::io::DuplexStream,
    Arc<StdoutReport>,
) {
    let (ours, theirs) = tokio::io::duplex(1024 * 1024);
    let report = Arc::new(StdoutReport::default());
    let transport = LineTransport::new(ours, tokio::io::sink(), report.clone());
    (transport, theirs, report)
}

fn pending(transport: &LineTransport<tokio::io::DuplexStream>, id: i64) {
    transport
        .lock_pending()
        .insert(RequestId::Number(id), false);
}

#[tokio::test]
async fn stray_lines_are_dropped_and_quoted_messages_come_through() {
    let (mut transport, mut server, report) = transport();
    server
        .write_all(
            b"Welcome to the \"server\"\n\n{\"level\":\"info\"}\n\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\r\n",
        )
        .await
        .unwrap();
    let message = transport.receive().await.expect("a notification");
    assert!(matches!(message, ServerJsonRpcMessage::Notification(_)));
    assert_eq!(
        report.noise(),
        r#""Welcome to the \"server\"" "{\"level\":\"info\"}""#
    );
    assert_eq!(report.violation(), None);
}

#[tokio::test]
async fn a_line_over_the_bound_fails_before_its_end_arrives() {
    let (mut transport, mut server, report) = transport();
    let writer = tokio::spawn(async move {
        let chunk = vec![b'x'; 1024 * 1024];
        for _ in 0..20 {
            if server.write_all(&chunk).await.is_err() {
                break;
            }
        }
        server
    });
    assert!(transport.receive().await.is_none());
    assert_eq!(
        report.violation().as_deref(),
        Some("sent an invalid message: a line over 16 MiB long")
    );
    assert!(transport.line.len() <= MAX_LINE_BYTES);
    drop(transport);
    let _ = writer.await;
}

#[tokio::test]
async fn invalid_utf8_fails() {
    let (mut transport, mut server, report) = transport();
    server.write_all(b"ok so far \xFF\xFE\n").await.unwrap();
    assert!(transport.receive().await.is_none());
    assert_eq!(
        report.violation().as_deref(),
        Some("sent an invalid message: a line that is not valid UTF-8 (byte 0xFF at offset 10)")
    );
}

#[tokio::test]
async fn an_answer_that_is_not_json_rpc_fails_but_unrelated_json_does_not() {
    let (mut transport, mut server, report) = transport();
    pending(&transport, 7);
    server
        .write_all(b"{\"id\":8,\"result\":{}}\n{\"id\":7,\"result\":{}}\n")
        .await
        .unwrap();
    assert!(transport.receive().await.is_none());
    assert_eq!(
        report.violation().as_deref(),
        Some(
            "sent an invalid message: the answer to request 7 is not a valid JSON-RPC \
             response (it lacks \"jsonrpc\": \"2.0\"): {\"id\":7,\"result\":{}}"
        )
    );
    assert_eq!(report.noise(), r#""{\"id\":8,\"result\":{}}""#);
}

#[tokio::test]
async fn an_error_answer_of_the_wrong_shape_fails() {
    let (mut transport, mut server, report) = transport();
    pending(&transport, 0);
    server
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":0,\"error\":\"nope\"}\n")
        .await
        .unwrap();
    assert!(transport.receive().await.is_none());
    assert!(
        report
            .violation()
            .unwrap()
            .contains("its \"error\" is not an object with a numeric \"code\"")
    );
}

#[tokio::test]
async fn a_valid_answer_settles_its_request() {
    let (mut transport, mut server, report) = transport();
    pending(&transport, 3);
    server
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n{\"id\":3,\"x\":1}\n")
        .await
        .unwrap();
    assert!(matches!(
        transport.receive().await,
        Some(ServerJsonRpcMessage::Response(_))
    ));
    drop(server);
    // The second line names an id no longer pending: stray, not a violation.
    assert!(transport.receive().await.is_none());
    assert_eq!(report.violation(), None);
    assert_eq!(report.noise(), r#""{\"id\":3,\"x\":1}""#);
}

#[tokio::test]
async fn a_message_nested_past_any_reader_fails_at_once() {
    let (mut transport, mut server, report) = transport();
    let deep = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}{}}}\n",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    server.write_all(deep.as_bytes()).await.unwrap();
    assert!(transport.receive().await.is_none());
    let violation = report.violation().unwrap();
    assert!(
        violation.starts_with(
            "sent an invalid message: a message nested too deeply to read (more than 127 levels): "
        ),
        "{violation}"
    );
    assert!(
        violation.len() < 600,
        "quoted bounded: {} chars",
        violation.len()
    );
}
