//! Spans on their way to the collector: a bounded queue that a request only ever tries to put
//! a span in, and one thread that sends them in batches. A collector that is down or slow
//! fills the queue, and then spans are dropped and counted (with one warning in words), never
//! waited for: a call is not delayed by its telemetry.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, SyncSender, TrySendError};
use std::time::{Duration, Instant};

use opentelemetry::Context;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{Span, SpanData, SpanExporter, SpanProcessor};

/// Spans dropped on the way, and whether that was said.
#[derive(Default, Debug)]
pub(crate) struct Dropped {
    count: AtomicU64,
    warned: AtomicBool,
    /// The count when it was last reported.
    reported: AtomicU64,
}

impl Dropped {
    fn add(&self, spans: u64, why: &str) {
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

enum Message {
    Span(Box<SpanData>),
    /// Send everything queued, then say so.
    Flush(mpsc::Sender<()>),
    Stop(mpsc::Sender<()>),
}

/// The span processor: `on_end` tries the queue and moves on.
#[derive(Debug)]
pub(super) struct Bounded {
    queue: SyncSender<Message>,
    dropped: Arc<Dropped>,
}

impl Bounded {
    /// Starts the exporting thread for `exporter`.
    pub(super) fn start<E: SpanExporter + 'static>(
        mut exporter: E,
        resource: &Resource,
        config: QueueConfig,
        dropped: Arc<Dropped>,
    ) -> Bounded {
        exporter.set_resource(resource);
        let (queue, receive) = mpsc::sync_channel(config.max_queue);
        let counted = dropped.clone();
        let spawned = std::thread::Builder::new()
            .name("toolnexus-otlp".into())
            .spawn(move || run(exporter, receive, config, &counted));
        if spawned.is_err() {
            dropped.add(0, "no thread could be started to send them");
        }
        Bounded { queue, dropped }
    }

    fn wait(&self, message: impl FnOnce(mpsc::Sender<()>) -> Message, bound: Duration) -> bool {
        let (done, finished) = mpsc::channel();
        self.queue.send(message(done)).is_ok() && finished.recv_timeout(bound).is_ok()
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

fn run<E: SpanExporter>(
    exporter: E,
    receive: mpsc::Receiver<Message>,
    config: QueueConfig,
    dropped: &Dropped,
) {
    let mut batch: Vec<SpanData> = Vec::with_capacity(config.max_batch);
    let mut deadline = Instant::now() + config.delay;
    loop {
        let wait = deadline.saturating_duration_since(Instant::now());
        match receive.recv_timeout(wait) {
            Ok(Message::Span(span)) => {
                batch.push(*span);
                if batch.len() >= config.max_batch {
                    export(&exporter, std::mem::take(&mut batch), dropped);
                    deadline = Instant::now() + config.delay;
                }
            }
            Ok(Message::Flush(done)) => {
                // What was queued before the flush came first.
                while let Ok(Message::Span(span)) = receive.try_recv() {
                    batch.push(*span);
                }
                export(&exporter, std::mem::take(&mut batch), dropped);
                let _ = done.send(());
            }
            Ok(Message::Stop(done)) => {
                while let Ok(Message::Span(span)) = receive.try_recv() {
                    batch.push(*span);
                }
                export(&exporter, std::mem::take(&mut batch), dropped);
                let _ = exporter.shutdown();
                let _ = done.send(());
                return;
            }
            Err(RecvTimeoutError::Timeout) => {
                export(&exporter, std::mem::take(&mut batch), dropped);
                deadline = Instant::now() + config.delay;
            }
            Err(RecvTimeoutError::Disconnected) => {
                export(&exporter, std::mem::take(&mut batch), dropped);
                return;
            }
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
        match self.queue.try_send(Message::Span(Box::new(span))) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => self.dropped.add(
                1,
                "the queue of spans waiting for the collector is full (the collector is down \
                 or slower than the requests)",
            ),
            Err(TrySendError::Disconnected(_)) => {
                self.dropped.add(1, "the thread sending them has stopped")
            }
        }
    }

    fn force_flush(&self) -> OTelSdkResult {
        if self.wait(Message::Flush, FLUSH_BOUND) {
            Ok(())
        } else {
            Err(OTelSdkError::Timeout(FLUSH_BOUND))
        }
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        if self.wait(Message::Stop, timeout.min(FLUSH_BOUND)) {
            Ok(())
        } else {
            Err(OTelSdkError::Timeout(timeout))
        }
    }
}
