//! [`Iceoryx2`], [`Iceoryx2Writer`], [`Iceoryx2Reader`].

use crate::tidy::{self, Tidy};
use iceoryx2::port::{BackpressureAction, BackpressureInfo};
use iceoryx2::prelude::*;
use iceoryx2::service::port_factory::event::PortFactory as EventService;
use iceoryx2::service::port_factory::publish_subscribe::PortFactory as PubSubService;
use pubsubperf_core::binding::BindingInfo;
use pubsubperf_core::{
    Binding, BindingError, CancelToken, Capabilities, DataType, EndpointConfig, Locator,
    Reliability, TopicSpec, WaitMode,
};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod reader;
mod writer;

pub use reader::Iceoryx2Reader;
pub use writer::Iceoryx2Writer;

/// Inter-process iceoryx2. Its ports are not `Send` because they count
/// references with `Rc` (see the `unsafe impl Send` below); the thread-safe
/// variant would put a mutex on every loan, send and receive.
type Svc = ipc::Service;

/// Largest sample (header included): 256 MiB, the largest size pubsubperf
/// sweeps. Each publisher's data segment holds a few chunks of this size.
pub const MAX_SAMPLE: usize = 256 << 20;

/// Without `--receive-queue`, a subscriber's buffer holds at most this many
/// bytes of samples (between 2 and [`MAX_BUFFER`] samples): it bounds the
/// shared memory of big samples (16 MiB: 2 samples).
pub const QUEUE_BYTES: usize = 32 << 20;

/// Deepest subscriber buffer chosen by default (small samples).
pub const MAX_BUFFER: usize = 256;

/// The transport this binding offers.
pub(crate) const TRANSPORT: &str = "shm";

/// The iceoryx2 binding: one iceoryx2 node per side per run.
pub struct Iceoryx2 {
    pub(crate) cfg: EndpointConfig,
    pub(crate) node: Node<Svc>,
    /// Declared last: dropped after the node.
    pub(crate) tidy: Arc<Tidy>,
}

impl Binding for Iceoryx2 {
    type Writer = Iceoryx2Writer;
    type Reader = Iceoryx2Reader;

    fn info() -> BindingInfo {
        BindingInfo {
            name: "iceoryx2",
            description: "iceoryx2 publish-subscribe (Rust crate, no daemon): loaned shared-memory samples, busy or event waits",
            version: format!(
                "iceoryx2 {}",
                iceoryx2_bb_elementary::package_version::PackageVersion::get()
            ),
            capabilities: Capabilities {
                reliable: true,
                best_effort: true,
                default_reliability: Reliability::Reliable,
                multicast: false,
                max_sample_size: MAX_SAMPLE,
                zero_copy: true,
                batching: false,
                multiple_subscribers: true,
                transports: &[TRANSPORT],
                data_types: &[DataType::Bytes],
                in_process: false,
                remote: false,
                receive: &[pubsubperf_core::ReceiveMode::Thread],
            },
            available: tidy::available(),
        }
    }

    /// Against iceoryx2's defaults (safe overflow, a subscriber buffer of
    /// 2, loans, no events): what the run's reliability, queue, copies and
    /// waits set. Its benchmark loans and busy-polls.
    fn deviations(_test: pubsubperf_core::result::TestKind, cfg: &EndpointConfig) -> Vec<String> {
        let mut d = Vec::new();
        if cfg.reliability == Reliability::Reliable {
            d.push("no safe overflow (the publisher blocks)".into());
        }
        d.push(format!("subscriber buffer {}", buffer_size(cfg)));
        if !cfg.zero_copy {
            d.push("copied into and out of the loans".into());
        }
        if cfg.wait == WaitMode::Block {
            d.push("an event notified per sample (blocking wait)".into());
        }
        d
    }

    /// Busy polling, as iceoryx2's `benchmark-publish-subscribe` waits.
    fn default_wait(_test: pubsubperf_core::result::TestKind) -> WaitMode {
        WaitMode::Busy
    }

    /// Loaned samples, written and read in place, as iceoryx2's `benchmark-publish-subscribe` sends them.
    fn default_zero_copy(_test: pubsubperf_core::result::TestKind) -> bool {
        true
    }

    fn validate(cfg: &EndpointConfig) -> Result<(), BindingError> {
        let refuse = |m: &str| Err(BindingError::Unsupported(m.to_string()));
        if !cfg.transport.is_empty() && cfg.transport != TRANSPORT {
            return Err(BindingError::Unsupported(format!(
                "--transport {}: iceoryx2 offers {TRANSPORT} (shared memory within one host)",
                cfg.transport
            )));
        }
        if cfg.data_type != DataType::Bytes {
            return refuse(
                "--data-type flat: iceoryx2 offers bytes (a [u8] slice whose length iceoryx2 carries; a fixed-size type needs its size at compile time)",
            );
        }
        if cfg.multicast {
            return refuse("--multicast: iceoryx2 fans out in shared memory, it has no multicast");
        }
        if cfg.batch_bytes > 0 {
            return refuse("--batch: iceoryx2 sends each sample on its own");
        }
        if cfg.ipv6 {
            return refuse("--ipv6: iceoryx2 uses no network");
        }
        if cfg.socket_buffer > 0 {
            return refuse("--socket-buffer: iceoryx2 uses no sockets for data");
        }
        if cfg.send_queue > 0 {
            return refuse(
                "--send-queue: an iceoryx2 publisher has no send queue (the subscriber's buffer is --receive-queue)",
            );
        }
        if let Some(k) = cfg.options.keys().next() {
            return Err(BindingError::Unsupported(format!(
                "--opt {k}: iceoryx2 takes no binding options"
            )));
        }
        if cfg.max_sample_size > MAX_SAMPLE {
            return Err(BindingError::TooLarge {
                size: cfg.max_sample_size,
                limit: MAX_SAMPLE,
            });
        }
        Ok(())
    }

    fn multiple_publishers() -> bool {
        true
    }

    fn open(cfg: &EndpointConfig) -> Result<Self, BindingError> {
        Self::validate(cfg)?;
        let (node, tidy) = tidy::create_node(&cfg.run_id)?;
        Ok(Iceoryx2 {
            cfg: cfg.clone(),
            node,
            tidy,
        })
    }

    fn create_reader(
        &mut self,
        topic: &TopicSpec,
    ) -> Result<(Iceoryx2Reader, Locator), BindingError> {
        let shape = Shape::of(&self.cfg, topic);
        let name = service_name(&self.cfg.run_id, &topic.name);
        let service = open_pubsub(&self.node, &name, &shape)?;
        let subscriber = service
            .subscriber_builder()
            .buffer_size(shape.buffer)
            .create()
            .map_err(|e| mw(format!("subscriber of {name}: {e:?}")))?;
        let (events, listener) = if self.cfg.wait == WaitMode::Block {
            let ev = open_event(&self.node, &name, &shape)?;
            let l = ev
                .listener_builder()
                .create()
                .map_err(|e| mw(format!("listener of {name}: {e:?}")))?;
            (Some(ev), Some(l))
        } else {
            (None, None)
        };
        let reader = Iceoryx2Reader {
            subscriber,
            listener,
            service,
            events,
            publishers: shape.publishers,
            private: if self.cfg.zero_copy {
                Vec::new()
            } else {
                vec![0; self.cfg.max_sample_size.max(1)]
            },
            zero_copy: self.cfg.zero_copy,
            wait: self.cfg.wait,
            drain_max: shape.buffer + 1,
            cancel: self.cfg.cancel.clone(),
            name: name.clone(),
            _tidy: self.tidy.clone(),
        };
        Ok((reader, name))
    }

    fn create_writer(
        &mut self,
        topic: &TopicSpec,
        readers: &[Locator],
    ) -> Result<Iceoryx2Writer, BindingError> {
        let shape = Shape::of(&self.cfg, topic);
        let name = service_name(&self.cfg.run_id, &topic.name);
        if let Some(other) = readers.iter().find(|l| **l != name) {
            return Err(BindingError::Malformed(format!(
                "reader locator {other} is not the service {name} of this run"
            )));
        }
        let service = open_pubsub(&self.node, &name, &shape)?;
        let max = self.cfg.max_sample_size.max(1);
        let reliable = self.cfg.reliability == Reliability::Reliable;
        let block_timeout = Duration::from_millis(self.cfg.reliable_block_timeout_ms);
        let mut builder = service
            .publisher_builder()
            .initial_max_slice_len(max)
            .allocation_strategy(AllocationStrategy::Static)
            .max_loaned_samples(1);
        if reliable {
            // A full subscriber buffer makes `send` retry (spin, then yield,
            // then sleep) until the reader takes a sample, the block timeout
            // passes or the run is cancelled.
            let cancel = self.cfg.cancel.clone();
            builder = builder
                .backpressure_strategy(BackpressureStrategy::RetryUntilDelivered)
                .set_backpressure_handler(move |info: &BackpressureInfo| {
                    if cancel.is_cancelled() || info.elapsed_time >= block_timeout {
                        BackpressureAction::DiscardDataAndFail
                    } else {
                        BackpressureAction::Retry
                    }
                });
        } else {
            builder = builder.backpressure_strategy(BackpressureStrategy::DiscardData);
        }
        let publisher = builder
            .create()
            .map_err(|e| mw(format!("publisher of {name}: {e:?}")))?;
        let (events, notifier) = if self.cfg.wait == WaitMode::Block {
            let ev = open_event(&self.node, &name, &shape)?;
            let n = ev
                .notifier_builder()
                .create()
                .map_err(|e| mw(format!("notifier of {name}: {e:?}")))?;
            (Some(ev), Some(n))
        } else {
            (None, None)
        };
        Ok(Iceoryx2Writer {
            publisher,
            notifier,
            service,
            events,
            scratch: if self.cfg.zero_copy {
                Vec::new()
            } else {
                vec![0; max]
            },
            max,
            zero_copy: self.cfg.zero_copy,
            reliable,
            block_timeout,
            cancel: self.cfg.cancel.clone(),
            name,
            _tidy: self.tidy.clone(),
        })
    }
}

/// The iceoryx2 service name of `topic` in run `run_id`; it is also the
/// reader's locator.
pub fn service_name(run_id: &str, topic: &str) -> String {
    format!("pubsubperf/{run_id}/{topic}")
}

/// Subscriber buffer depth (samples) for a run: `--receive-queue` when
/// given, otherwise [`QUEUE_BYTES`] worth of the run's largest sample,
/// between 2 and [`MAX_BUFFER`].
pub fn buffer_size(cfg: &EndpointConfig) -> usize {
    if cfg.receive_queue > 0 {
        cfg.receive_queue
    } else {
        (QUEUE_BYTES / cfg.max_sample_size.max(1)).clamp(2, MAX_BUFFER)
    }
}

/// The settings of one topic's services. Both sides derive them from the
/// same configuration: iceoryx2 refuses to open a service with settings
/// beyond those of its creator.
pub(crate) struct Shape {
    pub(crate) publishers: usize,
    pub(crate) subscribers: usize,
    pub(crate) buffer: usize,
    pub(crate) reliable: bool,
}

impl Shape {
    pub(crate) fn of(cfg: &EndpointConfig, topic: &TopicSpec) -> Shape {
        // The data topic (`data`, or `ping` in a latency test) fans out to
        // every subscriber (and in from every publisher); each `echo<i>`
        // has one writer and one reader.
        let (publishers, subscribers) = if !topic.is_echo() {
            (cfg.publishers.max(1), cfg.subscribers.max(1))
        } else {
            (1, 1)
        };
        Shape {
            publishers,
            subscribers,
            buffer: buffer_size(cfg),
            reliable: cfg.reliability == Reliability::Reliable,
        }
    }
}

pub(crate) fn mw(msg: String) -> BindingError {
    BindingError::Middleware(msg)
}

pub(crate) fn iox_name(name: &str) -> Result<ServiceName, BindingError> {
    ServiceName::new(name).map_err(|e| mw(format!("service name {name}: {e:?}")))
}

/// How long opening a service may be retried while the peer creates it.
pub(crate) const OPEN_RETRY: Duration = Duration::from_secs(2);

/// `open_or_create` of a service, retried briefly: when both sides open the
/// same service at once, one of them can see it half-created.
pub(crate) fn retry_open<T, E: std::fmt::Debug>(
    what: &str,
    mut f: impl FnMut() -> Result<T, E>,
) -> Result<T, BindingError> {
    let start = Instant::now();
    loop {
        match f() {
            Ok(v) => return Ok(v),
            Err(e) if start.elapsed() >= OPEN_RETRY => {
                return Err(mw(format!("opening {what}: {e:?}")));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
}

pub(crate) fn open_pubsub(
    node: &Node<Svc>,
    name: &str,
    s: &Shape,
) -> Result<PubSubService<Svc, [u8], ()>, BindingError> {
    let sn = iox_name(name)?;
    // Data segment of each publisher, in chunks of the largest sample:
    // subscribers * (buffer + 1 borrowed) + 1 loaned, no history.
    retry_open(name, || {
        node.service_builder(&sn)
            .publish_subscribe::<[u8]>()
            .max_publishers(s.publishers)
            .max_subscribers(s.subscribers)
            .max_nodes(s.publishers + s.subscribers)
            .subscriber_max_buffer_size(s.buffer)
            .subscriber_max_borrowed_samples(1)
            .history_size(0)
            .enable_safe_overflow(!s.reliable)
            .open_or_create()
    })
}

pub(crate) fn open_event(
    node: &Node<Svc>,
    name: &str,
    s: &Shape,
) -> Result<EventService<Svc>, BindingError> {
    let ev_name = format!("{name}/event");
    let sn = iox_name(&ev_name)?;
    retry_open(&ev_name, || {
        node.service_builder(&sn)
            .event()
            .max_notifiers(s.publishers)
            .max_listeners(s.subscribers)
            .max_nodes(s.publishers + s.subscribers)
            .open_or_create()
    })
}

/// Polls `done` until it holds, `timeout` passes or the run is cancelled.
/// Set-up only: matching is never measured.
pub(crate) fn wait_until(
    timeout: Duration,
    cancel: &CancelToken,
    what: impl Fn() -> String,
    mut done: impl FnMut() -> Result<bool, BindingError>,
) -> Result<(), BindingError> {
    let start = Instant::now();
    loop {
        if done()? {
            return Ok(());
        }
        if cancel.is_cancelled() {
            return Err(BindingError::Cancelled);
        }
        if start.elapsed() >= timeout {
            return Err(BindingError::MatchTimeout(timeout, what()));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

// ---------------------------------------------------------------- writer

#[cfg(test)]
mod tests;
