//! The writer of the `shm` binding: copies into each reader's ring, or
//! loans pool slots and posts their positions (zero copy).

use super::*;
use crate::layout::{
    CLOSED, ENTRY_HEAD, FAST_READERS, HEAD_BYTES, MAGIC, NAME_CAP, NONE, OPEN, RingHeader,
};
use crate::sys::{self, Mapping};
use crate::wait::{self, Outcome};
use pubsubperf_core::{
    BindingError, CancelToken, DataType, EndpointConfig, Locator, Reliability, TopicSpec, WaitMode,
    Writer,
};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Writer of the `shm` binding.
pub struct ShmWriter {
    pub(super) targets: Vec<Target>,
    pub(super) pool: Option<PoolMap>,
    pub(super) pool_name: String,
    /// Next slot to try (zero-copy).
    pub(super) cursor: usize,
    /// A free slot found ahead of time for the next sample (zero-copy).
    pub(super) next: Option<usize>,
    /// A free slot for the sample after it, announced in the next one's
    /// head (zero-copy).
    pub(super) after: Option<usize>,
    /// Zero-copy with one reader: free slots without reference counts.
    pub(super) sole: Option<Sole>,
    /// The application's private sample (copy mode, or bytes).
    pub(super) scratch: Vec<u8>,
    pub(super) max: usize,
    pub(super) bytes: bool,
    pub(super) reliable: bool,
    pub(super) wait: WaitMode,
    pub(super) block_timeout: Duration,
    pub(super) cancel: CancelToken,
}

// SAFETY: raw pointers into mappings the writer owns.
unsafe impl Send for ShmWriter {}

impl ShmWriter {
    pub(super) fn create(
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
    pub(super) fn reserve(&mut self, i: usize) -> Result<bool, BindingError> {
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
    pub(super) fn reserve_slow(&mut self, i: usize) -> Result<bool, BindingError> {
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
    pub(super) fn loan(&mut self) -> Result<Option<usize>, BindingError> {
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
    pub(super) fn loan_slow(&mut self) -> Result<Option<usize>, BindingError> {
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
    pub(super) fn send_zero_copy<F: FnOnce(&mut [u8])>(
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
    pub(super) fn deliver_sole(&mut self, slot: usize, len: usize) -> Result<(), BindingError> {
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
    pub(super) fn prepare_ahead(&mut self) {
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
    pub(super) fn find_free(&mut self, except: Option<usize>) -> Option<usize> {
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
    pub(super) fn send_copy<F: FnOnce(&mut [u8])>(
        &mut self,
        len: usize,
        fill: F,
    ) -> Result<(), BindingError> {
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
