//! What one HTTP client may hold of the server: a connection slot (capped below the process's
//! descriptor limit, the idlest evicted to make room), bounded time to send headers and body,
//! and an idle timeout (a request body's own bound is `body`'s). So half-sent requests or a
//! descriptor flood never lock others out.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};

use http::Response;
use hyper::body::{Body, Frame, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_util::sync::CancellationToken;

use crate::bounds::{
    SERVE_CONNECTION_IDLE_TIMEOUT as IDLE_TIMEOUT, SERVE_MAX_CONNECTIONS as MAX_CONNECTIONS,
};

/// Milliseconds since the first call (one clock for connections and sessions).
pub(super) fn now_ms() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_millis() as u64
}

/// Hands memory freed after a burst back to the system once the last connection has closed
/// (see [`crate::memory::trim`]).
pub(crate) fn release_memory() {
    crate::memory::trim();
}

/// One connection's liveness, shared by its IO, its requests and the slot table.
pub(crate) struct Activity {
    last: AtomicU64,
    busy: AtomicUsize,
    end: CancellationToken,
}

impl Activity {
    fn touch(&self) {
        self.last.store(now_ms(), Ordering::Relaxed);
    }

    fn is_idle(&self) -> bool {
        self.busy.load(Ordering::Relaxed) == 0
    }

    /// Marks a request in flight until the returned guard (carried by its response body) drops.
    pub(crate) fn begin_request(self: &Arc<Self>) -> Busy {
        self.busy.fetch_add(1, Ordering::Relaxed);
        self.touch();
        Busy(self.clone(), None)
    }
}

/// A request in flight on a connection.
pub(crate) struct Busy(Arc<Activity>, Option<Call>);

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.busy.fetch_sub(1, Ordering::Relaxed);
        self.0.touch();
    }
}

impl Busy {
    /// Counts this request among the endpoint's calls until its response is fully sent.
    pub(crate) fn count_in(&mut self, calls: &Arc<Calls>) {
        self.1 = Some(calls.begin());
    }

    /// The response, whose body keeps the connection marked busy until it is fully sent.
    pub(crate) fn wrap<B>(self, response: Response<B>) -> Response<BusyBody<B>> {
        response.map(|inner| BusyBody { inner, _busy: self })
    }
}

/// An endpoint's requests that end by themselves: everything but a GET stream, which lasts as
/// long as its session. `stop()` lets these finish before it ends the streams.
#[derive(Default)]
pub(crate) struct Calls {
    count: AtomicUsize,
    settled: tokio::sync::Notify,
}

impl Calls {
    fn begin(self: &Arc<Self>) -> Call {
        self.count.fetch_add(1, Ordering::AcqRel);
        Call(self.clone())
    }

    /// Resolves once no call is in flight.
    pub(crate) async fn settled(&self) {
        loop {
            let notified = self.settled.notified();
            tokio::pin!(notified);
            // Registered before the check, so a call ending in between still wakes us.
            notified.as_mut().enable();
            if self.count.load(Ordering::Acquire) == 0 {
                return;
            }
            notified.await;
        }
    }
}

/// One call in flight on an endpoint.
pub(crate) struct Call(Arc<Calls>);

impl Drop for Call {
    fn drop(&mut self) {
        if self.0.count.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.settled.notify_waiters();
        }
    }
}

/// The slot table: live connections by id.
pub(crate) struct Slots {
    max: usize,
    next: AtomicU64,
    live: Mutex<HashMap<u64, Arc<Activity>>>,
}

impl Slots {
    /// Sized to three quarters of the descriptor limit, leaving room for everything else the
    /// process has open (Node, servers' pipes, outgoing connections).
    pub(crate) fn for_this_process() -> Self {
        Self::with_max(descriptor_budget())
    }

    pub(crate) fn with_max(max: usize) -> Self {
        Self {
            max: max.max(1),
            next: AtomicU64::new(0),
            live: Mutex::new(HashMap::new()),
        }
    }

    /// A slot for a new connection; at the cap the idlest connection without a request in
    /// flight is ended to make room. None when every connection is busy.
    pub(crate) fn take(self: &Arc<Self>) -> Option<Slot> {
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        if live.len() >= self.max && !evict_idlest(&mut live) {
            return None;
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let activity = Arc::new(Activity {
            last: AtomicU64::new(now_ms()),
            busy: AtomicUsize::new(0),
            end: CancellationToken::new(),
        });
        live.insert(id, activity.clone());
        Some(Slot {
            id,
            slots: self.clone(),
            activity,
        })
    }

    /// Ends the idlest connection without a request in flight; false if there is none.
    pub(crate) fn evict_idlest(&self) -> bool {
        evict_idlest(&mut self.live.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

fn evict_idlest(live: &mut HashMap<u64, Arc<Activity>>) -> bool {
    let idlest = live
        .iter()
        .filter(|(_, a)| a.is_idle())
        .min_by_key(|(_, a)| a.last.load(Ordering::Relaxed))
        .map(|(id, _)| *id);
    match idlest.and_then(|id| live.remove(&id)) {
        Some(activity) => {
            activity.end.cancel();
            true
        }
        None => false,
    }
}

fn descriptor_budget() -> usize {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit only writes the struct it is given.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 {
            let soft = usize::try_from(limit.rlim_cur).unwrap_or(usize::MAX);
            return (soft / 4 * 3).saturating_sub(16).clamp(8, MAX_CONNECTIONS);
        }
    }
    MAX_CONNECTIONS / 4
}

/// A connection's place in the table; leaving it (dropping) frees the place.
pub(crate) struct Slot {
    id: u64,
    slots: Arc<Slots>,
    activity: Arc<Activity>,
}

impl Slot {
    pub(crate) fn activity(&self) -> Arc<Activity> {
        self.activity.clone()
    }

    /// The stream, noting every byte read or written as activity.
    pub(crate) fn watch<S>(&self, stream: S) -> Watched<S> {
        Watched {
            inner: stream,
            activity: self.activity.clone(),
        }
    }

    /// Resolves when the connection must end: evicted, or idle past the timeout.
    pub(crate) async fn ended(&self) {
        let end = self.activity.end.clone();
        let idle = async {
            loop {
                let last = self.activity.last.load(Ordering::Relaxed);
                let due = last + IDLE_TIMEOUT.as_millis() as u64;
                let now = now_ms();
                if now >= due && self.activity.is_idle() {
                    return;
                }
                let wait = due.saturating_sub(now).max(1000);
                tokio::time::sleep(Duration::from_millis(wait)).await;
            }
        };
        tokio::select! {
            _ = end.cancelled() => {}
            _ = idle => {}
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.slots
            .live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.id);
    }
}

/// A stream whose reads and writes count as activity.
pub(crate) struct Watched<S> {
    inner: S,
    activity: Arc<Activity>,
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let result = ready!(Pin::new(&mut self.inner).poll_read(cx, buf));
        if buf.filled().len() > before {
            self.activity.touch();
        }
        Poll::Ready(result)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let result = ready!(Pin::new(&mut self.inner).poll_write(cx, buf));
        if matches!(result, Ok(n) if n > 0) {
            self.activity.touch();
        }
        Poll::Ready(result)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// A response body that keeps its connection marked busy until it is done.
pub(crate) struct BusyBody<B> {
    inner: B,
    _busy: Busy,
}

impl<B: Body + Unpin> Body for BusyBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_the_cap_the_idlest_idle_connection_makes_room() {
        let slots = Arc::new(Slots::with_max(2));
        let first = slots.take().unwrap();
        let busy = slots.take().unwrap();
        let _request = busy.activity().begin_request();
        // Full: the one without a request in flight is evicted, the busy one kept.
        let third = slots.take().expect("room made by eviction");
        assert!(first.activity.end.is_cancelled());
        assert!(!busy.activity.end.is_cancelled());
        // Full of busy connections: the newcomer is refused, nobody evicted.
        let _other = third.activity().begin_request();
        assert!(slots.take().is_none());
        assert!(!third.activity.end.is_cancelled());
        // Leaving frees the place.
        drop(first);
        drop(busy);
        assert!(slots.take().is_some());
    }
}
