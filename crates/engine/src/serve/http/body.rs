//! A request body that must keep arriving: one that sends nothing for
//! [`SERVE_BODY_STALL_TIMEOUT`] is cut off, so a half-sent request cannot hold its connection.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};

use crate::bounds::SERVE_BODY_STALL_TIMEOUT as BODY_STALL_TIMEOUT;

/// Why a request body was not read to its end.
#[derive(Debug)]
pub(crate) enum BodyError {
    Connection(hyper::Error),
    Stalled,
}

impl std::fmt::Display for BodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BodyError::Connection(e) => write!(f, "request body failed: {e}"),
            BodyError::Stalled => write!(
                f,
                "request body stalled for {} s",
                BODY_STALL_TIMEOUT.as_secs()
            ),
        }
    }
}

impl std::error::Error for BodyError {}

/// A request body that must keep arriving: a client that stops mid-body is cut off.
pub(crate) struct GuardedBody<B> {
    inner: B,
    stall: Pin<Box<tokio::time::Sleep>>,
    /// Where the chunks read are kept for the access log's peek (when it is on).
    tee: Option<super::access_log::Tee>,
}

impl<B> GuardedBody<B> {
    pub(crate) fn new(inner: B, tee: Option<super::access_log::Tee>) -> Self {
        Self {
            inner,
            stall: Box::pin(tokio::time::sleep(BODY_STALL_TIMEOUT)),
            tee,
        }
    }
}

impl<B> Body for GuardedBody<B>
where
    B: Body<Data = Bytes, Error = hyper::Error> + Unpin,
{
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        match Pin::new(&mut self.inner).poll_frame(cx) {
            Poll::Ready(frame) => {
                let deadline = tokio::time::Instant::now() + BODY_STALL_TIMEOUT;
                self.stall.as_mut().reset(deadline);
                if let (Some(tee), Some(Ok(frame))) = (&self.tee, &frame)
                    && let Some(data) = frame.data_ref()
                {
                    tee.lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(data.clone());
                }
                Poll::Ready(frame.map(|f| f.map_err(BodyError::Connection)))
            }
            Poll::Pending => match self.stall.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Some(Err(BodyError::Stalled))),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A body read ahead (to look at it before rmcp parses it), handed on as it came: the bytes
/// read, then what stopped the reading: its end, its error, or the rest of a body longer than
/// the bound (which rmcp then refuses as it would have).
pub(crate) struct ReadAhead<B: Body> {
    head: Option<Bytes>,
    rest: Rest<B>,
}

enum Rest<B: Body> {
    Ended,
    Failed(Option<B::Error>),
    More(B),
}

impl<B> ReadAhead<B>
where
    B: Body<Data = Bytes> + Unpin,
{
    /// Reads `body` to its end, or until more than `limit` bytes came, or it failed.
    pub(crate) async fn read(mut body: B, limit: usize) -> Self {
        use http_body_util::BodyExt;
        let mut head = bytes::BytesMut::new();
        let rest = loop {
            match body.frame().await {
                None => break Rest::Ended,
                Some(Err(e)) => break Rest::Failed(Some(e)),
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        head.extend_from_slice(&data);
                    }
                    if head.len() > limit {
                        break Rest::More(body);
                    }
                }
            }
        };
        Self {
            head: Some(head.freeze()),
            rest,
        }
    }

    /// The whole body, when it was read to its end.
    pub(crate) fn whole(&self) -> Option<&Bytes> {
        match self.rest {
            Rest::Ended => self.head.as_ref(),
            _ => None,
        }
    }

    /// The whole body replaced by `bytes`.
    pub(crate) fn replace(&mut self, bytes: Bytes) {
        self.head = Some(bytes);
    }
}

impl<B> Body for ReadAhead<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Unpin,
{
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        if let Some(head) = self.head.take().filter(|h| !h.is_empty()) {
            return Poll::Ready(Some(Ok(Frame::data(head))));
        }
        match &mut self.rest {
            Rest::Ended => Poll::Ready(None),
            Rest::Failed(error) => Poll::Ready(error.take().map(Err)),
            Rest::More(body) => Pin::new(body).poll_frame(cx),
        }
    }
}
