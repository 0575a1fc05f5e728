//! `--receive listener`: CycloneDDS's own receive thread runs the
//! subscriber's per-sample code, in a data-available listener, while the
//! thread in [`CycloneReader::recv_window`] sleeps (the reader's side is
//! [`pubsubperf_core::listener`], the hand-off between the two
//! [`pubsubperf_core::handoff`]).

use crate::{CycloneReader, mw, sys};
use pubsubperf_core::handoff::{Handoff, TakeAll};
use pubsubperf_core::listener::{ListenerReader, deliver};
use pubsubperf_core::{BindingError, CancelToken, Received};
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

impl ListenerReader for CycloneReader {
    fn handoff(&self) -> Option<&Handoff> {
        self.handoff.as_deref()
    }

    unsafe fn set_listener(&mut self, arg: *mut c_void) -> Result<(), BindingError> {
        if self.listening {
            return Ok(());
        }
        // SAFETY: valid reader; the hand-off is boxed and outlives the
        // listener, which Drop clears first.
        let rc = unsafe { sys::pp_set_data_listener(self.rd, Some(on_data_available), arg) };
        if rc < 0 {
            return Err(mw(&format!("setting a listener on {}", self.topic), rc));
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
/// Called by CycloneDDS with the argument the reader registered, which
/// outlives the listener (the reader clears the listener before dropping it).
unsafe extern "C" fn on_data_available(_reader: i32, arg: *mut c_void) {
    // SAFETY: per the function's contract.
    unsafe { deliver(arg) }
}
