//! MCP's stdio transport: one JSON-RPC message per line in each direction.

use std::sync::Arc;

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::task::JoinSet;

use super::{McpService, PARSE_ERROR, error_reply};

/// Serve `service` over newline-delimited JSON-RPC until `reader` hits EOF, then let the requests
/// still in flight finish and return. Requests run concurrently and replies are written (one line
/// each, flushed) in completion order. A read or write error ends serving and is returned.
pub async fn serve_lines<R, W>(
    service: Arc<McpService>,
    mut reader: R,
    mut writer: W,
) -> std::io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut in_flight: JoinSet<Option<Value>> = JoinSet::new();
    // Kept across loop turns: `read_until` is cancel-safe only if a partial line is not discarded.
    let mut line = Vec::new();
    let mut eof = false;
    loop {
        tokio::select! {
            read = reader.read_until(b'\n', &mut line), if !eof => {
                if read? == 0 {
                    eof = true;
                    continue;
                }
                let message = std::mem::take(&mut line);
                if message.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                match serde_json::from_slice::<Value>(&message) {
                    Ok(message) => {
                        let service = service.clone();
                        in_flight.spawn(async move { service.handle(message).await });
                    }
                    Err(_) => write_line(&mut writer, &error_reply(Value::Null, PARSE_ERROR, "Parse error")).await?,
                }
            }
            Some(done) = in_flight.join_next(), if !in_flight.is_empty() => {
                // `handle` contains tool panics itself; a JoinError here would be our own bug,
                // and the request it belonged to is unknowable, so there is nothing to answer.
                if let Ok(Some(reply)) = done {
                    write_line(&mut writer, &reply).await?;
                }
            }
            else => break,
        }
    }
    writer.flush().await
}

async fn write_line<W: AsyncWrite + Unpin>(writer: &mut W, message: &Value) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec(message).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    writer.write_all(&bytes).await?;
    writer.flush().await
}
