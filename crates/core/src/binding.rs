//! The binding interface: what a middleware or raw transport implements.
//!
//! A *binding* is one middleware (CycloneDDS, Zenoh, ...) or raw transport
//! (UDP, TCP, ...) behind one interface. The harness is generic over
//! [`Binding`], so a measurement loop is compiled once per binding and calls
//! the binding's writer and reader directly: no dynamic dispatch, no locks and
//! no allocation per sample.
//!
//! ## Life of a run
//! On each side (publisher process, subscriber process) the harness:
//! 1. calls [`Binding::open`] with the run's [`EndpointConfig`] (a DDS
//!    participant, a Zenoh session, a socket factory);
//! 2. creates its readers first with [`Binding::create_reader`], each of which
//!    returns a [`Locator`] (an address, or just the topic name for
//!    middleware with discovery);
//! 3. exchanges locators with the other side over the control channel;
//! 4. creates its writers with [`Binding::create_writer`], passing the
//!    locators of every reader of that topic;
//! 5. calls `wait_matched` on writers and readers, so that discovery and
//!    connection set-up are never measured;
//! 6. runs the test, then drops everything (dropping must release every
//!    socket, segment and thread the binding created).
//!
//! ## Loans and borrowed views
//! [`Writer::send`] hands the harness a buffer of the requested length to fill
//! in place: a binding that copies passes an internal scratch buffer; a
//! zero-copy binding passes a loaned shared-memory slot. [`Reader::recv`]
//! calls back with a borrowed view of each sample; the view is only valid
//! during the call, which is what lets a zero-copy reader release the slot
//! right after.

use crate::Received;
pub use crate::refusal::Refusal;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Reliability of delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reliability {
    /// Every sample arrives, in order; a writer blocks (bounded) when readers fall behind.
    Reliable,
    /// Samples may be dropped; a writer never blocks on a slow reader.
    BestEffort,
}

/// How a reader waits for the next sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WaitMode {
    /// Spin on a non-blocking poll: lowest latency, one core busy.
    Busy,
    /// Block in the kernel (or futex/condition) until data arrives.
    Block,
}

/// Which thread runs the subscriber's per-sample code (`--receive`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReceiveMode {
    /// pubsubperf's own receive thread waits (as [`WaitMode`] says) and
    /// takes the samples: Perftest's `-useReadThread`, ddsperf's `waitset`.
    #[default]
    Thread,
    /// The middleware's own receive thread runs it, in a data-available
    /// listener, while pubsubperf's thread sleeps: no wake-up of another
    /// thread per sample (ddsperf's and Perftest's default). The echo of a
    /// latency test is written from there too.
    Listener,
}

impl ReceiveMode {
    /// pubsubperf's own thread (the default, left out of results).
    pub fn is_thread(&self) -> bool {
        *self == ReceiveMode::Thread
    }

    /// The name used on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            ReceiveMode::Thread => "thread",
            ReceiveMode::Listener => "listener",
        }
    }
}

/// How a sample is represented by the middleware.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DataType {
    /// A length-prefixed byte sequence, serialized and deserialized (copied) at each end.
    Bytes,
    /// A fixed-size layout used in place without (de)serialization (the FlatData idea).
    Flat,
}

/// DDS HISTORY QoS (`--history keep-last:N|keep-all`), written as
/// `keep-last:N` / `keep-all` in results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum History {
    /// KEEP_LAST with this depth (per instance).
    KeepLast(u32),
    /// KEEP_ALL: nothing is overwritten; resource limits bound it.
    KeepAll,
}

impl std::str::FromStr for History {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "keep-all" {
            return Ok(History::KeepAll);
        }
        s.strip_prefix("keep-last:")
            .and_then(|n| n.parse::<u32>().ok())
            .filter(|n| (1..=1_000_000).contains(n))
            .map(History::KeepLast)
            .ok_or_else(|| format!("'{s}': expected keep-last:N (N from 1 to 1000000) or keep-all"))
    }
}

impl std::fmt::Display for History {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            History::KeepLast(n) => write!(f, "keep-last:{n}"),
            History::KeepAll => f.write_str("keep-all"),
        }
    }
}

impl From<History> for String {
    fn from(h: History) -> String {
        h.to_string()
    }
}

impl TryFrom<String> for History {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

/// DDS DURABILITY QoS (`--durability`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Durability {
    /// Late-joining readers get nothing written before they matched.
    Volatile,
    /// The writer keeps its history for late-joining readers.
    TransientLocal,
}

/// The DDS QoS and middleware-setting flags; a binding lists those it maps
/// in [`Binding::qos_flags`], the harness refuses the others. Ordered from
/// the most common, so that a binding's list can be a prefix.
pub const QOS_FLAGS: [&str; 11] = [
    "--history",
    "--durability",
    "--async",
    "--domain",
    "--qos-file",
    "--instances",
    "--multicast-ttl",
    "--multicast-address",
    "--no-positive-acks",
    "--bandwidth-limit",
    "--no-push-on-write",
];

/// A standard wire protocol that bindings of several vendors speak
/// ([`Binding::wire_protocol`]): a publisher on one of them meets
/// subscribers on another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WireProtocol {
    /// DDS's RTPS (DDSI-RTPS): CycloneDDS, Fast DDS and Connext meet on it.
    Rtps,
}

impl WireProtocol {
    /// Every wire protocol a binding may speak.
    pub const ALL: [WireProtocol; 1] = [WireProtocol::Rtps];

    /// The family of middleware that speaks it, as messages name it.
    pub fn family(self) -> &'static str {
        match self {
            WireProtocol::Rtps => "DDS",
        }
    }
}

/// What a binding supports. The harness and the CLI query this instead of
/// special-casing bindings: options that a binding does not support are
/// refused before anything runs.
#[derive(Debug, Clone, Serialize)]
pub struct Capabilities {
    /// Supports reliable delivery.
    pub reliable: bool,
    /// Supports best-effort delivery.
    pub best_effort: bool,
    /// The reliability used when the user asks for none.
    pub default_reliability: Reliability,
    /// Supports multicast delivery (`--multicast`).
    pub multicast: bool,
    /// Largest sample (bytes, header included) the binding can carry.
    pub max_sample_size: usize,
    /// Supports `--zero-copy` (loaned shared-memory buffers).
    pub zero_copy: bool,
    /// Supports `--batch BYTES`.
    pub batching: bool,
    /// Supports more than one subscriber per topic.
    pub multiple_subscribers: bool,
    /// Transports offered (`--transport`); the first is the default.
    pub transports: &'static [&'static str],
    /// Data types offered (`--data-type`); the first is the default.
    pub data_types: &'static [DataType],
    /// Publisher and subscriber must live in one process (threads).
    pub in_process: bool,
    /// Can talk to a subscriber on another host (`--connect`).
    pub remote: bool,
    /// How its subscriber can receive (`--receive`); the first is the
    /// default, the fastest here.
    pub receive: &'static [ReceiveMode],
}

/// Static facts about a binding, shown by `pubsubperf bindings`.
#[derive(Debug, Clone, Serialize)]
pub struct BindingInfo {
    /// The name used with `--binding`.
    pub name: &'static str,
    /// One line describing it.
    pub description: &'static str,
    /// Version of the middleware or of the kernel it runs on.
    pub version: String,
    /// What it supports.
    pub capabilities: Capabilities,
    /// `Ok` when it can run on this machine, otherwise why not.
    pub available: Result<(), String>,
}

/// A shared flag that asks every blocking call of a run to return early:
/// set when the peer died, the user pressed Ctrl-C, or the test ended.
/// Bindings that block (in the kernel or on a condition) must wake at least
/// every 100 ms and check it, so a run never hangs on a dead peer.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// A token that is not cancelled.
    pub fn new() -> Self {
        Self::default()
    }
    /// Asks every holder to stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Release);
    }
    /// True once [`CancelToken::cancel`] was called.
    #[inline(always)]
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// How long a reliable writer may block on a full queue, for a middleware
/// without a default of its own: ddsperf's RELIABILITY max_blocking_time.
pub const DEFAULT_BLOCK_TIMEOUT: Duration = Duration::from_secs(10);

/// The interval at which blocking binding calls must check their [`CancelToken`].
pub const CANCEL_POLL: Duration = Duration::from_millis(100);

/// For `wait_matched` of in-process bindings: checks `matched` every
/// millisecond until it holds, or fails with [`BindingError::MatchTimeout`]
/// and `what` once `timeout` has passed.
pub fn poll_matched(
    timeout: Duration,
    what: &str,
    mut matched: impl FnMut() -> bool,
) -> Result<(), BindingError> {
    let start = std::time::Instant::now();
    while !matched() {
        if start.elapsed() > timeout {
            return Err(BindingError::MatchTimeout(timeout, what.into()));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(())
}

/// Everything that shapes one side's endpoints in one run. Built by the
/// harness from the user's options; identical on both sides except `role`,
/// `bind_ip` and `cancel`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EndpointConfig {
    /// Unique id of the run (names shared-memory segments, topics, ports).
    pub run_id: String,
    /// Transport within the binding (`udp`, `tcp`, `shm`, ...).
    pub transport: String,
    /// Reliable or best effort.
    pub reliability: Reliability,
    /// Busy-poll or block.
    pub wait: WaitMode,
    /// Which thread runs the subscriber's per-sample code (`--receive`).
    /// Written in results only when it is the listener, so that results
    /// from before the option compare equal with our thread's.
    #[serde(default, skip_serializing_if = "ReceiveMode::is_thread")]
    pub receive: ReceiveMode,
    /// Data representation.
    pub data_type: DataType,
    /// Use loaned buffers.
    pub zero_copy: bool,
    /// Largest sample of the run, header included; buffers are sized for it.
    pub max_sample_size: usize,
    /// Number of subscribers of the data topic.
    pub subscribers: usize,
    /// Number of publishers (writers in separate processes) of the data topic.
    #[serde(default = "one")]
    pub publishers: usize,
    /// Batch samples up to this many bytes (0: no batching).
    pub batch_bytes: usize,
    /// Use multicast where the binding can.
    pub multicast: bool,
    /// Use IPv6.
    pub ipv6: bool,
    /// The address to bind readers on (the control connection's local
    /// address, so a remote publisher can reach it).
    pub bind_ip: String,
    /// Kernel socket buffer size in bytes (0: the system's default).
    pub socket_buffer: usize,
    /// Writer's queue size in samples (0: the binding's default), Perftest -sendQueueSize.
    pub send_queue: usize,
    /// Reader's queue size in samples (0: the binding's default), Perftest -receiveQueueSize.
    pub receive_queue: usize,
    /// How long a reliable writer may block on a full reader before the
    /// sample counts as failed (`--max-blocking-time`, default 10 s; the
    /// DDS bindings make it RELIABILITY's max_blocking_time).
    pub reliable_block_timeout_ms: u64,
    /// DDS HISTORY (`--history`; None: the binding's default).
    #[serde(default)]
    pub history: Option<History>,
    /// DDS DURABILITY (`--durability`; None: the binding's default, volatile).
    #[serde(default)]
    pub durability: Option<Durability>,
    /// Asynchronous publishing (`--async`).
    #[serde(default)]
    pub async_publish: bool,
    /// DDS domain id (`--domain`; None: the binding's default).
    #[serde(default)]
    pub domain: Option<u32>,
    /// Vendor QoS/configuration file passed through (`--qos-file`).
    #[serde(default)]
    pub qos_file: Option<String>,
    /// Keyed type with this many instances written round-robin
    /// (`--instances`; 0: the unkeyed type).
    #[serde(default)]
    pub instances: u32,
    /// `--no-positive-acks`: readers acknowledge nothing; writers drop
    /// samples after a keep duration (Fast DDS's DisablePositiveACKs).
    /// This and the knobs below are serialized only when set, so that
    /// results of earlier versions keep comparing with new ones.
    #[serde(default, skip_serializing_if = "is_false")]
    pub no_positive_acks: bool,
    /// `--bandwidth-limit BYTES`: a flow controller lets writers send at
    /// most this many bytes per second (0: no limit).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub bandwidth_limit: u64,
    /// `--no-push-on-write`: reliable writers announce samples and send
    /// them when readers ask (Connext's push_on_write = false).
    #[serde(default, skip_serializing_if = "is_false")]
    pub no_push_on_write: bool,
    /// `--multicast-ttl N`: time to live of multicast datagrams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multicast_ttl: Option<u8>,
    /// `--multicast-address ADDR`: the multicast group the data goes to
    /// (an IPv4 or IPv6 multicast address; the ports stay the binding's).
    /// None: a group derived per run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multicast_address: Option<String>,
    /// Binding-specific options (`--opt KEY=VALUE` and binding flags such as
    /// DDS QoS), passed through verbatim.
    pub options: std::collections::BTreeMap<String, String>,
    /// Set when the run must stop; never serialized.
    #[serde(skip)]
    pub cancel: CancelToken,
    /// The run's key, bytes 16..24 of every sample
    /// ([`crate::sample::Header`]), when the harness runs the endpoints;
    /// never serialized (the results never show it). A binding may accept
    /// the peer that first sends it and no other: `udp` connects its
    /// reader to that sender, so the kernel drops strangers' datagrams.
    #[serde(skip)]
    pub sample_key: Option<u64>,
    /// A session from the network (an agent at HOST:PORT): the only
    /// addresses this side's middleware may send discovery to (the
    /// publisher's and the agent's other allowed unicast destinations).
    /// DDS bindings then discover by unicast to them and send no discovery
    /// multicast (CycloneDDS's SPDP to 239.255.0.1 with TTL 32, Fast DDS's
    /// metatraffic multicast), whatever the run asks. Set by the agent's
    /// session, never serialized: a publisher cannot set it. None: the
    /// vendor's discovery, as the run asks.
    #[serde(skip)]
    pub held_discovery: Option<Vec<std::net::IpAddr>>,
}

fn one() -> usize {
    1
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl EndpointConfig {
    /// The DDS QoS flags ([`QOS_FLAGS`]) this configuration sets.
    pub fn qos_flags_set(&self) -> Vec<&'static str> {
        let set = [
            self.history.is_some(),
            self.durability.is_some(),
            self.async_publish,
            self.domain.is_some(),
            self.qos_file.is_some(),
            self.instances > 0,
            self.multicast_ttl.is_some(),
            self.multicast_address.is_some(),
            self.no_positive_acks,
            self.bandwidth_limit > 0,
            self.no_push_on_write,
        ];
        QOS_FLAGS
            .iter()
            .zip(set)
            .filter_map(|(f, on)| on.then_some(*f))
            .collect()
    }

    /// `--qos-file`, checked by [`check_vendor_path`] before a binding
    /// opens it or puts it into a configuration string.
    pub fn vendor_file(&self) -> Result<Option<&str>, BindingError> {
        self.qos_file.as_deref().map(check_vendor_path).transpose()
    }

    /// A configuration with the defaults used by tests.
    pub fn for_test(run_id: &str) -> Self {
        EndpointConfig {
            run_id: run_id.to_string(),
            transport: String::new(),
            reliability: Reliability::Reliable,
            wait: WaitMode::Block,
            receive: ReceiveMode::Thread,
            data_type: DataType::Bytes,
            zero_copy: false,
            max_sample_size: 64 * 1024,
            subscribers: 1,
            publishers: 1,
            batch_bytes: 0,
            multicast: false,
            ipv6: false,
            bind_ip: "127.0.0.1".to_string(),
            socket_buffer: 0,
            send_queue: 0,
            receive_queue: 0,
            reliable_block_timeout_ms: DEFAULT_BLOCK_TIMEOUT.as_millis() as u64,
            history: None,
            durability: None,
            async_publish: false,
            domain: None,
            qos_file: None,
            instances: 0,
            no_positive_acks: false,
            bandwidth_limit: 0,
            no_push_on_write: false,
            multicast_ttl: None,
            multicast_address: None,
            options: Default::default(),
            cancel: CancelToken::new(),
            sample_key: None,
            held_discovery: None,
        }
    }
}

/// The longest `--qos-file` path a binding takes.
pub const MAX_VENDOR_PATH: usize = 4096;

/// A vendor file's path as a binding takes it (`--qos-file`, resolved by
/// the harness: the publisher's absolute path, or a file in an agent's
/// `--qos-dir`): absolute, without `.` or `..` components, at most
/// [`MAX_VENDOR_PATH`] bytes, and without control characters or any of
/// `,<>&"'` (CycloneDDS's configuration is a comma-separated list of file
/// names and XML fragments: a comma or a `<` would start an entry of its
/// own). Refused with a line naming `--qos-file`.
pub fn check_vendor_path(path: &str) -> Result<&str, BindingError> {
    let bad = |why: &str| {
        Err(BindingError::Unsupported(format!(
            "--qos-file {}: {why}",
            path.escape_debug()
        )))
    };
    if !path.starts_with('/') {
        return bad("expected an absolute path");
    }
    if path.len() > MAX_VENDOR_PATH {
        return bad("the path is too long");
    }
    if let Some(c) = path
        .chars()
        .find(|c| c.is_control() || matches!(c, ',' | '<' | '>' | '&' | '"' | '\''))
    {
        return bad(&format!(
            "the path holds {:?}, which a vendor configuration may read as syntax; rename the file or its directory",
            c
        ));
    }
    if path.split('/').any(|part| part == "." || part == "..") {
        return bad("the path holds a . or .. component; give it without");
    }
    Ok(path)
}

/// Where a reader can be reached: an address (`127.0.0.1:40000`, a socket
/// path) or, for middleware with discovery, just the topic name.
pub type Locator = String;

/// One topic's endpoint within a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TopicSpec {
    /// Topic name, unique within the run: the harness names the data
    /// topic `data` (`ping` in a latency test) and subscriber N's echo
    /// topic `echo<N>`.
    pub name: String,
    /// Which reader of the topic this is (0-based; subscriber index).
    pub index: usize,
}

impl TopicSpec {
    /// The topic of a subscriber's echoes (latency), by the harness's naming.
    pub fn is_echo(&self) -> bool {
        self.name.starts_with("echo")
    }

    /// The topic of a latency test's pings, by the harness's naming: one
    /// in flight at a time, each written once the previous one's echo came
    /// back (with `--receive listener`, from the middleware's receive
    /// thread).
    pub fn is_ping(&self) -> bool {
        self.name == "ping"
    }

    /// The name of a run's data topic: `ping` in a latency test, else
    /// `data`.
    pub fn data_name(latency: bool) -> &'static str {
        if latency { "ping" } else { "data" }
    }
}

/// Errors of a binding, each typed so the harness can tell a fault of the
/// peer from a fault of the configuration.
#[derive(Debug, thiserror::Error)]
pub enum BindingError {
    /// The configuration asks for something this binding cannot do; the
    /// message names the option.
    #[error("{0}")]
    Unsupported(String),
    /// The middleware or transport is not installed or not usable here.
    #[error("not available on this machine: {0}")]
    Unavailable(String),
    /// The sample is larger than the binding can carry.
    #[error("sample of {size} bytes exceeds the binding's limit of {limit} bytes")]
    TooLarge {
        /// Requested size.
        size: usize,
        /// Binding's limit.
        limit: usize,
    },
    /// Matching (discovery, connection) did not complete in time.
    #[error("no match within {0:?}: {1}")]
    MatchTimeout(Duration, String),
    /// A reliable writer stayed blocked longer than allowed.
    #[error("writer blocked longer than {0:?} by a reader that does not keep up")]
    WriteTimeout(Duration),
    /// The [`CancelToken`] was set while the call was blocked.
    #[error("cancelled")]
    Cancelled,
    /// The peer closed its end (connection reset, EOF).
    #[error("peer closed the connection")]
    Disconnected,
    /// A received sample is malformed.
    #[error("malformed sample: {0}")]
    Malformed(String),
    /// An operating-system error, with what was being done.
    #[error("{context}: {source}")]
    Io {
        /// What failed.
        context: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// An error reported by the middleware.
    #[error("{0}")]
    Middleware(String),
    /// The kernel or the middleware refused this one send: the sample was
    /// not sent. Under best effort the harness counts it as *rejected* and
    /// goes on; under reliable it ends the run with this message. Carries
    /// no heap data, so counting refusals in the hot loop allocates nothing.
    #[error("{what} refused: {refusal}")]
    Refused {
        /// What was refused (`udp send`).
        what: &'static str,
        /// Why.
        refusal: Refusal,
    },
}

impl BindingError {
    /// `Ok` when a sample of `size` bytes fits a binding's `limit`, else
    /// [`BindingError::TooLarge`].
    #[inline(always)]
    pub fn fits(size: usize, limit: usize) -> Result<(), BindingError> {
        if size > limit {
            Err(BindingError::TooLarge { size, limit })
        } else {
            Ok(())
        }
    }

    /// Wraps an I/O error with context.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        BindingError::Io {
            context: context.into(),
            source,
        }
    }
}

/// The deviation a middleware that batches by its own default records
/// (zenoh's throughput data): no batch size of ours says so, and the
/// report names such series by it.
pub const BATCHED_BY_DEFAULT: &str = "batched";

/// `batched N B` when `cfg` batches samples into packets of N bytes
/// (`--batch`, or the binding's [`Binding::default_batch`]).
pub fn batched(cfg: &EndpointConfig) -> Option<String> {
    (cfg.batch_bytes > 0).then(|| format!("batched {} B", cfg.batch_bytes))
}

/// A middleware or raw transport. One value per side per run.
pub trait Binding: Sized + Send + 'static {
    /// The writer of one topic.
    type Writer: Writer;
    /// The reader of one topic.
    type Reader: Reader;

    /// Static facts: name, version, capabilities and availability.
    fn info() -> BindingInfo;

    /// Checks binding-specific parts of a configuration that
    /// [`Capabilities`] cannot express (an unknown `--opt` key, a transport
    /// combination). The message names the option.
    fn validate(_cfg: &EndpointConfig) -> Result<(), BindingError> {
        Ok(())
    }

    /// The DDS QoS flags ([`QOS_FLAGS`]: `--history`, `--durability`,
    /// `--async`, `--domain`, `--qos-file`, `--instances`, and the
    /// middleware settings `--no-positive-acks` to `--multicast-ttl`) this
    /// binding maps; the harness refuses the others with an error naming
    /// the flag.
    fn qos_flags() -> &'static [&'static str] {
        &[]
    }

    /// Why this binding lacks `flag`, one of [`QOS_FLAGS`] it does not map
    /// or `--batch` without [`Capabilities::batching`], when the generic
    /// refusal ("a DDS QoS which ... does not have") would
    /// hide the reason (the middleware has no such setting).
    fn why_not(_flag: &str) -> Option<&'static str> {
        None
    }

    /// How long a reliable writer may block on a full queue when
    /// `--max-blocking-time` is not given: the middleware's own default
    /// where it has one, else [`DEFAULT_BLOCK_TIMEOUT`].
    fn default_block_timeout() -> Duration {
        DEFAULT_BLOCK_TIMEOUT
    }

    /// `--batch` when not given, for a run of `test` over `cfg`: the
    /// batching the middleware's own tool uses for that test (0: none).
    fn default_batch(_test: crate::result::TestKind, _cfg: &EndpointConfig) -> usize {
        0
    }

    /// `--transport` when not given (and both sides are this binding): the
    /// transport the middleware's own tool runs over by default; with
    /// `multicast`, one that carries multicast. By default the first of
    /// [`Capabilities::transports`].
    fn default_transport(_multicast: bool) -> &'static str {
        Self::info().capabilities.transports[0]
    }

    /// `--wait` when not given, for a run of `test`: how the middleware's
    /// own benchmark waits for that test (iceoryx2's and iceoryx's busy-poll).
    fn default_wait(_test: crate::result::TestKind) -> WaitMode {
        WaitMode::Block
    }

    /// `--zero-copy` when not given, for a run of `test`: true where the
    /// middleware's own benchmark loans its samples for that test.
    fn default_zero_copy(_test: crate::result::TestKind) -> bool {
        false
    }

    /// What a run of `test` over `cfg` sets differently from the
    /// middleware's own defaults (what its vendor's tool sets for that test,
    /// and what flags asked), one short phrase each with its value
    /// (`express`, `batched 14720 B`). The harness records them in the
    /// result's config as `deviations`; the run banner, the quick table and
    /// `history` print them. By default: [`batched`], the one a binding
    /// without settings of its own has.
    fn deviations(_test: crate::result::TestKind, cfg: &EndpointConfig) -> Vec<String> {
        batched(cfg).into_iter().collect()
    }

    /// True when one reader accepts samples from several writers in
    /// different processes (`--publishers M`). Readers tell publishers apart
    /// by the publisher id in the sample header.
    fn multiple_publishers() -> bool {
        false
    }

    /// The standard wire protocol this binding speaks with other vendors'
    /// bindings (RTPS for the DDS bindings), if any: bindings that speak
    /// the same one meet in one run (`--peer-binding`, a topology's nodes).
    fn wire_protocol() -> Option<WireProtocol> {
        None
    }

    /// True when, with both sides on this host over `transport`, the
    /// binding runs on this host's own address rather than a loopback one:
    /// it sends to a destination given with each send (an unconnected UDP
    /// socket), which costs 6-8 µs more a round trip to an address on `lo`
    /// on the machines we measured (CycloneDDS; docs/bindings/cyclonedds.md).
    /// The planner then gives both sides that address, with `--opt peers=`
    /// for discovery, when the user named neither.
    fn prefers_host_address(_transport: &str) -> bool {
        false
    }

    /// True when [`Binding::now_ns`] is a virtual clock (only the `mock`
    /// binding's). The harness then keeps what must follow real time (peer
    /// silence, the echo timeout, the end-of-run drain, heartbeats) on
    /// [`crate::clock::now_ns`]; with a real clock both are the same reading.
    const VIRTUAL_CLOCK: bool = false;

    /// The clock of this binding's measurements: every sample timestamp,
    /// receive time, warm-up, duration and pacing deadline of a run comes
    /// from here. Every real binding uses `CLOCK_MONOTONIC`
    /// ([`crate::clock::now_ns`]); the `mock` binding a virtual clock that
    /// only its own sends advance, so that tests know exact answers.
    #[inline(always)]
    fn now_ns() -> u64 {
        crate::clock::now_ns()
    }

    /// Waits until `deadline_ns` of [`Binding::now_ns`] (`--rate` pacing).
    #[inline]
    fn wait_until(deadline_ns: u64) {
        crate::clock::wait_until(deadline_ns)
    }

    /// Starts, in the calling process, what this binding's processes on
    /// one host share and what must outlive them (iceoryx's RouDi): called
    /// once by a process that starts several sides at once without opening
    /// the binding itself (a topology's orchestrator), before any side
    /// opens. By default there is nothing to start.
    fn host_services(_cfg: &EndpointConfig) -> Result<(), BindingError> {
        Ok(())
    }

    /// Opens this side of a run (participant, session, socket factory).
    fn open(cfg: &EndpointConfig) -> Result<Self, BindingError>;

    /// Creates a reader and returns where writers reach it.
    fn create_reader(&mut self, topic: &TopicSpec)
    -> Result<(Self::Reader, Locator), BindingError>;

    /// Creates a writer that delivers to every reader in `readers`.
    fn create_writer(
        &mut self,
        topic: &TopicSpec,
        readers: &[Locator],
    ) -> Result<Self::Writer, BindingError>;
}

/// Sends samples of one topic.
pub trait Writer: Send + 'static {
    /// Blocks until `readers` readers are matched (connected, discovered),
    /// or `timeout`, or cancellation.
    fn wait_matched(&mut self, readers: usize, timeout: Duration) -> Result<(), BindingError>;

    /// Sends one sample of `len` bytes: `fill` writes it in place into a
    /// buffer of exactly `len` bytes (scratch or loaned), then the binding
    /// sends it. Under best effort a sample dropped on the way is silent
    /// (the reader sees a sequence gap); a send the kernel or the middleware
    /// refuses where the API says so (a firewall's `EPERM`, `ENOBUFS`,
    /// `EAGAIN`, a full writer queue) returns [`BindingError::Refused`] and
    /// the harness counts it as rejected. Under reliable the call blocks on
    /// a full queue, at most for the configured timeout.
    fn send<F: FnOnce(&mut [u8])>(&mut self, len: usize, fill: F) -> Result<(), BindingError>;

    /// Sends `bytes`, a sample a reader just delivered, back unchanged
    /// (the subscriber's echo of a ping) straight from the caller's memory
    /// where the binding can (a socket writes from it), or returns `None`
    /// and the caller builds the sample with [`Writer::send`]. The bytes
    /// just received are still in the cache, while the binding's own send
    /// buffer was last written a round trip ago: at 1 MiB over tcp the
    /// kernel's copy from it cost tens of microseconds. The vendors' echo
    /// servers answer from their receive buffer too (sockperf, ddsperf).
    /// `Some` has the effect of `send(bytes.len(), |b|
    /// b.copy_from_slice(bytes))`; `None` has none (nothing sent, no
    /// instance key used up).
    #[inline(always)]
    fn send_from(&mut self, _bytes: &[u8]) -> Option<Result<(), BindingError>> {
        None
    }

    /// Pushes out anything batched.
    fn flush(&mut self) -> Result<(), BindingError> {
        Ok(())
    }
}

/// `--instances N`: the key of each sample a writer sends, round-robin over
/// 0..N (always 0 without instances).
#[derive(Debug, Clone)]
pub struct InstanceKeys {
    next: u32,
    count: u32,
}

impl InstanceKeys {
    /// Keys over `instances` instances (0: unkeyed, every key 0).
    pub fn new(instances: u32) -> InstanceKeys {
        InstanceKeys {
            next: 0,
            count: instances.max(1),
        }
    }

    /// The key of the next sample.
    #[inline(always)]
    pub fn next_key(&mut self) -> u32 {
        let id = self.next;
        self.next += 1;
        if self.next == self.count {
            self.next = 0;
        }
        id
    }
}

/// Receives samples of one topic.
pub trait Reader: Send + 'static {
    /// Blocks until the reader is matched with its writer(s), or `timeout`.
    fn wait_matched(&mut self, _timeout: Duration) -> Result<(), BindingError> {
        Ok(())
    }

    /// Waits up to `timeout` for samples and calls `on_sample` with a
    /// borrowed view of each one available (one or more with batching): a
    /// [`Received`], in one piece or in the middleware's pieces, of which
    /// only the head is contiguous.
    /// Returns how many were delivered, as soon as it delivered (the
    /// subscriber times the last sample of a call by its return); 0 means
    /// the timeout passed. Honors the configured [`WaitMode`].
    fn recv<F: FnMut(Received<'_>)>(
        &mut self,
        timeout: Duration,
        on_sample: &mut F,
    ) -> Result<usize, BindingError>;

    /// Receives for the subscriber's loop, which needs no early return:
    /// like [`Reader::recv`], but with `--receive listener` a binding calls
    /// `on_sample` on the middleware's own receive thread while this call
    /// sleeps, and returns when `window` has passed (or on cancel) with how
    /// many samples that delivered. Only the subscriber's loop calls it; a
    /// publisher waiting for its echo calls [`Reader::recv_on_arrival`].
    fn recv_window<F: FnMut(Received<'_>) + Send>(
        &mut self,
        window: Duration,
        on_sample: &mut F,
    ) -> Result<usize, BindingError> {
        self.recv(window, on_sample)
    }

    /// Receives for the latency publisher waiting for its echo: like
    /// [`Reader::recv`] (returns after the first delivery, or `timeout`),
    /// but with `--receive listener` a binding calls `on_sample` on the
    /// middleware's own receive thread as the sample arrives, and wakes
    /// this call afterwards. A clock read in `on_sample` then times the
    /// arrival, as the vendors' ping programs do (they answer in the
    /// listener), not this thread's wake-up after it.
    fn recv_on_arrival<F: FnMut(Received<'_>) + Send>(
        &mut self,
        timeout: Duration,
        on_sample: &mut F,
    ) -> Result<usize, BindingError> {
        self.recv(timeout, on_sample)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vendor_paths_are_absolute_and_free_of_syntax() {
        for good in ["/etc/x.xml", "/home/a b/c-1_d.xml", "/tmp/ü.xml"] {
            assert_eq!(check_vendor_path(good).unwrap(), good);
        }
        let attack = "/dev/null,<Tracing><OutputFile>/some/file</OutputFile><Category>config</Category></Tracing><Discovery><Tag>x&#10;LINE&#10;y</Tag></Discovery>";
        for bad in [
            "x.xml",
            "",
            attack,
            "/a,b.xml",
            "/a<b.xml",
            "/a\nb.xml",
            "/a/../b.xml",
            "/a/./b.xml",
            "/a\"b.xml",
        ] {
            let e = check_vendor_path(bad).unwrap_err().to_string();
            assert!(e.starts_with("--qos-file ") && !e.contains('\n'), "{e}");
        }
        let long = format!("/{}", "a".repeat(MAX_VENDOR_PATH));
        assert!(check_vendor_path(&long).is_err());
        let mut c = EndpointConfig::for_test("v");
        assert_eq!(c.vendor_file().unwrap(), None);
        c.qos_file = Some(attack.into());
        assert!(c.vendor_file().is_err());
    }

    #[test]
    fn instance_keys_go_round_robin_and_stay_0_unkeyed() {
        let mut k = InstanceKeys::new(3);
        let got: Vec<u32> = (0..7).map(|_| k.next_key()).collect();
        assert_eq!(got, [0, 1, 2, 0, 1, 2, 0]);
        let mut u = InstanceKeys::new(0);
        assert!((0..5).all(|_| u.next_key() == 0));
    }

    /// The knobs are serialized only when set: a run without them has the
    /// config of earlier versions, so `compare` still matches the two.
    #[test]
    fn knobs_appear_in_the_config_only_when_set() {
        let plain = serde_json::to_value(EndpointConfig::for_test("k")).unwrap();
        for key in [
            "no_positive_acks",
            "bandwidth_limit",
            "no_push_on_write",
            "multicast_ttl",
            "multicast_address",
        ] {
            assert!(plain.get(key).is_none(), "{key}");
        }
        let mut c = EndpointConfig::for_test("k");
        c.no_positive_acks = true;
        c.bandwidth_limit = 5;
        c.multicast_ttl = Some(2);
        c.multicast_address = Some("239.1.2.3".into());
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v["multicast_address"], "239.1.2.3");
        assert_eq!(
            (
                &v["no_positive_acks"],
                &v["bandwidth_limit"],
                &v["multicast_ttl"]
            ),
            (&true.into(), &5.into(), &2.into())
        );
        let back: EndpointConfig = serde_json::from_value(plain).unwrap();
        assert_eq!(
            back.qos_flags_set(),
            Vec::<&str>::new(),
            "no knob set after a round trip"
        );
        let back: EndpointConfig = serde_json::from_value(v).unwrap();
        assert_eq!(
            back.qos_flags_set(),
            [
                "--multicast-ttl",
                "--multicast-address",
                "--no-positive-acks",
                "--bandwidth-limit"
            ]
        );
    }
}
