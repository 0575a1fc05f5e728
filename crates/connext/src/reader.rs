//! [`ConnextReader`]: takes samples of one topic with Connext's
//! `DynamicDataReader`, and waits for them in a `DDS_WaitSet` on a read
//! condition (our thread, Perftest's `-useReadThread`), by polling
//! (`--wait busy`), or lets Connext's receive thread deliver them in a
//! data-available listener (`--receive listener`, Perftest's default; see
//! [`pubsubperf_core::listener`]).

use crate::connector::Connector;
use crate::library::{
    ANY_STATE, Api, DATA_AVAILABLE_STATUS, LENGTH_UNLIMITED, RETCODE_NO_DATA, RETCODE_OK,
    RETCODE_TIMEOUT, ReaderListener, SEQ_BYTES,
};
use pubsubperf_core::Received;
use pubsubperf_core::handoff::{Handoff, TakeAll};
use pubsubperf_core::listener::{self, ListenerReader, deliver};
use pubsubperf_core::{BindingError, CancelToken, Reader};
use std::ffi::c_void;
use std::time::{Duration, Instant};

/// Storage for one of RTI's sequence structs, which RTI's functions
/// initialise, fill and finalise (the binding never reads it itself).
#[repr(C, align(16))]
pub(crate) struct SeqStorage([u8; SEQ_BYTES]);

impl SeqStorage {
    pub(crate) fn boxed() -> Box<SeqStorage> {
        Box::new(SeqStorage([0; SEQ_BYTES]))
    }

    pub(crate) fn ptr(&mut self) -> *mut c_void {
        self.0.as_mut_ptr().cast()
    }
}

/// A DataReader of one topic, with its participant.
pub struct ConnextReader {
    pub(crate) api: &'static Api,
    /// The `DDS_DynamicDataReader*`.
    pub(crate) reader: *mut c_void,
    /// The native `DDS_DataReader*`.
    pub(crate) native: *mut c_void,
    /// The samples and infos of a take (loaned by Connext until returned).
    pub(crate) samples: Box<SeqStorage>,
    pub(crate) infos: Box<SeqStorage>,
    /// Our thread's wait: a waitset on a read condition of any sample.
    pub(crate) waitset: *mut c_void,
    pub(crate) condition: *mut c_void,
    pub(crate) active: Box<SeqStorage>,
    /// Each sample's octets are copied here (`get_octet_array`), as
    /// Perftest's dynamic-data reader copies them out of the sample.
    pub(crate) scratch: Vec<u8>,
    pub(crate) busy: bool,
    pub(crate) cancel: CancelToken,
    pub(crate) topic: String,
    /// `--receive listener`: shared with Connext's receive thread, which
    /// runs `recv_window`'s closure.
    pub(crate) handoff: Option<Box<Handoff>>,
    /// The data-available listener is set (at the first `recv_window`).
    pub(crate) listener: Option<Box<ReaderListener>>,
    /// Dropped last: the participant and its reader.
    pub(crate) _connector: Connector,
}

// SAFETY: used by one thread at a time (&mut self), or, with a listener,
// handed over through the Handoff; Connext readers may be used from any
// thread.
unsafe impl Send for ConnextReader {}

impl ConnextReader {
    /// The waitset, read condition and sequences of a new reader.
    pub(crate) fn prepare(&mut self) -> Result<(), BindingError> {
        let api = self.api;
        // SAFETY: the storages are zeroed and outlive the sequences
        // (finalised in Drop); the reader is live.
        unsafe {
            (api.DDS_DynamicDataSeq_initialize)(self.samples.ptr());
            (api.DDS_SampleInfoSeq_initialize)(self.infos.ptr());
            (api.DDS_ConditionSeq_initialize)(self.active.ptr());
            (api.DDS_ConditionSeq_set_maximum)(self.active.ptr(), 1);
            self.waitset = (api.DDS_WaitSet_new)();
            self.condition = (api.DDS_DataReader_create_readcondition)(
                self.native,
                ANY_STATE,
                ANY_STATE,
                ANY_STATE,
            );
            if self.waitset.is_null()
                || self.condition.is_null()
                || (api.DDS_WaitSet_attach_condition)(self.waitset, self.condition) != RETCODE_OK
            {
                return Err(BindingError::Middleware(format!(
                    "Connext could not make a waitset for the reader on {}",
                    self.topic
                )));
            }
        }
        Ok(())
    }

    /// Delivers every sample available now; returns how many. A sample
    /// without data (an instance's disposal or unregistration, when a
    /// writer goes away) has no octets and is not delivered.
    #[inline]
    pub(crate) fn drain<F: FnMut(Received<'_>)>(
        &mut self,
        on_sample: &mut F,
    ) -> Result<usize, BindingError> {
        let api = self.api;
        let (samples, infos) = (self.samples.ptr(), self.infos.ptr());
        // SAFETY: live reader; the sequences are initialised.
        let rc = unsafe {
            (api.DDS_DynamicDataReader_take)(
                self.reader,
                samples,
                infos,
                LENGTH_UNLIMITED,
                ANY_STATE,
                ANY_STATE,
                ANY_STATE,
            )
        };
        match rc {
            RETCODE_OK => {}
            RETCODE_NO_DATA => return Ok(0),
            rc => {
                return Err(BindingError::Middleware(format!(
                    "Connext take on {} failed (return code {rc})",
                    self.topic
                )));
            }
        }
        let mut n = 0;
        // SAFETY: the take filled the sequence; each reference is a live
        // DynamicData until the loan is returned below.
        unsafe {
            let count = (api.DDS_DynamicDataSeq_get_length)(samples);
            for i in 0..count {
                let sample = (api.DDS_DynamicDataSeq_get_reference)(samples, i);
                let mut len = self.scratch.len() as u32;
                let rc = (api.DDS_DynamicData_get_octet_array)(
                    sample,
                    self.scratch.as_mut_ptr(),
                    &mut len,
                    crate::xml::DATA.as_ptr(),
                    0,
                );
                if rc != RETCODE_OK || len == 0 {
                    continue;
                }
                on_sample(Received::whole(&self.scratch[..len as usize]));
                n += 1;
            }
            (api.DDS_DynamicDataReader_return_loan)(self.reader, samples, infos);
        }
        Ok(n)
    }

    /// Current count of matched writers.
    fn matched(&self) -> i32 {
        let mut status = [0i32; crate::library::MATCHED_STATUS_WORDS];
        // SAFETY: live reader; the buffer is larger than the status.
        let rc = unsafe {
            (self.api.DDS_DataReader_get_subscription_matched_status)(
                self.native,
                status.as_mut_ptr(),
            )
        };
        if rc == RETCODE_OK { status[2] } else { 0 }
    }

    /// Waits in the waitset for at most `slice`.
    fn wait(&mut self, slice: Duration) -> Result<(), BindingError> {
        let d = crate::library::Duration::of(slice);
        // SAFETY: live waitset and sequence.
        let rc = unsafe { (self.api.DDS_WaitSet_wait)(self.waitset, self.active.ptr(), &d) };
        match rc {
            RETCODE_OK | RETCODE_TIMEOUT => Ok(()),
            rc => Err(BindingError::Middleware(format!(
                "Connext waitset wait on {} failed (return code {rc})",
                self.topic
            ))),
        }
    }
}

impl Drop for ConnextReader {
    fn drop(&mut self) {
        let api = self.api;
        // SAFETY: each object came from the calls in `prepare` or `listen`,
        // on this reader; a listener call in progress ends before
        // set_listener returns.
        unsafe {
            if self.listener.is_some() {
                (api.DDS_DataReader_set_listener)(self.native, std::ptr::null(), 0);
            }
            if !self.waitset.is_null() {
                if !self.condition.is_null() {
                    (api.DDS_WaitSet_detach_condition)(self.waitset, self.condition);
                }
                (api.DDS_WaitSet_delete)(self.waitset);
            }
            if !self.condition.is_null() {
                (api.DDS_DataReader_delete_readcondition)(self.native, self.condition);
            }
            (api.DDS_DynamicDataSeq_finalize)(self.samples.ptr());
            (api.DDS_SampleInfoSeq_finalize)(self.infos.ptr());
            (api.DDS_ConditionSeq_finalize)(self.active.ptr());
        }
    }
}

impl TakeAll for ConnextReader {
    fn take_all<F: FnMut(Received<'_>)>(
        &mut self,
        on_sample: &mut F,
    ) -> Result<usize, BindingError> {
        self.drain(on_sample)
    }
}

impl ListenerReader for ConnextReader {
    fn handoff(&self) -> Option<&Handoff> {
        self.handoff.as_deref()
    }

    unsafe fn set_listener(&mut self, arg: *mut c_void) -> Result<(), BindingError> {
        if self.listener.is_some() {
            return Ok(());
        }
        let listener = Box::new(ReaderListener {
            listener_data: arg,
            on_requested_deadline_missed: None,
            on_requested_incompatible_qos: None,
            on_sample_rejected: None,
            on_liveliness_changed: None,
            on_data_available: Some(on_data_available),
            on_subscription_matched: None,
            on_sample_lost: None,
        });
        // SAFETY: live reader; the listener and the hand-off are boxed
        // and outlive the listener's use (Drop removes it first).
        let rc = unsafe {
            (self.api.DDS_DataReader_set_listener)(self.native, &*listener, DATA_AVAILABLE_STATUS)
        };
        if rc != RETCODE_OK {
            return Err(BindingError::Middleware(format!(
                "Connext could not set a listener on {}",
                self.topic
            )));
        }
        self.listener = Some(listener);
        Ok(())
    }

    fn cancel(&self) -> &CancelToken {
        &self.cancel
    }
}

/// The data-available listener: `data` is the reader's [`Handoff`].
///
/// # Safety
/// Called by Connext with the listener data the reader set, which outlives
/// the listener (removed in Drop before the hand-off is freed).
unsafe extern "C" fn on_data_available(data: *mut c_void, _reader: *mut c_void) {
    // SAFETY: per the function's contract.
    unsafe { deliver(data) }
}

impl Reader for ConnextReader {
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
        crate::wait_count(1, timeout, &self.cancel, || self.matched()).map_err(|_| {
            if self.cancel.is_cancelled() {
                return BindingError::Cancelled;
            }
            BindingError::MatchTimeout(
                timeout,
                format!(
                    "connext reader on {} found no writer; is the publisher running with the same transport, domain and type?",
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
            if self.cancel.is_cancelled() {
                return Err(BindingError::Cancelled);
            }
            let left = timeout.saturating_sub(start.elapsed());
            if left.is_zero() {
                return Ok(0);
            }
            if self.busy {
                pubsubperf_core::busy::yield_between_polls();
            } else {
                self.wait(left.min(pubsubperf_core::binding::CANCEL_POLL))?;
            }
            let n = self.drain(on_sample)?;
            if n > 0 {
                return Ok(n);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listener_struct_has_the_api_reference_layout() {
        // The listener data, then seven callbacks.
        assert_eq!(
            std::mem::size_of::<ReaderListener>(),
            8 * std::mem::size_of::<*const c_void>()
        );
    }
}
