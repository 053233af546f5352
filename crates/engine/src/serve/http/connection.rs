//! An endpoint's connections: the accept loop (a connection cap, eviction of idle connections
//! when out of descriptors, the drain on stop) and each connection's hyper service (the gate,
//! the access log, then the [`Front`]).

use std::convert::Infallible;
use std::sync::Arc;

use http::Request;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::access_log;
use super::body::GuardedBody;
use super::front::Front;
use super::gate::Admission;
use super::limits::{self, Calls, Slots};
use crate::bounds::SERVE_DRAIN as DRAIN;

pub(super) async fn accept_loop(
    listener: TcpListener,
    front: Arc<Front>,
    mut shutdown: watch::Receiver<bool>,
    stopping: &CancellationToken,
) {
    let slots = Arc::new(Slots::for_this_process());
    let calls = Arc::new(Calls::default());
    let mut conns = JoinSet::new();
    // Connections get their own receivers; `shutdown` stays borrowed by the select below.
    let for_connections = shutdown.clone();
    loop {
        tokio::select! {
            _ = stopped(&mut shutdown) => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    let Some(slot) = slots.take() else {
                        // Every connection is busy with a request: refuse this one.
                        drop(stream);
                        continue;
                    };
                    let _ = stream.set_nodelay(true);
                    conns.spawn(serve_connection(
                        stream,
                        peer,
                        front.clone(),
                        slot,
                        calls.clone(),
                        for_connections.clone(),
                    ));
                }
                // Out of descriptors: end the idlest connection to make room, and give it a
                // moment to close so one shortage does not evict several.
                Err(_) => {
                    let pause = if slots.evict_idlest() {
                        crate::bounds::SERVE_ACCEPT_PAUSE_EVICTED
                    } else {
                        crate::bounds::SERVE_ACCEPT_PAUSE_FULL
                    };
                    tokio::time::sleep(pause).await;
                }
            },
            Some(_) = conns.join_next(), if !conns.is_empty() => {
                if conns.is_empty() {
                    limits::release_memory();
                }
            }
        }
    }
    drop(listener);
    // Calls in flight finish first; then rmcp ends the GET streams, which would otherwise keep
    // their connections (and so this drain) open for as long as their clients stay.
    let drained = async {
        calls.settled().await;
        stopping.cancel();
        while conns.join_next().await.is_some() {}
    };
    let _ = tokio::time::timeout(DRAIN, drained).await;
    // Dropping the set aborts whatever outlived the drain window.
}

async fn serve_connection(
    stream: tokio::net::TcpStream,
    peer: std::net::SocketAddr,
    front: Arc<Front>,
    slot: limits::Slot,
    calls: Arc<Calls>,
    mut shutdown: watch::Receiver<bool>,
) {
    let activity = slot.activity();
    let service = service_fn(move |req: Request<Incoming>| {
        let front = front.clone();
        let mut busy = activity.begin_request();
        if req.method() != http::Method::GET {
            busy.count_in(&calls);
        }
        async move {
            let (mut parts, body) = req.into_parts();
            let Some(front) = front.route(&mut parts) else {
                return Ok::<_, Infallible>(
                    busy.wrap(super::gate::not_found().map(|b| access_log::Logged::new(b, None))),
                );
            };
            parts.extensions.insert(crate::telemetry::PeerAddr(peer));
            let mut entry = front
                .access_log
                .as_ref()
                .map(|log| access_log::Entry::begin(log, &parts));
            if let Some(entry) = &entry {
                parts.extensions.insert(entry.trace_slot());
            }
            let reply = match front.gate.admit(&parts).await {
                Admission::Reply(reply) => reply,
                Admission::Refused {
                    reply,
                    principal,
                    why,
                } => {
                    if let Some(entry) = entry.as_mut() {
                        entry.principal = principal;
                        entry.error = Some(why);
                    }
                    reply
                }
                Admission::Mcp(caller) => 'mcp: {
                    if let (Some(entry), Some(caller)) = (entry.as_mut(), &caller) {
                        entry.principal = Some(caller.principal.subject.clone());
                    }
                    if let Some(limiter) = &front.limiter {
                        // A caller's and the overall rate: every POST takes a token. (Calls'
                        // concurrency and tools' limits are the handler's, held by the run.)
                        if limiter.limits_requests() && parts.method == http::Method::POST {
                            // Each caller by its principal, or without auth by its address.
                            let key = caller
                                .as_ref()
                                .map_or_else(|| peer.ip().to_string(), |c| c.principal.key());
                            // With a store replicas share, its buckets (see `rate`).
                            let admitted = match &front.store {
                                Some(store) => limiter.admit_shared(&**store, &key).await,
                                None => limiter.admit(&key),
                            };
                            match admitted {
                                Ok(()) => {}
                                Err(refusal) => {
                                    crate::telemetry::limit_refused(refusal.limit, None);
                                    if let Some(entry) = entry.as_mut() {
                                        entry.error = Some(refusal.message.clone());
                                    }
                                    break 'mcp super::gate::too_many(&refusal);
                                }
                            }
                        }
                        parts.extensions.insert(limiter.clone());
                    }
                    if let Some(caller) = caller {
                        parts.extensions.insert(caller);
                    }
                    if let Some(key) = &front.state_key {
                        parts.extensions.insert(key.clone());
                    }
                    if let Some(store) = &front.store {
                        parts
                            .extensions
                            .insert(crate::serve::store::SharedStore(store.clone()));
                    }
                    let tee = entry.as_ref().map(access_log::Entry::tee);
                    front
                        .answer(Request::from_parts(parts, GuardedBody::new(body, tee)))
                        .await
                }
            };
            if let Some(entry) = entry.as_mut() {
                entry.status = reply.status().as_u16();
            }
            Ok::<_, Infallible>(busy.wrap(reply.map(|b| access_log::Logged::new(b, entry))))
        }
    });
    let io = TokioIo::new(slot.watch(stream));
    let conn = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(crate::bounds::SERVE_HEADER_READ_TIMEOUT)
        .serve_connection(io, service);
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => return,
        _ = slot.ended() => return,
        _ = stopped(&mut shutdown) => {}
    }
    // Finishes the request in progress (if any), then closes instead of keeping alive.
    conn.as_mut().graceful_shutdown();
    let _ = conn.await;
}

/// Resolves once `stop()` has been called. (Returns `()` so no non-`Send` watch guard is held
/// across the selects' awaits.)
async fn stopped(shutdown: &mut watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|stop| *stop).await;
}
