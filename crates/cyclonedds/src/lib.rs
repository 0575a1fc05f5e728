//! `cyclonedds`: Eclipse CycloneDDS (libddsc, the C API) through a small C
//! shim compiled by build.rs.
//!
//! - Transports: `udp` (RTPS over UDP; discovery by unicast to loopback by
//!   default, multicast off) and `shm` (CycloneDDS's iceoryx integration:
//!   local data goes through RouDi's shared memory; RouDi is started for
//!   the run when none runs, see `pubsubperf-roudi`).
//! - Data types: `bytes` = `pubsubperf::Bytes { sequence<octet> data; }`
//!   (from pubsubperf.idl via idlc, serialized), `flat` = a fixed-size type
//!   `pubsubperf::Flat<N> { uint32 len; octet data[N]; }` built at run time
//!   for the run's largest sample N, used in place; `--zero-copy` writes
//!   into loaned iceoryx chunks (`dds_loan_sample`) and readers take loans.
//! - Topics are named `pp_<run id>_<topic>`; a locator is the topic name and
//!   discovery does the matching.

mod config;
mod sys;

pub use config::{History, KEYS, Opts};

use pubsubperf_core::binding::BindingInfo;
use pubsubperf_core::{
    Binding, BindingError, CancelToken, Capabilities, DataType, EndpointConfig, Locator, Reader,
    Reliability, TopicSpec, WaitMode, Writer,
};
use std::ffi::{CString, c_void};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Largest sample: 256 MiB, the product's largest size.
pub const MAX_SAMPLE: usize = 256 * 1024 * 1024;

/// Largest sample over `--transport udp`: verified here with 16 MiB (with
/// `--socket-buffer 4MiB`); 256 MiB stalled CycloneDDS's reliable
/// fragment flow on loopback (the writer blocked for more than 10 s).
pub const MAX_UDP_SAMPLE: usize = 16 * 1024 * 1024;

/// Bytes CycloneDDS puts in an iceoryx chunk before the sample (its
/// `iceoryx_header_t` as the user header, plus alignment), with margin.
pub const SHM_OVERHEAD: usize = 256;

/// LATENCY_BUDGET of writers and readers with `--async` (any non-zero value
/// switches a writer to asynchronous sending; it does not delay samples).
pub const ASYNC_LATENCY_BUDGET_NS: i64 = 1_000;

/// Samples taken per `dds_take`.
const TAKE_MAX: usize = 32;

/// The shared-memory discovery delay: CycloneDDS connects iceoryx ports
/// through RouDi, whose discovery loop runs every 100 ms, after the DDS
/// endpoints matched. Data written before that is not delivered.
const SHM_CONNECT: Duration = Duration::from_millis(300);

fn caps() -> Capabilities {
    Capabilities {
        reliable: true,
        best_effort: true,
        default_reliability: Reliability::Reliable,
        multicast: true,
        max_sample_size: MAX_SAMPLE,
        zero_copy: true,
        batching: false,
        multiple_subscribers: true,
        transports: &["udp", "shm"],
        data_types: &[DataType::Bytes, DataType::Flat],
        in_process: false,
        remote: true,
    }
}

fn availability() -> Result<(), String> {
    #[cfg(no_ddsc)]
    {
        Err(format!(
            "built without CycloneDDS: {}",
            env!("PUBSUBPERF_DDSC_MISSING")
        ))
    }
    #[cfg(not(no_ddsc))]
    {
        Ok(())
    }
}

fn mw(what: &str, rc: i32) -> BindingError {
    BindingError::Middleware(format!("{what}: {}", sys::retcode(rc)))
}

/// Domains created by this process, shared by every participant of a run
/// (both sides of an in-process test use one domain).
struct DomainSlot {
    id: u32,
    entity: i32,
    xml: String,
    refs: usize,
}

static DOMAINS: Mutex<Vec<DomainSlot>> = Mutex::new(Vec::new());

fn acquire_domain(id: u32, xml: &str) -> Result<(), BindingError> {
    let mut d = DOMAINS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(s) = d.iter_mut().find(|s| s.id == id) {
        if s.xml != xml {
            return Err(BindingError::Unsupported(format!(
                "--domain {id}: this process already uses domain {id} with another configuration; pick another domain"
            )));
        }
        s.refs += 1;
        return Ok(());
    }
    let c = CString::new(xml).map_err(|_| BindingError::Unsupported("config has a NUL".into()))?;
    // SAFETY: a valid C string; the domain lives until release_domain.
    let e = unsafe { sys::pp_create_domain(id, c.as_ptr()) };
    if e < 0 {
        return Err(BindingError::Middleware(format!(
            "creating domain {id}: {} (check --qos-file, --opt peers and the bind address)",
            sys::retcode(e)
        )));
    }
    d.push(DomainSlot {
        id,
        entity: e,
        xml: xml.to_string(),
        refs: 1,
    });
    Ok(())
}

fn release_domain(id: u32) {
    let mut d = DOMAINS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = d.iter().position(|s| s.id == id) {
        d[i].refs -= 1;
        if d[i].refs == 0 {
            let s = d.remove(i);
            // SAFETY: deleting an entity we created.
            unsafe { sys::pp_delete(s.entity) };
        }
    }
}

/// One participant; shared by the binding and its readers and writers, so
/// it (and every entity in it) is deleted when the last of them drops.
struct Participant {
    pp: i32,
    domain: u32,
    flat: *mut c_void,
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

/// The `cyclonedds` binding: one participant per side.
pub struct CycloneDds {
    cfg: EndpointConfig,
    opts: Opts,
    part: Arc<Participant>,
    /// Flat: the data array length N (the run's largest sample).
    flat_len: usize,
    /// shm: RouDi's largest chunk payload, minus CycloneDDS's header.
    shm_limit: Option<usize>,
}

/// Why a shm run cannot use RouDi's chunks for this size, if so.
fn shm_fits(cfg: &EndpointConfig, max_payload: usize) -> Result<usize, BindingError> {
    let limit = max_payload.saturating_sub(SHM_OVERHEAD + 8);
    if cfg.max_sample_size > limit {
        return Err(BindingError::TooLarge {
            size: cfg.max_sample_size,
            limit,
        });
    }
    Ok(limit)
}

impl CycloneDds {
    fn topic_name(&self, topic: &str) -> String {
        let clean = |s: &str| -> String {
            s.chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect()
        };
        format!("pp_{}_{}", clean(&self.cfg.run_id), clean(topic))
    }

    fn topic(&self, name: &str) -> Result<i32, BindingError> {
        let c = CString::new(name).map_err(|_| BindingError::Unsupported("topic name".into()))?;
        // SAFETY: valid participant and C string; the flat descriptor lives
        // as long as the participant.
        let tp = unsafe {
            match self.cfg.data_type {
                DataType::Bytes if self.cfg.instances > 0 => {
                    sys::pp_topic_keyed_bytes(self.part.pp, c.as_ptr())
                }
                DataType::Bytes => sys::pp_topic_bytes(self.part.pp, c.as_ptr()),
                DataType::Flat => sys::pp_topic_flat(self.part.pp, c.as_ptr(), self.part.flat),
            }
        };
        if tp < 0 {
            return Err(mw(&format!("creating topic {name}"), tp));
        }
        Ok(tp)
    }

    /// `--async`: a non-zero LATENCY_BUDGET, which is what makes a
    /// CycloneDDS 0.10 writer hand its packets to the domain's send thread
    /// (`sendq`) instead of sending on the writing thread; readers request
    /// the same budget so that they match such writers.
    fn latency_budget_ns(&self) -> i64 {
        if self.cfg.async_publish {
            ASYNC_LATENCY_BUDGET_NS
        } else {
            0
        }
    }

    /// Bytes before the data of a flat sample: `len`, and the key `id`
    /// first with `--instances`.
    fn flat_header(&self) -> usize {
        if self.cfg.instances > 0 { 8 } else { 4 }
    }

    /// History and resource limits: the user's choice, else KEEP_ALL for
    /// reliable UDP (no sample is overwritten) and KEEP_LAST otherwise
    /// (KEEP_ALL turns CycloneDDS's shared memory off), with a depth that
    /// keeps about 64 MiB queued.
    fn history(&self, queue: usize) -> (i32, i32, i32) {
        let size = self.cfg.max_sample_size.max(1);
        let shm = self.cfg.transport == "shm";
        let default_depth = if shm {
            (64 * 1024 * 1024 / size).clamp(1, 16)
        } else {
            (64 * 1024 * 1024 / size).clamp(4, 1024)
        };
        let depth = if queue > 0 { queue } else { default_depth }.min(i32::MAX as usize) as i32;
        let h =
            self.opts
                .history
                .unwrap_or(if self.cfg.reliability == Reliability::Reliable && !shm {
                    History::KeepAll
                } else {
                    History::KeepLast(depth as u32)
                });
        match h {
            History::KeepAll => (1, 0, depth),
            History::KeepLast(d) => (0, d.min(i32::MAX as u32) as i32, 0),
        }
    }
}

impl Binding for CycloneDds {
    type Writer = CycloneWriter;
    type Reader = CycloneReader;

    fn info() -> BindingInfo {
        BindingInfo {
            name: "cyclonedds",
            description: "Eclipse CycloneDDS (C API): RTPS over UDP, or shared memory via iceoryx (RouDi)",
            version: format!("CycloneDDS {}", env!("PUBSUBPERF_DDSC_VERSION")),
            capabilities: caps(),
            available: availability(),
        }
    }

    fn qos_flags() -> &'static [&'static str] {
        &pubsubperf_core::binding::QOS_FLAGS
    }

    fn validate(cfg: &EndpointConfig) -> Result<(), BindingError> {
        availability().map_err(BindingError::Unavailable)?;
        let o = Opts::parse(cfg)?;
        match cfg.transport.as_str() {
            "udp" | "shm" => {}
            t => {
                return Err(BindingError::Unsupported(format!(
                    "--transport {t}: cyclonedds offers udp, shm"
                )));
            }
        }
        if cfg.zero_copy && (cfg.transport != "shm" || cfg.data_type != DataType::Flat) {
            return Err(BindingError::Unsupported(
                "--zero-copy: cyclonedds loans need --transport shm and --data-type flat".into(),
            ));
        }
        if cfg.ipv6 {
            return Err(BindingError::Unsupported(
                "--ipv6: the cyclonedds binding runs over IPv4".into(),
            ));
        }
        if cfg.batch_bytes > 0 {
            return Err(BindingError::Unsupported(
                "--batch: cyclonedds does not batch here".into(),
            ));
        }
        if cfg.transport == "shm" {
            if cfg.multicast {
                return Err(BindingError::Unsupported(
                    "--multicast: applies to --transport udp (shm delivers through shared memory)"
                        .into(),
                ));
            }
            if o.history == Some(History::KeepAll) {
                return Err(BindingError::Unsupported(
                    "--history keep-all: CycloneDDS 0.10 turns shared memory off for KEEP_ALL; use keep-last:N with --transport shm".into(),
                ));
            }
            if pubsubperf_roudi::find_binary().is_none() {
                return Err(BindingError::Unavailable(
                    "--transport shm: iox-roudi not found in PATH (Debian: apt install iceoryx)"
                        .into(),
                ));
            }
            let r = pubsubperf_roudi::running();
            if let Some(r) = r.first() {
                // Someone else's RouDi: its chunks bound the size.
                let max = r
                    .config
                    .as_ref()
                    .and_then(|c| std::fs::read_to_string(c).ok())
                    .and_then(|t| pubsubperf_roudi::max_payload_of_config(&t))
                    .unwrap_or(pubsubperf_roudi::ICEORYX_DEFAULT_MAX_PAYLOAD);
                shm_fits(cfg, max).map_err(|e| {
                    BindingError::Unsupported(format!(
                        "--size: {e} (the running RouDi, pid {}, has no larger chunks)",
                        r.pid
                    ))
                })?;
            }
        }
        if cfg.max_sample_size > MAX_SAMPLE {
            return Err(BindingError::TooLarge {
                size: cfg.max_sample_size,
                limit: MAX_SAMPLE,
            });
        }
        if cfg.transport == "udp" && cfg.max_sample_size > MAX_UDP_SAMPLE {
            return Err(BindingError::Unsupported(format!(
                "--size {}: cyclonedds over udp is verified up to 16 MiB (larger samples stall its reliable fragment flow on loopback); use --transport shm for larger ones",
                cfg.max_sample_size
            )));
        }
        Ok(())
    }

    fn open(cfg: &EndpointConfig) -> Result<Self, BindingError> {
        Self::validate(cfg)?;
        let opts = Opts::parse(cfg)?;
        let shm_limit = if cfg.transport == "shm" {
            // Before the participant: CycloneDDS waits for ever for a RouDi.
            let held =
                pubsubperf_roudi::hold_until_exit(&pubsubperf_roudi::Options::new(&cfg.run_id))
                    .map_err(|e| BindingError::Unavailable(format!("--transport shm: {e}")))?;
            Some(shm_fits(cfg, held.max_payload)?)
        } else {
            None
        };
        let domain = opts.domain_id(&cfg.run_id);
        let xml = config::domain_xml(cfg, &opts);
        acquire_domain(domain, &xml)?;
        // SAFETY: creating a participant in a domain we hold.
        let pp = unsafe { sys::pp_create_participant(domain) };
        if pp < 0 {
            release_domain(domain);
            return Err(mw(
                &format!("creating a participant in domain {domain}"),
                pp,
            ));
        }
        let flat_len = cfg.max_sample_size;
        let flat = if cfg.data_type == DataType::Flat {
            // SAFETY: allocates a descriptor owned by the participant guard.
            let f = unsafe { sys::pp_flat_new(flat_len as u32, (cfg.instances > 0) as i32) };
            if f.is_null() {
                // SAFETY: our participant.
                unsafe { sys::pp_delete(pp) };
                release_domain(domain);
                return Err(BindingError::Middleware(
                    "allocating a type descriptor".into(),
                ));
            }
            f
        } else {
            std::ptr::null_mut()
        };
        Ok(CycloneDds {
            cfg: cfg.clone(),
            opts,
            part: Arc::new(Participant { pp, domain, flat }),
            flat_len,
            shm_limit,
        })
    }

    fn create_reader(
        &mut self,
        topic: &TopicSpec,
    ) -> Result<(Self::Reader, Locator), BindingError> {
        let name = self.topic_name(&topic.name);
        let tp = self.topic(&name)?;
        let (history, depth, max_samples) = self.history(self.cfg.receive_queue);
        let reliable = (self.cfg.reliability == Reliability::Reliable) as i32;
        // SAFETY: valid participant and topic.
        let rd = unsafe {
            sys::pp_create_reader(
                self.part.pp,
                tp,
                reliable,
                history,
                depth,
                max_samples,
                self.opts.transient_local as i32,
                self.latency_budget_ns(),
            )
        };
        if rd < 0 {
            return Err(mw(&format!("creating a reader of {name}"), rd));
        }
        // SAFETY: valid participant and reader.
        let ws = unsafe { sys::pp_create_waitset(self.part.pp, rd) };
        if ws < 0 {
            return Err(mw("creating a waitset", ws));
        }
        let reader = CycloneReader {
            rd,
            ws,
            flat: self.cfg.data_type == DataType::Flat,
            keyed: self.cfg.instances > 0,
            hdr: self.flat_header(),
            flat_len: self.flat_len,
            in_place: self.cfg.data_type == DataType::Flat && self.shm_limit.is_some(),
            raw: [std::ptr::null(); TAKE_MAX],
            scratch: if self.cfg.data_type == DataType::Flat && self.shm_limit.is_some() {
                vec![0u32; (self.flat_header() + self.flat_len).div_ceil(4)]
            } else {
                Vec::new()
            },
            busy: self.cfg.wait == WaitMode::Busy,
            cancel: self.cfg.cancel.clone(),
            full: false,
            ptrs: [std::ptr::null_mut(); TAKE_MAX],
            valid: [0; TAKE_MAX],
            topic: name.clone(),
            _part: self.part.clone(),
        };
        Ok((reader, name))
    }

    fn create_writer(
        &mut self,
        topic: &TopicSpec,
        readers: &[Locator],
    ) -> Result<Self::Writer, BindingError> {
        let name = self.topic_name(&topic.name);
        if let Some(l) = readers.iter().find(|l| !l.is_empty() && **l != name) {
            return Err(BindingError::Unsupported(format!(
                "reader locator '{l}' is not topic '{name}': both sides must use the cyclonedds binding with the same run"
            )));
        }
        let tp = self.topic(&name)?;
        let (history, depth, max_samples) = self.history(self.cfg.send_queue);
        let reliable = self.cfg.reliability == Reliability::Reliable;
        let block = Duration::from_millis(self.cfg.reliable_block_timeout_ms);
        // SAFETY: valid participant and topic.
        let wr = unsafe {
            sys::pp_create_writer(
                self.part.pp,
                tp,
                reliable as i32,
                block.as_nanos().min(i64::MAX as u128) as i64,
                history,
                depth,
                max_samples,
                self.opts.transient_local as i32,
                self.latency_budget_ns(),
            )
        };
        if wr < 0 {
            return Err(mw(&format!("creating a writer of {name}"), wr));
        }
        let shm = self.shm_limit.is_some();
        if shm {
            // SAFETY: valid writer.
            if unsafe { sys::pp_shm_available(wr) } == 0 {
                return Err(BindingError::Middleware(format!(
                    "CycloneDDS did not enable shared memory for the writer of {name} (history {}, durability {})",
                    if history == 1 {
                        "keep-all"
                    } else {
                        "keep-last"
                    },
                    if self.opts.transient_local {
                        "transient-local"
                    } else {
                        "volatile"
                    }
                )));
            }
        }
        let mode = match (self.cfg.data_type, self.cfg.zero_copy) {
            (DataType::Flat, true) => {
                // SAFETY: valid writer.
                if unsafe { sys::pp_loan_available(wr) } == 0 {
                    return Err(BindingError::Middleware(format!(
                        "--zero-copy: CycloneDDS offers no loans for the writer of {name}"
                    )));
                }
                Mode::Loan
            }
            (DataType::Flat, false) => {
                Mode::FlatCopy(vec![0u32; (self.flat_header() + self.flat_len).div_ceil(4)])
            }
            (DataType::Bytes, _) => Mode::Bytes(vec![0u8; self.cfg.max_sample_size]),
        };
        Ok(CycloneWriter {
            wr,
            mode,
            keyed: self.cfg.instances > 0,
            instances: self.cfg.instances.max(1),
            next_key: 0,
            hdr: self.flat_header(),
            flush: self.cfg.async_publish,
            max_len: self.cfg.max_sample_size,
            block,
            reliable,
            shm,
            cancel: self.cfg.cancel.clone(),
            topic: name,
            _part: self.part.clone(),
        })
    }
}

enum Mode {
    /// Serialized `pubsubperf::Bytes` from a scratch buffer.
    Bytes(Vec<u8>),
    /// A `Flat<N>` sample in a scratch buffer (u32 words: aligned for `len`), copied by write.
    FlatCopy(Vec<u32>),
    /// A `Flat<N>` sample in a loaned shared-memory chunk.
    Loan,
}

/// Writes samples of one topic.
pub struct CycloneWriter {
    wr: i32,
    mode: Mode,
    /// `--instances`: the keyed type, instances written round-robin.
    keyed: bool,
    instances: u32,
    next_key: u32,
    /// Flat: bytes before the data (`len`, and `id` when keyed).
    hdr: usize,
    /// `--async`: wake CycloneDDS's send thread after each write.
    flush: bool,
    max_len: usize,
    block: Duration,
    reliable: bool,
    shm: bool,
    cancel: CancelToken,
    topic: String,
    _part: Arc<Participant>,
}

impl CycloneWriter {
    /// A loaned chunk, if RouDi's pool for this size has one.
    #[inline(always)]
    fn loan(&self) -> Option<*mut c_void> {
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid writer; a loan is a Flat<N> sample.
        let rc = unsafe { sys::pp_loan(self.wr, &mut p) };
        (rc >= 0 && !p.is_null()).then_some(p)
    }

    /// RouDi's pool for this size is empty (its chunks still queued at
    /// readers): best effort drops the sample like a full queue (`None`);
    /// reliable waits for a chunk, at most the block timeout.
    #[cold]
    fn wait_loan(&self) -> Result<Option<*mut c_void>, BindingError> {
        if !self.reliable {
            return Ok(None);
        }
        let start = Instant::now();
        while start.elapsed() < self.block {
            if self.cancel.is_cancelled() {
                return Err(BindingError::Cancelled);
            }
            std::thread::sleep(Duration::from_micros(50));
            if let Some(p) = self.loan() {
                return Ok(Some(p));
            }
        }
        Err(BindingError::WriteTimeout(self.block))
    }

    #[cold]
    fn write_error(&self, rc: i32) -> BindingError {
        if rc == sys::RETCODE_TIMEOUT {
            BindingError::WriteTimeout(self.block)
        } else {
            mw(&format!("writing to {}", self.topic), rc)
        }
    }
}

/// Fills a flat sample at `p`: `Flat<N>` (`hdr` 4: `len`, then data) or
/// `KeyedFlat<N>` (`hdr` 8: `id`, `len`, then data).
///
/// # Safety
/// `p` must point to `hdr` + `flat_len` writable bytes aligned to 4.
#[inline(always)]
unsafe fn fill_flat<F: FnOnce(&mut [u8])>(p: *mut u8, hdr: usize, id: u32, len: usize, fill: F) {
    // SAFETY: the caller guarantees hdr + flat_len bytes; len <= flat_len.
    unsafe {
        if hdr == 8 {
            (p as *mut u32).write(id);
        }
        (p.add(hdr - 4) as *mut u32).write(len as u32);
        fill(std::slice::from_raw_parts_mut(p.add(hdr), len));
    }
}

impl Writer for CycloneWriter {
    fn wait_matched(&mut self, readers: usize, timeout: Duration) -> Result<(), BindingError> {
        let start = Instant::now();
        loop {
            let mut n = 0u32;
            // SAFETY: valid writer and out pointer.
            let rc = unsafe { sys::pp_publication_matched(self.wr, &mut n) };
            if rc < 0 {
                return Err(mw("reading the publication matched status", rc));
            }
            if n as usize >= readers {
                break;
            }
            if self.cancel.is_cancelled() {
                return Err(BindingError::Cancelled);
            }
            if start.elapsed() >= timeout {
                return Err(BindingError::MatchTimeout(
                    timeout,
                    format!(
                        "topic {}: {n} of {readers} readers discovered (both sides need the same --domain, --transport and QoS, and UDP between them)",
                        self.topic
                    ),
                ));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        if self.shm {
            std::thread::sleep(SHM_CONNECT);
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
        // --instances: the next key, round-robin.
        let id = self.next_key;
        if self.keyed {
            self.next_key += 1;
            if self.next_key == self.instances {
                self.next_key = 0;
            }
        }
        let hdr = self.hdr;
        let rc = match &mut self.mode {
            Mode::Bytes(buf) => {
                fill(&mut buf[..len]);
                // SAFETY: valid writer; buf holds len bytes, copied by dds_write.
                unsafe {
                    if self.keyed {
                        sys::pp_write_keyed_bytes(self.wr, id, buf.as_mut_ptr(), len as u32)
                    } else {
                        sys::pp_write_bytes(self.wr, buf.as_mut_ptr(), len as u32)
                    }
                }
            }
            Mode::FlatCopy(words) => {
                let p = words.as_mut_ptr() as *mut u8;
                // SAFETY: words hold hdr + flat_len bytes, 4-aligned.
                unsafe {
                    fill_flat(p, hdr, id, len, fill);
                    sys::pp_write(self.wr, p as *mut c_void)
                }
            }
            Mode::Loan => {
                let p = match self.loan() {
                    Some(p) => p,
                    None => match self.wait_loan()? {
                        Some(p) => p,
                        None => return Ok(()),
                    },
                };
                // SAFETY: the loan holds hdr + flat_len bytes, aligned; write consumes it.
                unsafe {
                    fill_flat(p as *mut u8, hdr, id, len, fill);
                    sys::pp_write(self.wr, p)
                }
            }
        };
        if rc < 0 {
            return Err(self.write_error(rc));
        }
        if self.flush {
            // SAFETY: valid writer.
            unsafe { sys::pp_write_flush(self.wr) };
        }
        Ok(())
    }
}

impl Drop for CycloneWriter {
    fn drop(&mut self) {
        // SAFETY: our writer (already gone if the participant was deleted).
        unsafe { sys::pp_delete(self.wr) };
    }
}

/// Reads samples of one topic.
pub struct CycloneReader {
    rd: i32,
    ws: i32,
    flat: bool,
    /// `--instances`: samples are `KeyedBytes` / `KeyedFlat<N>`.
    keyed: bool,
    /// Flat: bytes before the data (`len`, and `id` when keyed).
    hdr: usize,
    flat_len: usize,
    /// Flat over shm: read samples in their iceoryx chunks.
    in_place: bool,
    raw: [*const c_void; TAKE_MAX],
    /// Flat over shm: where a sample that did not come in a chunk is copied.
    scratch: Vec<u32>,
    busy: bool,
    /// The last take filled every entry: samples may be left, and the
    /// DATA_AVAILABLE status the waitset waits on was reset by that take.
    full: bool,
    cancel: CancelToken,
    ptrs: [*mut c_void; TAKE_MAX],
    valid: [u8; TAKE_MAX],
    topic: String,
    _part: Arc<Participant>,
}

// SAFETY: `ptrs` holds the reader's loan (its samples, owned by this
// reader until Drop returns it) and `raw` serdata between a take and their
// release within one `recv` call; CycloneDDS entities may be used from any thread.
unsafe impl Send for CycloneReader {}

/// The data of a flat sample at `p` (`hdr` bytes of `[id,] len` before
/// it), or the length it claims if that exceeds N.
///
/// # Safety
/// `p` must point to a `Flat<N>` or `KeyedFlat<N>` sample (`hdr` +
/// `flat_len` bytes, 4-aligned) that stays valid for `'a`.
#[inline(always)]
unsafe fn flat_view<'a>(p: *const c_void, hdr: usize, flat_len: usize) -> Result<&'a [u8], usize> {
    // SAFETY: per the caller.
    unsafe {
        let len = ((p as *const u8).add(hdr - 4) as *const u32).read() as usize;
        if len > flat_len {
            return Err(len);
        }
        Ok(std::slice::from_raw_parts((p as *const u8).add(hdr), len))
    }
}

impl CycloneReader {
    /// Flat over shm: takes serdata and reads each sample in its chunk.
    #[inline]
    fn take_in_place<F: FnMut(&[u8])>(&mut self, on_sample: &mut F) -> Result<usize, BindingError> {
        // SAFETY: valid reader; arrays of TAKE_MAX entries.
        let n = unsafe {
            sys::pp_take_serdata(
                self.rd,
                self.ptrs.as_mut_ptr(),
                self.raw.as_mut_ptr(),
                self.valid.as_mut_ptr(),
                TAKE_MAX as u32,
            )
        };
        self.full = n == TAKE_MAX as i32;
        if n <= 0 {
            return if n < 0 {
                Err(mw(&format!("taking from {}", self.topic), n))
            } else {
                Ok(0)
            };
        }
        let mut delivered = 0;
        let mut bad = None;
        for i in 0..n as usize {
            if self.valid[i] == 0 {
                continue;
            }
            let p = if self.raw[i].is_null() {
                let s = self.scratch.as_mut_ptr() as *mut c_void;
                // SAFETY: the serdata is of our Flat<N> type; scratch holds one.
                if unsafe { sys::pp_serdata_to_sample(self.ptrs[i], s) } != 0 {
                    bad = Some(usize::MAX);
                    continue;
                }
                s as *const c_void
            } else {
                self.raw[i]
            };
            // SAFETY: a Flat<N> sample, valid until the serdata is released.
            match unsafe { flat_view(p, self.hdr, self.flat_len) } {
                Ok(v) => on_sample(v),
                Err(len) => {
                    bad = Some(len);
                    continue;
                }
            }
            delivered += 1;
        }
        // SAFETY: releasing the n serdata just taken.
        unsafe { sys::pp_serdata_unref(self.ptrs.as_mut_ptr(), n) };
        if let Some(len) = bad {
            return Err(BindingError::Malformed(format!(
                "flat sample of {len} bytes does not fit the type's {} (or could not be read)",
                self.flat_len
            )));
        }
        Ok(delivered)
    }

    /// Takes what is there, calls back for each valid sample, returns the loans.
    #[inline]
    fn take<F: FnMut(&[u8])>(&mut self, on_sample: &mut F) -> Result<usize, BindingError> {
        if self.in_place {
            return self.take_in_place(on_sample);
        }
        // SAFETY: valid reader; arrays of TAKE_MAX entries.
        let n = unsafe {
            sys::pp_take(
                self.rd,
                self.ptrs.as_mut_ptr(),
                self.valid.as_mut_ptr(),
                TAKE_MAX as u32,
            )
        };
        self.full = n == TAKE_MAX as i32;
        if n <= 0 {
            return if n < 0 {
                Err(mw(&format!("taking from {}", self.topic), n))
            } else {
                Ok(0)
            };
        }
        let mut delivered = 0;
        let mut bad = None;
        for i in 0..n as usize {
            if self.valid[i] == 0 {
                continue;
            }
            let p = self.ptrs[i];
            if self.flat {
                // SAFETY: a loaned Flat<N> sample, valid until returned.
                match unsafe { flat_view(p, self.hdr, self.flat_len) } {
                    Ok(v) => on_sample(v),
                    Err(len) => {
                        bad = Some(len);
                        continue;
                    }
                }
            } else {
                let mut data: *const u8 = std::ptr::null();
                let mut len = 0u32;
                // SAFETY: a loaned pubsubperf_Bytes sample.
                unsafe {
                    if self.keyed {
                        sys::pp_keyed_bytes_view(p, &mut data, &mut len)
                    } else {
                        sys::pp_bytes_view(p, &mut data, &mut len)
                    }
                };
                if data.is_null() {
                    on_sample(&[]);
                } else {
                    // SAFETY: the sequence holds len bytes while loaned.
                    on_sample(unsafe { std::slice::from_raw_parts(data, len as usize) });
                }
            }
            delivered += 1;
        }
        // The loan stays ours for the next take (see pp_take); Drop returns it.
        if let Some(len) = bad {
            return Err(BindingError::Malformed(format!(
                "flat sample says {len} bytes, the type holds {}",
                self.flat_len
            )));
        }
        Ok(delivered)
    }
}

impl Reader for CycloneReader {
    fn wait_matched(&mut self, timeout: Duration) -> Result<(), BindingError> {
        let start = Instant::now();
        loop {
            let mut n = 0u32;
            // SAFETY: valid reader and out pointer.
            let rc = unsafe { sys::pp_subscription_matched(self.rd, &mut n) };
            if rc < 0 {
                return Err(mw("reading the subscription matched status", rc));
            }
            if n > 0 {
                return Ok(());
            }
            if self.cancel.is_cancelled() {
                return Err(BindingError::Cancelled);
            }
            if start.elapsed() >= timeout {
                return Err(BindingError::MatchTimeout(
                    timeout,
                    format!(
                        "topic {}: no writer discovered (both sides need the same --domain, --transport and QoS, and UDP between them)",
                        self.topic
                    ),
                ));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    #[inline]
    fn recv<F: FnMut(&[u8])>(
        &mut self,
        timeout: Duration,
        on_sample: &mut F,
    ) -> Result<usize, BindingError> {
        let start = Instant::now();
        loop {
            if !self.busy && !self.full {
                // Wait first, for DATA_AVAILABLE: a ping that has not
                // arrived yet costs no empty take. After a full take, take
                // again first (the status was reset; samples may be left).
                let left = timeout.saturating_sub(start.elapsed());
                let wait = left.min(pubsubperf_core::binding::CANCEL_POLL);
                // SAFETY: valid waitset.
                let rc = unsafe { sys::pp_wait(self.ws, wait.as_nanos() as i64) };
                if rc < 0 {
                    return Err(mw("waiting on the waitset", rc));
                }
            }
            let n = self.take(on_sample)?;
            if n > 0 {
                return Ok(n);
            }
            if self.cancel.is_cancelled() {
                return Err(BindingError::Cancelled);
            }
            if start.elapsed() >= timeout {
                return Ok(0);
            }
        }
    }
}

impl Drop for CycloneReader {
    fn drop(&mut self) {
        // SAFETY: our entities (already gone if the participant was deleted);
        // the loan kept since the last take, if any.
        unsafe {
            if !self.in_place && !self.ptrs[0].is_null() {
                sys::pp_return_loan(self.rd, self.ptrs.as_mut_ptr(), TAKE_MAX as i32);
            }
            sys::pp_delete(self.ws);
            sys::pp_delete(self.rd);
        }
    }
}

#[cfg(test)]
mod tests;
