//! [`CycloneReader`]: takes samples of one topic (copies or loans) and waits
//! on its data-available status.

use crate::*;
use pubsubperf_core::Received;
use pubsubperf_core::handoff::Handoff;
use pubsubperf_core::listener;
use pubsubperf_core::{BindingError, CancelToken, Reader};
use std::ffi::c_void;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Reads samples of one topic.
pub struct CycloneReader {
    pub(crate) rd: i32,
    pub(crate) ws: i32,
    pub(crate) flat: bool,
    /// `--instances`: samples are `KeyedBytes` / `KeyedFlat<N>`.
    pub(crate) keyed: bool,
    /// Flat: bytes before the data (`len`, and `id` when keyed).
    pub(crate) hdr: usize,
    pub(crate) flat_len: usize,
    /// Flat over shm: read samples in their iceoryx chunks.
    pub(crate) in_place: bool,
    pub(crate) raw: [*const c_void; TAKE_MAX],
    /// Flat over shm: where a sample that did not come in a chunk is copied.
    pub(crate) scratch: Vec<u32>,
    pub(crate) busy: bool,
    /// The last take filled every entry: samples may be left, and the
    /// DATA_AVAILABLE status the waitset waits on was reset by that take.
    pub(crate) full: bool,
    /// `--receive listener`: shared with CycloneDDS's receive thread,
    /// which runs `recv_window`'s closure (see `listener`).
    pub(crate) handoff: Option<Box<Handoff>>,
    /// The data-available listener is set (at the first `recv_window`).
    pub(crate) listening: bool,
    pub(crate) cancel: CancelToken,
    pub(crate) ptrs: [*mut c_void; TAKE_MAX],
    pub(crate) valid: [u8; TAKE_MAX],
    pub(crate) topic: String,
    pub(crate) _part: Arc<Participant>,
}

// SAFETY: `ptrs` holds the reader's loan (its samples, owned by this
// reader until Drop returns it) and `raw` serdata between a take and their
// release within one `recv` call; CycloneDDS entities may be used from any thread.
unsafe impl Send for CycloneReader {}

/// The data of a flat sample at `p` (`hdr` bytes of `[id,] len` before
/// it), or the length it claims if that exceeds N.
///
/// # Safety
/// `p` must point to a `Flat<N>` or `KeyedFlat<N>` sample (`hdr` +
/// `flat_len` bytes, 4-aligned) that stays valid for `'a`.
#[inline(always)]
unsafe fn flat_view<'a>(p: *const c_void, hdr: usize, flat_len: usize) -> Result<&'a [u8], usize> {
    // SAFETY: per the caller.
    unsafe {
        let len = ((p as *const u8).add(hdr - 4) as *const u32).read() as usize;
        if len > flat_len {
            return Err(len);
        }
        Ok(std::slice::from_raw_parts((p as *const u8).add(hdr), len))
    }
}

impl CycloneReader {
    /// Flat over shm: takes serdata and reads each sample in its chunk.
    #[inline]
    pub(crate) fn take_in_place<F: FnMut(Received<'_>)>(
        &mut self,
        on_sample: &mut F,
    ) -> Result<usize, BindingError> {
        // SAFETY: valid reader; arrays of TAKE_MAX entries.
        let n = unsafe {
            sys::pp_take_serdata(
                self.rd,
                self.ptrs.as_mut_ptr(),
                self.raw.as_mut_ptr(),
                self.valid.as_mut_ptr(),
                TAKE_MAX as u32,
            )
        };
        self.full = n == TAKE_MAX as i32;
        if n <= 0 {
            return if n < 0 {
                Err(mw(&format!("taking from {}", self.topic), n))
            } else {
                Ok(0)
            };
        }
        let mut delivered = 0;
        let mut bad = None;
        for i in 0..n as usize {
            if self.valid[i] == 0 {
                continue;
            }
            let p = if self.raw[i].is_null() {
                let s = self.scratch.as_mut_ptr() as *mut c_void;
                // SAFETY: the serdata is of our Flat<N> type; scratch holds one.
                if unsafe { sys::pp_serdata_to_sample(self.ptrs[i], s) } != 0 {
                    bad = Some(usize::MAX);
                    continue;
                }
                s as *const c_void
            } else {
                self.raw[i]
            };
            // SAFETY: a Flat<N> sample, valid until the serdata is released.
            match unsafe { flat_view(p, self.hdr, self.flat_len) } {
                Ok(v) => on_sample(Received::whole(v)),
                Err(len) => {
                    bad = Some(len);
                    continue;
                }
            }
            delivered += 1;
        }
        // SAFETY: releasing the n serdata just taken.
        unsafe { sys::pp_serdata_unref(self.ptrs.as_mut_ptr(), n) };
        if let Some(len) = bad {
            return Err(BindingError::Malformed(format!(
                "flat sample of {len} bytes does not fit the type's {} (or could not be read)",
                self.flat_len
            )));
        }
        Ok(delivered)
    }

    /// Takes what is there, calls back for each valid sample, returns the loans.
    #[inline]
    pub(crate) fn take<F: FnMut(Received<'_>)>(
        &mut self,
        on_sample: &mut F,
    ) -> Result<usize, BindingError> {
        if self.in_place {
            return self.take_in_place(on_sample);
        }
        // SAFETY: valid reader; arrays of TAKE_MAX entries.
        let n = unsafe {
            sys::pp_take(
                self.rd,
                self.ptrs.as_mut_ptr(),
                self.valid.as_mut_ptr(),
                TAKE_MAX as u32,
            )
        };
        self.full = n == TAKE_MAX as i32;
        if n <= 0 {
            return if n < 0 {
                Err(mw(&format!("taking from {}", self.topic), n))
            } else {
                Ok(0)
            };
        }
        let mut delivered = 0;
        let mut bad = None;
        for i in 0..n as usize {
            if self.valid[i] == 0 {
                continue;
            }
            let p = self.ptrs[i];
            if self.flat {
                // SAFETY: a loaned Flat<N> sample, valid until returned.
                match unsafe { flat_view(p, self.hdr, self.flat_len) } {
                    Ok(v) => on_sample(Received::whole(v)),
                    Err(len) => {
                        bad = Some(len);
                        continue;
                    }
                }
            } else {
                let mut data: *const u8 = std::ptr::null();
                let mut len = 0u32;
                // SAFETY: a loaned pubsubperf_Bytes sample.
                unsafe {
                    if self.keyed {
                        sys::pp_keyed_bytes_view(p, &mut data, &mut len)
                    } else {
                        sys::pp_bytes_view(p, &mut data, &mut len)
                    }
                };
                if data.is_null() {
                    on_sample(Received::whole(&[]));
                } else {
                    // SAFETY: the sequence holds len bytes while loaned.
                    on_sample(Received::whole(unsafe {
                        std::slice::from_raw_parts(data, len as usize)
                    }));
                }
            }
            delivered += 1;
        }
        // The loan stays ours for the next take (see pp_take); Drop returns it.
        if let Some(len) = bad {
            return Err(BindingError::Malformed(format!(
                "flat sample says {len} bytes, the type holds {}",
                self.flat_len
            )));
        }
        Ok(delivered)
    }
}

impl Reader for CycloneReader {
    fn wait_matched(&mut self, timeout: Duration) -> Result<(), BindingError> {
        let start = Instant::now();
        loop {
            let mut n = 0u32;
            // SAFETY: valid reader and out pointer.
            let rc = unsafe { sys::pp_subscription_matched(self.rd, &mut n) };
            if rc < 0 {
                return Err(mw("reading the subscription matched status", rc));
            }
            if n > 0 {
                return Ok(());
            }
            if self.cancel.is_cancelled() {
                return Err(BindingError::Cancelled);
            }
            if start.elapsed() >= timeout {
                return Err(BindingError::MatchTimeout(
                    timeout,
                    format!(
                        "topic {}: no writer discovered (both sides need the same --domain, --transport and QoS, and UDP between them)",
                        self.topic
                    ),
                ));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    #[inline]
    fn recv<F: FnMut(Received<'_>)>(
        &mut self,
        timeout: Duration,
        on_sample: &mut F,
    ) -> Result<usize, BindingError> {
        let start = Instant::now();
        loop {
            if !self.busy && !self.full {
                // Wait first, for DATA_AVAILABLE: a ping that has not
                // arrived yet costs no empty take. After a full take, take
                // again first (the status was reset; samples may be left).
                let left = timeout.saturating_sub(start.elapsed());
                let wait = left.min(pubsubperf_core::binding::CANCEL_POLL);
                // SAFETY: valid waitset.
                let rc = unsafe { sys::pp_wait(self.ws, wait.as_nanos() as i64) };
                if rc < 0 {
                    return Err(mw("waiting on the waitset", rc));
                }
            }
            let n = self.take(on_sample)?;
            if n > 0 {
                return Ok(n);
            }
            if self.cancel.is_cancelled() {
                return Err(BindingError::Cancelled);
            }
            if start.elapsed() >= timeout {
                return Ok(0);
            }
            if self.busy {
                pubsubperf_core::busy::yield_between_polls();
            }
        }
    }

    fn recv_window<F: FnMut(Received<'_>) + Send>(
        &mut self,
        window: Duration,
        on_sample: &mut F,
    ) -> Result<usize, BindingError> {
        listener::recv_window(self, window, on_sample)
    }

    fn recv_on_arrival<F: FnMut(Received<'_>) + Send>(
        &mut self,
        timeout: Duration,
        on_sample: &mut F,
    ) -> Result<usize, BindingError> {
        listener::recv_on_arrival(self, timeout, on_sample)
    }
}

impl Drop for CycloneReader {
    fn drop(&mut self) {
        // SAFETY: our entities (already gone if the participant was deleted);
        // the loan kept since the last take, if any. The listener is
        // cleared (which waits for a call in progress) before the hand-off
        // it points to goes.
        unsafe {
            if self.listening {
                sys::pp_set_data_listener(self.rd, None, std::ptr::null_mut());
            }
            if !self.in_place && !self.ptrs[0].is_null() {
                sys::pp_return_loan(self.rd, self.ptrs.as_mut_ptr(), TAKE_MAX as i32);
            }
            sys::pp_delete(self.ws);
            sys::pp_delete(self.rd);
        }
    }
}
