//! [`IoxWriter`]: loans and publishes chunks of one topic through RouDi.

use crate::*;
use pubsubperf_core::room::wait_for_room;
use pubsubperf_core::{BindingError, CancelToken, Refusal, Writer};
use std::ffi::c_void;
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

impl IoxWriter {
    /// The pool for this size is empty: best effort refuses the send (a
    /// full writer queue, counted as rejected), reliable waits for a chunk
    /// at most the block timeout.
    #[cold]
    pub(crate) fn wait_loan(&mut self, size: u32) -> Result<*mut c_void, BindingError> {
        if !self.reliable {
            return Err(BindingError::Refused {
                what: "iceoryx loan",
                refusal: Refusal::QueueFull,
            });
        }
        let publisher = self.publisher;
        wait_for_room(self.block, &self.cancel, || {
            let mut p = std::ptr::null_mut();
            // SAFETY: valid publisher.
            (unsafe { ppx_pub_loan(publisher, &mut p, size) } == 0).then_some(p)
        })
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
        if unsafe { ppx_pub_loan(self.publisher, &mut p, size) } != 0 {
            p = self.wait_loan(size)?;
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
