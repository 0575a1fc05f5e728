//! `fastdds`: eProsima Fast DDS 2.9 through its C++ API and a small C shim
//! of ours (`shim/shim.cpp`, compiled by build.rs; Fast DDS has no C API).
//!
//! - Transports (`--transport`): `udp+shm` (the default: Fast DDS's
//!   built-in pair, its shared-memory transport beside UDPv4, as Fast DDS
//!   runs unconfigured and its LatencyTest and ThroughputTest run; `shm` is
//!   another name for it), `udp` (UDPv4 only,
//!   unicast discovery through initial peers on the bind address, so no
//!   multicast is needed on one host), `tcp` (TCPv4 with a listening port
//!   per participant).
//! - Best effort by default, as LatencyTest and ThroughputTest run
//!   (`--reliable` for reliable).
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

mod deviations;
mod ffi;
pub mod options;
pub mod shm;

use options::{History, Options};
use pubsubperf_core::binding::BindingInfo;
use pubsubperf_core::handoff::Handoff;
use pubsubperf_core::result::TestKind;
use pubsubperf_core::{
    Binding, BindingError, Capabilities, DataType, EndpointConfig, Locator, ReceiveMode,
    Reliability, TopicSpec, WaitMode,
};
use std::ffi::{CStr, CString};
use std::os::raw::c_char;
use std::os::unix::net::UnixDatagram;
use std::sync::Arc;
use std::time::Duration;

mod readback;
mod reader;
mod writer;

pub use reader::FastReader;
pub use writer::FastWriter;

/// Largest sample (bytes handed to `send`).
pub const MAX_SAMPLE: usize = 256 << 20;
/// Memory budget for one writer's queue (data-sharing pool, history) that
/// sets the default queue depth for large samples.
pub(crate) const QUEUE_BUDGET: usize = 256 << 20;
/// Bytes a reliable keep-all writer may hold unacknowledged by default: its
/// max_samples is `clamp(this / size, 2, 5000)`. With Fast DDS's
/// default of 5000 whatever the size, an unpaced writer of 64 KiB samples
/// fell, after one to three seconds, from ~45 000 to 5 000-8 000 samples/s
/// for the rest of the run (threads waiting on Fast DDS's locks), and of
/// 1 MiB samples stalled for seconds at a time, in the reference program
/// alike; 512 and 32 samples kept both at their first rate
/// (docs/bindings/fastdds.md, Queues).
pub(crate) const WRITER_HISTORY_BUDGET: usize = 32 << 20;
/// Participant ids probed by UDP discovery on a host (Fast DDS's default is 4).
pub(crate) const PEER_RANGE: i32 = 40;

/// The flags of [`pubsubperf_core::binding::QOS_FLAGS`] this binding maps:
/// all but `--no-push-on-write`.
pub const QOS_FLAGS: &[&str] = pubsubperf_core::binding::QOS_FLAGS.split_at(10).0;

/// Why Fast DDS 2.9 lacks one of the other flags (or `--batch`).
pub fn why_not(flag: &str) -> Option<&'static str> {
    match flag {
        "--batch" => Some(
            "Fast DDS 2.9 has no write batching (each write is its own DATA submessage; --async only moves sending to a thread)",
        ),
        "--no-push-on-write" => Some(
            "Fast DDS 2.9 always pushes samples on write (pull-mode reliability is a Connext feature)",
        ),
        _ => None,
    }
}

/// `--no-positive-acks`: how long a writer keeps a sample that no reader
/// acknowledges before it counts as delivered (Fast DDS's
/// DisablePositiveACKs duration; its default, infinite, would fill a
/// keep-all writer's history for good). Not shorter: Debian's Fast DDS
/// 2.9.1 is built with assertions, and StatefulWriter aborts the process
/// when a write takes longer than the keep duration (seen with 1 ms).
pub const KEEP_DURATION: Duration = Duration::from_millis(100);

/// The UDP transport's receive buffer without `--socket-buffer` (the kernel
/// caps it at `net.core.rmem_max`; the send buffer stays the system's).
/// With the system's default (208 KiB here) an unpaced reliable writer
/// overflows the reader's socket, and each loss waits for a heartbeat and a
/// NACK to be repaired: 1 KiB samples went at ~20 000/s, ~60 000/s with
/// 4 MiB (bench/fastdds_vs_ref.sh; `nstat` counted UdpRcvbufErrors for the
/// former). A bigger send buffer too made it worse (the writer runs further
/// ahead of the reader: ~25 000/s).
pub const UDP_RECEIVE_BUFFER: usize = 4 << 20;

/// How often a reliable writer with unacknowledged samples sends a
/// heartbeat (Fast DDS's default is 3 s): readers acknowledge on
/// heartbeats, so the period bounds how long a full writer queue waits, and
/// how many samples pile up unacknowledged in the writer's history between
/// two acknowledgements (hundreds in a 1 KiB ping-pong at 50 ms: between
/// periodic ones, Fast DDS adds a heartbeat to its data only after a send
/// buffer's worth of bytes, 208 KiB here). Each
/// acknowledged sample goes back to the writer's pool of preallocated
/// samples, and Debian's Fast DDS 2.9 is built with assertions on, one of
/// which searches that pool's free list linearly on every release
/// (`CacheChangePool::return_cache_to_pool`): with the thousands of samples we
/// preallocate (`endpoint_qos` in the shim), one acknowledgement of
/// hundreds held the writer's lock for long enough that the round trips
/// waiting on it made the 99th percentile: 1 KiB ping-pong p99 146-288 us
/// at 50 ms, 89-104 us at 5 ms (the measurements are in
/// docs/bindings/fastdds.md, Heartbeats).
pub const HEARTBEAT_PERIOD: Duration = Duration::from_millis(5);

/// The heartbeat period of asynchronous writers (`--async`, and
/// `--bandwidth-limit`, whose flow controller publishes asynchronously).
/// With 5 ms, a Fast DDS asynchronous writer's lone sample to a CycloneDDS
/// reader was never delivered in 2 of 40 runs of the qos tests'
/// `async_publishing_delivers_lone_samples_and_bursts` (and in 1 of 1 run of
/// the whole suite), 0 of 40 with 50 ms: a heartbeat that announces a
/// sample still queued for the publishing thread, and the repair that
/// follows, race in Fast DDS 2.9.
pub const ASYNC_HEARTBEAT_PERIOD: Duration = Duration::from_millis(50);

/// 1 for the topics of a latency test's pings and echoes, which carry one
/// sample at a time: the shim allocates a few of their samples up front
/// and lets Fast DDS grow the rest, as it does by default (the data topic's
/// endpoints get every sample their history may hold within 4 MiB, for a
/// flat memory over long runs; see `endpoint_qos` in the shim).
fn one_in_flight(topic: &TopicSpec) -> i32 {
    i32::from(topic.is_ping() || topic.is_echo())
}

/// The heartbeat period of this run's writers.
fn heartbeat_period(cfg: &EndpointConfig) -> Duration {
    if cfg.async_publish || cfg.bandwidth_limit > 0 {
        ASYNC_HEARTBEAT_PERIOD
    } else {
        HEARTBEAT_PERIOD
    }
}

/// How long a reliable reader waits before it answers a heartbeat (Fast
/// DDS's heartbeatResponseDelay, 5 ms by default): at once, so that a
/// writer blocked on a full history, or missing a sample, hears back within
/// a round trip.
pub const HEARTBEAT_RESPONSE: Duration = Duration::ZERO;

/// Smallest `--bandwidth-limit`, bytes/s: a period of 100 ms must let a
/// 64 KiB UDP fragment through.
pub const BANDWIDTH_MIN: u64 = 10 * 65_536;
/// Largest `--bandwidth-limit`, bytes/s: a period's bytes are an int32.
pub const BANDWIDTH_MAX: u64 = 10 * i32::MAX as u64;

pub(crate) fn caps() -> Capabilities {
    Capabilities {
        reliable: true,
        best_effort: true,
        // LatencyTest's and ThroughputTest's default (`--reliability`).
        default_reliability: Reliability::BestEffort,
        multicast: true,
        max_sample_size: MAX_SAMPLE,
        zero_copy: true,
        batching: false,
        multiple_subscribers: true,
        transports: &["udp+shm", "udp", "tcp", "shm"],
        data_types: &[DataType::Bytes, DataType::Flat],
        in_process: false,
        // Between hosts, discovery is SPDP multicast on the run's interface
        // (or unicast to `--opt peers`), see `ppf_open`.
        remote: true,
        // Listener first, the default: every Fast DDS tool (LatencyTest,
        // ThroughputTest, the examples) receives in on_data_available.
        receive: &[ReceiveMode::Listener, ReceiveMode::Thread],
    }
}

/// The DDS topic name of a harness topic in a run: shared with the
/// `cyclonedds` binding for cross-vendor runs. Only `[A-Za-z0-9_]`.
pub fn dds_topic(run_id: &str, topic: &str) -> String {
    pubsubperf_core::dds::topic(run_id, topic)
}

/// The DDS type name used for a run (`Keyed...` with `--instances`).
pub fn type_name(cfg: &EndpointConfig) -> String {
    let keyed = if cfg.instances > 0 { "Keyed" } else { "" };
    match cfg.data_type {
        DataType::Bytes => format!("pubsubperf::{keyed}Bytes"),
        DataType::Flat => format!("pubsubperf::{keyed}Flat{}", cfg.max_sample_size),
    }
}

/// True when the run's participants carry Fast DDS's shared-memory
/// transport beside UDPv4 (`udp+shm`, and `shm`, its other name).
pub(crate) fn with_shm(cfg: &EndpointConfig) -> bool {
    matches!(cfg.transport.as_str(), "udp+shm" | "shm")
}

/// Bytes of the shared-memory transport's segment (`udp+shm`, `shm`):
/// four of the run's largest samples and 256 KiB, within 1-64 MiB (Fast
/// DDS's own 512 KiB holds no sample above it).
pub(crate) fn shm_segment(cfg: &EndpointConfig) -> usize {
    (cfg.max_sample_size.saturating_mul(4) + (256 << 10)).clamp(1 << 20, 64 << 20)
}

/// LATENCY_BUDGET of writers and readers with `--async`: the same as the
/// `cyclonedds` binding offers there (where a non-zero budget is what makes
/// a writer asynchronous), so that cross-vendor endpoints match.
pub const ASYNC_LATENCY_BUDGET_NS: i64 = 1_000;

pub(crate) fn version() -> String {
    // SAFETY: returns a static NUL-terminated string.
    unsafe { CStr::from_ptr(ffi::ppf_version()) }
        .to_string_lossy()
        .into_owned()
}

/// `Ok` when Fast DDS was found at build time, otherwise why not.
fn availability() -> Result<(), String> {
    match env!("PUBSUBPERF_FASTDDS_MISSING") {
        "" => Ok(()),
        missing => Err(missing.to_string()),
    }
}

pub(crate) fn mw(e: String) -> BindingError {
    BindingError::Middleware(e)
}

/// Calls a shim constructor that reports errors into a buffer.
pub(crate) fn with_err<T>(f: impl FnOnce(*mut c_char, usize) -> *mut T) -> Result<*mut T, String> {
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

pub(crate) fn fnv(s: &str) -> u32 {
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
pub(crate) fn tcp_ports(cfg: &EndpointConfig, domain: u32) -> Result<TcpSlot, BindingError> {
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
pub(crate) struct TcpSlot {
    pub(crate) base: u16,
    pub(crate) slots: u32,
    pub(crate) port: u16,
    pub(crate) id: i32,
    pub(crate) claim: UnixDatagram,
}

/// Participant ids this process holds (Fast DDS wants them unique within a
/// process, whatever the domain): a participant's ports
/// are not always bound yet (or at all, with shared memory) when the next
/// one looks for a free id.
pub(crate) static IDS_IN_USE: std::sync::Mutex<std::collections::BTreeSet<(u32, i32)>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// The lowest participant id whose RTPS unicast ports (metatraffic and
/// user, `7400 + 250 domain + 10/11 + 2 id`) are free on this host. Fast DDS
/// would number participants per process, which in a long-lived process
/// (tests) runs past the ids that unicast discovery probes.
pub(crate) fn free_participant_id(ip: &str, domain: u32) -> Result<i32, BindingError> {
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
pub(crate) fn release_id(id: (u32, i32)) {
    IDS_IN_USE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&id);
}

/// The participant, shared by its writers and readers: it is deleted when
/// the last of them is dropped.
pub(crate) struct Participant {
    pub(crate) raw: *mut ffi::Participant,
    /// (domain, participant id) reserved in [`IDS_IN_USE`].
    pub(crate) id: (u32, i32),
    /// TCP: the claim on the listening port (see [`tcp_ports`]), released
    /// after the participant is closed.
    pub(crate) _tcp_claim: Option<UnixDatagram>,
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
    pub(crate) p: Arc<Participant>,
    pub(crate) cfg: EndpointConfig,
}

/// What `validate` and `open` derive from the configuration.
pub(crate) struct Plan {
    pub(crate) opts: Options,
    pub(crate) keep_all: bool,
    /// Keep-last depth, or a keep-all writer's history size (see `writer_limits`).
    pub(crate) writer_depth: i32,
    /// True when the writer's max_samples is `writer_depth`; false when it
    /// keeps Fast DDS's default (keep-last and keyed writers).
    pub(crate) writer_limits: bool,
    pub(crate) reader_depth: i32,
}

pub(crate) fn plan(cfg: &EndpointConfig) -> Result<Plan, BindingError> {
    let opts = Options::parse(cfg)?;
    if !caps().transports.contains(&cfg.transport.as_str()) {
        return Err(BindingError::Unsupported(format!(
            "--transport {}: fastdds offers udp+shm, udp, tcp, shm",
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
        return Err(BindingError::Unsupported(format!(
            "--batch {}: {}",
            cfg.batch_bytes,
            why_not("--batch").unwrap_or_default()
        )));
    }
    if let Some(flag) = cfg
        .qos_flags_set()
        .into_iter()
        .find(|f| !QOS_FLAGS.contains(f))
    {
        return Err(BindingError::Unsupported(format!(
            "{flag}: {}",
            why_not(flag).unwrap_or("not mapped by fastdds")
        )));
    }
    if cfg.multicast_ttl.is_some() && !(cfg.multicast && cfg.transport == "udp") {
        return Err(BindingError::Unsupported(
            "--multicast-ttl: needs --multicast over --transport udp (the TTL is that of the UDP transport's multicast datagrams)".into(),
        ));
    }
    if let Some(a) = &cfg.multicast_address
        && !(cfg.multicast
            && cfg.transport == "udp"
            && a.parse::<std::net::Ipv4Addr>()
                .is_ok_and(|ip| ip.is_multicast()))
    {
        return Err(BindingError::Unsupported(format!(
            "--multicast-address {a}: needs --multicast over --transport udp and an IPv4 multicast group (the readers' multicast locator)"
        )));
    }
    if cfg.no_positive_acks && cfg.history == Some(History::KeepAll) {
        return Err(BindingError::Unsupported(
            "--no-positive-acks: Fast DDS 2.9's keep-all writer without positive acks stalls once its history is full; use --history keep-last:N".into(),
        ));
    }
    if cfg.no_positive_acks && cfg.reliability != Reliability::Reliable {
        return Err(BindingError::Unsupported(
            "--no-positive-acks: applies to reliable writers and readers; add --reliable (fastdds runs best effort unless told, as Fast DDS's LatencyTest and ThroughputTest)"
                .into(),
        ));
    }
    if cfg.bandwidth_limit > 0 && !(BANDWIDTH_MIN..=BANDWIDTH_MAX).contains(&cfg.bandwidth_limit) {
        return Err(BindingError::Unsupported(format!(
            "--bandwidth-limit {}: fastdds's flow controller takes {BANDWIDTH_MIN}-{BANDWIDTH_MAX} bytes/s (a tenth of it every 100 ms, at least one 64 KiB fragment)",
            cfg.bandwidth_limit
        )));
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
    // A keep-all writer's depth is its max_samples (without positive acks
    // the writer keeps the last `writer_depth`, see `ppf_create_writer`).
    // Keyed writers keep their depth per instance, and all instances
    // together as many samples as an unkeyed writer (at least
    // `writer_depth` each): with 5000 per instance (20 000 in all), a keyed
    // asynchronous Fast DDS writer delivered nothing to a CycloneDDS reader
    // (dds_qos.rs, keyed_runs_across_vendors_count_exactly); with 64 per
    // instance, 4 instances held 256 samples, and an unpaced reliable writer
    // waited for the next heartbeat (50 ms) at every 256: 5 120 samples/s.
    let writer_max = if cfg.send_queue > 0 || cfg.zero_copy || cfg.no_positive_acks {
        writer_depth
    } else {
        let bounded = (WRITER_HISTORY_BUDGET / size).clamp(2, 5000);
        match cfg.instances as usize {
            0 => bounded,
            n => (bounded / n).max(writer_depth),
        }
    };
    let (keep_all, writer_depth, reader_depth) = match opts.history {
        Some(History::KeepAll) => (true, writer_max as i32, reader_depth as i32),
        Some(History::KeepLast(n)) => (false, n.min(1_000_000) as i32, n.min(1_000_000) as i32),
        None if cfg.reliability == Reliability::Reliable => {
            (true, writer_max as i32, reader_depth as i32)
        }
        None => (false, writer_depth as i32, reader_depth as i32),
    };
    // An unkeyed keep-all writer's max_samples is its depth, as is a
    // data-sharing pool's (its size is max_samples); a keyed writer's depth
    // is per instance and its max_samples stays Fast DDS's default.
    let writer_limits = cfg.zero_copy || (keep_all && cfg.instances == 0);
    Ok(Plan {
        opts,
        keep_all,
        writer_depth,
        writer_limits,
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
            available: availability(),
        }
    }

    fn qos_flags() -> &'static [&'static str] {
        QOS_FLAGS
    }

    fn wire_protocol() -> Option<pubsubperf_core::WireProtocol> {
        Some(pubsubperf_core::WireProtocol::Rtps)
    }

    fn why_not(flag: &str) -> Option<&'static str> {
        why_not(flag)
    }

    fn deviations(_test: TestKind, cfg: &EndpointConfig) -> Vec<String> {
        deviations::of(cfg)
    }

    /// Fast DDS's built-in pair; `udp` for `--multicast`, which this
    /// binding maps on its UDPv4-only participants.
    fn default_transport(multicast: bool) -> &'static str {
        if multicast { "udp" } else { "udp+shm" }
    }

    fn validate(cfg: &EndpointConfig) -> Result<(), BindingError> {
        plan(cfg).map(|_| ())
    }

    fn open(cfg: &EndpointConfig) -> Result<Self, BindingError> {
        availability().map_err(BindingError::Unavailable)?;
        let plan = plan(cfg)?;
        shm::clean_zombies();
        let transport = match cfg.transport.as_str() {
            "tcp" => 1,
            _ if with_shm(cfg) => 2,
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
        let multicast_address = cstr(cfg.multicast_address.as_deref().unwrap_or(""))?;
        let shm_segment = shm_segment(cfg);
        let c = ffi::Config {
            domain: domain as i32,
            transport,
            reliable: i32::from(cfg.reliability == Reliability::Reliable),
            flat: i32::from(cfg.data_type == DataType::Flat),
            zero_copy: i32::from(cfg.zero_copy),
            max_size: cfg.max_sample_size as u32,
            keep_all: i32::from(plan.keep_all),
            writer_depth: plan.writer_depth,
            writer_limits: i32::from(plan.writer_limits),
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
            no_positive_acks: i32::from(cfg.no_positive_acks),
            keep_duration_ns: KEEP_DURATION.as_nanos() as i64,
            bandwidth_limit: cfg.bandwidth_limit.min(BANDWIDTH_MAX) as i64,
            multicast_ttl: cfg.multicast_ttl.map_or(-1, i32::from),
            receive_buffer: UDP_RECEIVE_BUFFER as u32,
            heartbeat_response_ns: HEARTBEAT_RESPONSE.as_nanos() as i64,
            heartbeat_period_ns: heartbeat_period(cfg).as_nanos() as i64,
            multicast_address: multicast_address.as_ptr(),
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
        let one = one_in_flight(topic);
        // SAFETY: participant alive (we hold it); c outlives the call.
        let raw =
            with_err(|e, n| unsafe { ffi::ppf_create_reader(self.p.raw, c.as_ptr(), one, e, n) })
                .map_err(mw)?;
        let reader = FastReader {
            raw,
            _p: self.p.clone(),
            busy: self.cfg.wait == WaitMode::Busy,
            cancel: self.cfg.cancel.clone(),
            topic: name.clone(),
            handoff: (self.cfg.receive == ReceiveMode::Listener).then(Handoff::new),
            listening: false,
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
        let one = one_in_flight(topic);
        // SAFETY: participant alive; c outlives the call.
        let raw =
            with_err(|e, n| unsafe { ffi::ppf_create_writer(self.p.raw, c.as_ptr(), one, e, n) })
                .map_err(mw)?;
        // SAFETY: the writer owns its scratch sample of max_sample_size octets.
        let scratch = unsafe { ffi::ppf_writer_buffer(raw) };
        Ok(FastWriter {
            raw,
            _p: self.p.clone(),
            scratch,
            max: self.cfg.max_sample_size,
            loans: self.cfg.zero_copy,
            bytes: self.cfg.data_type == DataType::Bytes,
            keys: pubsubperf_core::binding::InstanceKeys::new(self.cfg.instances),
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

pub(crate) use pubsubperf_core::dds::wait_count;

#[cfg(test)]
mod tests;
