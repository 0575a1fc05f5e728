//! `fastdds`: eProsima Fast DDS 2.9 through its C++ API and a small C shim
//! of ours (`shim/shim.cpp`, compiled by build.rs; Fast DDS has no C API).
//!
//! - Transports (`--transport`): `udp` (UDPv4 only, builtin transports off,
//!   unicast discovery through initial peers on the bind address, so no
//!   multicast is needed on one host), `tcp` (TCPv4 with a listening port
//!   per participant), `shm` (Fast DDS's shared-memory transport; UDP stays
//!   for discovery).
//! - Data types: `bytes` = `pubsubperf::Bytes { sequence<octet> data; }`
//!   serialized with Fast CDR; `flat` = `pubsubperf::Flat<N> { uint32 len;
//!   octet data[N]; }`, a plain type whose memory is its wire form, N = the
//!   run's sample size. Both XCDR1, no TypeObject: the same types as the
//!   `cyclonedds` binding, so the two talk to each other.
//! - `--zero-copy` (flat only): data sharing + loans: the writer fills a
//!   sample loaned from the data-sharing segment, the reader takes a loan
//!   pointing into that same segment.
//! - A locator is the DDS topic name (`pp_<run id>_<topic>`, as in `cyclonedds`);
//!   discovery does the rest.
//! - Shared-memory files of dead Fast DDS processes are removed when a
//!   participant opens and after it closes (see [`shm`]).

mod ffi;
pub mod options;
pub mod shm;

use options::{History, Options};
use pubsubperf_core::binding::BindingInfo;
use pubsubperf_core::{
    Binding, BindingError, CancelToken, Capabilities, DataType, EndpointConfig, Locator, Reader,
    Reliability, TopicSpec, WaitMode, Writer,
};
use std::ffi::{CStr, CString};
use std::os::raw::c_char;
use std::os::unix::net::UnixDatagram;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Largest sample (bytes handed to `send`).
pub const MAX_SAMPLE: usize = 256 << 20;
/// Memory budget for one writer's queue (data-sharing pool, history) that
/// sets the default queue depth for large samples.
const QUEUE_BUDGET: usize = 256 << 20;
/// Participant ids probed by UDP discovery on a host (Fast DDS's default is 4).
const PEER_RANGE: i32 = 40;

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
        transports: &["udp", "tcp", "shm"],
        data_types: &[DataType::Bytes, DataType::Flat],
        in_process: false,
        // Between hosts, discovery is SPDP multicast on the run's interface
        // (or unicast to `--opt peers`), see `ppf_open`.
        remote: true,
    }
}

/// The DDS topic name of a harness topic in a run: shared with the
/// `cyclonedds` binding for cross-vendor runs. Only `[A-Za-z0-9_]`.
pub fn dds_topic(run_id: &str, topic: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect()
    };
    format!("pp_{}_{}", clean(run_id), clean(topic))
}

/// The DDS type name used for a run (`Keyed...` with `--instances`).
pub fn type_name(cfg: &EndpointConfig) -> String {
    let keyed = if cfg.instances > 0 { "Keyed" } else { "" };
    match cfg.data_type {
        DataType::Bytes => format!("pubsubperf::{keyed}Bytes"),
        DataType::Flat => format!("pubsubperf::{keyed}Flat{}", cfg.max_sample_size),
    }
}

/// LATENCY_BUDGET of writers and readers with `--async`: the same as the
/// `cyclonedds` binding offers there (where a non-zero budget is what makes
/// a writer asynchronous), so that cross-vendor endpoints match.
pub const ASYNC_LATENCY_BUDGET_NS: i64 = 1_000;

fn version() -> String {
    // SAFETY: returns a static NUL-terminated string.
    unsafe { CStr::from_ptr(ffi::ppf_version()) }
        .to_string_lossy()
        .into_owned()
}

fn mw(e: String) -> BindingError {
    BindingError::Middleware(e)
}

/// Calls a shim constructor that reports errors into a buffer.
fn with_err<T>(f: impl FnOnce(*mut c_char, usize) -> *mut T) -> Result<*mut T, String> {
    let mut buf = [0 as c_char; 512];
    let p = f(buf.as_mut_ptr(), buf.len());
    if p.is_null() {
        // SAFETY: the shim writes a NUL-terminated message (or leaves zeros).
        let msg = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy();
        Err(if msg.is_empty() {
            "Fast DDS error".into()
        } else {
            msg.into_owned()
        })
    } else {
        Ok(p)
    }
}

fn fnv(s: &str) -> u32 {
    let mut h: u32 = 2166136261;
    for b in s.bytes() {
        h = (h ^ u32::from(b)).wrapping_mul(16777619);
    }
    h
}

/// TCP: the participants of a run listen on consecutive ports from a base
/// derived from the run id; each takes the first free one and connects to
/// the ones above it (not listening yet when it starts; see `ppf_open` for
/// why), so every pair is connected exactly once. The
/// participant id is the port's offset from the base, so that the
/// participants of a run have different ids in every process (Fast DDS over
/// TCP does not match two participants of one domain with the same id: their
/// logical ports are the same), and it is reserved in [`IDS_IN_USE`] so that
/// concurrent runs of one process never share one.
///
/// A port is taken by binding the abstract Unix socket
/// `pubsubperf-fastdds-tcp-<ip>-<port>` (atomic across processes; gone with
/// the socket, even after kill -9; nothing in the file system), held for the
/// participant's life, and checked free for TCP: two participants that start
/// together (a publisher and its subscriber) would otherwise both see the
/// same port free before Fast DDS listens on it.
fn tcp_ports(cfg: &EndpointConfig, domain: u32) -> Result<TcpSlot, BindingError> {
    use std::os::linux::net::SocketAddrExt;
    let slots = (cfg.subscribers as u32 + 4).min(PEER_RANGE as u32);
    let base = 20_000 + (fnv(&cfg.run_id) % (12_000 / 72)) * 72;
    let mut used = IDS_IN_USE.lock().unwrap_or_else(|e| e.into_inner());
    for k in 0..slots {
        if used.iter().any(|&(_, i)| i == k as i32) {
            continue;
        }
        let port = (base + k) as u16;
        let name = format!("pubsubperf-fastdds-tcp-{}-{port}", cfg.bind_ip);
        let Ok(addr) = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()) else {
            continue;
        };
        let Ok(claim) = UnixDatagram::bind_addr(&addr) else {
            continue;
        };
        if std::net::TcpListener::bind((cfg.bind_ip.as_str(), port)).is_ok() {
            used.insert((domain, k as i32));
            return Ok(TcpSlot {
                base: base as u16,
                slots,
                port,
                id: k as i32,
                claim,
            });
        }
    }
    Err(BindingError::Unavailable(format!(
        "--transport tcp: no free port in {base}-{}",
        base + slots
    )))
}

/// A participant's TCP listening port, its id, and the claim on the port.
struct TcpSlot {
    base: u16,
    slots: u32,
    port: u16,
    id: i32,
    claim: UnixDatagram,
}

/// Participant ids this process holds (Fast DDS wants them unique within a
/// process, whatever the domain): a participant's ports
/// are not always bound yet (or at all, with shared memory) when the next
/// one looks for a free id.
static IDS_IN_USE: std::sync::Mutex<std::collections::BTreeSet<(u32, i32)>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// The lowest participant id whose RTPS unicast ports (metatraffic and
/// user, `7400 + 250 domain + 10/11 + 2 id`) are free on this host. Fast DDS
/// would number participants per process, which in a long-lived process
/// (tests) runs past the ids that unicast discovery probes.
fn free_participant_id(ip: &str, domain: u32) -> Result<i32, BindingError> {
    let mut used = IDS_IN_USE.lock().unwrap_or_else(|e| e.into_inner());
    for id in 0..PEER_RANGE as u32 {
        if used.iter().any(|&(_, i)| i == id as i32) {
            continue;
        }
        let meta = 7400 + 250 * domain + 10 + 2 * id;
        let free = |port: u32| std::net::UdpSocket::bind((ip, port as u16)).is_ok();
        if free(meta) && free(meta + 1) {
            used.insert((domain, id as i32));
            return Ok(id as i32);
        }
    }
    Err(BindingError::Unavailable(format!(
        "no free DDS participant id (0-{}) in domain {domain} on {ip}",
        PEER_RANGE - 1
    )))
}

/// Gives back a participant id reserved in [`IDS_IN_USE`].
fn release_id(id: (u32, i32)) {
    IDS_IN_USE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&id);
}

/// The participant, shared by its writers and readers: it is deleted when
/// the last of them is dropped.
struct Participant {
    raw: *mut ffi::Participant,
    /// (domain, participant id) reserved in [`IDS_IN_USE`].
    id: (u32, i32),
    /// TCP: the claim on the listening port (see [`tcp_ports`]), released
    /// after the participant is closed.
    _tcp_claim: Option<UnixDatagram>,
}

// SAFETY: Fast DDS participants are thread-safe; the handle is only
// dereferenced by the shim.
unsafe impl Send for Participant {}
// SAFETY: as above; no Rust-side state.
unsafe impl Sync for Participant {}

impl Drop for Participant {
    fn drop(&mut self) {
        // SAFETY: raw came from ppf_open and every entity of it is gone.
        unsafe { ffi::ppf_close(self.raw) };
        release_id(self.id);
        shm::clean_zombies();
    }
}

/// The `fastdds` binding: one DDS participant per side.
pub struct FastDds {
    p: Arc<Participant>,
    cfg: EndpointConfig,
}

/// What `validate` and `open` derive from the configuration.
struct Plan {
    opts: Options,
    keep_all: bool,
    writer_depth: i32,
    reader_depth: i32,
}

fn plan(cfg: &EndpointConfig) -> Result<Plan, BindingError> {
    let opts = Options::parse(cfg)?;
    if !caps().transports.contains(&cfg.transport.as_str()) {
        return Err(BindingError::Unsupported(format!(
            "--transport {}: fastdds offers udp, tcp, shm",
            cfg.transport
        )));
    }
    if cfg.zero_copy && cfg.data_type != DataType::Flat {
        return Err(BindingError::Unsupported(
            "--zero-copy: fastdds loans need a plain type; add --data-type flat".into(),
        ));
    }
    if cfg.zero_copy && cfg.instances > 0 {
        return Err(BindingError::Unsupported(
            "--instances: Fast DDS 2.9 data sharing (--zero-copy) refuses keyed types; drop one of them".into(),
        ));
    }
    if cfg.ipv6 {
        return Err(BindingError::Unsupported(
            "--ipv6: the fastdds binding uses IPv4 transports only".into(),
        ));
    }
    if cfg.batch_bytes > 0 {
        return Err(BindingError::Unsupported(
            "--batch: fastdds does not batch".into(),
        ));
    }
    let loopback = cfg
        .bind_ip
        .parse::<std::net::IpAddr>()
        .map(|a| a.is_loopback())
        .unwrap_or(true);
    if cfg.transport == "tcp" && !loopback {
        // TCP participants find each other on the run's own address and
        // consecutive ports; another host's address is never among them.
        return Err(BindingError::Unsupported(
            "--transport tcp: fastdds over TCP runs within one host here; use --transport udp with --connect".into(),
        ));
    }
    if cfg.multicast && cfg.transport != "udp" {
        return Err(BindingError::Unsupported(format!(
            "--multicast: needs --transport udp (not {})",
            cfg.transport
        )));
    }
    if cfg.max_sample_size > MAX_SAMPLE {
        return Err(BindingError::TooLarge {
            size: cfg.max_sample_size,
            limit: MAX_SAMPLE,
        });
    }
    let size = cfg.max_sample_size.max(1);
    let writer_depth = if cfg.send_queue > 0 {
        cfg.send_queue.min(1_000_000)
    } else if cfg.zero_copy {
        // The data-sharing pool holds twice the writer's history (see
        // `ppf_create_writer`), within the same budget.
        (QUEUE_BUDGET / (2 * size)).clamp(1, 64)
    } else {
        (QUEUE_BUDGET / size).clamp(2, 64)
    };
    // Readers get a deep queue: with Fast DDS 2.9 a reliable keep-all reader
    // whose history fills up never asks for the rejected samples again, and
    // its writer stays blocked (observed here), so it must not fill up.
    let reader_depth = if cfg.receive_queue > 0 {
        cfg.receive_queue.min(1_000_000)
    } else {
        (4 * QUEUE_BUDGET / size).clamp(2 * writer_depth, 5000)
    };
    let (keep_all, writer_depth, reader_depth) = match opts.history {
        Some(History::KeepAll) => (true, writer_depth as i32, reader_depth as i32),
        Some(History::KeepLast(n)) => (false, n.min(1_000_000) as i32, n.min(1_000_000) as i32),
        None => (
            cfg.reliability == Reliability::Reliable,
            writer_depth as i32,
            reader_depth as i32,
        ),
    };
    Ok(Plan {
        opts,
        keep_all,
        writer_depth,
        reader_depth,
    })
}

impl Binding for FastDds {
    type Writer = FastWriter;
    type Reader = FastReader;

    fn info() -> BindingInfo {
        BindingInfo {
            name: "fastdds",
            description: "eProsima Fast DDS (C++ API via a C shim): UDPv4, TCPv4, shared memory; data sharing with loans for --zero-copy",
            version: format!("Fast DDS {}", version()),
            capabilities: caps(),
            available: Ok(()),
        }
    }

    fn qos_flags() -> &'static [&'static str] {
        &pubsubperf_core::binding::QOS_FLAGS
    }

    fn validate(cfg: &EndpointConfig) -> Result<(), BindingError> {
        plan(cfg).map(|_| ())
    }

    fn open(cfg: &EndpointConfig) -> Result<Self, BindingError> {
        let plan = plan(cfg)?;
        shm::clean_zombies();
        let transport = match cfg.transport.as_str() {
            "tcp" => 1,
            "shm" => 2,
            _ => 0,
        };
        let domain = plan.opts.domain_id(&cfg.run_id);
        // Participant ids are unique within the process (Fast DDS derives
        // the GUID prefix from them) and reserved in IDS_IN_USE.
        let tcp = if transport == 1 {
            Some(tcp_ports(cfg, domain)?)
        } else {
            None
        };
        let participant_id = match &tcp {
            Some(slot) => slot.id,
            None => free_participant_id(&cfg.bind_ip, domain)?,
        };
        let cstr = |s: &str| {
            CString::new(s).map_err(|_| BindingError::Unsupported(format!("NUL in '{s}'")))
        };
        let bind_ip = cstr(&cfg.bind_ip)?;
        let peers = cstr(&plan.opts.peers.join(","))?;
        let qos_file = cstr(plan.opts.qos_file.as_deref().unwrap_or(""))?;
        let shm_segment =
            (cfg.max_sample_size.saturating_mul(4) + (256 << 10)).clamp(1 << 20, 64 << 20);
        let c = ffi::Config {
            domain: domain as i32,
            transport,
            reliable: i32::from(cfg.reliability == Reliability::Reliable),
            flat: i32::from(cfg.data_type == DataType::Flat),
            zero_copy: i32::from(cfg.zero_copy),
            max_size: cfg.max_sample_size as u32,
            keep_all: i32::from(plan.keep_all),
            writer_depth: plan.writer_depth,
            reader_depth: plan.reader_depth,
            transient_local: i32::from(plan.opts.transient_local),
            async_publish: i32::from(plan.opts.async_publish),
            latency_budget_ns: if plan.opts.async_publish {
                ASYNC_LATENCY_BUDGET_NS
            } else {
                0
            },
            instances: cfg.instances.min(i32::MAX as u32) as i32,
            multicast: i32::from(cfg.multicast),
            socket_buffer: cfg.socket_buffer.min(u32::MAX as usize) as u32,
            shm_segment: shm_segment as u32,
            block_timeout_ns: (cfg.reliable_block_timeout_ms as i64).saturating_mul(1_000_000),
            tcp_port: tcp.as_ref().map_or(0, |t| i32::from(t.port)),
            tcp_peer_first: tcp.as_ref().map_or(0, |t| i32::from(t.base)),
            tcp_peer_count: tcp.as_ref().map_or(0, |t| t.slots as i32),
            peer_range: PEER_RANGE,
            participant_id,
            bind_ip: bind_ip.as_ptr(),
            peers: peers.as_ptr(),
            qos_file: qos_file.as_ptr(),
        };
        // SAFETY: c and the strings it points to outlive the call; the shim copies them.
        let reserved = (domain, participant_id);
        let raw = match with_err(|e, n| unsafe { ffi::ppf_open(&c, e, n) }) {
            Ok(raw) => raw,
            Err(e) => {
                release_id(reserved);
                return Err(mw(e));
            }
        };
        Ok(FastDds {
            p: Arc::new(Participant {
                raw,
                id: reserved,
                _tcp_claim: tcp.map(|t| t.claim),
            }),
            cfg: cfg.clone(),
        })
    }

    fn create_reader(
        &mut self,
        topic: &TopicSpec,
    ) -> Result<(Self::Reader, Locator), BindingError> {
        let name = dds_topic(&self.cfg.run_id, &topic.name);
        let c = CString::new(name.clone()).expect("topic names have no NUL");
        // SAFETY: participant alive (we hold it); c outlives the call.
        let raw = with_err(|e, n| unsafe { ffi::ppf_create_reader(self.p.raw, c.as_ptr(), e, n) })
            .map_err(mw)?;
        let reader = FastReader {
            raw,
            _p: self.p.clone(),
            busy: self.cfg.wait == WaitMode::Busy,
            cancel: self.cfg.cancel.clone(),
            topic: name.clone(),
        };
        Ok((reader, name))
    }

    fn create_writer(
        &mut self,
        topic: &TopicSpec,
        _readers: &[Locator],
    ) -> Result<Self::Writer, BindingError> {
        // Readers are found by discovery on the topic name; their locators
        // (topic names, possibly from the cyclonedds binding) are not needed.
        let name = dds_topic(&self.cfg.run_id, &topic.name);
        let c = CString::new(name.clone()).expect("topic names have no NUL");
        // SAFETY: participant alive; c outlives the call.
        let raw = with_err(|e, n| unsafe { ffi::ppf_create_writer(self.p.raw, c.as_ptr(), e, n) })
            .map_err(mw)?;
        // SAFETY: the writer owns its scratch sample of max_sample_size octets.
        let scratch = unsafe { ffi::ppf_writer_buffer(raw) };
        Ok(FastWriter {
            raw,
            _p: self.p.clone(),
            scratch,
            max: self.cfg.max_sample_size,
            loans: self.cfg.zero_copy,
            keyed: self.cfg.instances > 0,
            instances: self.cfg.instances.max(1),
            next_key: 0,
            block_timeout: Duration::from_millis(self.cfg.reliable_block_timeout_ms),
            cancel: self.cfg.cancel.clone(),
            topic: name,
            describe: format!(
                "transport {}, type {}, domain {}",
                self.cfg.transport,
                type_name(&self.cfg),
                Options::parse(&self.cfg)
                    .map(|o| o.domain_id(&self.cfg.run_id))
                    .unwrap_or(0)
            ),
        })
    }
}

/// Polls `matched` until it reaches `want`, `timeout` passes or `cancel` is set.
fn wait_count(
    want: i32,
    timeout: Duration,
    cancel: &CancelToken,
    mut matched: impl FnMut() -> i32,
) -> Result<(), i32> {
    let start = Instant::now();
    loop {
        let n = matched();
        if n >= want {
            return Ok(());
        }
        if cancel.is_cancelled() || start.elapsed() >= timeout {
            return Err(n);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A DataWriter of one topic.
pub struct FastWriter {
    raw: *mut ffi::WriterH,
    _p: Arc<Participant>,
    scratch: *mut u8,
    max: usize,
    loans: bool,
    /// `--instances`: the keyed type, instances written round-robin.
    keyed: bool,
    instances: u32,
    next_key: u32,
    block_timeout: Duration,
    cancel: CancelToken,
    topic: String,
    describe: String,
}

// SAFETY: the writer is used by one thread at a time (Writer takes &mut self);
// Fast DDS writers may be used from any thread.
unsafe impl Send for FastWriter {}

impl Drop for FastWriter {
    fn drop(&mut self) {
        // SAFETY: raw came from ppf_create_writer; the participant is alive (_p).
        unsafe { ffi::ppf_delete_writer(self.raw) };
    }
}

impl FastWriter {
    fn write_error(&self, rc: i32) -> BindingError {
        match rc {
            ffi::RC_TIMEOUT => BindingError::WriteTimeout(self.block_timeout),
            ffi::RC_OUT_OF_RESOURCES => BindingError::Middleware(format!(
                "Fast DDS write on {}: out of resources (history full)",
                self.topic
            )),
            _ => BindingError::Middleware(format!("Fast DDS write on {} failed", self.topic)),
        }
    }

    /// A loan from the writer's pool; waits (bounded) while every slot is in flight.
    #[inline]
    fn loan(&mut self) -> Result<*mut u8, BindingError> {
        let mut rc = 0;
        // SAFETY: raw is a live writer.
        let p = unsafe { ffi::ppf_loan(self.raw, &mut rc) };
        if !p.is_null() {
            return Ok(p);
        }
        let start = Instant::now();
        loop {
            if rc != ffi::RC_OUT_OF_RESOURCES {
                return Err(BindingError::Middleware(format!(
                    "Fast DDS loan_sample on {} failed",
                    self.topic
                )));
            }
            if self.cancel.is_cancelled() {
                return Err(BindingError::Cancelled);
            }
            if start.elapsed() > self.block_timeout {
                return Err(BindingError::WriteTimeout(self.block_timeout));
            }
            std::thread::yield_now();
            // SAFETY: as above.
            let p = unsafe { ffi::ppf_loan(self.raw, &mut rc) };
            if !p.is_null() {
                return Ok(p);
            }
        }
    }
}

impl Writer for FastWriter {
    fn wait_matched(&mut self, readers: usize, timeout: Duration) -> Result<(), BindingError> {
        let raw = self.raw;
        // SAFETY: raw is a live writer.
        wait_count(readers as i32, timeout, &self.cancel, || unsafe {
            ffi::ppf_writer_matched(raw)
        })
        .map_err(|n| {
            if self.cancel.is_cancelled() {
                return BindingError::Cancelled;
            }
            BindingError::MatchTimeout(
                timeout,
                format!(
                    "fastdds writer on {} matched {n} of {readers} readers ({}); is the subscriber running with the same transport, data type, size and domain?",
                    self.topic, self.describe
                ),
            )
        })
    }

    #[inline]
    fn send<F: FnOnce(&mut [u8])>(&mut self, len: usize, fill: F) -> Result<(), BindingError> {
        if len > self.max {
            return Err(BindingError::TooLarge {
                size: len,
                limit: self.max,
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
        if self.loans {
            let p = self.loan()?;
            // SAFETY: the loaned sample has max >= len octets after its length field.
            fill(unsafe { std::slice::from_raw_parts_mut(p, len) });
            // SAFETY: publishes the loan taken above.
            let rc = unsafe { ffi::ppf_write_loan(self.raw, len as u32, id) };
            return if rc == ffi::RC_OK {
                Ok(())
            } else {
                Err(self.write_error(rc))
            };
        }
        // SAFETY: scratch holds max >= len octets and is only touched here.
        fill(unsafe { std::slice::from_raw_parts_mut(self.scratch, len) });
        // SAFETY: raw is a live writer.
        let rc = unsafe { ffi::ppf_write(self.raw, len as u32, id) };
        if rc == ffi::RC_OK {
            Ok(())
        } else {
            Err(self.write_error(rc))
        }
    }
}

/// A DataReader of one topic.
pub struct FastReader {
    raw: *mut ffi::ReaderH,
    _p: Arc<Participant>,
    busy: bool,
    cancel: CancelToken,
    topic: String,
}

// SAFETY: used by one thread at a time (&mut self); Fast DDS readers may be
// used from any thread.
unsafe impl Send for FastReader {}

impl Drop for FastReader {
    fn drop(&mut self) {
        // SAFETY: raw came from ppf_create_reader; the participant is alive (_p).
        unsafe { ffi::ppf_delete_reader(self.raw) };
    }
}

impl FastReader {
    /// Delivers every sample available now; returns how many.
    #[inline]
    fn drain<F: FnMut(&[u8])>(&mut self, on_sample: &mut F) -> Result<usize, BindingError> {
        let mut n = 0;
        loop {
            let mut data: *const u8 = std::ptr::null();
            let mut len: u32 = 0;
            // SAFETY: raw is a live reader; data/len are valid out pointers.
            let rc = unsafe { ffi::ppf_take(self.raw, &mut data, &mut len) };
            match rc {
                1 => {
                    // SAFETY: the shim lends len octets at data until ppf_release.
                    on_sample(unsafe { std::slice::from_raw_parts(data, len as usize) });
                    // SAFETY: gives back what ppf_take lent.
                    unsafe { ffi::ppf_release(self.raw) };
                    n += 1;
                }
                0 => return Ok(n),
                -2 => {
                    // SAFETY: as above.
                    unsafe { ffi::ppf_release(self.raw) };
                    return Err(BindingError::Malformed(format!(
                        "flat sample on {} claims more octets than its type holds",
                        self.topic
                    )));
                }
                _ => {
                    return Err(BindingError::Middleware(format!(
                        "Fast DDS take on {} failed",
                        self.topic
                    )));
                }
            }
        }
    }
}

impl Reader for FastReader {
    fn wait_matched(&mut self, timeout: Duration) -> Result<(), BindingError> {
        let raw = self.raw;
        // SAFETY: raw is a live reader.
        wait_count(1, timeout, &self.cancel, || unsafe {
            ffi::ppf_reader_matched(raw)
        })
        .map_err(|_| {
            if self.cancel.is_cancelled() {
                return BindingError::Cancelled;
            }
            BindingError::MatchTimeout(
                timeout,
                format!(
                    "fastdds reader on {} found no writer; is the publisher running with the same transport, data type, size and domain?",
                    self.topic
                ),
            )
        })
    }

    #[inline]
    fn recv<F: FnMut(&[u8])>(
        &mut self,
        timeout: Duration,
        on_sample: &mut F,
    ) -> Result<usize, BindingError> {
        let n = self.drain(on_sample)?;
        if n > 0 {
            return Ok(n);
        }
        let start = Instant::now();
        let mut spins: u32 = 0;
        loop {
            if self.busy {
                spins = spins.wrapping_add(1);
                if spins.is_multiple_of(1024) {
                    if self.cancel.is_cancelled() {
                        return Err(BindingError::Cancelled);
                    }
                    if start.elapsed() >= timeout {
                        return Ok(0);
                    }
                }
                std::hint::spin_loop();
            } else {
                if self.cancel.is_cancelled() {
                    return Err(BindingError::Cancelled);
                }
                let left = timeout.saturating_sub(start.elapsed());
                if left.is_zero() {
                    return Ok(0);
                }
                let slice = left.min(pubsubperf_core::binding::CANCEL_POLL);
                // SAFETY: raw is a live reader.
                unsafe { ffi::ppf_wait(self.raw, slice.as_nanos() as i64) };
            }
            let n = self.drain(on_sample)?;
            if n > 0 {
                return Ok(n);
            }
        }
    }
}

#[cfg(test)]
mod tests;
