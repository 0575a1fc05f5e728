//! [`CycloneWriter`]: writes samples of one topic (serialized bytes, a flat
//! copy, or a loaned shared-memory chunk).

use crate::*;
use pubsubperf_core::binding::CANCEL_POLL;
use pubsubperf_core::room::wait_for_room;
use pubsubperf_core::{BindingError, CancelToken, Refusal, Writer};
use std::ffi::c_void;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(crate) enum Mode {
    /// Serialized `pubsubperf::Bytes` from a scratch buffer.
    Bytes(Vec<u8>),
    /// A `Flat<N>` sample in a scratch buffer (u32 words: aligned for `len`), copied by write.
    FlatCopy(Vec<u32>),
    /// A `Flat<N>` sample in a loaned shared-memory chunk.
    Loan,
}

/// Writes samples of one topic.
pub struct CycloneWriter {
    pub(crate) wr: i32,
    pub(crate) mode: Mode,
    /// `--instances`: the keyed type, instances written round-robin.
    pub(crate) keyed: bool,
    /// The key of each sample written.
    pub(crate) keys: pubsubperf_core::binding::InstanceKeys,
    /// Flat: bytes before the data (`len`, and `id` when keyed).
    pub(crate) hdr: usize,
    /// `--async`: wake CycloneDDS's send thread after each write.
    pub(crate) flush: bool,
    /// `--batch`: writes collect in the writer's packet (Internal/WriteBatch)
    /// until it is full or [`Writer::flush`] sends it.
    pub(crate) batched: bool,
    pub(crate) max_len: usize,
    /// `--max-blocking-time`: how long a write may wait for room.
    pub(crate) block: Duration,
    /// CycloneDDS's max_blocking_time is a slice of `block`: a write that
    /// timed out is written again until `block` has passed or the run is
    /// cancelled ([`CycloneWriter::write_until_taken`]).
    pub(crate) sliced: bool,
    pub(crate) reliable: bool,
    pub(crate) shm: bool,
    pub(crate) cancel: CancelToken,
    pub(crate) topic: String,
    pub(crate) _part: Arc<Participant>,
}

impl CycloneWriter {
    /// A loaned chunk, if RouDi's pool for this size has one.
    #[inline(always)]
    pub(crate) fn loan(&self) -> Option<*mut c_void> {
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid writer; a loan is a Flat<N> sample.
        let rc = unsafe { sys::pp_loan(self.wr, &mut p) };
        (rc >= 0 && !p.is_null()).then_some(p)
    }

    /// RouDi's pool for this size is empty (its chunks still queued at
    /// readers): best effort refuses the send (a full writer queue, counted
    /// as rejected); reliable waits for a chunk, at most the block timeout.
    #[cold]
    pub(crate) fn wait_loan(&self) -> Result<*mut c_void, BindingError> {
        if !self.reliable {
            return Err(BindingError::Refused {
                what: "cyclonedds loan",
                refusal: Refusal::QueueFull,
            });
        }
        let start = Instant::now();
        while start.elapsed() < self.block {
            if self.cancel.is_cancelled() {
                return Err(BindingError::Cancelled);
            }
            std::thread::sleep(Duration::from_micros(50));
            if let Some(p) = self.loan() {
                return Ok(p);
            }
        }
        Err(BindingError::WriteTimeout(self.block))
    }

    /// The RELIABILITY max_blocking_time CycloneDDS holds for this writer
    /// (read back with `dds_get_qos`), None when best effort: what
    /// `--max-blocking-time` became (a slice of it for copies, see
    /// [`CycloneWriter::sliced`]).
    pub fn max_blocking_time(&self) -> Option<Duration> {
        // SAFETY: valid writer.
        let ns = unsafe { sys::pp_writer_max_blocking(self.wr) };
        u64::try_from(ns).ok().map(Duration::from_nanos)
    }

    /// How long a write may wait for room in all: `--max-blocking-time`,
    /// in slices of [`CycloneWriter::max_blocking_time`] for copies.
    pub fn block_timeout(&self) -> Duration {
        self.block
    }

    /// Writes `len` bytes at `buf` as a `Bytes` (or, keyed, `KeyedBytes`)
    /// sample: dds_write serializes (copies) them.
    ///
    /// # Safety
    /// `buf` must point to `len` readable bytes.
    #[inline(always)]
    unsafe fn write_bytes(&self, id: u32, buf: *const u8, len: usize) -> i32 {
        // SAFETY: valid writer; the caller guarantees the bytes.
        unsafe {
            if self.keyed {
                sys::pp_write_keyed_bytes(self.wr, id, buf, len as u32)
            } else {
                sys::pp_write_bytes(self.wr, buf, len as u32)
            }
        }
    }

    /// Writes with `write` until CycloneDDS takes the sample: a sliced
    /// writer's write that timed out is tried again.
    #[inline(always)]
    fn write_until_taken(&self, write: impl Fn() -> i32) -> i32 {
        let rc = write();
        if rc == sys::RETCODE_TIMEOUT && self.sliced {
            self.keep_writing(write)
        } else {
            rc
        }
    }

    /// After a first slice timed out: again until the sample is taken or
    /// `block` has passed (the room wait every binding's reliable writer
    /// uses); a cancelled run gives up as a timeout too (the harness names
    /// the silent peer).
    #[cold]
    fn keep_writing(&self, write: impl Fn() -> i32) -> i32 {
        let left = self.block.saturating_sub(CANCEL_POLL);
        wait_for_room(left, &self.cancel, || {
            let rc = write();
            (rc != sys::RETCODE_TIMEOUT).then_some(rc)
        })
        .unwrap_or(sys::RETCODE_TIMEOUT)
    }

    /// After a write returned `rc`: its error, or with `--async` a wake-up
    /// of the send thread.
    #[inline(always)]
    fn written(&self, rc: i32) -> Result<(), BindingError> {
        if rc < 0 {
            return Err(self.write_error(rc));
        }
        if self.flush {
            // SAFETY: valid writer.
            unsafe { sys::pp_write_flush(self.wr) };
        }
        Ok(())
    }

    /// The HISTORY CycloneDDS holds for this writer (read back with
    /// `dds_get_qos`): `Some(0)` for KEEP_ALL, `Some(n)` for KEEP_LAST n.
    pub fn history_depth(&self) -> Option<u32> {
        // SAFETY: valid writer.
        let d = unsafe { sys::pp_writer_history_depth(self.wr) };
        u32::try_from(d).ok()
    }

    #[cold]
    pub(crate) fn write_error(&self, rc: i32) -> BindingError {
        if rc == sys::RETCODE_TIMEOUT {
            BindingError::WriteTimeout(self.block)
        } else {
            mw(&format!("writing to {}", self.topic), rc)
        }
    }
}

/// Fills a flat sample at `p`: `Flat<N>` (`hdr` 4: `len`, then data) or
/// `KeyedFlat<N>` (`hdr` 8: `id`, `len`, then data).
///
/// # Safety
/// `p` must point to `hdr` + `flat_len` writable bytes aligned to 4.
#[inline(always)]
unsafe fn fill_flat<F: FnOnce(&mut [u8])>(p: *mut u8, hdr: usize, id: u32, len: usize, fill: F) {
    // SAFETY: the caller guarantees hdr + flat_len bytes; len <= flat_len.
    unsafe {
        if hdr == 8 {
            (p as *mut u32).write(id);
        }
        (p.add(hdr - 4) as *mut u32).write(len as u32);
        fill(std::slice::from_raw_parts_mut(p.add(hdr), len));
    }
}

impl Writer for CycloneWriter {
    fn wait_matched(&mut self, readers: usize, timeout: Duration) -> Result<(), BindingError> {
        let start = Instant::now();
        loop {
            let mut n = 0u32;
            // SAFETY: valid writer and out pointer.
            let rc = unsafe { sys::pp_publication_matched(self.wr, &mut n) };
            if rc < 0 {
                return Err(mw("reading the publication matched status", rc));
            }
            if n as usize >= readers {
                break;
            }
            if self.cancel.is_cancelled() {
                return Err(BindingError::Cancelled);
            }
            if start.elapsed() >= timeout {
                return Err(BindingError::MatchTimeout(
                    timeout,
                    format!(
                        "topic {}: {n} of {readers} readers discovered (both sides need the same --domain, --transport and QoS, and UDP between them)",
                        self.topic
                    ),
                ));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        if self.shm {
            std::thread::sleep(SHM_CONNECT);
        }
        Ok(())
    }

    #[inline]
    fn send<F: FnOnce(&mut [u8])>(&mut self, len: usize, fill: F) -> Result<(), BindingError> {
        if len > self.max_len {
            return Err(BindingError::TooLarge {
                size: len,
                limit: self.max_len,
            });
        }
        let id = self.keys.next_key();
        let hdr = self.hdr;
        let rc = match &mut self.mode {
            Mode::Bytes(buf) => {
                fill(&mut buf[..len]);
                let p = buf.as_ptr();
                // SAFETY: buf holds len bytes.
                self.write_until_taken(|| unsafe { self.write_bytes(id, p, len) })
            }
            Mode::FlatCopy(words) => {
                let p = words.as_mut_ptr() as *mut u8;
                // SAFETY: words hold hdr + flat_len bytes, 4-aligned.
                unsafe { fill_flat(p, hdr, id, len, fill) };
                // SAFETY: the flat sample filled above.
                self.write_until_taken(|| unsafe { sys::pp_write(self.wr, p as *mut c_void) })
            }
            Mode::Loan => {
                let p = match self.loan() {
                    Some(p) => p,
                    None => self.wait_loan()?,
                };
                // SAFETY: the loan holds hdr + flat_len bytes, aligned; write consumes it.
                unsafe {
                    fill_flat(p as *mut u8, hdr, id, len, fill);
                    sys::pp_write(self.wr, p)
                }
            }
        };
        self.written(rc)
    }

    /// Bytes mode: dds_write serializes `bytes` where they are.
    #[inline]
    fn send_from(&mut self, bytes: &[u8]) -> Option<Result<(), BindingError>> {
        if !matches!(self.mode, Mode::Bytes(_)) {
            return None;
        }
        let len = bytes.len();
        Some(BindingError::fits(len, self.max_len).and_then(|()| {
            let id = self.keys.next_key();
            // SAFETY: `bytes` holds len bytes.
            let rc =
                self.write_until_taken(|| unsafe { self.write_bytes(id, bytes.as_ptr(), len) });
            self.written(rc)
        }))
    }

    /// `--batch`: sends what the writer's packet holds (`dds_write_flush`);
    /// the harness calls it after the warm-up, at the end of a run and
    /// before a paced writer waits, as ddsperf flushes after each burst.
    fn flush(&mut self) -> Result<(), BindingError> {
        if self.batched {
            // SAFETY: valid writer.
            unsafe { sys::pp_write_flush(self.wr) };
        }
        Ok(())
    }
}

impl Drop for CycloneWriter {
    fn drop(&mut self) {
        // SAFETY: our writer (already gone if the participant was deleted).
        unsafe { sys::pp_delete(self.wr) };
    }
}
