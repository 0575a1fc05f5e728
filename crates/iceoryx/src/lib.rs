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

use pubsubperf_core::binding::BindingInfo;
use pubsubperf_core::{
    Binding, BindingError, Capabilities, DataType, EndpointConfig, Locator, Reliability, TopicSpec,
    WaitMode,
};
use std::ffi::{CString, c_char, c_int, c_void};
use std::sync::Mutex;
use std::time::Duration;

pubsubperf_core::shim_fns! {
    cfg(has_iceoryx), pub(crate),
    fn ppx_runtime_init(name: *const c_char) = ();
    fn ppx_pub_new(
        svc: *const c_char,
        inst: *const c_char,
        ev: *const c_char,
        reliable: c_int,
    ) -> *mut c_void = std::ptr::null_mut();
    fn ppx_pub_free(p: *mut c_void) = ();
    fn ppx_pub_has_subscribers(p: *mut c_void) -> c_int = 0;
    fn ppx_pub_loan(p: *mut c_void, chunk: *mut *mut c_void, size: u32) -> c_int = 1;
    fn ppx_pub_publish(p: *mut c_void, chunk: *mut c_void) = ();
    fn ppx_sub_new(
        svc: *const c_char,
        inst: *const c_char,
        ev: *const c_char,
        queue: u64,
        reliable: c_int,
    ) -> *mut c_void = std::ptr::null_mut();
    fn ppx_sub_free(s: *mut c_void) = ();
    fn ppx_sub_subscribed(s: *mut c_void) -> c_int = 0;
    fn ppx_sub_take(s: *mut c_void, chunk: *mut *const c_void) -> c_int = 0;
    fn ppx_sub_release(s: *mut c_void, chunk: *const c_void) = ();
    fn ppx_sub_wait(s: *mut c_void, timeout_ns: i64) -> u64 = 0;
}

mod reader;
mod writer;

pub use reader::IoxReader;
pub use writer::IoxWriter;

/// Largest sample: 256 MiB (and RouDi's largest chunk minus [`PREFIX`]).
pub const MAX_SAMPLE: usize = 256 * 1024 * 1024;
/// Bytes before the sample in a chunk: its length (u64, keeps data 8-aligned).
pub const PREFIX: usize = 8;
/// iceoryx 2.0's largest subscriber queue.
pub const MAX_QUEUE: usize = 256;

pub(crate) fn caps() -> Capabilities {
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
        receive: &[pubsubperf_core::ReceiveMode::Thread],
    }
}

pub(crate) fn availability() -> Result<(), String> {
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
pub(crate) static RUNTIME: Mutex<bool> = Mutex::new(false);

pub(crate) fn ensure_runtime() {
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
    pub(crate) cfg: EndpointConfig,
    pub(crate) instance: CString,
    /// RouDi's largest chunk user payload.
    pub(crate) max_payload: usize,
}

pub(crate) fn c(s: &str) -> CString {
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

    /// Against iceoryx's defaults (DISCARD_OLDEST_DATA, queue 256, RouDi's
    /// default mempools up to 4 MiB, loans, no waitset): what the run's
    /// reliability, queue, copies and waits set. iceperf loans and
    /// busy-polls.
    fn deviations(_test: pubsubperf_core::result::TestKind, cfg: &EndpointConfig) -> Vec<String> {
        let mut d = Vec::new();
        if cfg.reliability == Reliability::Reliable {
            d.push("WAIT_FOR_CONSUMER and BLOCK_PRODUCER (the publisher blocks)".into());
        }
        if cfg.receive_queue > 0 && cfg.receive_queue != MAX_QUEUE {
            d.push(format!("queue {}", cfg.receive_queue));
        }
        d.push("RouDi mempools up to 256 MiB".into());
        if !cfg.zero_copy {
            d.push("copied into and out of the chunks".into());
        }
        if cfg.wait == WaitMode::Block {
            d.push("a waitset (blocking wait)".into());
        }
        d
    }

    /// Busy polling, as iceoryx's `iceperf` waits.
    fn default_wait(_test: pubsubperf_core::result::TestKind) -> WaitMode {
        WaitMode::Busy
    }

    /// Loaned samples, written and read in place, as iceoryx's `iceperf` sends them.
    fn default_zero_copy(_test: pubsubperf_core::result::TestKind) -> bool {
        true
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

    fn host_services(cfg: &EndpointConfig) -> Result<(), BindingError> {
        pubsubperf_roudi::hold_until_exit(&pubsubperf_roudi::Options::new(&cfg.run_id))
            .map(|_| ())
            .map_err(|e| BindingError::Unavailable(e.to_string()))
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

#[cfg(test)]
mod tests;
