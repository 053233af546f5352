//! Spans on their way to the collector: a bounded queue that a request only ever tries to put
//! a span in (never waiting for room), and one thread that sends them in batches. A collector that is down or slow
//! fills the queue, and then spans are dropped and counted (with one warning in words), never
//! waited for: a call is not delayed by its telemetry.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use opentelemetry::Context;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{Span, SpanData, SpanExporter, SpanProcessor};

/// The spans the process dropped on the way (to a collector, or to the app's processor).
pub(super) static DROPPED: Dropped = Dropped {
    count: AtomicU64::new(0),
    warned: AtomicBool::new(false),
    reported: AtomicU64::new(0),
};

/// Spans dropped on the way, and whether that was said.
#[derive(Debug)]
pub(crate) struct Dropped {
    count: AtomicU64,
    warned: AtomicBool,
    /// The count when it was last reported.
    reported: AtomicU64,
}

impl Dropped {
    pub(super) fn add(&self, spans: u64, why: &str) {
        self.count.fetch_add(spans, Ordering::Relaxed);
        if !self.warned.swap(true, Ordering::Relaxed) {
            eprintln!(
                "toolnexus: telemetry: spans are being dropped: {why}. Calls go on as before; \
                 later drops are counted, not reported one by one"
            );
        }
    }

    pub(crate) fn total(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    /// Says how many spans were dropped in all, when more were since it last said.
    pub(super) fn report_total(&self) {
        let total = self.total();
        if total > self.reported.swap(total, Ordering::Relaxed) {
            eprintln!("toolnexus: telemetry: {total} spans were dropped in all");
        }
    }
}

/// The queue's bounds (`OTEL_BSP_*`, with the specification's defaults).
pub(super) struct QueueConfig {
    pub(super) max_queue: usize,
    pub(super) delay: Duration,
    pub(super) max_batch: usize,
}

impl QueueConfig {
    pub(super) fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Self {
        let number = |name: &str, default: u64, max: u64| {
            env(name)
                .and_then(|v| v.trim().parse::<u64>().ok())
                .filter(|n| *n > 0)
                .unwrap_or(default)
                .min(max)
        };
        let max_queue = number("OTEL_BSP_MAX_QUEUE_SIZE", 2048, 1 << 20) as usize;
        QueueConfig {
            max_queue,
            delay: Duration::from_millis(number("OTEL_BSP_SCHEDULE_DELAY", 5000, 3_600_000)),
            max_batch: (number("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512, 1 << 20) as usize)
                .min(max_queue),
        }
    }
}

/// What the sending thread has to do: the spans queued, and who waits for a flush or the stop.
#[derive(Default)]
struct Queue {
    spans: Vec<SpanData>,
    flushes: Vec<mpsc::Sender<()>>,
    stop: Option<mpsc::Sender<()>>,
    /// The thread has ended: nothing queued now would be sent.
    gone: bool,
}

/// The queue and the bell the sending thread sleeps on. A span is pushed under the lock and the
/// thread is woken only when a batch is full (or a flush or the stop asks): waking it for
/// each span would cost every request a context switch.
#[derive(Default)]
struct Shared {
    queue: Mutex<Queue>,
    bell: Condvar,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Shared")
    }
}

/// The span processor: `on_end` puts the span in the bounded queue, or drops and counts it.
#[derive(Debug)]
pub(super) struct Bounded {
    shared: Arc<Shared>,
    max_queue: usize,
    max_batch: usize,
    dropped: &'static Dropped,
}

impl Bounded {
    /// Starts the sending thread for `exporter`.
    pub(super) fn start<E: SpanExporter + 'static>(
        mut exporter: E,
        resource: &Resource,
        config: QueueConfig,
        dropped: &'static Dropped,
    ) -> Bounded {
        exporter.set_resource(resource);
        let shared = Arc::new(Shared::default());
        let (max_queue, max_batch) = (config.max_queue, config.max_batch);
        let (sending, counted) = (shared.clone(), dropped);
        let spawned = std::thread::Builder::new()
            .name("toolnexus-otlp".into())
            .spawn(move || run(exporter, &sending, config, counted));
        if spawned.is_err() {
            shared.lock().gone = true;
            dropped.add(0, "no thread could be started to send them");
        }
        Bounded {
            shared,
            max_queue,
            max_batch,
            dropped,
        }
    }

    /// Asks the thread for a flush (or the stop) and waits for it, at most `bound`.
    fn wait(&self, stop: bool, bound: Duration) -> bool {
        let (done, finished) = mpsc::channel();
        {
            let mut queue = self.shared.lock();
            if queue.gone {
                return false;
            }
            if stop {
                queue.stop = Some(done);
            } else {
                queue.flushes.push(done);
            }
        }
        self.shared.bell.notify_one();
        finished.recv_timeout(bound).is_ok()
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn export<E: SpanExporter>(exporter: &E, batch: Vec<SpanData>, dropped: &Dropped) {
    let spans = batch.len() as u64;
    if spans == 0 {
        return;
    }
    if let Err(e) = futures::executor::block_on(exporter.export(batch)) {
        let why = match e {
            OTelSdkError::InternalFailure(message) => {
                let message: String = message.chars().take(300).collect();
                format!("the collector did not take them ({message})")
            }
            OTelSdkError::Timeout(after) => {
                format!(
                    "the collector did not answer within {} ms",
                    after.as_millis()
                )
            }
            OTelSdkError::AlreadyShutdown => "the exporter was already stopped".into(),
        };
        dropped.add(spans, &why);
    }
}

fn run<E: SpanExporter>(exporter: E, shared: &Shared, config: QueueConfig, dropped: &Dropped) {
    loop {
        let (spans, flushes, stop) = {
            let queue = shared.lock();
            let (mut queue, _) = shared
                .bell
                .wait_timeout_while(queue, config.delay, |q| {
                    q.spans.len() < config.max_batch && q.flushes.is_empty() && q.stop.is_none()
                })
                .unwrap_or_else(|e| e.into_inner());
            let stop = queue.stop.take();
            if stop.is_some() {
                queue.gone = true;
            }
            (
                std::mem::take(&mut queue.spans),
                std::mem::take(&mut queue.flushes),
                stop,
            )
        };
        let mut spans = spans;
        while !spans.is_empty() {
            let rest = spans.split_off(spans.len().min(config.max_batch));
            export(&exporter, spans, dropped);
            spans = rest;
        }
        for done in flushes {
            let _ = done.send(());
        }
        if let Some(done) = stop {
            let _ = exporter.shutdown();
            let _ = done.send(());
            return;
        }
    }
}

/// How long a flush or the final stop waits for the collector.
const FLUSH_BOUND: Duration = Duration::from_secs(5);

impl SpanProcessor for Bounded {
    fn on_start(&self, _span: &mut Span, _cx: &Context) {}

    fn on_end(&self, span: SpanData) {
        if !span.span_context.is_sampled() {
            return;
        }
        let mut queue = self.shared.lock();
        if queue.gone {
            drop(queue);
            return self.dropped.add(1, "the thread sending them has stopped");
        }
        if queue.spans.len() >= self.max_queue {
            drop(queue);
            return self.dropped.add(
                1,
                "the queue of spans waiting for the collector is full (the collector is down \
                 or slower than the requests)",
            );
        }
        queue.spans.push(span);
        let full = queue.spans.len() == self.max_batch;
        drop(queue);
        if full {
            self.shared.bell.notify_one();
        }
    }

    fn force_flush(&self) -> OTelSdkResult {
        if self.wait(false, FLUSH_BOUND) {
            Ok(())
        } else {
            Err(OTelSdkError::Timeout(FLUSH_BOUND))
        }
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        if self.wait(true, timeout.min(FLUSH_BOUND)) {
            Ok(())
        } else {
            Err(OTelSdkError::Timeout(timeout))
        }
    }
}
