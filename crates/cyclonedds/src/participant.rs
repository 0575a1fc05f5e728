//! One DDS participant, shared by the binding and its readers and writers.

use crate::*;
use std::ffi::c_void;

/// One participant; shared by the binding and its readers and writers, so
/// it (and every entity in it) is deleted when the last of them drops.
pub(crate) struct Participant {
    pub(crate) pp: i32,
    pub(crate) domain: u32,
    pub(crate) flat: *mut c_void,
}

// SAFETY: `flat` is an immutable descriptor owned here, read by CycloneDDS
// from any thread; entity handles are plain integers.
unsafe impl Send for Participant {}
// SAFETY: as above; nothing is mutated through a shared reference.
unsafe impl Sync for Participant {}

impl Drop for Participant {
    fn drop(&mut self) {
        // SAFETY: deleting our participant (and its children), then freeing
        // the descriptor its topics used.
        unsafe {
            sys::pp_delete(self.pp);
            if !self.flat.is_null() {
                sys::pp_flat_free(self.flat);
            }
        }
        release_domain(self.domain);
    }
}
