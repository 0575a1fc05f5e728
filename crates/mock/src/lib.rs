//! `mock`: a deterministic binding for tests of everything above the
//! bindings (results, reports, merges, comparisons, sweeps). It measures no
//! middleware: its figures are synthetic, set by its options, and exact.
//!
//! Publisher and subscribers are threads of one process, joined by bounded
//! queues (a mutex and two condition variables per reader; this binding is
//! not a floor of anything, `intra` is). Its clock ([`Binding::now_ns`]) is
//! **virtual**: a process-wide counter that only the mock's writers advance.
//! Sending sample number `k` of a writer (counted from 0, warm-up included)
//! advances the clock by
//!
//! ```text
//! delay(k) = delay-ns + step-ns × (k mod period)
//! ```
//!
//! before the sample is queued. In a ping-pong the publisher stamps the ping
//! at `T`, the ping's send moves the clock to `T + delay(k)` (the
//! subscriber's receive time), the echo's send to `T + 2·delay(k)`, so the
//! recorded latency (round trip / 2, or one-way) is exactly `delay(k)`.
//! Warm-up, `--duration` and `--rate` run on the same virtual clock, so
//! sample counts are exact too; pacing jumps the clock to the deadline.
//! With the defaults (1000, 10, 100) the latencies are 1000, 1010, ... 1990
//! ns, each as often as the others over any multiple of 100 pings; every
//! value below 2048 ns is exact in the 3-digit histograms.
//!
//! Under best effort, `drop-every=K` makes each writer drop its samples
//! number K-1, 2K-1, ... (after advancing the clock): loss is exact.
//! `refuse-every=K` makes each writer refuse its sends number K-1, 2K-1, ...
//! (after advancing the clock) with [`BindingError::Refused`] (a full writer
//! queue), as a kernel or middleware refusal: best effort counts them as
//! rejected, reliable ends the run with the refusal's message. A full
//! queue drops under best effort and blocks (bounded by the reliable block
//! timeout) under reliable, as in every binding. Options are given with
//! `--opt KEY=VALUE`; the wait mode makes no difference (the reader always
//! blocks on its condition variable).

use pubsubperf_core::Received;
use pubsubperf_core::binding::{BindingInfo, CANCEL_POLL, poll_matched};
use pubsubperf_core::{
    Binding, BindingError, CancelToken, Capabilities, DataType, EndpointConfig, Locator, Reader,
    Refusal, Reliability, TopicSpec, Writer,
};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// Largest sample: 256 MiB.
pub const MAX_MOCK_SAMPLE: usize = 256 << 20;
/// Queue length per reader unless `receive_queue` says otherwise.
const DEFAULT_QUEUE: usize = 64;

/// The virtual clock, in ns; starts at 1 s (0 means "unset" in places).
static CLOCK: AtomicU64 = AtomicU64::new(1_000_000_000);

/// The mock's options (`--opt KEY=VALUE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MockOptions {
    /// Base delay per send, ns (`delay-ns`).
    pub delay_ns: u64,
    /// Added per step of the cycle, ns (`step-ns`).
    pub step_ns: u64,
    /// Length of the cycle, sends (`period`).
    pub period: u64,
    /// Drop every Kth send under best effort (`drop-every`, 0: none).
    pub drop_every: u64,
    /// Refuse every Kth send (`refuse-every`, 0: none).
    pub refuse_every: u64,
}

impl Default for MockOptions {
    fn default() -> Self {
        MockOptions {
            delay_ns: 1000,
            step_ns: 10,
            period: 100,
            drop_every: 0,
            refuse_every: 0,
        }
    }
}

impl MockOptions {
    /// Reads the options of a configuration; the error names the option.
    pub fn from_config(cfg: &EndpointConfig) -> Result<Self, BindingError> {
        let mut o = MockOptions::default();
        for (k, v) in &cfg.options {
            let n: u64 = v.parse().map_err(|_| {
                BindingError::Unsupported(format!(
                    "--opt {k}={v}: mock wants a whole number (e.g. --opt {k}=1000)"
                ))
            })?;
            match k.as_str() {
                "delay-ns" => o.delay_ns = n,
                "step-ns" => o.step_ns = n,
                "period" if n == 0 => {
                    return Err(BindingError::Unsupported(
                        "--opt period=0: the cycle needs at least 1 send".into(),
                    ));
                }
                "period" => o.period = n,
                "drop-every" => o.drop_every = n,
                "refuse-every" => o.refuse_every = n,
                _ => {
                    return Err(BindingError::Unsupported(format!(
                        "--opt {k}: mock has no such option (known: delay-ns, step-ns, period, drop-every, refuse-every)"
                    )));
                }
            }
        }
        if o.drop_every > 0 && cfg.reliability == Reliability::Reliable {
            return Err(BindingError::Unsupported(
                "--opt drop-every: only under --best-effort (a reliable writer loses nothing)"
                    .into(),
            ));
        }
        Ok(o)
    }

    /// The clock advance of send number `k`.
    #[inline]
    pub fn delay(&self, k: u64) -> u64 {
        self.delay_ns + self.step_ns * (k % self.period)
    }
}

/// One reader's queue.
struct Chan {
    q: Mutex<VecDeque<Vec<u8>>>,
    not_empty: Condvar,
    not_full: Condvar,
    /// Buffers of taken samples, reused by the writer.
    free: Mutex<Vec<Vec<u8>>>,
    cap: usize,
    writer_attached: AtomicBool,
}

impl Chan {
    fn lock(&self) -> MutexGuard<'_, VecDeque<Vec<u8>>> {
        self.q.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn registry() -> MutexGuard<'static, HashMap<String, Arc<Chan>>> {
    static R: OnceLock<Mutex<HashMap<String, Arc<Chan>>>> = OnceLock::new();
    R.get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// The `mock` binding.
pub struct Mock {
    cfg: EndpointConfig,
    opts: MockOptions,
}

impl Binding for Mock {
    type Writer = MockWriter;
    type Reader = MockReader;

    const VIRTUAL_CLOCK: bool = true;

    fn info() -> BindingInfo {
        BindingInfo {
            name: "mock",
            description: "deterministic test double: virtual clock, synthetic exact figures (measures nothing)",
            version: env!("CARGO_PKG_VERSION").to_string(),
            capabilities: Capabilities {
                reliable: true,
                best_effort: true,
                default_reliability: Reliability::Reliable,
                multicast: false,
                max_sample_size: MAX_MOCK_SAMPLE,
                zero_copy: false,
                batching: false,
                multiple_subscribers: true,
                transports: &["mock"],
                data_types: &[DataType::Bytes],
                in_process: true,
                remote: false,
                receive: &[pubsubperf_core::ReceiveMode::Thread],
            },
            available: Ok(()),
        }
    }

    fn validate(cfg: &EndpointConfig) -> Result<(), BindingError> {
        MockOptions::from_config(cfg).map(|_| ())
    }

    #[inline]
    fn now_ns() -> u64 {
        CLOCK.load(Ordering::Acquire)
    }

    fn wait_until(deadline_ns: u64) {
        // Waiting in virtual time is a jump of the clock.
        CLOCK.fetch_max(deadline_ns, Ordering::AcqRel);
    }

    fn open(cfg: &EndpointConfig) -> Result<Self, BindingError> {
        Ok(Mock {
            opts: MockOptions::from_config(cfg)?,
            cfg: cfg.clone(),
        })
    }

    fn create_reader(&mut self, topic: &TopicSpec) -> Result<(MockReader, Locator), BindingError> {
        let cap = if self.cfg.receive_queue > 0 {
            self.cfg.receive_queue
        } else {
            DEFAULT_QUEUE
        };
        let chan = Arc::new(Chan {
            q: Mutex::new(VecDeque::with_capacity(cap)),
            not_empty: Condvar::new(),
            not_full: Condvar::new(),
            free: Mutex::new(Vec::with_capacity(cap)),
            cap,
            writer_attached: AtomicBool::new(false),
        });
        let name = format!("mock:{}/{}/{}", self.cfg.run_id, topic.name, topic.index);
        registry().insert(name.clone(), chan.clone());
        Ok((
            MockReader {
                chan,
                name: name.clone(),
                taken: VecDeque::with_capacity(cap),
                cancel: self.cfg.cancel.clone(),
            },
            name,
        ))
    }

    fn create_writer(
        &mut self,
        _topic: &TopicSpec,
        readers: &[Locator],
    ) -> Result<MockWriter, BindingError> {
        let reg = registry();
        let mut chans = Vec::new();
        for l in readers {
            let c = reg.get(l).ok_or_else(|| {
                BindingError::Middleware(format!("no mock reader '{l}' in this process"))
            })?;
            c.writer_attached.store(true, Ordering::Release);
            chans.push(c.clone());
        }
        Ok(MockWriter {
            chans,
            scratch: vec![0; self.cfg.max_sample_size],
            sent: 0,
            opts: self.opts,
            reliable: self.cfg.reliability == Reliability::Reliable,
            block_timeout: Duration::from_millis(self.cfg.reliable_block_timeout_ms),
            cancel: self.cfg.cancel.clone(),
        })
    }
}

/// Writer of the `mock` binding.
pub struct MockWriter {
    chans: Vec<Arc<Chan>>,
    scratch: Vec<u8>,
    sent: u64,
    opts: MockOptions,
    reliable: bool,
    block_timeout: Duration,
    cancel: CancelToken,
}

impl Writer for MockWriter {
    fn wait_matched(&mut self, readers: usize, timeout: Duration) -> Result<(), BindingError> {
        if self.chans.len() < readers {
            return Err(BindingError::MatchTimeout(
                timeout,
                format!("{} of {readers} readers", self.chans.len()),
            ));
        }
        Ok(())
    }

    fn send<F: FnOnce(&mut [u8])>(&mut self, len: usize, fill: F) -> Result<(), BindingError> {
        if len > self.scratch.len() {
            return Err(BindingError::TooLarge {
                size: len,
                limit: self.scratch.len(),
            });
        }
        let k = self.sent;
        self.sent += 1;
        // The sample is stamped before the clock moves: the advance is its
        // time in flight.
        fill(&mut self.scratch[..len]);
        CLOCK.fetch_add(self.opts.delay(k), Ordering::AcqRel);
        if self.opts.refuse_every > 0 && (k + 1).is_multiple_of(self.opts.refuse_every) {
            return Err(BindingError::Refused {
                what: "mock send",
                refusal: Refusal::QueueFull,
            });
        }
        if self.opts.drop_every > 0 && (k + 1).is_multiple_of(self.opts.drop_every) {
            return Ok(());
        }
        for chan in &self.chans {
            let mut q = chan.lock();
            if q.len() >= chan.cap {
                if !self.reliable {
                    continue;
                }
                let start = Instant::now();
                while q.len() >= chan.cap {
                    if self.cancel.is_cancelled() {
                        return Err(BindingError::Cancelled);
                    }
                    let waited = start.elapsed();
                    if waited > self.block_timeout {
                        return Err(BindingError::WriteTimeout(self.block_timeout));
                    }
                    let left = (self.block_timeout - waited).min(CANCEL_POLL);
                    q = chan
                        .not_full
                        .wait_timeout(q, left)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
            }
            let mut buf = chan
                .free
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .pop()
                .unwrap_or_default();
            buf.clear();
            buf.extend_from_slice(&self.scratch[..len]);
            q.push_back(buf);
            drop(q);
            chan.not_empty.notify_one();
        }
        Ok(())
    }

    /// The bytes as given, as the socket bindings send an echo: so the
    /// mock runs exercise the harness's in-place echo (and its exceptions:
    /// `--one-way` needs our receive time in the echo).
    fn send_from(&mut self, bytes: &[u8]) -> Option<Result<(), BindingError>> {
        Some(self.send(bytes.len(), |b| b.copy_from_slice(bytes)))
    }
}

/// Reader of the `mock` binding.
pub struct MockReader {
    chan: Arc<Chan>,
    name: String,
    taken: VecDeque<Vec<u8>>,
    cancel: CancelToken,
}

impl Drop for MockReader {
    fn drop(&mut self) {
        registry().remove(&self.name);
    }
}

impl Reader for MockReader {
    fn wait_matched(&mut self, timeout: Duration) -> Result<(), BindingError> {
        poll_matched(timeout, "no mock writer attached", || {
            self.chan.writer_attached.load(Ordering::Acquire)
        })
    }

    fn recv<F: FnMut(Received<'_>)>(
        &mut self,
        timeout: Duration,
        on_sample: &mut F,
    ) -> Result<usize, BindingError> {
        let start = Instant::now();
        let mut q = self.chan.lock();
        while q.is_empty() {
            if self.cancel.is_cancelled() {
                return Err(BindingError::Cancelled);
            }
            let waited = start.elapsed();
            if waited >= timeout {
                return Ok(0);
            }
            let left = (timeout - waited).min(CANCEL_POLL);
            q = self
                .chan
                .not_empty
                .wait_timeout(q, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        std::mem::swap(&mut *q, &mut self.taken);
        drop(q);
        self.chan.not_full.notify_all();
        let n = self.taken.len();
        for s in &self.taken {
            on_sample(Received::whole(s));
        }
        self.chan
            .free
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(self.taken.drain(..));
        Ok(n)
    }
}

#[cfg(test)]
mod tests;
