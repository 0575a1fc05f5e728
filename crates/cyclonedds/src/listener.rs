//! `--receive listener`: CycloneDDS's own receive thread runs the
//! subscriber's per-sample code, in a data-available listener, while the
//! thread in [`CycloneReader::recv_window`] sleeps (the hand-off between
//! the two is [`pubsubperf_core::handoff`]).

use crate::CycloneReader;
use pubsubperf_core::BindingError;
use pubsubperf_core::Received;
use pubsubperf_core::handoff::{Handoff, TakeAll};
use std::ffi::c_void;

impl TakeAll for CycloneReader {
    fn take_all<F: FnMut(Received<'_>)>(
        &mut self,
        on_sample: &mut F,
    ) -> Result<usize, BindingError> {
        let mut total = 0;
        loop {
            total += self.take(on_sample)?;
            if !self.full {
                return Ok(total);
            }
        }
    }
}

/// The data-available listener: `arg` is the reader's [`Handoff`].
///
/// # Safety
/// Called by CycloneDDS with the argument the reader registered, which
/// outlives the listener (the reader clears the listener before dropping it).
pub(crate) unsafe extern "C" fn on_data_available(_reader: i32, arg: *mut c_void) {
    // SAFETY: per the function's contract.
    let handoff = unsafe { &*(arg as *const Handoff) };
    handoff.deliver();
}
