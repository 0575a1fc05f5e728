//! The `shm` binding: [`Shm`], [`ShmWriter`], [`ShmReader`].

use crate::layout::{
    CLOSED, ENTRY_HEAD, EntryHead, FAST_READERS, HEAD_BYTES, MAGIC, NAME_CAP, NONE, OPEN,
    PoolHeader, RefCount, RingHeader, SLOT_HEAD, SlotHead, round_up,
};
use crate::sys::{self, Mapping};
use crate::wait::{self, Outcome};
use pubsubperf_core::binding::BindingInfo;
use pubsubperf_core::{
    Binding, BindingError, CancelToken, Capabilities, DataType, EndpointConfig, Locator, Reader,
    Reliability, TopicSpec, WaitMode, Writer,
};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// Largest sample (header included): 1 GiB.
pub const MAX_SHM_SAMPLE: usize = 1 << 30;
/// Entries per reader ring unless `--receive-queue` says otherwise.
pub const DEFAULT_QUEUE: usize = 256;
/// A copy-mode ring holds at most this many bytes of entries (fewer
/// entries for big samples, but never fewer than [`MIN_QUEUE`]). Small
/// enough that a ring and both sides' private buffers stay in the last-level
/// cache (for 1 MiB samples, 4 MiB measured faster than 2, 8 or 16 MiB).
pub const RING_BYTES: usize = 4 << 20;
/// A zero-copy ring's depth is chosen as if its entries were slots of this
/// many bytes in total, which bounds the pool's size.
pub const POOL_BYTES: usize = 64 << 20;
/// Fewest entries in a ring.
pub const MIN_QUEUE: usize = 2;

/// The `shm` binding: one value per side per run.
pub struct Shm {
    cfg: EndpointConfig,
}

impl Binding for Shm {
    type Writer = ShmWriter;
    type Reader = ShmReader;

    fn info() -> BindingInfo {
        BindingInfo {
            name: "shm",
            description: "POSIX shared memory between processes, copy or zero-copy (loaned slots), futex wake-ups",
            version: env!("CARGO_PKG_VERSION").to_string(),
            capabilities: Capabilities {
                reliable: true,
                best_effort: true,
                default_reliability: Reliability::Reliable,
                multicast: false,
                max_sample_size: MAX_SHM_SAMPLE,
                zero_copy: true,
                batching: false,
                multiple_subscribers: true,
                transports: &["shm"],
                data_types: &[DataType::Bytes, DataType::Flat],
                in_process: false,
                remote: false,
            },
            available: available(),
        }
    }

    fn validate(cfg: &EndpointConfig) -> Result<(), BindingError> {
        if !cfg.transport.is_empty() && cfg.transport != "shm" {
            return Err(BindingError::Unsupported(format!(
                "--transport {}: shm offers shm",
                cfg.transport
            )));
        }
        if cfg.multicast {
            return Err(BindingError::Unsupported(
                "--multicast: shm has no multicast".into(),
            ));
        }
        if cfg.batch_bytes > 0 {
            return Err(BindingError::Unsupported(
                "--batch: shm does not batch".into(),
            ));
        }
        if let Some(k) = cfg.options.keys().next() {
            return Err(BindingError::Unsupported(format!(
                "--opt {k}: shm takes no binding options"
            )));
        }
        if cfg.max_sample_size > MAX_SHM_SAMPLE {
            return Err(BindingError::TooLarge {
                size: cfg.max_sample_size,
                limit: MAX_SHM_SAMPLE,
            });
        }
        Ok(())
    }

    fn open(cfg: &EndpointConfig) -> Result<Self, BindingError> {
        Self::validate(cfg)?;
        // Segments of runs killed before their peer mapped them carry the
        // pid of a process that is gone: remove them.
        sys::sweep_stale();
        Ok(Shm { cfg: cfg.clone() })
    }

    fn create_reader(&mut self, topic: &TopicSpec) -> Result<(ShmReader, Locator), BindingError> {
        ShmReader::create(&self.cfg, topic)
    }

    fn create_writer(
        &mut self,
        topic: &TopicSpec,
        readers: &[Locator],
    ) -> Result<ShmWriter, BindingError> {
        ShmWriter::create(&self.cfg, topic, readers)
    }
}

fn available() -> Result<(), String> {
    match std::fs::metadata("/dev/shm") {
        Ok(m) if m.is_dir() => Ok(()),
        _ => Err("/dev/shm is missing (POSIX shared memory needs a tmpfs there)".into()),
    }
}

/// Ring depth for samples of up to `max` bytes within `budget` bytes of
/// samples (entry heads and padding not counted).
fn queue_len(cfg: &EndpointConfig, max: usize, budget: usize) -> usize {
    let wanted = if cfg.receive_queue > 0 {
        cfg.receive_queue
    } else {
        DEFAULT_QUEUE
    };
    wanted.min(budget / max.max(1)).max(MIN_QUEUE)
}

/// Bytes per entry or slot with a `head`-byte head for samples up to `max`:
/// whole cache lines, whole pages from one page on.
fn slot_stride(head: usize, max: usize) -> usize {
    let s = round_up(head + max.max(1), 64);
    if s >= 4096 { round_up(s, 4096) } else { s }
}

/// The word a writer stores in a slot head's `posted` for the sample at
/// ring position `pos`: its low 31 bits with the top bit set. Never 0, the
/// value of a word nobody stored to yet (or that the writer cleared), so a
/// slot announced but not yet filled never looks posted, not even at
/// position 2^32 - 1 (an earlier `pos + 1` did, there); and two positions
/// have the same mark only 2^31 apart, far more than any slot stays unused.
#[inline(always)]
const fn posted_mark(pos: u64) -> u32 {
    (pos as u32) | 0x8000_0000
}

// ---------------------------------------------------------------- reader

/// Reader of the `shm` binding. It owns its ring segment.
pub struct ShmReader {
    _map: Mapping,
    name: String,
    hdr: *const RingHeader,
    data: *mut u8,
    capacity: u64,
    stride: usize,
    max: usize,
    /// Next entry to read (mirror of `consumer.pos`).
    head: u64,
    zero_copy: bool,
    bytes: bool,
    wait: WaitMode,
    cancel: CancelToken,
    /// Copy mode: the private buffer samples are copied out into.
    private: Vec<u8>,
    pool: Option<Box<PoolMap>>,
    /// Zero-copy: our word in every slot head's `posted`, if we have one.
    fast: Option<usize>,
    /// Zero-copy: the slot the writer said its next sample goes into
    /// ([`NONE`]: unknown).
    predict: u32,
}

// SAFETY: the raw pointers point into `map` (and `pool`), owned by the reader.
unsafe impl Send for ShmReader {}

impl ShmReader {
    fn create(
        cfg: &EndpointConfig,
        topic: &TopicSpec,
    ) -> Result<(ShmReader, Locator), BindingError> {
        let max = cfg.max_sample_size.max(1);
        let (stride, capacity) = if cfg.zero_copy {
            (ENTRY_HEAD, queue_len(cfg, max, POOL_BYTES))
        } else {
            let s = slot_stride(ENTRY_HEAD, max);
            (s, queue_len(cfg, max, RING_BYTES))
        };
        let len = HEAD_BYTES + round_up(capacity * stride, 64);
        let name = sys::segment_name(&cfg.run_id, &format!("{}-{}", topic.name, topic.index));
        let map = Mapping::create(&name, len)?;
        let hdr = map.ptr() as *mut RingHeader;
        // SAFETY: fresh zeroed mapping of at least HEAD_BYTES; nobody else
        // knows its name yet.
        unsafe {
            (*hdr).meta.magic = MAGIC;
            (*hdr).meta.capacity = capacity as u64;
            (*hdr).meta.stride = stride as u64;
            (*hdr).meta.max_sample = max as u64;
            (*hdr).meta.reader_pid = std::process::id();
            (*hdr).meta.zero_copy = u32::from(cfg.zero_copy);
            (*hdr).link.reader_state.store(OPEN, Ordering::Release);
        }
        let data = map.ptr().wrapping_add(HEAD_BYTES);
        Ok((
            ShmReader {
                hdr,
                data,
                _map: map,
                name: name.clone(),
                capacity: capacity as u64,
                stride,
                max,
                head: 0,
                zero_copy: cfg.zero_copy,
                bytes: cfg.data_type == DataType::Bytes,
                wait: cfg.wait,
                cancel: cfg.cancel.clone(),
                private: if cfg.zero_copy {
                    Vec::new()
                } else {
                    vec![0; max]
                },
                pool: None,
                fast: None,
                predict: NONE,
            },
            name,
        ))
    }

    #[inline(always)]
    fn hdr(&self) -> &RingHeader {
        // SAFETY: `hdr` points at the head of our live mapping.
        unsafe { &*self.hdr }
    }

    /// Maps the writer's pool once the writer named it (zero-copy).
    fn attach_pool(&mut self) -> Result<bool, BindingError> {
        if self.pool.is_some() || !self.zero_copy {
            return Ok(true);
        }
        let link = &self.hdr().link;
        if link.writer_state.load(Ordering::Acquire) == 0 {
            return Ok(false);
        }
        let n = (link.pool_len.load(Ordering::Acquire) as usize).min(NAME_CAP);
        let name = String::from_utf8_lossy(&link.pool_name[..n]).into_owned();
        let pool = Box::new(PoolMap::open(&name)?);
        let fast = link.fast_index.load(Ordering::Acquire) as usize;
        self.fast = (fast < FAST_READERS).then_some(fast);
        let ph = pool.hdr();
        if ph.mapped.pos.fetch_add(1, Ordering::AcqRel) + 1 >= u64::from(ph.meta.readers) {
            // Every reader has it mapped: its name is no longer needed.
            sys::unlink(&name);
        }
        self.pool = Some(pool);
        Ok(true)
    }

    #[inline(always)]
    fn consume(&mut self) {
        self.head += 1;
        let c = &self.hdr().consumer;
        c.pos.store(self.head, Ordering::Release);
        if self.wait == WaitMode::Block {
            wait::notify(c);
        }
    }

    /// The head of the entry at position `pos`.
    #[inline(always)]
    fn entry(&self, pos: u64) -> *const EntryHead {
        self.data
            .wrapping_add((pos % self.capacity) as usize * self.stride)
            .cast()
    }

    /// Where the sample at position `head` is (slot, length), once the
    /// writer completed it (zero-copy): through the slot the writer
    /// announced (one cache line), else through the ring entry. With an
    /// announced slot, the entry is read only when `entry` is true: the
    /// writer stores it on every sample, so reading it on every look
    /// (the one that finds nothing yet, before each wait) fetches a line
    /// from the writer's core each time, traffic that slowed a busy
    /// ping-pong by some nanoseconds each way. A sample the announced slot
    /// did not get (dropped for us under best effort) is found by the wait,
    /// which looks at the entry too, and read with `entry` set.
    #[inline(always)]
    fn locate(&self, pool: &PoolMap, entry: bool) -> Option<(usize, usize)> {
        let want = self.head + 1;
        if let Some(i) = self.fast
            && (self.predict as usize) < pool.slots
        {
            let h = pool.head(self.predict as usize);
            if h.posted[i].load(Ordering::Acquire) == posted_mark(self.head) {
                // The writer stored the length before `posted` (release).
                return Some((
                    self.predict as usize,
                    h.len.load(Ordering::Relaxed) as usize,
                ));
            }
            if !entry {
                return None;
            }
        }
        let e = self.entry(self.head);
        // SAFETY: `e` is an entry head inside our mapping; the writer
        // completed it before storing its sequence number and does not touch
        // it again until `consumer.pos` moves past it.
        unsafe {
            if (*e).seq.load(Ordering::Acquire) != want {
                return None;
            }
            Some(((*e).slot as usize, (*e).len as usize))
        }
    }

    /// Checks the length prefix of a `bytes` sample at `body`.
    #[inline(always)]
    fn check_prefix(&self, body: *const u8, len: usize) -> Result<(), BindingError> {
        if self.bytes {
            // Deserialize: the sequence's length prefix sits right before
            // its bytes and must match the descriptor.
            // SAFETY: every sample is preceded by its head.
            let prefix = unsafe { (body.sub(4) as *const u32).read_unaligned() } as usize;
            if prefix != len {
                return Err(BindingError::Malformed(format!(
                    "length prefix {prefix} for a {len}-byte sample"
                )));
            }
        }
        Ok(())
    }

    /// Delivers the complete entries from `head` on (at most one lap).
    /// Zero-copy: `entry` as in [`ShmReader::locate`], for the first sample.
    #[inline(always)]
    fn drain<F: FnMut(&[u8])>(
        &mut self,
        on_sample: &mut F,
        entry: bool,
    ) -> Result<usize, BindingError> {
        if self.zero_copy {
            return self.drain_zero_copy(on_sample, entry);
        }
        let mut n = 0;
        while n < self.capacity as usize {
            let e = self.entry(self.head);
            // SAFETY: `e` is an entry head inside our mapping.
            if unsafe { (*e).seq.load(Ordering::Acquire) } != self.head + 1 {
                break;
            }
            n += 1;
            // SAFETY: the writer completed the entry before storing its
            // sequence number and does not touch it again until
            // `consumer.pos` moves past it.
            let len = unsafe { (*e).len as usize };
            if len > self.max {
                return Err(BindingError::Malformed(format!(
                    "{len}-byte entry in a ring of {}-byte samples",
                    self.max
                )));
            }
            let body = e.cast::<u8>().wrapping_add(ENTRY_HEAD);
            self.check_prefix(body, len)?;
            // SAFETY: `len <= max`, the size of `private`; the entry is
            // ours until `consume`.
            unsafe { std::ptr::copy_nonoverlapping(body, self.private.as_mut_ptr(), len) };
            self.consume();
            on_sample(&self.private[..len]);
        }
        Ok(n)
    }

    #[inline(always)]
    fn drain_zero_copy<F: FnMut(&[u8])>(
        &mut self,
        on_sample: &mut F,
        entry: bool,
    ) -> Result<usize, BindingError> {
        let pool = self.pool.take().expect("pool mapped before data");
        let r = self.drain_pool(&pool, on_sample, entry);
        self.pool = Some(pool);
        r
    }

    #[inline(always)]
    fn drain_pool<F: FnMut(&[u8])>(
        &mut self,
        pool: &PoolMap,
        on_sample: &mut F,
        entry: bool,
    ) -> Result<usize, BindingError> {
        let mut n = 0;
        while n < self.capacity as usize {
            let Some((slot, len)) = self.locate(pool, entry && n == 0) else {
                break;
            };
            n += 1;
            if slot >= pool.slots || len > pool.max {
                return Err(BindingError::Malformed(format!(
                    "reference to slot {slot}, {len} bytes"
                )));
            }
            let body = pool.slot(slot);
            self.check_prefix(body, len)?;
            // Where the next sample will be, read while the slot is ours.
            self.predict = pool.head(slot).next.load(Ordering::Relaxed);
            // SAFETY: the writer filled the slot and counted our reference
            // (or, with one reader, recorded the slot under this position)
            // before publishing it; it stays ours until we drop the count
            // (or consume the position).
            let sample = unsafe { std::slice::from_raw_parts(body, len) };
            if pool.sole {
                // The only reader: consuming the position releases the slot
                // (the writer reclaims the slots of consumed positions), so
                // it comes after the sample was used, and the reader touches
                // no count line (see `Sole`). (Consuming first would happen
                // to be harmless with first-in, first-out reuse and a pool
                // of ring depth + 2 slots: the slot is the writer's `after`
                // when the ring is full; the test
                // `sole_reader_consumes_after_its_callback` fails for any
                // other reuse order.)
                on_sample(sample);
                self.consume();
            } else {
                self.consume();
                on_sample(sample);
                pool.release(slot, self.wait);
            }
        }
        Ok(n)
    }
}

impl Drop for ShmReader {
    fn drop(&mut self) {
        self.hdr()
            .link
            .reader_state
            .store(CLOSED, Ordering::Release);
        wait::notify(&self.hdr().consumer);
        // If no writer ever mapped our segment its name is still there.
        sys::unlink(&self.name);
        if self.zero_copy && self.pool.is_none() {
            // Count ourselves as mapped, or the pool's name would wait for us.
            let _ = self.attach_pool();
        }
    }
}

impl Reader for ShmReader {
    fn wait_matched(&mut self, timeout: Duration) -> Result<(), BindingError> {
        let start = Instant::now();
        while !self.attach_pool()? || self.hdr().link.writer_state.load(Ordering::Acquire) == 0 {
            if self.cancel.is_cancelled() {
                return Err(BindingError::Cancelled);
            }
            if start.elapsed() > timeout {
                return Err(BindingError::MatchTimeout(
                    timeout,
                    format!("no writer attached to /dev/shm/{}", self.name),
                ));
            }
            // Set-up only: matching is never measured.
            std::thread::sleep(Duration::from_millis(1));
        }
        Ok(())
    }

    #[inline]
    fn recv<F: FnMut(&[u8])>(
        &mut self,
        timeout: Duration,
        on_sample: &mut F,
    ) -> Result<usize, BindingError> {
        if self.pool.is_none() && self.zero_copy && !self.attach_pool()? {
            return Ok(0);
        }
        let n = self.drain(on_sample, false)?;
        if n > 0 {
            return Ok(n);
        }
        let e = self.entry(self.head);
        let want = self.head + 1;
        let mark = posted_mark(self.head);
        // SAFETY: `hdr` and `e` point into our live mapping.
        let (producer, seq) = unsafe { (&(*self.hdr).producer, &(*e).seq) };
        // Zero-copy: the word of the announced slot, polled first (the
        // sample's own cache line).
        let posted = match (&self.pool, self.fast) {
            (Some(pool), Some(i)) if (self.predict as usize) < pool.slots => {
                Some(&pool.head(self.predict as usize).posted[i])
            }
            _ => None,
        };
        let busy = self.wait == WaitMode::Busy;
        let mut polls = 0u32;
        let r = wait::wait(
            producer,
            self.wait,
            timeout,
            &self.cancel,
            || {
                if let Some(p) = posted {
                    if p.load(Ordering::Acquire) == mark {
                        return true;
                    }
                    // Spinning: the entry only every 16th time (a sample
                    // the announced slot did not get, dropped for us under
                    // best effort, is rare), so the writer's store to it
                    // seldom finds the line in our cache.
                    polls = polls.wrapping_add(1);
                    if busy && !polls.is_multiple_of(16) {
                        return false;
                    }
                }
                seq.load(Ordering::Acquire) == want
            },
            || false,
        )?;
        if r != Outcome::Ready {
            return Ok(0);
        }
        // Ready through the announced slot or through the entry: look at
        // both.
        self.drain(on_sample, true)
    }
}

// ---------------------------------------------------------------- pool

/// A mapping of a writer's slot pool.
struct PoolMap {
    map: Mapping,
    counts: *const RefCount,
    data: *mut u8,
    slots: usize,
    stride: usize,
    max: usize,
    /// The pool has one reader, which releases a slot by consuming its
    /// position (see `Sole`); reference counts are used with several.
    sole: bool,
}

// SAFETY: pointers into the owned mapping.
unsafe impl Send for PoolMap {}

impl PoolMap {
    fn layout(slots: usize, max: usize) -> (usize, usize, usize) {
        let stride = slot_stride(SLOT_HEAD, max);
        let data_offset = round_up(HEAD_BYTES + slots * 64, 4096);
        (stride, data_offset, data_offset + slots * stride)
    }

    fn create(name: &str, slots: usize, max: usize, readers: u32) -> Result<PoolMap, BindingError> {
        let (stride, data_offset, len) = Self::layout(slots, max);
        let map = Mapping::create(name, len)?;
        let h = map.ptr() as *mut PoolHeader;
        // SAFETY: fresh zeroed mapping; nobody else knows its name yet.
        unsafe {
            (*h).meta.magic = MAGIC;
            (*h).meta.slots = slots as u64;
            (*h).meta.stride = stride as u64;
            (*h).meta.data_offset = data_offset as u64;
            (*h).meta.readers = readers;
            (*h).meta.writer_pid = std::process::id();
        }
        Ok(PoolMap {
            counts: map.ptr().wrapping_add(HEAD_BYTES) as *const RefCount,
            data: map.ptr().wrapping_add(data_offset),
            map,
            slots,
            stride,
            max,
            sole: readers == 1,
        })
    }

    fn open(name: &str) -> Result<PoolMap, BindingError> {
        let map = Mapping::open(name)?;
        if map.len() < HEAD_BYTES {
            return Err(BindingError::Malformed(format!(
                "pool /dev/shm/{name} is too short"
            )));
        }
        // SAFETY: at least HEAD_BYTES are mapped; the writer wrote the
        // header before publishing the name.
        let m = unsafe { &(*(map.ptr() as *const PoolHeader)).meta };
        let (slots, stride, off) = (m.slots as usize, m.stride as usize, m.data_offset as usize);
        let sole = m.readers == 1;
        if m.magic != MAGIC || slots == 0 || off + slots * stride > map.len() {
            return Err(BindingError::Malformed(format!(
                "/dev/shm/{name} is not a pool of this version"
            )));
        }
        Ok(PoolMap {
            counts: map.ptr().wrapping_add(HEAD_BYTES) as *const RefCount,
            data: map.ptr().wrapping_add(off),
            map,
            slots,
            stride,
            max: stride - SLOT_HEAD,
            sole,
        })
    }

    #[inline(always)]
    fn hdr(&self) -> &PoolHeader {
        // SAFETY: the head of the live mapping.
        unsafe { &*(self.map.ptr() as *const PoolHeader) }
    }

    #[inline(always)]
    fn count(&self, slot: usize) -> &AtomicU32 {
        // SAFETY: slot < slots, within the mapped count array.
        unsafe { &(*self.counts.add(slot)).0 }
    }

    /// Start of the sample in `slot`.
    #[inline(always)]
    fn slot(&self, slot: usize) -> *mut u8 {
        self.data.wrapping_add(slot * self.stride + SLOT_HEAD)
    }

    /// The head of `slot`.
    #[inline(always)]
    fn head(&self, slot: usize) -> &SlotHead {
        // SAFETY: slot < slots; every slot starts with its head.
        unsafe { &*(self.data.wrapping_add(slot * self.stride) as *const SlotHead) }
    }

    /// Drops one reference to `slot`; the last one frees it. Pools with
    /// several readers only (the only reader releases by consuming, see
    /// `Sole`).
    #[inline(always)]
    fn release(&self, slot: usize, mode: WaitMode) {
        let freed = self.count(slot).fetch_sub(1, Ordering::Release) == 1;
        if freed && mode == WaitMode::Block {
            wait::notify(&self.hdr().free);
        }
    }
}

// ---------------------------------------------------------------- writer

/// One reader's ring, as the writer sees it.
struct Target {
    _map: Mapping,
    hdr: *const RingHeader,
    data: *mut u8,
    capacity: u64,
    stride: usize,
    tail: u64,
    /// Last `consumer.pos` seen.
    head: u64,
    reader_pid: u32,
    /// The reader is gone: deliver nothing more.
    closed: bool,
    /// The sample being sent goes to this reader (zero-copy).
    deliver: bool,
    /// Copy into this ring with streaming stores (see [`sys::copy_to_ring`]).
    stream: bool,
}

impl Target {
    #[inline(always)]
    fn hdr(&self) -> &RingHeader {
        // SAFETY: `hdr` points at the head of the live mapping.
        unsafe { &*self.hdr }
    }

    /// The head of the entry the next sample goes into.
    #[inline(always)]
    fn entry(&self) -> *mut EntryHead {
        self.data
            .wrapping_add((self.tail % self.capacity) as usize * self.stride)
            .cast()
    }

    /// Completes the next entry (its body, if any, is written) and hands it
    /// to the reader: the sequence number is stored last, with release.
    #[inline(always)]
    fn publish(&mut self, len: usize, slot: usize, prefix: bool, mode: WaitMode) {
        let e = self.entry();
        // SAFETY: the entry is outside head..tail, so ours to write.
        unsafe {
            (*e).len = len as u64;
            (*e).slot = slot as u64;
            if prefix {
                // The serialized sequence's length, right before its bytes.
                (e.cast::<u8>().add(ENTRY_HEAD - 4) as *mut u32).write_unaligned(len as u32);
            }
            (*e).seq.store(self.tail + 1, Ordering::Release);
        }
        self.tail += 1;
        if mode == WaitMode::Block {
            wait::notify(&self.hdr().producer);
        }
    }

    fn reader_gone(&self) -> bool {
        self.hdr().link.reader_state.load(Ordering::Acquire) == CLOSED
            || !sys::alive(self.reader_pid)
    }
}

/// Free slots of a pool with one reader, known to the writer alone.
///
/// The only reader reads its ring in order and consumes a position after it
/// used the sample, so every slot recorded under a consumed position is free
/// again. The writer records the slot of each position it delivers and
/// reclaims the slots of the positions consumed since it last looked, and
/// it looks (reads the reader's `consumer.pos`, a cache line the reader
/// writes) only when it has no free slot left, once in about a ring's worth
/// of samples. Reference counts would cost a cache line moving between the
/// cores on every sample, each way: the writer sets the count, the reader
/// clears it, the writer reads it (a busy ping-pong measured 5-6 ns faster
/// each way without them).
struct Sole {
    /// The slot of the sample at ring position `p`, at `p % held.len()`.
    held: Vec<u32>,
    /// Positions below this were consumed and their slots are in `free`.
    reclaimed: u64,
    /// Free slots, the longest free first (a slot the reader let go of long
    /// ago is less likely still in its cache: best-effort throughput at
    /// 64 B measured ~10 % higher than reusing the latest one first).
    free: std::collections::VecDeque<u32>,
}

impl Sole {
    fn new(slots: usize, capacity: u64) -> Sole {
        Sole {
            held: vec![NONE; capacity as usize],
            reclaimed: 0,
            free: (0..slots as u32).collect(),
        }
    }

    /// Puts the slots of positions the reader consumed up to `head` back in
    /// `free`. No allocation: `free` has room for every slot. `head` comes
    /// from the reader's segment and is not trusted beyond `tail` (the
    /// writer's next position): a corrupt or foreign value must not make the
    /// writer hand out slots it never recorded.
    #[inline(always)]
    fn reclaim(&mut self, head: u64, tail: u64) {
        let head = head.min(tail);
        let cap = self.held.len() as u64;
        while self.reclaimed < head {
            self.free
                .push_back(self.held[(self.reclaimed % cap) as usize]);
            self.reclaimed += 1;
        }
    }
}

/// Writer of the `shm` binding.
pub struct ShmWriter {
    targets: Vec<Target>,
    pool: Option<PoolMap>,
    pool_name: String,
    /// Next slot to try (zero-copy).
    cursor: usize,
    /// A free slot found ahead of time for the next sample (zero-copy).
    next: Option<usize>,
    /// A free slot for the sample after it, announced in the next one's
    /// head (zero-copy).
    after: Option<usize>,
    /// Zero-copy with one reader: free slots without reference counts.
    sole: Option<Sole>,
    /// The application's private sample (copy mode, or bytes).
    scratch: Vec<u8>,
    max: usize,
    bytes: bool,
    reliable: bool,
    wait: WaitMode,
    block_timeout: Duration,
    cancel: CancelToken,
}

// SAFETY: raw pointers into mappings the writer owns.
unsafe impl Send for ShmWriter {}

impl ShmWriter {
    fn create(
        cfg: &EndpointConfig,
        topic: &TopicSpec,
        readers: &[Locator],
    ) -> Result<ShmWriter, BindingError> {
        let max = cfg.max_sample_size.max(1);
        let mut targets = Vec::with_capacity(readers.len());
        let mut depth = 0;
        // Rings bigger than half the last-level cache are streamed into.
        let stream_above = sys::last_level_cache() / 2;
        for loc in readers {
            let map = Mapping::open(loc)?;
            // Both sides have it mapped now: the name has served its purpose.
            sys::unlink(loc);
            if map.len() < HEAD_BYTES {
                return Err(BindingError::Malformed(format!(
                    "/dev/shm/{loc} is too short"
                )));
            }
            let hdr = map.ptr() as *const RingHeader;
            // SAFETY: at least HEAD_BYTES mapped; the reader wrote the meta
            // before handing out the name.
            let m = unsafe { &(*hdr).meta };
            let (capacity, stride) = (m.capacity, m.stride as usize);
            if m.magic != MAGIC
                || capacity == 0
                || HEAD_BYTES + capacity as usize * stride > map.len()
            {
                return Err(BindingError::Malformed(format!(
                    "/dev/shm/{loc} is not a reader ring of this version"
                )));
            }
            if (m.zero_copy == 1) != cfg.zero_copy || (m.max_sample as usize) < max {
                return Err(BindingError::Unsupported(format!(
                    "reader {loc} was set up differently (zero copy {}, {} bytes)",
                    m.zero_copy, m.max_sample
                )));
            }
            // A ring has exactly one writer: claim it.
            // SAFETY: the link lies within the validated header.
            let link = unsafe { &(*hdr).link };
            if link
                .writer_pid
                .compare_exchange(0, std::process::id(), Ordering::AcqRel, Ordering::Acquire)
                .is_err()
            {
                return Err(BindingError::Unsupported(format!(
                    "reader {loc} already has a writer (an shm ring takes one writer)"
                )));
            }
            depth = depth.max(capacity as usize);
            targets.push(Target {
                data: map.ptr().wrapping_add(HEAD_BYTES),
                reader_pid: m.reader_pid,
                hdr,
                _map: map,
                capacity,
                stride,
                tail: 0,
                head: 0,
                closed: false,
                deliver: false,
                stream: capacity as usize * stride > stream_above,
            });
        }
        let mut pool = None;
        let mut pool_name = String::new();
        let mut sole = None;
        if cfg.zero_copy {
            // Enough slots that readers holding every entry of their ring
            // plus the one they are reading never starve the writer: under
            // best effort they may each hold different ones.
            let n = targets.len().max(1);
            let slots = n * (depth + 1) + 1;
            pool_name = sys::segment_name(&cfg.run_id, &format!("{}-pool", topic.name));
            if pool_name.len() > NAME_CAP {
                return Err(BindingError::Middleware(format!(
                    "pool name too long: {pool_name}"
                )));
            }
            pool = Some(PoolMap::create(
                &pool_name,
                slots,
                max,
                targets.len() as u32,
            )?);
            if let [t] = targets.as_slice() {
                sole = Some(Sole::new(slots, t.capacity));
            }
        }
        for (i, t) in targets.iter().enumerate() {
            let link = &t.hdr().link;
            let fast = if cfg.zero_copy && i < FAST_READERS {
                i as u32
            } else {
                NONE
            };
            link.fast_index.store(fast, Ordering::Release);
            // SAFETY: only the writer writes `pool_name`, before it sets
            // `writer_state`, which the reader reads first.
            unsafe {
                let dst = link.pool_name.as_ptr() as *mut u8;
                std::ptr::copy_nonoverlapping(pool_name.as_ptr(), dst, pool_name.len());
            }
            link.pool_len
                .store(pool_name.len() as u32, Ordering::Release);
            link.writer_state.store(OPEN, Ordering::Release);
        }
        Ok(ShmWriter {
            targets,
            pool,
            pool_name,
            cursor: 0,
            next: None,
            after: None,
            sole,
            scratch: if cfg.zero_copy {
                Vec::new()
            } else {
                vec![0; max]
            },
            max,
            bytes: cfg.data_type == DataType::Bytes,
            reliable: cfg.reliability == Reliability::Reliable,
            wait: cfg.wait,
            block_timeout: Duration::from_millis(cfg.reliable_block_timeout_ms),
            cancel: cfg.cancel.clone(),
        })
    }

    /// Makes room for one entry in target `i`. `Ok(false)`: deliver nothing
    /// to it (best effort and full, or the reader is gone). A consumer
    /// position beyond the tail (a corrupt reader segment) looks full.
    #[inline(always)]
    fn reserve(&mut self, i: usize) -> Result<bool, BindingError> {
        let t = &mut self.targets[i];
        if t.tail.wrapping_sub(t.head) < t.capacity {
            return Ok(true);
        }
        t.head = t.hdr().consumer.pos.load(Ordering::Acquire);
        if t.tail.wrapping_sub(t.head) < t.capacity {
            return Ok(true);
        }
        if t.closed {
            return Ok(false);
        }
        if !self.reliable {
            return Ok(false);
        }
        self.reserve_slow(i)
    }

    #[cold]
    fn reserve_slow(&mut self, i: usize) -> Result<bool, BindingError> {
        let t = &self.targets[i];
        let consumer = &t.hdr().consumer;
        let (tail, cap) = (t.tail, t.capacity);
        let mut head = t.head;
        let r = wait::wait(
            consumer,
            self.wait,
            self.block_timeout,
            &self.cancel,
            || {
                head = consumer.pos.load(Ordering::Acquire);
                tail.wrapping_sub(head) < cap
            },
            || t.reader_gone(),
        )?;
        let t = &mut self.targets[i];
        t.head = head;
        match r {
            Outcome::Ready => Ok(true),
            Outcome::GaveUp => {
                t.closed = true;
                Ok(false)
            }
            Outcome::Timeout => Err(BindingError::WriteTimeout(self.block_timeout)),
        }
    }

    /// Loans a free slot of the pool; `None` under best effort when every
    /// slot is held.
    #[inline(always)]
    fn loan(&mut self) -> Result<Option<usize>, BindingError> {
        if self.sole.is_some() {
            if let Some(s) = self.find_free(None) {
                return Ok(Some(s));
            }
            if !self.reliable {
                return Ok(None);
            }
            return self.loan_slow();
        }
        let pool = self.pool.as_ref().expect("zero-copy writer has a pool");
        let n = pool.slots;
        for k in 0..n {
            let mut s = self.cursor + k;
            if s >= n {
                s -= n;
            }
            if pool.count(s).load(Ordering::Acquire) == 0 {
                self.cursor = if s + 1 == n { 0 } else { s + 1 };
                return Ok(Some(s));
            }
        }
        if !self.reliable {
            return Ok(None);
        }
        self.loan_slow()
    }

    #[cold]
    fn loan_slow(&mut self) -> Result<Option<usize>, BindingError> {
        if let Some(sole) = &self.sole {
            // Wait for the only reader to consume a position.
            let t = &self.targets[0];
            let consumer = &t.hdr().consumer;
            let seen = sole.reclaimed;
            let r = wait::wait(
                consumer,
                self.wait,
                self.block_timeout,
                &self.cancel,
                || consumer.pos.load(Ordering::Acquire) > seen,
                || t.reader_gone(),
            )?;
            return match r {
                Outcome::Ready => Ok(self.find_free(None)),
                Outcome::GaveUp => {
                    self.targets[0].closed = true;
                    Ok(None)
                }
                Outcome::Timeout => Err(BindingError::WriteTimeout(self.block_timeout)),
            };
        }
        let pool = self.pool.as_ref().expect("zero-copy writer has a pool");
        let mut found = 0;
        let r = wait::wait(
            &pool.hdr().free,
            self.wait,
            self.block_timeout,
            &self.cancel,
            || {
                (0..pool.slots).any(|s| {
                    found = s;
                    pool.count(s).load(Ordering::Acquire) == 0
                })
            },
            || false,
        )?;
        match r {
            Outcome::Ready => Ok(Some(found)),
            _ => Err(BindingError::WriteTimeout(self.block_timeout)),
        }
    }

    #[inline(always)]
    fn send_zero_copy<F: FnOnce(&mut [u8])>(
        &mut self,
        len: usize,
        fill: F,
    ) -> Result<(), BindingError> {
        let slot = match self.next.take() {
            Some(s) => s,
            None => match self.loan()? {
                Some(s) => s,
                None => return Ok(()),
            },
        };
        let pool = self.pool.as_ref().expect("pool");
        let p = pool.slot(slot);
        // SAFETY: the slot's count is 0, so no reader holds it, and only this
        // writer hands slots out; `len <= max <= stride - SLOT_HEAD`.
        unsafe {
            fill(std::slice::from_raw_parts_mut(p, len));
            if self.bytes {
                // The serialized sequence: a 4-byte length, then the bytes,
                // which `fill` already put in place.
                (p.sub(4) as *mut u32).write_unaligned(len as u32);
            }
        }
        if self.sole.is_some() {
            return self.deliver_sole(slot, len);
        }
        // Who gets it: room in every ring first (a reliable writer may wait
        // here), then one reference per reader that gets it.
        let mut result = Ok(());
        let mut refs = 0u32;
        for i in 0..self.targets.len() {
            let d = if self.targets[i].closed || result.is_err() {
                false
            } else {
                match self.reserve(i) {
                    Ok(d) => d,
                    Err(e) => {
                        result = Err(e);
                        false
                    }
                }
            };
            self.targets[i].deliver = d;
            refs += u32::from(d);
        }
        if refs == 0 {
            // Nobody took it: the slot is still free, and the next sample's.
            self.next = Some(slot);
            return result;
        }
        let pool = self.pool.as_ref().expect("pool");
        let h = pool.head(slot);
        h.len.store(len as u32, Ordering::Relaxed);
        h.next
            .store(self.after.map_or(NONE, |s| s as u32), Ordering::Relaxed);
        pool.count(slot).store(refs, Ordering::Relaxed);
        // The one-line way first (readers poll it), then the ring entries.
        for (i, t) in self.targets.iter().enumerate().take(FAST_READERS) {
            if t.deliver {
                h.posted[i].store(posted_mark(t.tail), Ordering::Release);
            }
        }
        for t in self.targets.iter_mut() {
            if t.deliver {
                t.publish(len, slot, false, self.wait);
            }
        }
        // The slot announced as the next one is the next one.
        self.next = self.after.take();
        self.prepare_ahead();
        result
    }

    /// Hands the filled `slot` to the only reader: the shortest way from the
    /// fill to the store that publishes it (in a ping-pong the echo's whole
    /// send lies between the reader seeing the ping and the writer seeing
    /// the echo).
    #[inline(always)]
    fn deliver_sole(&mut self, slot: usize, len: usize) -> Result<(), BindingError> {
        let room = if self.targets[0].closed {
            Ok(false)
        } else {
            self.reserve(0)
        };
        if !matches!(room, Ok(true)) {
            // Nobody took it: the slot is still free, and the next sample's.
            self.next = Some(slot);
            return room.map(|_| ());
        }
        let pool = self.pool.as_ref().expect("pool");
        let t = &mut self.targets[0];
        let h = pool.head(slot);
        h.len.store(len as u32, Ordering::Relaxed);
        h.next
            .store(self.after.map_or(NONE, |s| s as u32), Ordering::Relaxed);
        let pos = t.tail;
        h.posted[0].store(posted_mark(pos), Ordering::Release);
        t.publish(len, slot, false, self.wait);
        // Recorded under its position, for `Sole::reclaim`. The entry may
        // still name the slot of the position a lap back, consumed (the
        // ring had room) but not yet reclaimed: reclaim up to the consumer
        // position the ring check saw first.
        let sole = self.sole.as_mut().expect("one reader");
        let cap = sole.held.len() as u64;
        if pos - sole.reclaimed >= cap {
            sole.reclaim(t.head, pos);
        }
        sole.held[(pos % cap) as usize] = slot as u32;
        self.next = self.after.take();
        self.prepare_ahead();
        Ok(())
    }

    /// Keeps the next two loans ready, off the path of the next sample:
    /// the next one's slot, and the one after it, which the next sample
    /// announces to the readers.
    #[inline(always)]
    fn prepare_ahead(&mut self) {
        if self.next.is_none() {
            self.next = self.find_free(None);
        }
        if let Some(n) = self.next {
            self.after = self.find_free(Some(n));
        }
    }

    /// Finds a free slot other than `except` near the cursor and takes its
    /// count's and head's cache lines (a reader released them last), so the
    /// send that uses it neither searches nor waits for those lines. Clears
    /// its `posted` words, so none holds a position of an earlier use.
    #[inline(always)]
    fn find_free(&mut self, except: Option<usize>) -> Option<usize> {
        let pool = self.pool.as_ref().expect("pool");
        if let Some(sole) = &mut self.sole {
            // The slots in hand (`next`, `after`) are never in `free`.
            if sole.free.is_empty() {
                let t = &self.targets[0];
                sole.reclaim(t.hdr().consumer.pos.load(Ordering::Acquire), t.tail);
            }
            // Its `posted` word is not cleared: it holds the mark of the
            // slot's last delivery, at most about 2 x slots + ring depth
            // positions back (`free` is first in, first out, and holds at
            // most every slot), far below the 2^31 after which a mark
            // repeats (see [`posted_mark`]), so never a position the reader
            // waits for. Clearing it cost a store to a line the reader still
            // had, ~15 ns each way in a busy ping-pong.
            return sole.free.pop_front().map(|s| s as usize);
        }
        let n = pool.slots;
        for k in 0..n.min(8) {
            let mut s = self.cursor + k;
            if s >= n {
                s -= n;
            }
            if Some(s) == except {
                continue;
            }
            let count = pool.count(s);
            if count.load(Ordering::Acquire) == 0 {
                self.cursor = if s + 1 == n { 0 } else { s + 1 };
                // A free slot is the writer's alone; readers may read its
                // head (polling `posted`), which holds no position of theirs.
                count.store(0, Ordering::Relaxed);
                let h = pool.head(s);
                for w in h.posted.iter().take(self.targets.len()) {
                    w.store(0, Ordering::Relaxed);
                }
                return Some(s);
            }
        }
        None
    }

    #[inline(always)]
    fn send_copy<F: FnOnce(&mut [u8])>(&mut self, len: usize, fill: F) -> Result<(), BindingError> {
        if !self.bytes && self.targets.len() == 1 {
            // Flat, one reader: the sample is built in place in the ring.
            if self.targets[0].closed || !self.reserve(0)? {
                return Ok(());
            }
            let t = &mut self.targets[0];
            let body = t.entry().cast::<u8>().wrapping_add(ENTRY_HEAD);
            // SAFETY: the entry is outside head..tail, ours to write;
            // `len <= max <= stride - ENTRY_HEAD`.
            fill(unsafe { std::slice::from_raw_parts_mut(body, len) });
            t.publish(len, 0, false, self.wait);
            return Ok(());
        }
        // The application's sample, serialized (bytes) or copied (flat) into
        // every reader's ring.
        fill(&mut self.scratch[..len]);
        for i in 0..self.targets.len() {
            if self.targets[i].closed || !self.reserve(i)? {
                continue;
            }
            let src = self.scratch.as_ptr();
            let t = &mut self.targets[i];
            let body = t.entry().cast::<u8>().wrapping_add(ENTRY_HEAD);
            // SAFETY: as above.
            unsafe { sys::copy_to_ring(src, body, len, t.stream) };
            t.publish(len, 0, self.bytes, self.wait);
        }
        Ok(())
    }
}

impl Drop for ShmWriter {
    fn drop(&mut self) {
        for t in &self.targets {
            t.hdr().link.writer_state.store(CLOSED, Ordering::Release);
            wait::notify(&t.hdr().producer);
        }
        if !self.pool_name.is_empty() {
            // Gone already once every reader mapped it.
            sys::unlink(&self.pool_name);
        }
    }
}

impl Writer for ShmWriter {
    fn wait_matched(&mut self, readers: usize, timeout: Duration) -> Result<(), BindingError> {
        if self.targets.len() < readers {
            return Err(BindingError::MatchTimeout(
                timeout,
                format!("{} of {readers} readers given", self.targets.len()),
            ));
        }
        let Some(pool) = &self.pool else {
            return Ok(());
        };
        let start = Instant::now();
        let want = self.targets.len() as u64;
        while pool.hdr().mapped.pos.load(Ordering::Acquire) < want {
            if self.cancel.is_cancelled() {
                return Err(BindingError::Cancelled);
            }
            if start.elapsed() > timeout {
                return Err(BindingError::MatchTimeout(
                    timeout,
                    format!(
                        "{} of {want} readers mapped the pool",
                        pool.hdr().mapped.pos.load(Ordering::Acquire)
                    ),
                ));
            }
            // Set-up only: matching is never measured.
            std::thread::sleep(Duration::from_millis(1));
        }
        sys::unlink(&self.pool_name);
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
        if self.pool.is_some() {
            self.send_zero_copy(len, fill)
        } else {
            self.send_copy(len, fill)
        }
    }
}

#[cfg(test)]
mod tests;
