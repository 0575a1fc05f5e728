//! [`IoxReader`]: takes chunks of one topic and waits on its wait set.

use crate::*;
use pubsubperf_core::Received;
use pubsubperf_core::binding::CANCEL_POLL;
use pubsubperf_core::{BindingError, CancelToken, Reader};
use std::ffi::c_void;
use std::time::{Duration, Instant};

/// Takes samples of one topic from RouDi's shared memory.
pub struct IoxReader {
    pub(crate) sub: *mut c_void,
    pub(crate) busy: bool,
    pub(crate) zero_copy: bool,
    pub(crate) scratch: Vec<u8>,
    pub(crate) max_len: usize,
    pub(crate) cancel: CancelToken,
    pub(crate) topic: String,
}

// SAFETY: the subscriber is used from one thread at a time (the owner's);
// chunks are released within the `recv` call that took them.
unsafe impl Send for IoxReader {}

impl IoxReader {
    #[inline]
    pub(crate) fn take<F: FnMut(Received<'_>)>(
        &mut self,
        on_sample: &mut F,
    ) -> Result<usize, BindingError> {
        let mut n = 0;
        loop {
            let mut p: *const c_void = std::ptr::null();
            // SAFETY: valid subscriber.
            let rc = unsafe { ppx_sub_take(self.sub, &mut p) };
            if rc == 0 {
                return Ok(n);
            }
            if rc < 0 {
                return Err(BindingError::Middleware(format!(
                    "taking a chunk of {} (iox_ChunkReceiveResult {})",
                    self.topic,
                    -rc - 1
                )));
            }
            // SAFETY: a chunk we published: u64 length, then the sample.
            let len = unsafe { (p as *const u64).read() } as usize;
            if len > self.max_len {
                // SAFETY: releasing the chunk just taken.
                unsafe { ppx_sub_release(self.sub, p) };
                return Err(BindingError::Malformed(format!(
                    "chunk says {len} bytes, the run's largest is {}",
                    self.max_len
                )));
            }
            // SAFETY: len bytes follow the length while the chunk is held.
            let data = unsafe { std::slice::from_raw_parts((p as *const u8).add(PREFIX), len) };
            if self.zero_copy {
                on_sample(Received::whole(data));
                // SAFETY: releasing the chunk just read.
                unsafe { ppx_sub_release(self.sub, p) };
            } else {
                self.scratch[..len].copy_from_slice(data);
                // SAFETY: as above.
                unsafe { ppx_sub_release(self.sub, p) };
                on_sample(Received::whole(&self.scratch[..len]));
            }
            n += 1;
        }
    }
}

impl Reader for IoxReader {
    fn wait_matched(&mut self, timeout: Duration) -> Result<(), BindingError> {
        let start = Instant::now();
        // SAFETY: valid subscriber.
        while unsafe { ppx_sub_subscribed(self.sub) } == 0 {
            if self.cancel.is_cancelled() {
                return Err(BindingError::Cancelled);
            }
            if start.elapsed() >= timeout {
                return Err(BindingError::MatchTimeout(
                    timeout,
                    format!("topic {}: no publisher offered through RouDi", self.topic),
                ));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        Ok(())
    }

    #[inline]
    fn recv<F: FnMut(Received<'_>)>(
        &mut self,
        timeout: Duration,
        on_sample: &mut F,
    ) -> Result<usize, BindingError> {
        let start = Instant::now();
        loop {
            let n = self.take(on_sample)?;
            if n > 0 {
                return Ok(n);
            }
            if self.cancel.is_cancelled() {
                return Err(BindingError::Cancelled);
            }
            let elapsed = start.elapsed();
            if elapsed >= timeout {
                return Ok(0);
            }
            if !self.busy {
                let wait = (timeout - elapsed).min(CANCEL_POLL);
                // SAFETY: valid subscriber and waitset.
                unsafe { ppx_sub_wait(self.sub, wait.as_nanos() as i64) };
            }
        }
    }
}

impl Drop for IoxReader {
    fn drop(&mut self) {
        // SAFETY: our subscriber, freed once.
        unsafe { ppx_sub_free(self.sub) };
    }
}
