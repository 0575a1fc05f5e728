//! [`FastWriter`]: writes samples of one topic through the C shim (copies
//! or data-sharing loans).

use crate::*;
use pubsubperf_core::room::wait_for_room;
use pubsubperf_core::{BindingError, CancelToken, Writer};
use std::sync::Arc;
use std::time::Duration;

/// A DataWriter of one topic.
pub struct FastWriter {
    pub(crate) raw: *mut ffi::WriterH,
    pub(crate) _p: Arc<Participant>,
    pub(crate) scratch: *mut u8,
    pub(crate) max: usize,
    pub(crate) loans: bool,
    /// The bytes type (not flat): its sample points at its octets, so a
    /// write can take them from the caller ([`Writer::send_from`]).
    pub(crate) bytes: bool,
    /// The key of each sample written.
    pub(crate) keys: pubsubperf_core::binding::InstanceKeys,
    pub(crate) block_timeout: Duration,
    pub(crate) cancel: CancelToken,
    pub(crate) topic: String,
    pub(crate) describe: String,
}

// SAFETY: the writer is used by one thread at a time (Writer takes &mut self);
// Fast DDS writers may be used from any thread.
unsafe impl Send for FastWriter {}

impl Drop for FastWriter {
    fn drop(&mut self) {
        // SAFETY: raw came from ppf_create_writer; the participant is alive (_p).
        unsafe { ffi::ppf_delete_writer(self.raw) };
    }
}

impl FastWriter {
    pub(crate) fn write_error(&self, rc: i32) -> BindingError {
        match rc {
            ffi::RC_TIMEOUT => BindingError::WriteTimeout(self.block_timeout),
            ffi::RC_OUT_OF_RESOURCES => BindingError::Middleware(format!(
                "Fast DDS write on {}: out of resources (history full)",
                self.topic
            )),
            _ => BindingError::Middleware(format!("Fast DDS write on {} failed", self.topic)),
        }
    }

    /// A loan from the writer's pool; waits (bounded: [`wait_for_room`])
    /// while every slot is in flight.
    #[inline]
    pub(crate) fn loan(&mut self) -> Result<*mut u8, BindingError> {
        match self.try_loan() {
            Some(r) => r,
            None => wait_for_room(self.block_timeout, &self.cancel, || self.try_loan())?,
        }
    }

    /// One loan attempt: `None` while the pool is out of samples.
    #[inline]
    fn try_loan(&self) -> Option<Result<*mut u8, BindingError>> {
        let mut rc = 0;
        // SAFETY: raw is a live writer.
        let p = unsafe { ffi::ppf_loan(self.raw, &mut rc) };
        if !p.is_null() {
            Some(Ok(p))
        } else if rc == ffi::RC_OUT_OF_RESOURCES {
            None
        } else {
            Some(Err(BindingError::Middleware(format!(
                "Fast DDS loan_sample on {} failed",
                self.topic
            ))))
        }
    }
}

impl Writer for FastWriter {
    fn wait_matched(&mut self, readers: usize, timeout: Duration) -> Result<(), BindingError> {
        let raw = self.raw;
        // SAFETY: raw is a live writer.
        wait_count(readers, timeout, &self.cancel, || unsafe {
            ffi::ppf_writer_matched(raw)
        })
        .map_err(|n| {
            if self.cancel.is_cancelled() {
                return BindingError::Cancelled;
            }
            BindingError::MatchTimeout(
                timeout,
                format!(
                    "fastdds writer on {} matched {n} of {readers} readers ({}); is the subscriber running with the same transport, data type, size and domain?",
                    self.topic, self.describe
                ),
            )
        })
    }

    #[inline]
    fn send<F: FnOnce(&mut [u8])>(&mut self, len: usize, fill: F) -> Result<(), BindingError> {
        if len > self.max {
            return Err(BindingError::TooLarge {
                size: len,
                limit: self.max,
            });
        }
        let id = self.keys.next_key();
        if self.loans {
            let p = self.loan()?;
            // SAFETY: the loaned sample has max >= len octets after its length field.
            fill(unsafe { std::slice::from_raw_parts_mut(p, len) });
            // SAFETY: publishes the loan taken above.
            let rc = unsafe { ffi::ppf_write_loan(self.raw, len as u32, id) };
            return if rc == ffi::RC_OK {
                Ok(())
            } else {
                Err(self.write_error(rc))
            };
        }
        // SAFETY: scratch holds max >= len octets and is only touched here.
        fill(unsafe { std::slice::from_raw_parts_mut(self.scratch, len) });
        // SAFETY: raw is a live writer.
        let rc = unsafe { ffi::ppf_write(self.raw, len as u32, id) };
        if rc == ffi::RC_OK {
            Ok(())
        } else {
            Err(self.write_error(rc))
        }
    }

    /// Bytes (not loaned): write() serializes `bytes` where they are.
    #[inline]
    fn send_from(&mut self, bytes: &[u8]) -> Option<Result<(), BindingError>> {
        if self.loans || !self.bytes {
            return None;
        }
        let len = bytes.len();
        Some(BindingError::fits(len, self.max).and_then(|()| {
            let id = self.keys.next_key();
            // SAFETY: raw is a live writer of the bytes type; `bytes` holds
            // len octets, only read.
            let rc = unsafe { ffi::ppf_write_from(self.raw, bytes.as_ptr(), len as u32, id) };
            if rc == ffi::RC_OK {
                Ok(())
            } else {
                Err(self.write_error(rc))
            }
        }))
    }
}
