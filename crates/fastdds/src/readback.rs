//! What Fast DDS holds for our entities, read back with `get_qos`: the
//! tests of `--max-blocking-time`, `--no-positive-acks`,
//! `--bandwidth-limit`, `--multicast-ttl`, `--multicast-address` and the UDP receive buffer
//! heartbeat period and response defaults and the samples allocated up front check through these that the
//! settings reached the middleware, not only our configuration.

use crate::{FastDds, FastReader, FastWriter, ffi};
use std::time::Duration;

impl FastWriter {
    /// RELIABILITY max_blocking_time.
    pub fn max_blocking_time(&self) -> Duration {
        // SAFETY: raw is a live writer.
        let ns = unsafe { ffi::ppf_writer_max_blocking_ns(self.raw) };
        Duration::from_nanos(ns.max(0) as u64)
    }

    /// The keep duration when positive acks are disabled, None when they
    /// are on.
    pub fn positive_acks_off(&self) -> Option<Duration> {
        let mut keep = 0i64;
        // SAFETY: raw is a live writer; keep outlives the call.
        let off = unsafe { ffi::ppf_writer_positive_acks_off(self.raw, &mut keep) };
        (off == 1).then(|| Duration::from_nanos(keep.max(0) as u64))
    }

    /// How many samples the writer allocates up front.
    pub fn allocated_samples(&self) -> i32 {
        // SAFETY: raw is a live writer.
        unsafe { ffi::ppf_writer_allocated_samples(self.raw) }
    }

    /// RELIABILITY's heartbeat period.
    pub fn heartbeat_period(&self) -> Duration {
        // SAFETY: raw is a live writer.
        let ns = unsafe { ffi::ppf_writer_heartbeat_period_ns(self.raw) };
        Duration::from_nanos(ns.max(0) as u64)
    }

    /// Bytes per second of the flow controller the writer publishes
    /// through, None when it has none.
    pub fn bandwidth_limit(&self) -> Option<u64> {
        // SAFETY: raw is a live writer.
        let b = unsafe { ffi::ppf_writer_bandwidth(self.raw) };
        u64::try_from(b).ok()
    }
}

impl FastReader {
    /// The address of the reader's multicast locator (its QoS's
    /// `multicast_locator_list`), None without one.
    pub fn multicast_address(&self) -> Option<String> {
        let mut buf = [0 as std::os::raw::c_char; 64];
        // SAFETY: raw is a live reader; buf outlives the call and its
        // length is passed.
        let n = unsafe { ffi::ppf_reader_multicast(self.raw, buf.as_mut_ptr(), buf.len()) };
        // SAFETY: the shim wrote a NUL-terminated string into buf.
        let s = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) };
        (n > 0).then(|| s.to_string_lossy().into_owned())
    }

    /// True when the reader sends no positive acknowledgements.
    pub fn positive_acks_off(&self) -> bool {
        // SAFETY: raw is a live reader.
        unsafe { ffi::ppf_reader_positive_acks_off(self.raw) == 1 }
    }

    /// How many samples the reader allocates up front.
    pub fn allocated_samples(&self) -> i32 {
        // SAFETY: raw is a live reader.
        unsafe { ffi::ppf_reader_allocated_samples(self.raw) }
    }

    /// How long the reader waits before it answers a heartbeat.
    pub fn heartbeat_response_delay(&self) -> Duration {
        // SAFETY: raw is a live reader.
        let ns = unsafe { ffi::ppf_reader_heartbeat_response_ns(self.raw) };
        Duration::from_nanos(ns.max(0) as u64)
    }
}

impl FastDds {
    /// The TTL of the participant's UDPv4 transport, None without one.
    pub fn multicast_ttl(&self) -> Option<u8> {
        // SAFETY: the participant is alive (we hold it).
        let t = unsafe { ffi::ppf_participant_ttl(self.p.raw) };
        u8::try_from(t).ok()
    }

    /// The receive buffer size asked of the UDPv4 transport (0: the
    /// system's default), None without one.
    pub fn udp_receive_buffer(&self) -> Option<u32> {
        // SAFETY: the participant is alive (we hold it).
        let b = unsafe { ffi::ppf_participant_receive_buffer(self.p.raw) };
        u32::try_from(b).ok()
    }
}
