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

pubsubperf_core::shim_fns! {
    cfg(has_fastdds), pub,
    fn ppf_version() -> *const c_char = c"not installed".as_ptr();
    fn ppf_open(cfg: *const Config, err: *mut c_char, errlen: usize) -> *mut Participant
        = std::ptr::null_mut();
    fn ppf_close(p: *mut Participant) = ();
    fn ppf_create_writer(
        p: *mut Participant,
        topic: *const c_char,
        one_in_flight: i32,
        err: *mut c_char,
        errlen: usize,
    ) -> *mut WriterH = std::ptr::null_mut();
    fn ppf_delete_writer(w: *mut WriterH) = ();
    fn ppf_writer_matched(w: *mut WriterH) -> i32 = -1;
    fn ppf_writer_buffer(w: *mut WriterH) -> *mut u8 = std::ptr::null_mut();
    fn ppf_write(w: *mut WriterH, len: u32, id: u32) -> i32 = -1;
    fn ppf_write_from(w: *mut WriterH, bytes: *const u8, len: u32, id: u32) -> i32 = -1;
    fn ppf_loan(w: *mut WriterH, rc: *mut i32) -> *mut u8 = std::ptr::null_mut();
    fn ppf_write_loan(w: *mut WriterH, len: u32, id: u32) -> i32 = -1;
    fn ppf_create_reader(
        p: *mut Participant,
        topic: *const c_char,
        one_in_flight: i32,
        err: *mut c_char,
        errlen: usize,
    ) -> *mut ReaderH = std::ptr::null_mut();
    fn ppf_delete_reader(r: *mut ReaderH) = ();
    fn ppf_reader_matched(r: *mut ReaderH) -> i32 = -1;
    fn ppf_set_data_listener(
        r: *mut ReaderH,
        cb: unsafe extern "C" fn(*mut c_void),
        arg: *mut c_void,
    ) -> i32 = -1;
    fn ppf_wait(r: *mut ReaderH, timeout_ns: i64) -> i32 = -1;
    fn ppf_take(r: *mut ReaderH, data: *mut *const u8, len: *mut u32) -> i32 = -1;
    fn ppf_release(r: *mut ReaderH) = ();
    fn ppf_writer_max_blocking_ns(w: *mut WriterH) -> i64 = -1;
    fn ppf_writer_positive_acks_off(w: *mut WriterH, keep_ns: *mut i64) -> i32 = -1;
    fn ppf_reader_positive_acks_off(r: *mut ReaderH) -> i32 = -1;
    fn ppf_writer_bandwidth(w: *mut WriterH) -> i64 = -1;
    fn ppf_participant_ttl(p: *mut Participant) -> i32 = -1;
    fn ppf_reader_heartbeat_response_ns(r: *mut ReaderH) -> i64 = -1;
    fn ppf_writer_heartbeat_period_ns(w: *mut WriterH) -> i64 = -1;
    fn ppf_writer_allocated_samples(w: *mut WriterH) -> i32 = -1;
    fn ppf_reader_allocated_samples(r: *mut ReaderH) -> i32 = -1;
    fn ppf_participant_receive_buffer(p: *mut Participant) -> i64 = -1;
    fn ppf_reader_multicast(r: *mut ReaderH, buf: *mut c_char, len: usize) -> i32 = -1;
}

/// Return codes of the write functions.
pub const RC_OK: i32 = 0;
pub const RC_TIMEOUT: i32 = 1;
pub const RC_OUT_OF_RESOURCES: i32 = 2;
