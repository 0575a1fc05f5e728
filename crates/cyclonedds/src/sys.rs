//! The C shim's functions (src/shim.c), over libddsc.

use std::ffi::{c_char, c_int, c_void};

/// What the functions return without CycloneDDS at build time
/// (`DDS_RETCODE_UNSUPPORTED`); `open` refuses before any is called.
#[cfg(not(has_ddsc))]
const UNSUPPORTED: i32 = -2;

pubsubperf_core::shim_fns! {
    cfg(has_ddsc), pub,
    fn pp_strretcode(rc: i32) -> *const c_char = c"CycloneDDS not built in".as_ptr();
    fn pp_create_domain(id: u32, config: *const c_char) -> i32 = UNSUPPORTED;
    fn pp_create_participant(id: u32) -> i32 = UNSUPPORTED;
    fn pp_delete(entity: i32) -> i32 = UNSUPPORTED;
    fn pp_topic_bytes(pp: i32, name: *const c_char) -> i32 = UNSUPPORTED;
    fn pp_flat_new(n: u32, keyed: c_int) -> *mut c_void = std::ptr::null_mut();
    fn pp_topic_keyed_bytes(pp: i32, name: *const c_char) -> i32 = UNSUPPORTED;
    fn pp_flat_free(flat: *mut c_void) = ();
    fn pp_topic_flat(pp: i32, name: *const c_char, flat: *mut c_void) -> i32 = UNSUPPORTED;
    fn pp_create_writer(
        pp: i32,
        tp: i32,
        reliable: c_int,
        max_blocking_ns: i64,
        history: c_int,
        depth: i32,
        max_samples: i32,
        durability: c_int,
        latency_budget_ns: i64,
    ) -> i32 = UNSUPPORTED;
    fn pp_create_reader(
        pp: i32,
        tp: i32,
        reliable: c_int,
        history: c_int,
        depth: i32,
        max_samples: i32,
        durability: c_int,
        latency_budget_ns: i64,
    ) -> i32 = UNSUPPORTED;
    fn pp_create_waitset(pp: i32, rd: i32) -> i32 = UNSUPPORTED;
    fn pp_wait(ws: i32, timeout_ns: i64) -> i32 = UNSUPPORTED;
    fn pp_write_bytes(wr: i32, buf: *const u8, len: u32) -> i32 = UNSUPPORTED;
    fn pp_write_keyed_bytes(wr: i32, id: u32, buf: *const u8, len: u32) -> i32 = UNSUPPORTED;
    fn pp_write(wr: i32, sample: *mut c_void) -> i32 = UNSUPPORTED;
    fn pp_write_flush(wr: i32) = ();
    fn pp_writer_max_blocking(wr: i32) -> i64 = -1;
    fn pp_writer_history_depth(wr: i32) -> i32 = -1;
    fn pp_loan(wr: i32, sample: *mut *mut c_void) -> i32 = UNSUPPORTED;
    fn pp_loan_available(wr: i32) -> c_int = 0;
    fn pp_shm_available(entity: i32) -> c_int = 0;
    fn pp_take(rd: i32, ptrs: *mut *mut c_void, valid: *mut u8, max: u32) -> i32 = UNSUPPORTED;
    fn pp_set_data_listener(
        rd: i32,
        cb: Option<unsafe extern "C" fn(i32, *mut c_void)>,
        arg: *mut c_void,
    ) -> i32 = UNSUPPORTED;
    fn pp_return_loan(rd: i32, ptrs: *mut *mut c_void, n: i32) -> i32 = UNSUPPORTED;
    fn pp_bytes_view(sample: *const c_void, data: *mut *const u8, len: *mut u32) = ();
    fn pp_keyed_bytes_view(sample: *const c_void, data: *mut *const u8, len: *mut u32) = ();
    fn pp_publication_matched(wr: i32, count: *mut u32) -> i32 = UNSUPPORTED;
    fn pp_subscription_matched(rd: i32, count: *mut u32) -> i32 = UNSUPPORTED;
    fn pp_take_serdata(
        rd: i32,
        sd: *mut *mut c_void,
        raw: *mut *const c_void,
        valid: *mut u8,
        max: u32,
    ) -> i32 = UNSUPPORTED;
    fn pp_serdata_to_sample(sd: *mut c_void, sample: *mut c_void) -> c_int = UNSUPPORTED;
    fn pp_serdata_unref(sd: *mut *mut c_void, n: i32) = ();
}

/// The text of a DDS return code.
pub fn retcode(rc: i32) -> String {
    // SAFETY: dds_strretcode returns a static string for any code.
    unsafe {
        std::ffi::CStr::from_ptr(pp_strretcode(rc))
            .to_string_lossy()
            .into_owned()
    }
}

/// `DDS_RETCODE_TIMEOUT`.
pub const RETCODE_TIMEOUT: i32 = -10;
