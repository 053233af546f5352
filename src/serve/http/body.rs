//! A request body that must keep arriving: one that sends nothing for
//! [`SERVE_BODY_STALL_TIMEOUT`] is cut off, so a half-sent request cannot hold its connection.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};

use crate::bounds::SERVE_BODY_STALL_TIMEOUT as BODY_STALL_TIMEOUT;

/// Why a request body was not read to its end.
#[derive(Debug)]
pub enum BodyError {
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
pub struct GuardedBody<B> {
    inner: B,
    stall: Pin<Box<tokio::time::Sleep>>,
    /// Where the chunks read are kept for the access log's peek (when it is on).
    tee: Option<super::access_log::Tee>,
}

impl<B> GuardedBody<B> {
    pub fn new(inner: B, tee: Option<super::access_log::Tee>) -> Self {
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
