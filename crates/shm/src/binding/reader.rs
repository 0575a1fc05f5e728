//! The reader of the `shm` binding: its ring segment, waits, and (zero
//! copy) the writer's pool mapped to read loaned slots in place.

use super::*;
use crate::layout::{
    CLOSED, ENTRY_HEAD, EntryHead, FAST_READERS, HEAD_BYTES, MAGIC, NAME_CAP, NONE, OPEN,
    RingHeader, round_up,
};
use crate::sys::{self, Mapping};
use crate::wait::{self, Outcome};
use pubsubperf_core::Received;
use pubsubperf_core::{
    BindingError, CancelToken, DataType, EndpointConfig, Locator, Reader, TopicSpec, WaitMode,
};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

pub struct ShmReader {
    pub(super) _map: Mapping,
    pub(super) name: String,
    pub(super) hdr: *const RingHeader,
    pub(super) data: *mut u8,
    pub(super) capacity: u64,
    pub(super) stride: usize,
    pub(super) max: usize,
    /// Next entry to read (mirror of `consumer.pos`).
    pub(super) head: u64,
    pub(super) zero_copy: bool,
    pub(super) bytes: bool,
    pub(super) wait: WaitMode,
    pub(super) cancel: CancelToken,
    /// Copy mode: the private buffer samples are copied out into.
    pub(super) private: Vec<u8>,
    pub(super) pool: Option<Box<PoolMap>>,
    /// Zero-copy: our word in every slot head's `posted`, if we have one.
    pub(super) fast: Option<usize>,
    /// Zero-copy: the slot the writer said its next sample goes into
    /// ([`NONE`]: unknown).
    pub(super) predict: u32,
}

// SAFETY: the raw pointers point into `map` (and `pool`), owned by the reader.
unsafe impl Send for ShmReader {}

impl ShmReader {
    pub(super) fn create(
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
    pub(super) fn hdr(&self) -> &RingHeader {
        // SAFETY: `hdr` points at the head of our live mapping.
        unsafe { &*self.hdr }
    }

    /// Maps the writer's pool once the writer named it (zero-copy).
    pub(super) fn attach_pool(&mut self) -> Result<bool, BindingError> {
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
    pub(super) fn consume(&mut self) {
        self.head += 1;
        let c = &self.hdr().consumer;
        c.pos.store(self.head, Ordering::Release);
        if self.wait == WaitMode::Block {
            wait::notify(c);
        }
    }

    /// The head of the entry at position `pos`.
    #[inline(always)]
    pub(super) fn entry(&self, pos: u64) -> *const EntryHead {
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
    pub(super) fn locate(&self, pool: &PoolMap, entry: bool) -> Option<(usize, usize)> {
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
    pub(super) fn check_prefix(&self, body: *const u8, len: usize) -> Result<(), BindingError> {
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
    pub(super) fn drain<F: FnMut(Received<'_>)>(
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
            on_sample(Received::whole(&self.private[..len]));
        }
        Ok(n)
    }

    #[inline(always)]
    pub(super) fn drain_zero_copy<F: FnMut(Received<'_>)>(
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
    pub(super) fn drain_pool<F: FnMut(Received<'_>)>(
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
                on_sample(Received::whole(sample));
                self.consume();
            } else {
                self.consume();
                on_sample(Received::whole(sample));
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
    fn recv<F: FnMut(Received<'_>)>(
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
