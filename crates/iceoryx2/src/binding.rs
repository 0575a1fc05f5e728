//! [`Iceoryx2`], [`Iceoryx2Writer`], [`Iceoryx2Reader`].

use crate::tidy::{self, Tidy};
use iceoryx2::port::listener::{Listener, ListenerWaitError};
use iceoryx2::port::notifier::Notifier;
use iceoryx2::port::publisher::Publisher;
use iceoryx2::port::subscriber::Subscriber;
use iceoryx2::port::update_connections::UpdateConnections;
use iceoryx2::port::{BackpressureAction, BackpressureInfo, LoanError, SendError};
use iceoryx2::prelude::*;
use iceoryx2::service::port_factory::event::PortFactory as EventService;
use iceoryx2::service::port_factory::publish_subscribe::PortFactory as PubSubService;
use pubsubperf_core::binding::{BindingInfo, CANCEL_POLL};
use pubsubperf_core::{
    Binding, BindingError, CancelToken, Capabilities, DataType, EndpointConfig, Locator, Reader,
    Reliability, TopicSpec, WaitMode, Writer,
};
use std::sync::Arc;
use std::time::{Duration, Instant};

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
const TRANSPORT: &str = "shm";

/// The iceoryx2 binding: one iceoryx2 node per side per run.
pub struct Iceoryx2 {
    cfg: EndpointConfig,
    node: Node<Svc>,
    /// Declared last: dropped after the node.
    tidy: Arc<Tidy>,
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
            },
            available: tidy::available(),
        }
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
        let shape = Shape::of(&self.cfg, &topic.name);
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
        let shape = Shape::of(&self.cfg, &topic.name);
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
struct Shape {
    publishers: usize,
    subscribers: usize,
    buffer: usize,
    reliable: bool,
}

impl Shape {
    fn of(cfg: &EndpointConfig, topic: &str) -> Shape {
        // `data` fans out to every subscriber (and in from every
        // publisher); each `echo<i>` has one writer and one reader.
        let (publishers, subscribers) = if topic == "data" {
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

fn mw(msg: String) -> BindingError {
    BindingError::Middleware(msg)
}

fn iox_name(name: &str) -> Result<ServiceName, BindingError> {
    ServiceName::new(name).map_err(|e| mw(format!("service name {name}: {e:?}")))
}

/// How long opening a service may be retried while the peer creates it.
const OPEN_RETRY: Duration = Duration::from_secs(2);

/// `open_or_create` of a service, retried briefly: when both sides open the
/// same service at once, one of them can see it half-created.
fn retry_open<T, E: std::fmt::Debug>(
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

fn open_pubsub(
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

fn open_event(node: &Node<Svc>, name: &str, s: &Shape) -> Result<EventService<Svc>, BindingError> {
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
fn wait_until(
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

/// Writer of the iceoryx2 binding: a publisher (and, when readers block, a
/// notifier) of one topic's services.
pub struct Iceoryx2Writer {
    publisher: Publisher<Svc, [u8], ()>,
    notifier: Option<Notifier<Svc>>,
    service: PubSubService<Svc, [u8], ()>,
    events: Option<EventService<Svc>>,
    /// Copy mode: the application's private sample.
    scratch: Vec<u8>,
    max: usize,
    zero_copy: bool,
    reliable: bool,
    block_timeout: Duration,
    cancel: CancelToken,
    name: String,
    /// Declared last: dropped after the ports.
    _tidy: Arc<Tidy>,
}

// SAFETY: iceoryx2's `ipc::Service` ports are `!Send` only because a port
// shares its state through an `Rc` with the samples it loans or receives
// (`SingleThreaded` arc policy). Those samples never outlive a `send` or
// `recv` call, so every clone of each `Rc` moves with the port; the service
// and node handles the ports reach are `Arc`s with their own locking.
unsafe impl Send for Iceoryx2Writer {}

impl Iceoryx2Writer {
    /// Maps an iceoryx2 send error; `UnableToDeliver` is the backpressure
    /// handler's verdict (block timeout or cancellation).
    #[cold]
    fn send_error(&self, e: SendError) -> BindingError {
        match e {
            SendError::UnableToDeliver if self.cancel.is_cancelled() => BindingError::Cancelled,
            SendError::UnableToDeliver => BindingError::WriteTimeout(self.block_timeout),
            SendError::ConnectionBrokenSinceSenderNoLongerExists => BindingError::Disconnected,
            e => mw(format!("send on {}: {e:?}", self.name)),
        }
    }

    /// A loan failed. Every chunk is in use only when a reader holds more
    /// than its share, which iceoryx2 prevents; so this is an error, except
    /// `OutOfMemory` under best effort, which drops the sample.
    #[cold]
    fn loan_error(&self, len: usize, e: LoanError) -> Result<(), BindingError> {
        match e {
            LoanError::ExceedsMaxLoanSize => Err(BindingError::TooLarge {
                size: len,
                limit: self.max,
            }),
            LoanError::OutOfMemory if !self.reliable => Ok(()),
            e => Err(mw(format!("loan on {}: {e:?}", self.name))),
        }
    }

    #[inline(always)]
    fn notify(&self) {
        if let Some(n) = &self.notifier {
            // A failed notification only delays the reader: it polls at
            // least every 100 ms.
            let _ = n.notify();
        }
    }
}

impl Writer for Iceoryx2Writer {
    fn wait_matched(&mut self, readers: usize, timeout: Duration) -> Result<(), BindingError> {
        let cancel = self.cancel.clone();
        let (service, events) = (&self.service, &self.events);
        let counts = || {
            (
                service.dynamic_config().number_of_subscribers(),
                events
                    .as_ref()
                    .map_or(readers, |e| e.dynamic_config().number_of_listeners()),
            )
        };
        wait_until(
            timeout,
            &cancel,
            || {
                let (s, l) = counts();
                format!(
                    "{s} of {readers} subscribers ({l} listeners) on {}",
                    self.name
                )
            },
            || {
                let (s, l) = counts();
                Ok(s >= readers && l >= readers)
            },
        )?;
        // Connect now, so the first sample is not the one that does it.
        self.publisher
            .update_connections()
            .map_err(|e| mw(format!("connecting {}: {e:?}", self.name)))?;
        if let Some(n) = &self.notifier {
            n.update_connections()
                .map_err(|e| mw(format!("connecting {} events: {e:?}", self.name)))?;
        }
        Ok(())
    }

    #[inline]
    fn send<F: FnOnce(&mut [u8])>(&mut self, len: usize, fill: F) -> Result<(), BindingError> {
        if len > self.max {
            return Err(BindingError::TooLarge {
                size: len,
                limit: self.max,
            });
        }
        let mut loan = match self.publisher.loan_slice_uninit(len) {
            Ok(l) => l,
            Err(e) => return self.loan_error(len, e),
        };
        let sample = if self.zero_copy {
            let p = loan.payload_mut();
            // SAFETY: the loaned chunk is `len` bytes of the publisher's
            // mmap'd data segment, ours until `send`. Its bytes are always
            // initialized memory (zero pages, then earlier samples):
            // `MaybeUninit` only records that iceoryx2 did not write them,
            // and `fill` may write fewer than all of them.
            let buf = unsafe { std::slice::from_raw_parts_mut(p.as_mut_ptr().cast::<u8>(), len) };
            fill(buf);
            // SAFETY: as above, every byte is initialized.
            unsafe { loan.assume_init() }
        } else {
            let buf = &mut self.scratch[..len];
            fill(buf);
            loan.write_from_slice(buf)
        };
        if let Err(e) = sample.send() {
            let err = self.send_error(e);
            // Under reliable delivery the sample may have reached other
            // readers; wake them anyway.
            self.notify();
            return Err(err);
        }
        self.notify();
        Ok(())
    }
}

// ---------------------------------------------------------------- reader

/// Reader of the iceoryx2 binding: a subscriber (and, when it blocks, a
/// listener) of one topic's services.
pub struct Iceoryx2Reader {
    subscriber: Subscriber<Svc, [u8], ()>,
    listener: Option<Listener<Svc>>,
    service: PubSubService<Svc, [u8], ()>,
    events: Option<EventService<Svc>>,
    publishers: usize,
    /// Copy mode: the application's private buffer samples are copied into.
    private: Vec<u8>,
    zero_copy: bool,
    wait: WaitMode,
    /// Most samples delivered by one `recv` (the buffer and one more), so a
    /// fast writer cannot keep `recv` from returning.
    drain_max: usize,
    cancel: CancelToken,
    name: String,
    /// Declared last: dropped after the ports.
    _tidy: Arc<Tidy>,
}

// SAFETY: see `Iceoryx2Writer`: samples never outlive `recv`.
unsafe impl Send for Iceoryx2Reader {}

impl Iceoryx2Reader {
    /// Delivers the samples available now (at most `drain_max`).
    #[inline(always)]
    fn drain<F: FnMut(&[u8])>(&mut self, on_sample: &mut F) -> Result<usize, BindingError> {
        let mut n = 0;
        while n < self.drain_max {
            let sample = match self.subscriber.receive() {
                Ok(Some(s)) => s,
                Ok(None) => break,
                Err(e) => return Err(mw(format!("receive on {}: {e:?}", self.name))),
            };
            n += 1;
            if self.zero_copy {
                on_sample(sample.payload());
                drop(sample);
            } else {
                let p = sample.payload();
                let len = p.len();
                if len > self.private.len() {
                    return Err(BindingError::Malformed(format!(
                        "{len}-byte sample on {} (largest {})",
                        self.name,
                        self.private.len()
                    )));
                }
                self.private[..len].copy_from_slice(p);
                // The chunk goes back to the publisher before the
                // application looks at its copy.
                drop(sample);
                on_sample(&self.private[..len]);
            }
        }
        Ok(n)
    }

    #[cold]
    fn wait_event(&self, left: Duration) -> Result<(), BindingError> {
        let Some(l) = &self.listener else {
            return Ok(());
        };
        match l.timed_wait(|_| {}, left.min(CANCEL_POLL)) {
            Ok(_) | Err(ListenerWaitError::InterruptSignal) => Ok(()),
            Err(e) => Err(mw(format!("waiting on {} events: {e:?}", self.name))),
        }
    }
}

impl Reader for Iceoryx2Reader {
    fn wait_matched(&mut self, timeout: Duration) -> Result<(), BindingError> {
        let want = self.publishers;
        let (service, events) = (&self.service, &self.events);
        let counts = || {
            (
                service.dynamic_config().number_of_publishers(),
                events
                    .as_ref()
                    .map_or(want, |e| e.dynamic_config().number_of_notifiers()),
            )
        };
        wait_until(
            timeout,
            &self.cancel,
            || {
                let (p, n) = counts();
                format!("{p} of {want} publishers ({n} notifiers) on {}", self.name)
            },
            || {
                let (p, n) = counts();
                Ok(p >= want && n >= want)
            },
        )?;
        // Attach to the publishers' connections now: until the subscriber
        // has, a reliable publisher does not block on its full buffer (it
        // drops instead), and the first `recv` would pay for connecting.
        self.subscriber
            .has_samples()
            .map_err(|e| mw(format!("connecting {}: {e:?}", self.name)))?;
        Ok(())
    }

    #[inline]
    fn recv<F: FnMut(&[u8])>(
        &mut self,
        timeout: Duration,
        on_sample: &mut F,
    ) -> Result<usize, BindingError> {
        let n = self.drain(on_sample)?;
        if n > 0 {
            return Ok(n);
        }
        let start = Instant::now();
        match self.wait {
            WaitMode::Busy => {
                let mut spins = 0u32;
                loop {
                    let n = self.drain(on_sample)?;
                    if n > 0 {
                        return Ok(n);
                    }
                    spins = spins.wrapping_add(1);
                    if spins.is_multiple_of(256) {
                        if self.cancel.is_cancelled() {
                            return Err(BindingError::Cancelled);
                        }
                        if start.elapsed() >= timeout {
                            return Ok(0);
                        }
                    }
                    std::hint::spin_loop();
                }
            }
            WaitMode::Block => loop {
                if self.cancel.is_cancelled() {
                    return Err(BindingError::Cancelled);
                }
                let elapsed = start.elapsed();
                if elapsed >= timeout {
                    return Ok(0);
                }
                // The writer notifies after each send, so a sample that
                // arrives after the drain above wakes this wait.
                self.wait_event(timeout - elapsed)?;
                let n = self.drain(on_sample)?;
                if n > 0 {
                    return Ok(n);
                }
            },
        }
    }
}

#[cfg(test)]
mod tests;
