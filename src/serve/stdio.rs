//! MCP's stdio transport for a [`ToolServer`]: one JSON-RPC message per line each way, through
//! rmcp's server (either era: `initialize`, or `server/discover` and per-request `_meta`).

use tokio::io::{AsyncRead, AsyncWrite};

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
    match super::wire::Wire(server.for_session())
        .serve((reader, writer))
        .await
    {
        Ok(running) => {
            let _ = running.waiting().await;
            Ok(())
        }
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => Ok(()),
        Err(e) => Err(std::io::Error::other(e.to_string())),
    }
}
