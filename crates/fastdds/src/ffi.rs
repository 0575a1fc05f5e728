//! The extern "C" functions of `shim/shim.cpp`. Handles are opaque; every
//! call goes straight to the shim (no dispatch on the Rust side).

use std::os::raw::{c_char, c_void};

/// Mirrors `PpfConfig` in shim.cpp field for field.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Config {
    pub domain: i32,
    pub transport: i32,
    pub reliable: i32,
    pub flat: i32,
    pub zero_copy: i32,
    pub max_size: u32,
    pub keep_all: i32,
    pub writer_depth: i32,
    pub writer_limits: i32,
    pub reader_depth: i32,
    pub transient_local: i32,
    pub async_publish: i32,
    pub latency_budget_ns: i64,
    pub instances: i32,
    pub multicast: i32,
    pub socket_buffer: u32,
    pub shm_segment: u32,
    pub block_timeout_ns: i64,
    pub tcp_port: i32,
    pub tcp_peer_first: i32,
    pub tcp_peer_count: i32,
    pub peer_range: i32,
    pub participant_id: i32,
    pub bind_ip: *const c_char,
    pub peers: *const c_char,
    pub qos_file: *const c_char,
    pub no_positive_acks: i32,
    pub keep_duration_ns: i64,
    pub bandwidth_limit: i64,
    pub multicast_ttl: i32,
    pub receive_buffer: u32,
    pub heartbeat_response_ns: i64,
    pub heartbeat_period_ns: i64,
    pub multicast_address: *const c_char,
}

pub type Participant = c_void;
pub type WriterH = c_void;
pub type ReaderH = c_void;

#[cfg(has_fastdds)]
unsafe extern "C" {
    pub fn ppf_version() -> *const c_char;
    pub fn ppf_open(cfg: *const Config, err: *mut c_char, errlen: usize) -> *mut Participant;
    pub fn ppf_close(p: *mut Participant);
    pub fn ppf_create_writer(
        p: *mut Participant,
        topic: *const c_char,
        one_in_flight: i32,
        err: *mut c_char,
        errlen: usize,
    ) -> *mut WriterH;
    pub fn ppf_delete_writer(w: *mut WriterH);
    pub fn ppf_writer_matched(w: *mut WriterH) -> i32;
    pub fn ppf_writer_buffer(w: *mut WriterH) -> *mut u8;
    pub fn ppf_write(w: *mut WriterH, len: u32, id: u32) -> i32;
    pub fn ppf_write_from(w: *mut WriterH, bytes: *const u8, len: u32, id: u32) -> i32;
    pub fn ppf_loan(w: *mut WriterH, rc: *mut i32) -> *mut u8;
    pub fn ppf_write_loan(w: *mut WriterH, len: u32, id: u32) -> i32;
    pub fn ppf_create_reader(
        p: *mut Participant,
        topic: *const c_char,
        one_in_flight: i32,
        err: *mut c_char,
        errlen: usize,
    ) -> *mut ReaderH;
    pub fn ppf_delete_reader(r: *mut ReaderH);
    pub fn ppf_reader_matched(r: *mut ReaderH) -> i32;
    pub fn ppf_set_data_listener(
        r: *mut ReaderH,
        cb: unsafe extern "C" fn(*mut c_void),
        arg: *mut c_void,
    ) -> i32;
    pub fn ppf_wait(r: *mut ReaderH, timeout_ns: i64) -> i32;
    pub fn ppf_take(r: *mut ReaderH, data: *mut *const u8, len: *mut u32) -> i32;
    pub fn ppf_release(r: *mut ReaderH);
    pub fn ppf_writer_max_blocking_ns(w: *mut WriterH) -> i64;
    pub fn ppf_writer_positive_acks_off(w: *mut WriterH, keep_ns: *mut i64) -> i32;
    pub fn ppf_reader_positive_acks_off(r: *mut ReaderH) -> i32;
    pub fn ppf_writer_bandwidth(w: *mut WriterH) -> i64;
    pub fn ppf_participant_ttl(p: *mut Participant) -> i32;
    pub fn ppf_reader_heartbeat_response_ns(r: *mut ReaderH) -> i64;
    pub fn ppf_writer_heartbeat_period_ns(w: *mut WriterH) -> i64;
    pub fn ppf_writer_allocated_samples(w: *mut WriterH) -> i32;
    pub fn ppf_reader_allocated_samples(r: *mut ReaderH) -> i32;
    pub fn ppf_participant_receive_buffer(p: *mut Participant) -> i64;
    pub fn ppf_reader_multicast(r: *mut ReaderH, buf: *mut c_char, len: usize) -> i32;
}

/// Without Fast DDS at build time nothing is created: `open` refuses before
/// any of these is called (they fail: null handles, -1).
#[cfg(not(has_fastdds))]
#[allow(clippy::missing_safety_doc)]
mod missing {
    use super::*;
    pub unsafe fn ppf_version() -> *const c_char {
        c"not installed".as_ptr()
    }
    pub unsafe fn ppf_open(_: *const Config, _: *mut c_char, _: usize) -> *mut Participant {
        std::ptr::null_mut()
    }
    pub unsafe fn ppf_close(_: *mut Participant) {}
    pub unsafe fn ppf_create_writer(
        _: *mut Participant,
        _: *const c_char,
        _: i32,
        _: *mut c_char,
        _: usize,
    ) -> *mut WriterH {
        std::ptr::null_mut()
    }
    pub unsafe fn ppf_delete_writer(_: *mut WriterH) {}
    pub unsafe fn ppf_writer_matched(_: *mut WriterH) -> i32 {
        -1
    }
    pub unsafe fn ppf_writer_buffer(_: *mut WriterH) -> *mut u8 {
        std::ptr::null_mut()
    }
    pub unsafe fn ppf_write(_: *mut WriterH, _: u32, _: u32) -> i32 {
        -1
    }
    pub unsafe fn ppf_write_from(_: *mut WriterH, _: *const u8, _: u32, _: u32) -> i32 {
        -1
    }
    pub unsafe fn ppf_loan(_: *mut WriterH, _: *mut i32) -> *mut u8 {
        std::ptr::null_mut()
    }
    pub unsafe fn ppf_write_loan(_: *mut WriterH, _: u32, _: u32) -> i32 {
        -1
    }
    pub unsafe fn ppf_create_reader(
        _: *mut Participant,
        _: *const c_char,
        _: i32,
        _: *mut c_char,
        _: usize,
    ) -> *mut ReaderH {
        std::ptr::null_mut()
    }
    pub unsafe fn ppf_delete_reader(_: *mut ReaderH) {}
    pub unsafe fn ppf_reader_matched(_: *mut ReaderH) -> i32 {
        -1
    }
    pub unsafe fn ppf_set_data_listener(
        _: *mut ReaderH,
        _: unsafe extern "C" fn(*mut c_void),
        _: *mut c_void,
    ) -> i32 {
        -1
    }
    pub unsafe fn ppf_wait(_: *mut ReaderH, _: i64) -> i32 {
        -1
    }
    pub unsafe fn ppf_take(_: *mut ReaderH, _: *mut *const u8, _: *mut u32) -> i32 {
        -1
    }
    pub unsafe fn ppf_release(_: *mut ReaderH) {}
    pub unsafe fn ppf_writer_max_blocking_ns(_: *mut WriterH) -> i64 {
        -1
    }
    pub unsafe fn ppf_writer_positive_acks_off(_: *mut WriterH, _: *mut i64) -> i32 {
        -1
    }
    pub unsafe fn ppf_reader_positive_acks_off(_: *mut ReaderH) -> i32 {
        -1
    }
    pub unsafe fn ppf_writer_bandwidth(_: *mut WriterH) -> i64 {
        -1
    }
    pub unsafe fn ppf_participant_ttl(_: *mut Participant) -> i32 {
        -1
    }
    pub unsafe fn ppf_reader_heartbeat_response_ns(_: *mut ReaderH) -> i64 {
        -1
    }
    pub unsafe fn ppf_writer_heartbeat_period_ns(_: *mut WriterH) -> i64 {
        -1
    }
    pub unsafe fn ppf_writer_allocated_samples(_: *mut WriterH) -> i32 {
        -1
    }
    pub unsafe fn ppf_reader_allocated_samples(_: *mut ReaderH) -> i32 {
        -1
    }
    pub unsafe fn ppf_participant_receive_buffer(_: *mut Participant) -> i64 {
        -1
    }
    pub unsafe fn ppf_reader_multicast(_: *mut ReaderH, _: *mut c_char, _: usize) -> i32 {
        -1
    }
}
#[cfg(not(has_fastdds))]
pub use missing::*;

/// Return codes of the write functions.
pub const RC_OK: i32 = 0;
pub const RC_TIMEOUT: i32 = 1;
pub const RC_OUT_OF_RESOURCES: i32 = 2;
