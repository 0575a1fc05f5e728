//! `intra`: publisher and subscriber are threads of one process. Each reader
//! owns a single-producer single-consumer ring of pre-allocated slots; the
//! writer fills a slot in place and publishes it with one release store, the
//! reader reads the slot in place (a borrowed view) and frees it with one
//! release store. No locks and no allocation per sample.
//!
//! Waiting: busy mode spins on the ring; block mode parks the reader thread
//! and the writer unparks it after each publish (a futex wake when it
//! sleeps). Reliable writers wait for a free slot (bounded by
//! `reliable_block_timeout_ms`); best-effort writers drop the sample when the
//! ring is full, and the reader sees the sequence gap.

use pubsubperf_core::Received;
use pubsubperf_core::binding::{BindingInfo, CANCEL_POLL, poll_matched};
use pubsubperf_core::{
    Binding, BindingError, CancelToken, Capabilities, DataType, EndpointConfig, Locator, Reader,
    Reliability, TopicSpec, WaitMode, Writer,
};
use std::cell::UnsafeCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// Largest sample: 1 GiB.
pub const MAX_INTRA_SAMPLE: usize = 1 << 30;
/// Slots per ring unless `receive_queue` says otherwise.
const DEFAULT_SLOTS: usize = 64;
/// Rings are capped at this much memory (fewer slots for big samples).
const RING_BYTES: usize = 512 << 20;

struct Slot {
    len: UnsafeCell<usize>,
    data: UnsafeCell<Box<[u8]>>,
}

/// One reader's ring.
struct Ring {
    slots: Box<[Slot]>,
    /// Next slot the writer fills (only the writer stores it).
    tail: AtomicUsize,
    /// Next slot the reader reads (only the reader stores it).
    head: AtomicUsize,
    reader: OnceLock<Thread>,
    writer_attached: AtomicBool,
}

// SAFETY: a slot is written only by the single writer while it is outside
// head..tail, and read only by the single reader while it is inside; the
// release/acquire pair on tail/head orders the accesses.
unsafe impl Sync for Ring {}
unsafe impl Send for Ring {}

impl Ring {
    fn new(slots: usize, size: usize) -> Ring {
        Ring {
            slots: (0..slots)
                .map(|_| Slot {
                    len: UnsafeCell::new(0),
                    data: UnsafeCell::new(vec![0u8; size].into_boxed_slice()),
                })
                .collect(),
            tail: AtomicUsize::new(0),
            head: AtomicUsize::new(0),
            reader: OnceLock::new(),
            writer_attached: AtomicBool::new(false),
        }
    }
}

fn registry() -> &'static Mutex<HashMap<String, Arc<Ring>>> {
    static R: OnceLock<Mutex<HashMap<String, Arc<Ring>>>> = OnceLock::new();
    R.get_or_init(Default::default)
}

/// The `intra` binding.
pub struct Intra {
    cfg: EndpointConfig,
}

impl Binding for Intra {
    type Writer = IntraWriter;
    type Reader = IntraReader;

    fn info() -> BindingInfo {
        BindingInfo {
            name: "intra",
            description: "threads of one process, lock-free ring (the floor of any binding)",
            version: env!("CARGO_PKG_VERSION").to_string(),
            capabilities: Capabilities {
                reliable: true,
                best_effort: true,
                default_reliability: Reliability::Reliable,
                multicast: false,
                max_sample_size: MAX_INTRA_SAMPLE,
                zero_copy: false,
                batching: false,
                multiple_subscribers: true,
                transports: &["intra"],
                data_types: &[DataType::Bytes],
                in_process: true,
                remote: false,
                receive: &[pubsubperf_core::ReceiveMode::Thread],
            },
            available: Ok(()),
        }
    }

    fn validate(cfg: &EndpointConfig) -> Result<(), BindingError> {
        crate::refuse_queues(
            "intra",
            cfg,
            false,
            "the writer puts each sample in the reader's ring: --receive-queue",
        )
    }

    fn open(cfg: &EndpointConfig) -> Result<Self, BindingError> {
        Self::validate(cfg)?;
        Ok(Intra { cfg: cfg.clone() })
    }

    fn create_reader(&mut self, topic: &TopicSpec) -> Result<(IntraReader, Locator), BindingError> {
        let size = self.cfg.max_sample_size.max(1);
        let wanted = if self.cfg.receive_queue > 0 {
            self.cfg.receive_queue
        } else {
            DEFAULT_SLOTS
        };
        let slots = wanted.min(RING_BYTES / size).max(2);
        let ring = Arc::new(Ring::new(slots, size));
        let name = format!("intra:{}/{}/{}", self.cfg.run_id, topic.name, topic.index);
        registry()
            .lock()
            .expect("registry lock")
            .insert(name.clone(), ring.clone());
        Ok((
            IntraReader {
                ring,
                name: name.clone(),
                wait: self.cfg.wait,
                cancel: self.cfg.cancel.clone(),
            },
            name,
        ))
    }

    fn create_writer(
        &mut self,
        _topic: &TopicSpec,
        readers: &[Locator],
    ) -> Result<IntraWriter, BindingError> {
        let reg = registry().lock().expect("registry lock");
        let mut rings = Vec::new();
        for l in readers {
            let r = reg.get(l).ok_or_else(|| {
                BindingError::Middleware(format!("no intra reader '{l}' in this process"))
            })?;
            r.writer_attached.store(true, Ordering::Release);
            rings.push(r.clone());
        }
        Ok(IntraWriter {
            rings,
            scratch: vec![0; self.cfg.max_sample_size],
            reliable: self.cfg.reliability == Reliability::Reliable,
            block_timeout: Duration::from_millis(self.cfg.reliable_block_timeout_ms),
            cancel: self.cfg.cancel.clone(),
        })
    }
}

/// Writer of the `intra` binding.
pub struct IntraWriter {
    rings: Vec<Arc<Ring>>,
    scratch: Vec<u8>,
    reliable: bool,
    block_timeout: Duration,
    cancel: CancelToken,
}

impl IntraWriter {
    /// Waits for a free slot; false when the sample must be dropped.
    #[inline]
    fn reserve(&self, ring: &Ring, tail: usize) -> Result<bool, BindingError> {
        let n = ring.slots.len();
        if tail - ring.head.load(Ordering::Acquire) < n {
            return Ok(true);
        }
        if !self.reliable {
            return Ok(false);
        }
        let start = Instant::now();
        let mut spins = 0u32;
        while tail - ring.head.load(Ordering::Acquire) >= n {
            spins += 1;
            if spins.is_multiple_of(128) {
                std::thread::yield_now();
                if self.cancel.is_cancelled() {
                    return Err(BindingError::Cancelled);
                }
                if start.elapsed() > self.block_timeout {
                    return Err(BindingError::WriteTimeout(self.block_timeout));
                }
            }
            std::hint::spin_loop();
        }
        Ok(true)
    }

    #[inline]
    fn publish(ring: &Ring, tail: usize) {
        ring.tail.store(tail + 1, Ordering::Release);
        if let Some(t) = ring.reader.get() {
            t.unpark();
        }
    }
}

impl Writer for IntraWriter {
    fn wait_matched(&mut self, readers: usize, timeout: Duration) -> Result<(), BindingError> {
        if self.rings.len() < readers {
            return Err(BindingError::MatchTimeout(
                timeout,
                format!("{} of {readers} readers", self.rings.len()),
            ));
        }
        Ok(())
    }

    #[inline]
    fn send<F: FnOnce(&mut [u8])>(&mut self, len: usize, fill: F) -> Result<(), BindingError> {
        if len > self.scratch.len() {
            return Err(BindingError::TooLarge {
                size: len,
                limit: self.scratch.len(),
            });
        }
        if self.rings.len() == 1 {
            // One reader: fill the slot in place.
            let ring = &*self.rings[0];
            let tail = ring.tail.load(Ordering::Relaxed);
            if !self.reserve(ring, tail)? {
                return Ok(());
            }
            let slot = &ring.slots[tail % ring.slots.len()];
            // SAFETY: the slot is outside head..tail, so the reader does not touch it.
            unsafe {
                fill(&mut (&mut *slot.data.get())[..len]);
                *slot.len.get() = len;
            }
            Self::publish(ring, tail);
            return Ok(());
        }
        fill(&mut self.scratch[..len]);
        for ring in &self.rings {
            let tail = ring.tail.load(Ordering::Relaxed);
            if !self.reserve(ring, tail)? {
                continue;
            }
            let slot = &ring.slots[tail % ring.slots.len()];
            // SAFETY: as above.
            unsafe {
                (&mut *slot.data.get())[..len].copy_from_slice(&self.scratch[..len]);
                *slot.len.get() = len;
            }
            Self::publish(ring, tail);
        }
        Ok(())
    }
}

/// Reader of the `intra` binding.
pub struct IntraReader {
    ring: Arc<Ring>,
    name: String,
    wait: WaitMode,
    cancel: CancelToken,
}

impl Drop for IntraReader {
    fn drop(&mut self) {
        if let Ok(mut reg) = registry().lock() {
            reg.remove(&self.name);
        }
    }
}

impl Reader for IntraReader {
    fn wait_matched(&mut self, timeout: Duration) -> Result<(), BindingError> {
        poll_matched(timeout, "no intra writer attached", || {
            self.ring.writer_attached.load(Ordering::Acquire)
        })
    }

    #[inline]
    fn recv<F: FnMut(Received<'_>)>(
        &mut self,
        timeout: Duration,
        on_sample: &mut F,
    ) -> Result<usize, BindingError> {
        let ring = &*self.ring;
        if self.wait == WaitMode::Block && ring.reader.get().is_none() {
            let _ = ring.reader.set(std::thread::current());
        }
        let head = ring.head.load(Ordering::Relaxed);
        let mut start: Option<Instant> = None;
        let mut spins = 0u32;
        loop {
            let tail = ring.tail.load(Ordering::Acquire);
            if tail != head {
                let mut h = head;
                while h != tail {
                    let slot = &ring.slots[h % ring.slots.len()];
                    // SAFETY: the slot is inside head..tail: the writer published it
                    // and will not touch it until head moves past it.
                    unsafe {
                        let len = *slot.len.get();
                        on_sample(Received::whole(&(&*slot.data.get())[..len]));
                    }
                    h += 1;
                    ring.head.store(h, Ordering::Release);
                }
                return Ok(tail - head);
            }
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(256) || self.wait == WaitMode::Block {
                let s = *start.get_or_insert_with(Instant::now);
                let elapsed = s.elapsed();
                if elapsed >= timeout {
                    return Ok(0);
                }
                if self.cancel.is_cancelled() {
                    return Err(BindingError::Cancelled);
                }
                if self.wait == WaitMode::Block {
                    std::thread::park_timeout((timeout - elapsed).min(CANCEL_POLL));
                    continue;
                }
            }
            std::hint::spin_loop();
        }
    }
}
