//! [`ConnextWriter`]: writes samples of one topic with Connext's
//! `DynamicDataWriter`, from Connector's own sample of the writer.

use crate::connector::Connector;
use crate::library::{Api, RETCODE_OK, RETCODE_OUT_OF_RESOURCES, RETCODE_TIMEOUT};
use pubsubperf_core::binding::{CANCEL_POLL, InstanceKeys};
use pubsubperf_core::room::wait_for_room;
use pubsubperf_core::{BindingError, CancelToken, Refusal, Reliability, Writer};
use std::ffi::c_void;
use std::time::Duration;

/// A DataWriter of one topic, with its participant.
pub struct ConnextWriter {
    pub(crate) api: &'static Api,
    /// The `DDS_DynamicDataWriter*`.
    pub(crate) writer: *mut c_void,
    /// The native `DDS_DataWriter*` (matched status).
    pub(crate) native: *mut c_void,
    /// Connector's `DDS_DynamicData*` of the writer: each send sets its
    /// octets (a copy), and the write serializes it (a second copy, as
    /// every DDS write of a sequence does).
    pub(crate) sample: *mut c_void,
    /// The caller fills this, then it is copied into `sample`.
    pub(crate) scratch: Vec<u8>,
    pub(crate) keyed: bool,
    pub(crate) keys: InstanceKeys,
    pub(crate) reliability: Reliability,
    /// `--max-blocking-time` in all.
    pub(crate) block: Duration,
    /// True when Connext's max_blocking_time is a slice ([`CANCEL_POLL`])
    /// of `block`: a write that timed out is written again until `block`
    /// has passed or the run is cancelled.
    pub(crate) sliced: bool,
    pub(crate) cancel: CancelToken,
    pub(crate) topic: String,
    /// Dropped last: the participant and its writer.
    pub(crate) _connector: Connector,
}

// SAFETY: used by one thread at a time (&mut self); Connext writers may be
// used from any thread.
unsafe impl Send for ConnextWriter {}

impl ConnextWriter {
    /// Writes the `len` bytes at `bytes`.
    ///
    /// # Safety
    /// `bytes` must point to `len` readable bytes.
    #[inline(always)]
    unsafe fn write_bytes(&mut self, bytes: *const u8, len: usize) -> i32 {
        let api = self.api;
        // SAFETY: live sample and writer (the connector is held); the
        // caller guarantees the bytes.
        unsafe {
            let rc = (api.DDS_DynamicData_set_octet_array)(
                self.sample,
                crate::xml::DATA.as_ptr(),
                0,
                len as u32,
                bytes,
            );
            if rc != RETCODE_OK {
                return rc;
            }
            if self.keyed {
                let key = self.keys.next_key();
                let rc =
                    (api.DDS_DynamicData_set_ulong)(self.sample, crate::xml::KEY.as_ptr(), 0, key);
                if rc != RETCODE_OK {
                    return rc;
                }
            }
            (api.DDS_DynamicDataWriter_write)(self.writer, self.sample, api.HANDLE_NIL)
        }
    }

    /// Runs `op` (a write or a flush, Connext's return code) until it is
    /// not a timeout: again in slices after a first slice timed out, until
    /// `block` has passed or the run is cancelled. Ok: the last return
    /// code that was not a timeout.
    #[inline(always)]
    fn until_taken(&mut self, mut op: impl FnMut(&mut Self) -> i32) -> Result<i32, BindingError> {
        let rc = op(self);
        if rc != RETCODE_TIMEOUT || !self.sliced {
            return Ok(rc);
        }
        self.keep_trying(op)
    }

    #[cold]
    fn keep_trying(&mut self, mut op: impl FnMut(&mut Self) -> i32) -> Result<i32, BindingError> {
        let left = self.block.saturating_sub(CANCEL_POLL);
        let cancel = self.cancel.clone();
        wait_for_room(left, &cancel, || {
            let rc = op(self);
            (rc != RETCODE_TIMEOUT).then_some(rc)
        })
        .map_err(|e| match e {
            BindingError::WriteTimeout(_) => BindingError::WriteTimeout(self.block),
            e => e,
        })
    }

    /// Writes `len` bytes at `bytes`, again in slices while a reliable
    /// write times out; the error of a write that failed.
    ///
    /// # Safety
    /// As [`ConnextWriter::write_bytes`].
    #[inline(always)]
    unsafe fn write_until_taken(
        &mut self,
        bytes: *const u8,
        len: usize,
    ) -> Result<(), BindingError> {
        // SAFETY: per the function's contract.
        match self.until_taken(|w| unsafe { w.write_bytes(bytes, len) })? {
            RETCODE_OK => Ok(()),
            rc => Err(self.write_error(rc)),
        }
    }

    #[cold]
    fn write_error(&self, rc: i32) -> BindingError {
        match rc {
            RETCODE_TIMEOUT => BindingError::WriteTimeout(self.block),
            RETCODE_OUT_OF_RESOURCES if self.reliability == Reliability::BestEffort => {
                BindingError::Refused {
                    what: "connext write",
                    refusal: Refusal::QueueFull,
                }
            }
            rc => BindingError::Middleware(format!(
                "Connext write on {} failed (return code {rc}): {}",
                self.topic,
                self.api.last_error("no reason given")
            )),
        }
    }

    /// Current count of matched readers.
    fn matched(&self) -> i32 {
        let mut status = [0i32; crate::library::MATCHED_STATUS_WORDS];
        // SAFETY: live writer; the buffer is larger than the status.
        let rc = unsafe {
            (self.api.DDS_DataWriter_get_publication_matched_status)(
                self.native,
                status.as_mut_ptr(),
            )
        };
        if rc == RETCODE_OK { status[2] } else { 0 }
    }
}

impl Writer for ConnextWriter {
    fn wait_matched(&mut self, readers: usize, timeout: Duration) -> Result<(), BindingError> {
        crate::wait_count(readers, timeout, &self.cancel, || self.matched()).map_err(|got| {
            if self.cancel.is_cancelled() {
                return BindingError::Cancelled;
            }
            BindingError::MatchTimeout(
                timeout,
                format!(
                    "connext writer on {} matched {got} of {readers} readers; are the subscribers running with the same transport, domain and type?",
                    self.topic
                ),
            )
        })
    }

    #[inline]
    fn send<F: FnOnce(&mut [u8])>(&mut self, len: usize, fill: F) -> Result<(), BindingError> {
        BindingError::fits(len, self.scratch.len())?;
        fill(&mut self.scratch[..len]);
        let bytes = self.scratch.as_ptr();
        // SAFETY: the scratch holds len bytes, and is not touched until
        // the write returns.
        unsafe { self.write_until_taken(bytes, len) }
    }

    /// Sends the batch being filled (Perftest flushes after its last
    /// sample too); a flush that finds the send window full waits for room
    /// as a write does.
    fn flush(&mut self) -> Result<(), BindingError> {
        // SAFETY: live writer.
        match self.until_taken(|w| unsafe { (w.api.DDS_DataWriter_flush)(w.native) })? {
            RETCODE_OK => Ok(()),
            rc => Err(self.write_error(rc)),
        }
    }

    /// The echo of a ping, set into the sample straight from the bytes
    /// just received (no copy into the scratch first).
    #[inline(always)]
    fn send_from(&mut self, bytes: &[u8]) -> Option<Result<(), BindingError>> {
        if bytes.len() > self.scratch.len() {
            return Some(BindingError::fits(bytes.len(), self.scratch.len()));
        }
        // SAFETY: bytes is a live slice for the call.
        Some(unsafe { self.write_until_taken(bytes.as_ptr(), bytes.len()) })
    }
}
