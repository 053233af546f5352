//! MCP's stdio transport for a [`ToolServer`]: one JSON-RPC message per line each way, through
//! rmcp's server (either era: `initialize`, or `server/discover` and per-request `_meta`).

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::ToolServer;
use rmcp::ServiceExt;

/// Serve `server` over newline-delimited JSON-RPC until `reader` hits EOF, then let the requests
/// still in flight finish (rmcp drains their replies, bounded) and return. A client that closes
/// its input before completing the handshake ends serving quietly.
pub async fn serve_lines<R, W>(server: ToolServer, reader: R, writer: W) -> std::io::Result<()>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let reader = lifted(reader);
    let session = server.for_session();
    let transport = super::task_legacy::Announcing {
        inner: rmcp::transport::async_rw::AsyncRwTransport::new_server(reader, writer),
        server: session.clone(),
    };
    crate::telemetry::start();
    let opened = std::time::Instant::now();
    match super::wire::Wire(session).serve(transport).await {
        Ok(running) => {
            let _ = running.waiting().await;
            crate::telemetry::session_ended(true, opened.elapsed().as_secs_f64(), "pipe");
            // The connection ended: so do its session's tasks.
            server.forget_closed_tasks();
            Ok(())
        }
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => Ok(()),
        Err(e) => Err(std::io::Error::other(e.to_string())),
    }
}

/// The client's lines as rmcp reads them, with a 2025-11-25 `tools/call`'s `params.task` moved
/// where rmcp keeps it (see [`super::task_legacy::lift`]). A line longer than the bound passes
/// through as it is, in pieces.
fn lifted<R: AsyncRead + Send + Unpin + 'static>(reader: R) -> tokio::io::DuplexStream {
    let (inner, mut feed) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let mut reader = tokio::io::BufReader::new(reader);
        let mut line = Vec::new();
        loop {
            line.clear();
            let limit = crate::bounds::SERVE_MAX_BODY as u64;
            match (&mut reader).take(limit).read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let whole = line.ends_with(b"\n");
            if whole
                && line.windows(6).any(|w| w == b"\"task\"")
                && let Ok(mut message) = serde_json::from_slice::<serde_json::Value>(&line)
            {
                super::task_legacy::lift(&mut message);
                if let Ok(mut text) = serde_json::to_vec(&message) {
                    text.push(b'\n');
                    line = text;
                }
            }
            if feed.write_all(&line).await.is_err() {
                break;
            }
        }
    });
    inner
}
