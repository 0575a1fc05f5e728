//! [`FastReader`]: takes samples of one topic and waits for data (our
//! thread), or lets Fast DDS's receive thread deliver them in a
//! data-available listener (`--receive listener`, see
//! [`pubsubperf_core::listener`]).

use crate::*;
use pubsubperf_core::Received;
use pubsubperf_core::handoff::{Handoff, TakeAll};
use pubsubperf_core::listener::{self, ListenerReader, deliver};
use pubsubperf_core::{BindingError, CancelToken, Reader};
use std::ffi::c_void;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A DataReader of one topic.
pub struct FastReader {
    pub(crate) raw: *mut ffi::ReaderH,
    pub(crate) _p: Arc<Participant>,
    pub(crate) busy: bool,
    pub(crate) cancel: CancelToken,
    pub(crate) topic: String,
    /// `--receive listener`: shared with Fast DDS's receive thread, which
    /// runs `recv_window`'s closure. Dropped after the reader is deleted
    /// (Drop), which waits for a listener call in progress.
    pub(crate) handoff: Option<Box<Handoff>>,
    /// The data-available listener is set (at the first `recv_window`).
    pub(crate) listening: bool,
}

// SAFETY: used by one thread at a time (&mut self); Fast DDS readers may be
// used from any thread.
unsafe impl Send for FastReader {}

impl Drop for FastReader {
    fn drop(&mut self) {
        // SAFETY: raw came from ppf_create_reader; the participant is alive (_p).
        unsafe { ffi::ppf_delete_reader(self.raw) };
    }
}

impl FastReader {
    /// Delivers every sample available now; returns how many.
    #[inline]
    pub(crate) fn drain<F: FnMut(Received<'_>)>(
        &mut self,
        on_sample: &mut F,
    ) -> Result<usize, BindingError> {
        let mut n = 0;
        loop {
            let mut data: *const u8 = std::ptr::null();
            let mut len: u32 = 0;
            // SAFETY: raw is a live reader; data/len are valid out pointers.
            let rc = unsafe { ffi::ppf_take(self.raw, &mut data, &mut len) };
            match rc {
                1 => {
                    // SAFETY: the shim lends len octets at data until ppf_release.
                    on_sample(Received::whole(unsafe {
                        std::slice::from_raw_parts(data, len as usize)
                    }));
                    // SAFETY: gives back what ppf_take lent.
                    unsafe { ffi::ppf_release(self.raw) };
                    n += 1;
                }
                0 => return Ok(n),
                -2 => {
                    // SAFETY: as above.
                    unsafe { ffi::ppf_release(self.raw) };
                    return Err(BindingError::Malformed(format!(
                        "flat sample on {} claims more octets than its type holds",
                        self.topic
                    )));
                }
                _ => {
                    return Err(BindingError::Middleware(format!(
                        "Fast DDS take on {} failed",
                        self.topic
                    )));
                }
            }
        }
    }
}

impl TakeAll for FastReader {
    fn take_all<F: FnMut(Received<'_>)>(
        &mut self,
        on_sample: &mut F,
    ) -> Result<usize, BindingError> {
        self.drain(on_sample)
    }
}

impl ListenerReader for FastReader {
    fn handoff(&self) -> Option<&Handoff> {
        self.handoff.as_deref()
    }

    unsafe fn set_listener(&mut self, arg: *mut c_void) -> Result<(), BindingError> {
        if self.listening {
            return Ok(());
        }
        // SAFETY: raw is a live reader; the hand-off is boxed and
        // outlives the listener (Drop deletes the reader first).
        let rc = unsafe { ffi::ppf_set_data_listener(self.raw, on_data_available, arg) };
        if rc != 0 {
            return Err(BindingError::Middleware(format!(
                "Fast DDS could not set a listener on {}",
                self.topic
            )));
        }
        self.listening = true;
        Ok(())
    }

    fn cancel(&self) -> &CancelToken {
        &self.cancel
    }
}

/// The data-available listener: `arg` is the reader's [`Handoff`].
///
/// # Safety
/// Called by the shim's listener with the argument the reader registered,
/// which outlives the listener (see [`FastReader::handoff`]).
unsafe extern "C" fn on_data_available(arg: *mut c_void) {
    // SAFETY: per the function's contract.
    unsafe { deliver(arg) }
}

impl Reader for FastReader {
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

    fn wait_matched(&mut self, timeout: Duration) -> Result<(), BindingError> {
        let raw = self.raw;
        // SAFETY: raw is a live reader.
        wait_count(1, timeout, &self.cancel, || unsafe {
            ffi::ppf_reader_matched(raw)
        })
        .map_err(|_| {
            if self.cancel.is_cancelled() {
                return BindingError::Cancelled;
            }
            BindingError::MatchTimeout(
                timeout,
                format!(
                    "fastdds reader on {} found no writer; is the publisher running with the same transport, data type, size and domain?",
                    self.topic
                ),
            )
        })
    }

    #[inline]
    fn recv<F: FnMut(Received<'_>)>(
        &mut self,
        timeout: Duration,
        on_sample: &mut F,
    ) -> Result<usize, BindingError> {
        let n = self.drain(on_sample)?;
        if n > 0 {
            return Ok(n);
        }
        let start = Instant::now();
        loop {
            if self.busy {
                // Each poll yields the core, which costs far more than
                // the clock read (and may last milliseconds when another
                // thread runs there): check after every one.
                if self.cancel.is_cancelled() {
                    return Err(BindingError::Cancelled);
                }
                if start.elapsed() >= timeout {
                    return Ok(0);
                }
                pubsubperf_core::busy::yield_between_polls();
            } else {
                if self.cancel.is_cancelled() {
                    return Err(BindingError::Cancelled);
                }
                let left = timeout.saturating_sub(start.elapsed());
                if left.is_zero() {
                    return Ok(0);
                }
                let slice = left.min(pubsubperf_core::binding::CANCEL_POLL);
                // SAFETY: raw is a live reader.
                unsafe { ffi::ppf_wait(self.raw, slice.as_nanos() as i64) };
            }
            let n = self.drain(on_sample)?;
            if n > 0 {
                return Ok(n);
            }
        }
    }
}
