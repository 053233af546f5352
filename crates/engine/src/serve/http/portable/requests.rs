//! The server's requests on a portable session's stream: their ids sealed on the way out, the
//! client's answers taken here or sent on to the replica that asked.

use std::sync::Arc;

use http::HeaderMap;
use rmcp::model::{ClientJsonRpcMessage, RequestId, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::SessionId;

use super::{Answer, CLIENT_HEADERS, FORWARDED_HEADER, FORWARDED_HEADERS, Portable, SealedRequest};
use crate::serve::seal::Purpose;

impl Portable {
    /// A request of the server to the client on `session`'s stream, with its id sealed.
    pub(crate) fn seal_request(
        &self,
        session: &SessionId,
        message: Arc<ServerJsonRpcMessage>,
    ) -> Arc<ServerJsonRpcMessage> {
        let ServerJsonRpcMessage::Request(request) = &*message else {
            return message;
        };
        let sealed = SealedRequest {
            replica: self.replica.clone(),
            session: session.to_string(),
            id: request.id.clone(),
        };
        let mut request = request.clone();
        request.id = RequestId::String(self.key.seal_json(Purpose::RequestId, &sealed).into());
        Arc::new(ServerJsonRpcMessage::Request(request))
    }

    /// Where a client's answer (a response or an error) on `session` goes; any other message
    /// is the worker's as it is.
    pub(crate) fn answer(&self, session: &SessionId, mut message: ClientJsonRpcMessage) -> Answer {
        let id = match &mut message {
            ClientJsonRpcMessage::Response(response) => &mut response.id,
            ClientJsonRpcMessage::Error(error) => match error.id.as_mut() {
                Some(id) => id,
                None => return Answer::Drop,
            },
            _ => return Answer::Here(message),
        };
        let RequestId::String(sealed) = &*id else {
            return Answer::Drop;
        };
        let Some(sealed) = self
            .key
            .open_json::<SealedRequest>(Purpose::RequestId, sealed)
        else {
            return Answer::Drop;
        };
        if sealed.replica != self.replica {
            return Answer::Elsewhere(sealed.replica, message);
        }
        if sealed.session != session.as_ref() {
            return Answer::Drop;
        }
        *id = sealed.id;
        Answer::Here(message)
    }

    /// The client's POST of `message` (its answer, id still sealed) sent on to `replica`, with
    /// the client's headers; not when it was forwarded already. Failures are dropped, as an
    /// answer to an unknown request is.
    pub(crate) async fn forward(&self, replica: &str, message: &ClientJsonRpcMessage) {
        let Ok(headers) = CLIENT_HEADERS.try_with(HeaderMap::clone) else {
            return;
        };
        if headers.contains_key(FORWARDED_HEADER) {
            return;
        }
        let Ok(body) = serde_json::to_vec(message) else {
            return;
        };
        let mut request = self.client.post(format!("{replica}/mcp")).body(body);
        for name in FORWARDED_HEADERS {
            for value in headers.get_all(name) {
                request = request.header(name, value);
            }
        }
        let request = request.header(FORWARDED_HEADER, "1");
        if let Err(e) = request.send().await {
            let _ = e; // dropped, as an answer to an unknown request is
        }
    }
}
