//! `iceoryx`: classic Eclipse iceoryx 2.0 through its C binding
//! (libiceoryx_binding_c) and a small C shim compiled by build.rs.
//!
//! Samples travel in chunks of RouDi's shared memory: the writer loans a
//! chunk, fills it, publishes it; the reader takes it, reads it, releases
//! it. A chunk holds an 8-byte length then the sample (the `flat` data
//! type). With `--zero-copy` the harness fills and reads the chunk itself;
//! without it, the sample is copied from and to a scratch buffer (the copy
//! mode, for comparison). RouDi is started when none runs (see
//! `pubsubperf-roudi`); its largest chunk bounds the sample size.
//!
//! Reliable = publisher `WAIT_FOR_CONSUMER` + subscriber `BLOCK_PRODUCER`
//! (publishing waits, inside iceoryx, for room in a full subscriber queue);
//! best effort = both `DISCARD_OLDEST_DATA`.

use pubsubperf_core::binding::{BindingInfo, CANCEL_POLL};
use pubsubperf_core::{
    Binding, BindingError, CancelToken, Capabilities, DataType, EndpointConfig, Locator, Reader,
    Reliability, TopicSpec, WaitMode, Writer,
};
use std::ffi::{CString, c_char, c_int, c_void};
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[cfg(has_iceoryx)]
unsafe extern "C" {
    fn ppx_runtime_init(name: *const c_char);
    fn ppx_pub_new(
        svc: *const c_char,
        inst: *const c_char,
        ev: *const c_char,
        reliable: c_int,
    ) -> *mut c_void;
    fn ppx_pub_free(p: *mut c_void);
    fn ppx_pub_has_subscribers(p: *mut c_void) -> c_int;
    fn ppx_pub_loan(p: *mut c_void, chunk: *mut *mut c_void, size: u32) -> c_int;
    fn ppx_pub_publish(p: *mut c_void, chunk: *mut c_void);
    fn ppx_sub_new(
        svc: *const c_char,
        inst: *const c_char,
        ev: *const c_char,
        queue: u64,
        reliable: c_int,
    ) -> *mut c_void;
    fn ppx_sub_free(s: *mut c_void);
    fn ppx_sub_subscribed(s: *mut c_void) -> c_int;
    fn ppx_sub_take(s: *mut c_void, chunk: *mut *const c_void) -> c_int;
    fn ppx_sub_release(s: *mut c_void, chunk: *const c_void);
    fn ppx_sub_wait(s: *mut c_void, timeout_ns: i64) -> u64;
}

/// Without iceoryx at build time nothing is created: `open` refuses first.
#[cfg(not(has_iceoryx))]
#[allow(clippy::missing_safety_doc)]
mod missing {
    use super::*;
    pub unsafe fn ppx_runtime_init(_: *const c_char) {}
    pub unsafe fn ppx_pub_new(
        _: *const c_char,
        _: *const c_char,
        _: *const c_char,
        _: c_int,
    ) -> *mut c_void {
        std::ptr::null_mut()
    }
    pub unsafe fn ppx_pub_free(_: *mut c_void) {}
    pub unsafe fn ppx_pub_has_subscribers(_: *mut c_void) -> c_int {
        0
    }
    pub unsafe fn ppx_pub_loan(_: *mut c_void, _: *mut *mut c_void, _: u32) -> c_int {
        1
    }
    pub unsafe fn ppx_pub_publish(_: *mut c_void, _: *mut c_void) {}
    pub unsafe fn ppx_sub_new(
        _: *const c_char,
        _: *const c_char,
        _: *const c_char,
        _: u64,
        _: c_int,
    ) -> *mut c_void {
        std::ptr::null_mut()
    }
    pub unsafe fn ppx_sub_free(_: *mut c_void) {}
    pub unsafe fn ppx_sub_subscribed(_: *mut c_void) -> c_int {
        0
    }
    pub unsafe fn ppx_sub_take(_: *mut c_void, _: *mut *const c_void) -> c_int {
        0
    }
    pub unsafe fn ppx_sub_release(_: *mut c_void, _: *const c_void) {}
    pub unsafe fn ppx_sub_wait(_: *mut c_void, _: i64) -> u64 {
        0
    }
}
#[cfg(not(has_iceoryx))]
use missing::*;

/// Largest sample: 256 MiB (and RouDi's largest chunk minus [`PREFIX`]).
pub const MAX_SAMPLE: usize = 256 * 1024 * 1024;
/// Bytes before the sample in a chunk: its length (u64, keeps data 8-aligned).
pub const PREFIX: usize = 8;
/// iceoryx 2.0's largest subscriber queue.
pub const MAX_QUEUE: usize = 256;

fn caps() -> Capabilities {
    Capabilities {
        reliable: true,
        best_effort: true,
        default_reliability: Reliability::Reliable,
        multicast: false,
        max_sample_size: MAX_SAMPLE,
        zero_copy: true,
        batching: false,
        multiple_subscribers: true,
        transports: &["shm"],
        data_types: &[DataType::Flat],
        in_process: false,
        remote: false,
    }
}

fn availability() -> Result<(), String> {
    let missing = env!("PUBSUBPERF_ICEORYX_MISSING");
    if !missing.is_empty() {
        return Err(missing.to_string());
    }
    if pubsubperf_roudi::find_binary().is_none() {
        return Err("iox-roudi not found in PATH (Debian: apt install iceoryx)".into());
    }
    Ok(())
}

/// The iceoryx runtime of this process: one per process, named
/// `pubsubperf_iox_<pid>` (the RouDi crate recognises its socket), created
/// once RouDi runs (iceoryx would wait for ever otherwise). It stays until
/// the process exits, as iceoryx's runtime does.
static RUNTIME: Mutex<bool> = Mutex::new(false);

fn ensure_runtime() {
    let mut up = RUNTIME.lock().unwrap_or_else(|e| e.into_inner());
    if !*up {
        let name = CString::new(format!("pubsubperf_iox_{}", std::process::id())).expect("name");
        // SAFETY: a valid C string; called once per process.
        unsafe { ppx_runtime_init(name.as_ptr()) };
        *up = true;
    }
}

/// The `iceoryx` binding.
pub struct Iceoryx {
    cfg: EndpointConfig,
    instance: CString,
    /// RouDi's largest chunk user payload.
    max_payload: usize,
}

fn c(s: &str) -> CString {
    CString::new(s).unwrap_or_else(|_| CString::new("x").expect("literal"))
}

impl Binding for Iceoryx {
    type Writer = IoxWriter;
    type Reader = IoxReader;

    fn info() -> BindingInfo {
        BindingInfo {
            name: "iceoryx",
            description: "Eclipse iceoryx 2.0 (C binding): loaned shared-memory chunks via RouDi",
            version: "iceoryx 2.0.3".into(),
            capabilities: caps(),
            available: availability(),
        }
    }

    fn validate(cfg: &EndpointConfig) -> Result<(), BindingError> {
        availability().map_err(BindingError::Unavailable)?;
        if cfg.transport != "shm" {
            return Err(BindingError::Unsupported(format!(
                "--transport {}: iceoryx offers shm",
                cfg.transport
            )));
        }
        if cfg.data_type != DataType::Flat {
            return Err(BindingError::Unsupported(
                "--data-type bytes: iceoryx carries flat samples in its chunks".into(),
            ));
        }
        if let Some(k) = cfg.options.keys().next() {
            return Err(BindingError::Unsupported(format!(
                "--opt {k}: the iceoryx binding has no options"
            )));
        }
        if cfg.receive_queue > MAX_QUEUE {
            return Err(BindingError::Unsupported(format!(
                "--receive-queue {}: iceoryx 2.0 queues hold at most {MAX_QUEUE} samples",
                cfg.receive_queue
            )));
        }
        if cfg.send_queue > 0 {
            return Err(BindingError::Unsupported(
                "--send-queue: an iceoryx publisher has no send queue (history is off)".into(),
            ));
        }
        // Network options: iceoryx is shared memory on one host. One
        // refusal per flag, each naming the flag the user gave.
        let network = [
            (
                cfg.multicast,
                "--multicast: iceoryx is shared memory on one host; it has no multicast",
            ),
            (
                cfg.ipv6,
                "--ipv6: iceoryx is shared memory on one host; it has no IP addresses",
            ),
            (
                cfg.batch_bytes > 0,
                "--batch: iceoryx sends each sample in its own chunk; it has no batching",
            ),
            (
                cfg.socket_buffer > 0,
                "--socket-buffer: iceoryx is shared memory on one host; it has no sockets",
            ),
        ];
        if let Some((_, m)) = network.iter().find(|(set, _)| *set) {
            return Err(BindingError::Unsupported((*m).into()));
        }
        if cfg.max_sample_size > MAX_SAMPLE {
            return Err(BindingError::Unsupported(format!(
                "--size {}: iceoryx chunks here hold at most {MAX_SAMPLE} bytes ({})",
                cfg.max_sample_size,
                pubsubperf_core::size::format_size(MAX_SAMPLE)
            )));
        }
        Ok(())
    }

    fn open(cfg: &EndpointConfig) -> Result<Self, BindingError> {
        Self::validate(cfg)?;
        let held = pubsubperf_roudi::hold_until_exit(&pubsubperf_roudi::Options::new(&cfg.run_id))
            .map_err(|e| BindingError::Unavailable(e.to_string()))?;
        if cfg.max_sample_size + PREFIX > held.max_payload {
            return Err(BindingError::TooLarge {
                size: cfg.max_sample_size,
                limit: held.max_payload.saturating_sub(PREFIX),
            });
        }
        ensure_runtime();
        // iceoryx ids hold at most 100 characters.
        let inst: String = cfg
            .run_id
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .take(90)
            .collect();
        Ok(Iceoryx {
            cfg: cfg.clone(),
            instance: c(&inst),
            max_payload: held.max_payload,
        })
    }

    fn create_reader(
        &mut self,
        topic: &TopicSpec,
    ) -> Result<(Self::Reader, Locator), BindingError> {
        let queue = if self.cfg.receive_queue > 0 {
            self.cfg.receive_queue
        } else {
            MAX_QUEUE
        };
        let reliable = self.cfg.reliability == Reliability::Reliable;
        let ev = c(&topic.name);
        // SAFETY: valid C strings; the handle is freed on drop.
        let s = unsafe {
            ppx_sub_new(
                c"pubsubperf".as_ptr(),
                self.instance.as_ptr(),
                ev.as_ptr(),
                queue as u64,
                reliable as c_int,
            )
        };
        if s.is_null() {
            return Err(BindingError::Middleware(format!(
                "creating an iceoryx subscriber for {}",
                topic.name
            )));
        }
        let r = IoxReader {
            sub: s,
            busy: self.cfg.wait == WaitMode::Busy,
            zero_copy: self.cfg.zero_copy,
            scratch: if self.cfg.zero_copy {
                Vec::new()
            } else {
                vec![0; self.cfg.max_sample_size]
            },
            max_len: self.cfg.max_sample_size,
            cancel: self.cfg.cancel.clone(),
            topic: topic.name.clone(),
        };
        Ok((r, topic.name.clone()))
    }

    fn create_writer(
        &mut self,
        topic: &TopicSpec,
        readers: &[Locator],
    ) -> Result<Self::Writer, BindingError> {
        if let Some(l) = readers.iter().find(|l| !l.is_empty() && **l != topic.name) {
            return Err(BindingError::Unsupported(format!(
                "reader locator '{l}' is not topic '{}': both sides must use the iceoryx binding",
                topic.name
            )));
        }
        let reliable = self.cfg.reliability == Reliability::Reliable;
        let ev = c(&topic.name);
        // SAFETY: valid C strings; the handle is freed on drop.
        let p = unsafe {
            ppx_pub_new(
                c"pubsubperf".as_ptr(),
                self.instance.as_ptr(),
                ev.as_ptr(),
                reliable as c_int,
            )
        };
        if p.is_null() {
            return Err(BindingError::Middleware(format!(
                "creating an iceoryx publisher for {}",
                topic.name
            )));
        }
        Ok(IoxWriter {
            publisher: p,
            reliable,
            zero_copy: self.cfg.zero_copy,
            scratch: if self.cfg.zero_copy {
                Vec::new()
            } else {
                vec![0; self.cfg.max_sample_size]
            },
            max_len: self.cfg.max_sample_size.min(self.max_payload - PREFIX),
            block: Duration::from_millis(self.cfg.reliable_block_timeout_ms),
            cancel: self.cfg.cancel.clone(),
            topic: topic.name.clone(),
        })
    }
}

/// Publishes samples of one topic in loaned chunks.
pub struct IoxWriter {
    publisher: *mut c_void,
    reliable: bool,
    zero_copy: bool,
    scratch: Vec<u8>,
    max_len: usize,
    block: Duration,
    cancel: CancelToken,
    topic: String,
}

// SAFETY: the publisher is used from one thread at a time (the owner's).
unsafe impl Send for IoxWriter {}

impl IoxWriter {
    /// The pool for this size is empty: best effort drops the sample
    /// (`None`), reliable waits for a chunk at most the block timeout.
    #[cold]
    fn wait_loan(&mut self, size: u32, first: c_int) -> Result<Option<*mut c_void>, BindingError> {
        if !self.reliable {
            return Ok(None);
        }
        let start = Instant::now();
        let mut rc = first;
        while start.elapsed() < self.block {
            if self.cancel.is_cancelled() {
                return Err(BindingError::Cancelled);
            }
            std::thread::sleep(Duration::from_micros(50));
            let mut p = std::ptr::null_mut();
            // SAFETY: valid publisher.
            rc = unsafe { ppx_pub_loan(self.publisher, &mut p, size) };
            if rc == 0 {
                return Ok(Some(p));
            }
        }
        let _ = rc;
        Err(BindingError::WriteTimeout(self.block))
    }
}

impl Writer for IoxWriter {
    fn wait_matched(&mut self, readers: usize, timeout: Duration) -> Result<(), BindingError> {
        // iceoryx tells whether there is a subscriber, not how many; each
        // reader waits for its own subscription (Reader::wait_matched).
        let start = Instant::now();
        // SAFETY: valid publisher.
        while unsafe { ppx_pub_has_subscribers(self.publisher) } == 0 {
            if self.cancel.is_cancelled() {
                return Err(BindingError::Cancelled);
            }
            if start.elapsed() >= timeout {
                return Err(BindingError::MatchTimeout(
                    timeout,
                    format!(
                        "topic {}: no subscriber connected through RouDi (0 of {readers})",
                        self.topic
                    ),
                ));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        Ok(())
    }

    #[inline]
    fn send<F: FnOnce(&mut [u8])>(&mut self, len: usize, fill: F) -> Result<(), BindingError> {
        if len > self.max_len {
            return Err(BindingError::TooLarge {
                size: len,
                limit: self.max_len,
            });
        }
        let size = (PREFIX + len) as u32;
        let mut p = std::ptr::null_mut();
        // SAFETY: valid publisher.
        let rc = unsafe { ppx_pub_loan(self.publisher, &mut p, size) };
        if rc != 0 {
            match self.wait_loan(size, rc)? {
                Some(q) => p = q,
                None => return Ok(()),
            }
        }
        // SAFETY: the chunk holds PREFIX + len bytes, 8-aligned, ours until published.
        unsafe {
            (p as *mut u64).write(len as u64);
            let data = std::slice::from_raw_parts_mut((p as *mut u8).add(PREFIX), len);
            if self.zero_copy {
                fill(data);
            } else {
                fill(&mut self.scratch[..len]);
                data.copy_from_slice(&self.scratch[..len]);
            }
            ppx_pub_publish(self.publisher, p);
        }
        Ok(())
    }
}

impl Drop for IoxWriter {
    fn drop(&mut self) {
        // SAFETY: our publisher, freed once.
        unsafe { ppx_pub_free(self.publisher) };
    }
}

/// Takes samples of one topic from RouDi's shared memory.
pub struct IoxReader {
    sub: *mut c_void,
    busy: bool,
    zero_copy: bool,
    scratch: Vec<u8>,
    max_len: usize,
    cancel: CancelToken,
    topic: String,
}

// SAFETY: the subscriber is used from one thread at a time (the owner's);
// chunks are released within the `recv` call that took them.
unsafe impl Send for IoxReader {}

impl IoxReader {
    #[inline]
    fn take<F: FnMut(&[u8])>(&mut self, on_sample: &mut F) -> Result<usize, BindingError> {
        let mut n = 0;
        loop {
            let mut p: *const c_void = std::ptr::null();
            // SAFETY: valid subscriber.
            let rc = unsafe { ppx_sub_take(self.sub, &mut p) };
            if rc == 0 {
                return Ok(n);
            }
            if rc < 0 {
                return Err(BindingError::Middleware(format!(
                    "taking a chunk of {} (iox_ChunkReceiveResult {})",
                    self.topic,
                    -rc - 1
                )));
            }
            // SAFETY: a chunk we published: u64 length, then the sample.
            let len = unsafe { (p as *const u64).read() } as usize;
            if len > self.max_len {
                // SAFETY: releasing the chunk just taken.
                unsafe { ppx_sub_release(self.sub, p) };
                return Err(BindingError::Malformed(format!(
                    "chunk says {len} bytes, the run's largest is {}",
                    self.max_len
                )));
            }
            // SAFETY: len bytes follow the length while the chunk is held.
            let data = unsafe { std::slice::from_raw_parts((p as *const u8).add(PREFIX), len) };
            if self.zero_copy {
                on_sample(data);
                // SAFETY: releasing the chunk just read.
                unsafe { ppx_sub_release(self.sub, p) };
            } else {
                self.scratch[..len].copy_from_slice(data);
                // SAFETY: as above.
                unsafe { ppx_sub_release(self.sub, p) };
                on_sample(&self.scratch[..len]);
            }
            n += 1;
        }
    }
}

impl Reader for IoxReader {
    fn wait_matched(&mut self, timeout: Duration) -> Result<(), BindingError> {
        let start = Instant::now();
        // SAFETY: valid subscriber.
        while unsafe { ppx_sub_subscribed(self.sub) } == 0 {
            if self.cancel.is_cancelled() {
                return Err(BindingError::Cancelled);
            }
            if start.elapsed() >= timeout {
                return Err(BindingError::MatchTimeout(
                    timeout,
                    format!("topic {}: no publisher offered through RouDi", self.topic),
                ));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        Ok(())
    }

    #[inline]
    fn recv<F: FnMut(&[u8])>(
        &mut self,
        timeout: Duration,
        on_sample: &mut F,
    ) -> Result<usize, BindingError> {
        let start = Instant::now();
        loop {
            let n = self.take(on_sample)?;
            if n > 0 {
                return Ok(n);
            }
            if self.cancel.is_cancelled() {
                return Err(BindingError::Cancelled);
            }
            let elapsed = start.elapsed();
            if elapsed >= timeout {
                return Ok(0);
            }
            if !self.busy {
                let wait = (timeout - elapsed).min(CANCEL_POLL);
                // SAFETY: valid subscriber and waitset.
                unsafe { ppx_sub_wait(self.sub, wait.as_nanos() as i64) };
            }
        }
    }
}

impl Drop for IoxReader {
    fn drop(&mut self) {
        // SAFETY: our subscriber, freed once.
        unsafe { ppx_sub_free(self.sub) };
    }
}

#[cfg(test)]
mod tests;
