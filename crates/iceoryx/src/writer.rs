//! [`IoxWriter`]: loans and publishes chunks of one topic through RouDi.

#[cfg(not(has_iceoryx))]
use crate::missing::*;
use crate::*;
use pubsubperf_core::{BindingError, CancelToken, Refusal, Writer};
use std::ffi::{c_int, c_void};
use std::time::{Duration, Instant};

/// Publishes samples of one topic in loaned chunks.
pub struct IoxWriter {
    pub(crate) publisher: *mut c_void,
    pub(crate) reliable: bool,
    pub(crate) zero_copy: bool,
    pub(crate) scratch: Vec<u8>,
    pub(crate) max_len: usize,
    pub(crate) block: Duration,
    pub(crate) cancel: CancelToken,
    pub(crate) topic: String,
}

// SAFETY: the publisher is used from one thread at a time (the owner's).
unsafe impl Send for IoxWriter {}

/// Loan attempts with a yield in between before the writer sleeps.
const YIELDS_BEFORE_SLEEP: u32 = 1000;

impl IoxWriter {
    /// The pool for this size is empty: best effort refuses the send (a
    /// full writer queue, counted as rejected), reliable waits for a chunk
    /// at most the block timeout.
    #[cold]
    pub(crate) fn wait_loan(
        &mut self,
        size: u32,
        first: c_int,
    ) -> Result<*mut c_void, BindingError> {
        if !self.reliable {
            return Err(BindingError::Refused {
                what: "iceoryx loan",
                refusal: Refusal::QueueFull,
            });
        }
        let start = Instant::now();
        let mut rc = first;
        let mut tries = 0u32;
        while start.elapsed() < self.block {
            if self.cancel.is_cancelled() {
                return Err(BindingError::Cancelled);
            }
            // A chunk comes back as soon as the reader releases one: yield
            // the core for the first millisecond or so (as iceoryx's iceperf
            // and bench/iceoryx-ref do), then sleep. A 50 µs sleep from the
            // first miss held 16 MiB zero-copy throughput, whose pool has 8
            // chunks, at 0.14 x the reference's.
            if tries < YIELDS_BEFORE_SLEEP {
                std::thread::yield_now();
                tries += 1;
            } else {
                std::thread::sleep(Duration::from_micros(50));
            }
            let mut p = std::ptr::null_mut();
            // SAFETY: valid publisher.
            rc = unsafe { ppx_pub_loan(self.publisher, &mut p, size) };
            if rc == 0 {
                return Ok(p);
            }
        }
        let _ = rc;
        Err(BindingError::WriteTimeout(self.block))
    }
}

impl Writer for IoxWriter {
    fn wait_matched(&mut self, readers: usize, timeout: Duration) -> Result<(), BindingError> {
        // iceoryx tells whether there is a subscriber, not how many; each
        // reader waits for its own subscription (Reader::wait_matched).
        let start = Instant::now();
        // SAFETY: valid publisher.
        while unsafe { ppx_pub_has_subscribers(self.publisher) } == 0 {
            if self.cancel.is_cancelled() {
                return Err(BindingError::Cancelled);
            }
            if start.elapsed() >= timeout {
                return Err(BindingError::MatchTimeout(
                    timeout,
                    format!(
                        "topic {}: no subscriber connected through RouDi (0 of {readers})",
                        self.topic
                    ),
                ));
            }
            std::thread::sleep(Duration::from_millis(2));
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
        let size = (PREFIX + len) as u32;
        let mut p = std::ptr::null_mut();
        // SAFETY: valid publisher.
        let rc = unsafe { ppx_pub_loan(self.publisher, &mut p, size) };
        if rc != 0 {
            p = self.wait_loan(size, rc)?;
        }
        // SAFETY: the chunk holds PREFIX + len bytes, 8-aligned, ours until published.
        unsafe {
            (p as *mut u64).write(len as u64);
            let data = std::slice::from_raw_parts_mut((p as *mut u8).add(PREFIX), len);
            if self.zero_copy {
                fill(data);
            } else {
                fill(&mut self.scratch[..len]);
                data.copy_from_slice(&self.scratch[..len]);
            }
            ppx_pub_publish(self.publisher, p);
        }
        Ok(())
    }
}

impl Drop for IoxWriter {
    fn drop(&mut self) {
        // SAFETY: our publisher, freed once.
        unsafe { ppx_pub_free(self.publisher) };
    }
}
