//! Reaching a remote server: streamable HTTP in the server's era, and legacy SSE behind it.

use std::time::Duration;

use reqwest::header::HeaderMap;
use rmcp::model::ProtocolVersion;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use super::client::ClientSide;
use super::error::{AtUrl, ConnectError};
use super::http::{self, streamable::RemoteClient};
use super::lifecycle::{self, Carrier, Lifecycle, Probe, Service};

use super::reason::Cause;
use super::{auth, sse};
use crate::config::{Protocol, RemoteTransport};

/// Streamable HTTP in the server's era (a discover probe by default), and for a plain `url`
/// legacy SSE when that fails; the reason then says what both attempts met, once if alike.
pub(super) async fn connect_remote(
    url: &str,
    transport: RemoteTransport,
    headers: &HeaderMap,
    protocol: Option<Protocol>,
    handler: &ClientSide,
    timeout: Duration,
    (requests, lost_cause, oauth): (
        &tokio_util::sync::CancellationToken,
        &http::LostCause,
        &Option<std::sync::Arc<auth::ServerAuth>>,
    ),
) -> Result<Service, ConnectError> {
    let streamable = || async {
        let config = StreamableHttpClientTransportConfig::with_uri(url)
            .custom_headers(http::header_hash_map(headers));
        let fresh = |cancel| {
            StreamableHttpClientTransport::with_client(
                RemoteClient::new(cancel, lost_cause.clone(), oauth.clone()),
                config.clone(),
            )
        };
        let lifecycle = match Lifecycle::choose(protocol, Carrier::StreamableHttp) {
            Lifecycle::Auto => {
                let bound = lifecycle::probe_bound(timeout);
                // A probe given up on must not keep its request open.
                let probe = requests.child_token();
                match lifecycle::probe(handler, fresh(probe.clone()), bound, false).await {
                    Probe::Connected(service) => return Ok(service),
                    Probe::Failed(e) => {
                        probe.cancel();
                        return Err(lifecycle::describe(&e, &Lifecycle::Auto));
                    }
                    Probe::TryHandshake => {
                        probe.cancel();
                        Lifecycle::Handshake(ProtocolVersion::LATEST_WITH_INITIALIZE)
                    }
                }
            }
            other => other,
        };
        lifecycle::start(handler, fresh(requests.child_token()), &lifecycle)
            .await
            .map_err(|e| lifecycle::describe(&e, &lifecycle))
    };
    let sse = || async {
        let lifecycle = Lifecycle::choose(protocol, Carrier::LegacySse);
        let transport = sse::SseTransport::connect(http::client(), url, headers.clone()).await?;
        lifecycle::start(handler, transport, &lifecycle)
            .await
            .map_err(|e| lifecycle::describe(&e, &lifecycle))
    };
    let at = |cause: Cause| ConnectError::Remote(AtUrl::one(cause, url));
    match transport {
        RemoteTransport::StreamableHttp => streamable().await.map_err(at),
        RemoteTransport::Sse => sse().await.map_err(at),
        RemoteTransport::Auto => match streamable().await {
            Ok(service) => Ok(service),
            // Pinned to 2026-07-28 there is nothing to fall back to: legacy SSE only shakes hands.
            Err(first) if protocol == Some(Protocol::Discover) => Err(at(first)),
            // A server that asks for authorization is there; legacy SSE would only ask again.
            Err(first) if asks_for_authorization(&first, oauth) => Err(at(first)),
            Err(first) => sse()
                .await
                .map_err(|second| ConnectError::Remote(AtUrl::both(first, second, url))),
        },
    }
}

fn asks_for_authorization(cause: &Cause, oauth: &Option<std::sync::Arc<auth::ServerAuth>>) -> bool {
    matches!(
        cause,
        Cause::Http {
            status: 401 | 403,
            ..
        }
    ) || oauth.as_ref().is_some_and(|auth| auth.failure().is_some())
}
