//! Direct requests over in-memory pipes: the wire request, routing of answers past rmcp,
//! progress, timeouts, aborts and the end of the connection.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::ServerJsonRpcMessage;
use rmcp::transport::Transport;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};

use super::*;
use crate::connect::stdio::framing::{LineTransport, StdoutReport};

struct Wire {
    transport: LineTransport<DuplexStream>,
    /// The server's stdout.
    server_out: DuplexStream,
    /// The server's stdin, as lines.
    server_in: BufReader<DuplexStream>,
    report: Arc<StdoutReport>,
}

fn wire() -> Wire {
    let (ours, server_out) = tokio::io::duplex(1024 * 1024);
    let (stdin, server_in) = tokio::io::duplex(1024 * 1024);
    let report = Arc::new(StdoutReport::default());
    Wire {
        transport: LineTransport::new(ours, stdin, report.clone()),
        server_out,
        server_in: BufReader::new(server_in),
        report,
    }
}

impl Wire {
    async fn server_reads(&mut self) -> Value {
        let mut line = String::new();
        self.server_in.read_line(&mut line).await.unwrap();
        serde_json::from_str(&line).unwrap()
    }

    async fn server_writes(&mut self, line: &str) {
        self.server_out
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
    }
}

type Answer = (u64, Result<String, Failure>);

/// Where the settled requests go.
struct Answers {
    sender: tokio::sync::mpsc::UnboundedSender<Answer>,
    receiver: tokio::sync::Mutex<tokio::sync::mpsc::UnboundedReceiver<Answer>>,
}

impl Default for Answers {
    fn default() -> Self {
        let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
        Self {
            sender,
            receiver: tokio::sync::Mutex::new(receiver),
        }
    }
}

/// Sends `tools/call` directly; its answer lands in `answers`.
fn call(direct: &Direct, answers: &Answers, timeout: Duration) -> u64 {
    let id = direct.new_id();
    let answers = answers.sender.clone();
    let mut params = Map::new();
    params.insert("name".into(), json!("echo"));
    params.insert("arguments".into(), json!({"text": "hi"}));
    direct.send(
        id,
        "tools/call",
        params,
        timeout,
        Box::new(move |answer| {
            let answer = answer.map(|raw| raw.get().to_string());
            answers.send((id, answer)).unwrap();
        }),
    );
    id
}

/// What has settled so far.
fn taken(answers: &Answers) -> Vec<Answer> {
    let mut receiver = answers.receiver.try_lock().unwrap();
    std::iter::from_fn(|| receiver.try_recv().ok()).collect()
}

/// The next request to settle (bounded, so a bug fails instead of hanging).
async fn next(answers: &Answers) -> Answer {
    let mut receiver = answers.receiver.lock().await;
    tokio::time::timeout(Duration::from_secs(10), receiver.recv())
        .await
        .expect("settled within the hang bound")
        .unwrap()
}

const LONG: Duration = Duration::from_secs(60);

#[tokio::test]
async fn the_request_is_what_rmcp_sends_and_its_answer_never_reaches_rmcp() {
    let mut wire = wire();
    let direct = wire.transport.direct();
    let answers = Answers::default();
    let id = call(&direct, &answers, LONG);
    assert_eq!(id, FIRST_ID);
    assert_eq!(
        wire.server_reads().await,
        json!({"jsonrpc": "2.0", "id": FIRST_ID, "method": "tools/call", "params": {
            "name": "echo", "arguments": {"text": "hi"}, "_meta": {"progressToken": FIRST_ID}}})
    );
    let answer = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"hi"}}]}}}}"#
    );
    wire.server_writes(&answer).await;
    // What rmcp gets next is the notification after the answer.
    wire.server_writes(r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#)
        .await;
    let message = wire.transport.receive().await.unwrap();
    assert!(matches!(message, ServerJsonRpcMessage::Notification(_)));
    assert_eq!(
        taken(&answers),
        vec![(
            id,
            Ok(r#"{"content":[{"type":"text","text":"hi"}]}"#.to_string())
        )]
    );
}

#[tokio::test]
async fn errors_string_ids_and_late_answers() {
    let mut wire = wire();
    let direct = wire.transport.direct();
    let answers = Answers::default();
    let first = call(&direct, &answers, LONG);
    let second = call(&direct, &answers, LONG);
    wire.server_writes(&format!(
        r#"{{"jsonrpc":"2.0","id":{second},"error":{{"code":-32602,"message":"Unknown tool: echo"}}}}"#
    ))
    .await;
    // A numeric string id, as some servers echo it.
    wire.server_writes(&format!(
        r#"{{"jsonrpc":"2.0","id":"{first}","result":{{}}}}"#
    ))
    .await;
    // An answer to a request no longer pending is dropped.
    wire.server_writes(&format!(
        r#"{{"jsonrpc":"2.0","id":{first},"result":{{}}}}"#
    ))
    .await;
    wire.server_writes(r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#)
        .await;
    assert!(wire.transport.receive().await.is_some());
    assert_eq!(
        taken(&answers),
        vec![
            (
                second,
                Err(Failure::JsonRpc {
                    code: -32602,
                    message: "Unknown tool: echo".into()
                })
            ),
            (first, Ok("{}".into())),
        ]
    );
    assert_eq!(wire.report.noise(), "");
}

#[tokio::test]
async fn a_bad_answer_to_a_direct_request_breaks_the_framing() {
    let mut wire = wire();
    let direct = wire.transport.direct();
    let answers = Answers::default();
    let id = call(&direct, &answers, LONG);
    wire.server_writes(&format!(r#"{{"jsonrpc":"2.0","id":{id},"result":5}}"#))
        .await;
    assert!(wire.transport.receive().await.is_none());
    assert_eq!(
        wire.report.violation(),
        Some(format!(
            "sent an invalid message: the answer to request {id} is not a valid JSON-RPC \
             response (its \"result\" is not an object): {{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":5}}"
        ))
    );
    assert_eq!(taken(&answers), vec![(id, Err(Failure::Closed))]);
    // And later requests fail at once.
    let late = call(&direct, &answers, LONG);
    assert_eq!(taken(&answers), vec![(late, Err(Failure::Closed))]);
}

#[tokio::test]
async fn the_end_of_stdout_fails_every_pending_request() {
    let mut wire = wire();
    let direct = wire.transport.direct();
    let answers = Answers::default();
    let ids: Vec<u64> = (0..3).map(|_| call(&direct, &answers, LONG)).collect();
    drop(wire.server_out);
    assert!(wire.transport.receive().await.is_none());
    let mut failed = taken(&answers);
    failed.sort_by_key(|(id, _)| *id);
    assert_eq!(
        failed,
        ids.iter()
            .map(|id| (*id, Err(Failure::Closed)))
            .collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn progress_restarts_the_timeout_and_still_reaches_rmcp() {
    let mut wire = wire();
    let direct = wire.transport.direct();
    let answers = Answers::default();
    let timeout = Duration::from_millis(1000);
    let started = std::time::Instant::now();
    let id = call(&direct, &answers, timeout);
    let _request = wire.server_reads().await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    wire.server_writes(&format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{id},"progress":1}}}}"#
    ))
    .await;
    let message = wire.transport.receive().await.unwrap();
    assert!(matches!(message, ServerJsonRpcMessage::Notification(_)));
    assert_eq!(next(&answers).await, (id, Err(Failure::TimedOut(timeout))));
    assert!(
        started.elapsed() >= Duration::from_millis(1600),
        "the timeout ran again from the progress notification"
    );
    assert_eq!(
        wire.server_reads().await,
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": "request timeout"}})
    );
}

#[tokio::test]
async fn an_earlier_deadline_wakes_the_watchdog() {
    let wire = wire();
    let direct = wire.transport.direct();
    let answers = Answers::default();
    let slow = call(&direct, &answers, Duration::from_secs(3600));
    // Let the watchdog settle into sleeping until the slow deadline.
    tokio::task::yield_now().await;
    let fast = call(&direct, &answers, Duration::from_millis(100));
    assert_eq!(
        next(&answers).await,
        (fast, Err(Failure::TimedOut(Duration::from_millis(100))))
    );
    assert_eq!(taken(&answers), vec![]);
    direct.close_all();
    assert_eq!(next(&answers).await, (slow, Err(Failure::Closed)));
}

#[tokio::test]
async fn abort_writes_cancelled_and_settles_once() {
    let mut wire = wire();
    let direct = wire.transport.direct();
    let answers = Answers::default();
    let id = call(&direct, &answers, LONG);
    let _request = wire.server_reads().await;
    assert!(direct.abort(id, "aborted by the caller"));
    assert!(!direct.abort(id, "aborted by the caller"));
    assert_eq!(taken(&answers), vec![(id, Err(Failure::Aborted))]);
    assert_eq!(
        wire.server_reads().await,
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": "aborted by the caller"}})
    );
}

#[tokio::test]
async fn request_awaits_the_raw_result() {
    let mut wire = wire();
    let direct = wire.transport.direct();
    let asking = tokio::spawn({
        let direct = direct.clone();
        async move { direct.request("tools/list", Map::new(), LONG).await }
    });
    let request = wire.server_reads().await;
    assert_eq!(request["method"], "tools/list");
    let id = request["id"].as_u64().unwrap();
    wire.server_writes(&format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[]}}}}"#
    ))
    .await;
    wire.server_writes(r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#)
        .await;
    assert!(wire.transport.receive().await.is_some());
    assert_eq!(asking.await.unwrap().unwrap().get(), r#"{"tools":[]}"#);
}
