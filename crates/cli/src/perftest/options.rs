//! RTI Perftest 4.x's command line: the one table of its options, each
//! mapped to a pubsubperf setting, accepted as a no-op (only where it is
//! meaningless here, with the reason) or refused with the reason. The
//! parser reads a Perftest command line through this table into an
//! [`Invocation`]; docs/perftest.md's option table is generated from it (a
//! test keeps them equal).

use crate::plan::{TestRequest, UsageError};
use pubsubperf_core::size::parse_size;

/// `-pub` or `-sub` (Perftest's default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Pub,
    Sub,
}

/// `-outputFormat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Csv,
    Json,
    Legacy,
}

/// The middleware when `-middleware` is not given.
pub const DEFAULT_MIDDLEWARE: &str = "cyclonedds";

/// Perftest 2.x's `-scan` sizes, used when `-scan` has no list.
pub const SCAN_SIZES: &[usize] = &[
    32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 63000,
];

/// A Perftest command line, read: the test as a [`TestRequest`] plus what
/// only the front end uses (role, output, peers).
#[derive(Debug, Clone)]
pub struct Invocation {
    pub role: Role,
    pub latency_test: bool,
    pub request: TestRequest,
    /// `-middleware` as given (None: the default, or `udp`/`shm` for `-raw`).
    pub middleware: Option<String>,
    /// `-transport` as given (Perftest's name).
    pub transport: Option<String>,
    pub raw: bool,
    pub format: Format,
    pub headers: bool,
    pub intervals: bool,
    pub cpu: bool,
    pub output_file: Option<std::path::PathBuf>,
    /// `-peer` addresses, as given.
    pub peers: Vec<String>,
    /// `-dataLen` (bytes).
    pub data_len: Option<usize>,
    /// `-scan` sizes.
    pub scan: Option<Vec<usize>>,
    pub latency_count: Option<u64>,
    /// `-sendBufferSize` / `-receiveBufferSize` (bytes).
    pub buffers: (Option<usize>, Option<usize>),
    /// Perftest flags applied, with the pubsubperf flag each set: an error
    /// of the plan naming our flag is reported under the Perftest one.
    pub applied: Vec<(&'static str, &'static str)>,
    /// `-help`: print the option table instead of running.
    pub help: bool,
}

impl Default for Invocation {
    fn default() -> Self {
        Invocation {
            role: Role::Sub,
            latency_test: false,
            request: TestRequest::default(),
            middleware: None,
            transport: None,
            raw: false,
            format: Format::Csv,
            headers: true,
            intervals: true,
            cpu: false,
            output_file: None,
            peers: Vec::new(),
            data_len: None,
            scan: None,
            latency_count: None,
            buffers: (None, None),
            applied: Vec::new(),
            help: false,
        }
    }
}

/// Whether an option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    None,
    /// A value, shown as in Perftest's help (`<bytes>`).
    Value(&'static str),
    /// An optional value (taken when the next word does not start with `-`).
    Optional(&'static str),
}

type Apply = fn(&mut Invocation, Option<&str>) -> Result<(), UsageError>;

/// What an option does here.
#[derive(Clone, Copy)]
pub enum How {
    /// Applied: what it becomes in pubsubperf's terms, how, and a note.
    Map {
        ours: &'static str,
        apply: Apply,
        note: &'static str,
    },
    /// Accepted and without effect, because it is meaningless here (why).
    NoOp(&'static str),
    /// Refused (exit 2), with why and what to use instead.
    Refuse(&'static str),
}

/// One Perftest option.
#[derive(Clone, Copy)]
pub struct Opt {
    /// As Perftest's documentation spells it.
    pub name: &'static str,
    pub arg: Arg,
    pub how: How,
}

const fn map(
    name: &'static str,
    arg: Arg,
    ours: &'static str,
    apply: Apply,
    note: &'static str,
) -> Opt {
    Opt {
        name,
        arg,
        how: How::Map { ours, apply, note },
    }
}

const fn noop(name: &'static str, arg: Arg, why: &'static str) -> Opt {
    Opt {
        name,
        arg,
        how: How::NoOp(why),
    }
}

const fn refuse(name: &'static str, arg: Arg, why: &'static str) -> Opt {
    Opt {
        name,
        arg,
        how: How::Refuse(why),
    }
}

const N: Arg = Arg::None;
const CONNEXT: &str = "a Connext feature with no counterpart in the measured middleware";

/// Every option of Perftest 4.x's C++ front end (its documentation's
/// command-line page and its parameter manager), plus `-scan` and
/// `-showCpu` of Perftest 2.x/3.x and our `-middleware`.
pub const OPTIONS: &[Opt] = &[
    // Ours.
    map(
        "-middleware",
        Arg::Value("<name>"),
        "`--binding NAME`",
        set_middleware,
        "ours: the middleware to measure (default cyclonedds; `pubsubperf bindings` lists them)",
    ),
    map(
        "-help",
        N,
        "(this table)",
        |i, _| {
            i.help = true;
            Ok(())
        },
        "prints this table",
    ),
    // Roles and test kind.
    map(
        "-pub",
        N,
        "`pubsubperf latency|throughput`",
        |i, _| {
            i.role = Role::Pub;
            Ok(())
        },
        "runs the test; with no `-peer` it starts its subscriber itself unless a `-sub` waits on this host",
    ),
    map(
        "-sub",
        N,
        "`pubsubperf sub --listen`",
        |i, _| {
            i.role = Role::Sub;
            Ok(())
        },
        "Perftest's default: serves one run of a `-pub`, which sends every test setting",
    ),
    map(
        "-latencyTest",
        N,
        "`pubsubperf latency`",
        |i, _| {
            i.latency_test = true;
            Ok(())
        },
        "ping-pong; one-way latency = round trip / 2, as Perftest",
    ),
    map(
        "-dataLen",
        Arg::Value("<bytes>"),
        "`--size N`",
        set_data_len,
        "",
    ),
    map(
        "-scan",
        Arg::Optional("<size>:<size>:..."),
        "`--size A,B,...`",
        set_scan,
        "Perftest 2.x: one run per size; without a list 32 B to 63000 B",
    ),
    map(
        "-executionTime",
        Arg::Value("<sec>"),
        "`--duration S`",
        set_duration,
        "without it and `-numIter`, pubsubperf's default duration (5 s)",
    ),
    map(
        "-numIter",
        Arg::Value("<count>"),
        "`--count N`",
        |i, v| set(i, "-numIter", "count", v),
        "",
    ),
    map(
        "-latencyCount",
        Arg::Value("<count>"),
        "`--latency-every N`",
        set_latency_count,
        "throughput tests; in a latency test only 1 (every sample is a ping)",
    ),
    map(
        "-pubRate",
        Arg::Value("<samples/s>:<method>"),
        "`--rate N`",
        set_pub_rate,
        "method `spin` (the default; pubsubperf's pacing spins); `sleep` is refused",
    ),
    refuse(
        "-pubRatebps",
        Arg::Value("<bps>:<method>"),
        "give the rate in samples per second with -pubRate",
    ),
    refuse(
        "-sleep",
        Arg::Value("<millisec>"),
        "sleeping between sends is not implemented; pace with -pubRate",
    ),
    refuse(
        "-spin",
        Arg::Value("<count>"),
        "pace with -pubRate (its pacing spins)",
    ),
    map(
        "-numSubscribers",
        Arg::Value("<count>"),
        "`--subscribers N`",
        |i, v| set(i, "-numSubscribers", "subscribers", v),
        "with `-peer`, the peers are the subscribers",
    ),
    map(
        "-numPublishers",
        Arg::Value("<count>"),
        "`--publishers N`",
        |i, v| set(i, "-numPublishers", "publishers", v),
        "",
    ),
    noop(
        "-sidMultiSubTest",
        Arg::Value("<id>"),
        "pubsubperf numbers each subscriber itself",
    ),
    noop(
        "-pidMultiPubTest",
        Arg::Value("<id>"),
        "pubsubperf numbers each publisher itself",
    ),
    refuse(
        "-initialBurstSize",
        Arg::Value("<samples>"),
        "pubsubperf warms up for --warmup (1 s) instead of a burst",
    ),
    // Output.
    map(
        "-outputFormat",
        Arg::Value("<format>"),
        "(Perftest's formats)",
        set_format,
        "`csv` (default), `json` or `legacy`",
    ),
    map(
        "-noPrintIntervals",
        N,
        "`--quiet`",
        |i, _| {
            i.intervals = false;
            Ok(())
        },
        "summaries only; `-noPrint` is its prefix",
    ),
    map(
        "-noOutputHeaders",
        N,
        "(Perftest's formats)",
        |i, _| {
            i.headers = false;
            Ok(())
        },
        "",
    ),
    map(
        "-outputFile",
        Arg::Value("<file>"),
        "(Perftest's formats)",
        |i, v| {
            i.output_file = v.map(Into::into);
            Ok(())
        },
        "appends to the file, as Perftest",
    ),
    map(
        "-cpu",
        N,
        "(always measured)",
        |i, _| {
            i.cpu = true;
            Ok(())
        },
        "adds the CPU column",
    ),
    map(
        "-showCpu",
        N,
        "(always measured)",
        |i, _| {
            i.cpu = true;
            Ok(())
        },
        "older name of `-cpu`",
    ),
    noop(
        "-verbosity",
        Arg::Value("<level>"),
        "Connext's log verbosity; pubsubperf logs only errors",
    ),
    refuse(
        "-latencyFile",
        Arg::Value("<filename>"),
        "every latency is in the histogram of --json FILE",
    ),
    refuse("-writerStats", N, CONNEXT),
    refuse(
        "-showSerializationTime",
        N,
        "serialization is not timed apart",
    ),
    refuse(
        "-lowResolutionClock",
        N,
        "pubsubperf times each ping with a nanosecond clock (docs/method.md)",
    ),
    refuse("-showResourceLimits", N, CONNEXT),
    refuse("-cacheStats", N, CONNEXT),
    // Reliability, queues, batching.
    map(
        "-bestEffort",
        N,
        "`--best-effort`",
        |i, v| set(i, "-bestEffort", "best-effort", v),
        "Perftest's default is reliable: so is this front end's, where the middleware has it",
    ),
    map(
        "-batchSize",
        Arg::Value("<bytes>"),
        "`--batch BYTES`",
        set_batch,
        "0 = no batching (pubsubperf's default; Perftest batches throughput tests by default)",
    ),
    refuse("-enableAutoThrottle", N, CONNEXT),
    refuse("-enableTurboMode", N, CONNEXT),
    map(
        "-sendQueueSize",
        Arg::Value("<number>"),
        "`--send-queue N`",
        |i, v| set(i, "-sendQueueSize", "send-queue", v),
        "refused by middleware without a send queue to size",
    ),
    map(
        "-receiveQueueSize",
        Arg::Value("<number>"),
        "`--receive-queue N`",
        |i, v| set(i, "-receiveQueueSize", "receive-queue", v),
        "refused by middleware without a receive queue to size",
    ),
    map(
        "-sendBufferSize",
        Arg::Value("<number>"),
        "`--socket-buffer BYTES`",
        |i, v| set_buffer(i, v, 0),
        "one size for both socket buffers: with `-receiveBufferSize` it must be equal",
    ),
    map(
        "-receiveBufferSize",
        Arg::Value("<number>"),
        "`--socket-buffer BYTES`",
        |i, v| set_buffer(i, v, 1),
        "as `-sendBufferSize`",
    ),
    map(
        "-durability",
        Arg::Value("<0|1|2|3>"),
        "`--durability`",
        set_durability,
        "0 volatile, 1 transient-local; 2 and 3 (transient, persistent) are refused",
    ),
    refuse(
        "-noPositiveAcks",
        N,
        "disabling positive acks is not implemented",
    ),
    refuse(
        "-keepDurationUsec",
        Arg::Value("<usec>"),
        "needs -noPositiveAcks",
    ),
    refuse("-noDirectCommunication", N, CONNEXT),
    map(
        "-asynchronous",
        N,
        "`--async`",
        |i, v| set(i, "-asynchronous", "async", v),
        "",
    ),
    map(
        "-flowController",
        Arg::Value("<flow>"),
        "(none)",
        set_flow_controller,
        "`default` only (no flow control); others are refused: flow controllers are not implemented",
    ),
    map(
        "-keyed",
        N,
        "`--instances 1`",
        set_keyed,
        "a keyed type; `-instances` sets how many keys",
    ),
    map(
        "-instances",
        Arg::Value("<count>"),
        "`--instances N`",
        |i, v| set(i, "-instances", "instances", v),
        "",
    ),
    refuse("-instanceHashBuckets", Arg::Value("<count>"), CONNEXT),
    refuse(
        "-writeInstance",
        Arg::Value("<instance>"),
        "samples cycle through every instance",
    ),
    refuse(
        "-cft",
        Arg::Value("<start>:<end>"),
        "content-filtered topics are not measured",
    ),
    map(
        "-qosFile",
        Arg::Value("<filename>"),
        "`--qos-file FILE`",
        |i, v| set(i, "-qosFile", "qos-file", v),
        "a file in the middleware's own format (Connext's XML fits Connext only)",
    ),
    refuse(
        "-qosLibrary",
        Arg::Value("<lib name>"),
        "pass the whole file with -qosFile",
    ),
    noop("-noXmlQos", N, "pubsubperf always sets QoS in code"),
    refuse(
        "-useReadThread",
        N,
        "pubsubperf's subscriber waits in its own loop; choose --wait block|busy",
    ),
    refuse("-waitsetDelayUsec", Arg::Value("<usec>"), CONNEXT),
    refuse("-waitsetEventCount", Arg::Value("<count>"), CONNEXT),
    refuse("-messageSizeMax", Arg::Value("<bytes>"), CONNEXT),
    refuse(
        "-threadPriorities",
        Arg::Value("<X:Y:Z>"),
        "use pubsubperf latency|throughput --rt-priority",
    ),
    refuse(
        "-threadCPUAffinity",
        Arg::Value("<A:B:C:D>"),
        "use pubsubperf latency|throughput --cpu PUB,SUB",
    ),
    // Data.
    map(
        "-flatData",
        N,
        "`--data-type flat`",
        |i, _| set(i, "-flatData", "data-type", Some("flat")),
        "",
    ),
    map(
        "-zeroCopy",
        N,
        "`--zero-copy --data-type flat`",
        |i, v| set(i, "-zeroCopy", "zero-copy", v),
        "FlatData too, as Perftest",
    ),
    refuse("-loaningSendReceive", N, "loans are what -zeroCopy uses"),
    map(
        "-checkConsistency",
        N,
        "`--check`",
        |i, v| set(i, "-checkConsistency", "check", v),
        "",
    ),
    refuse(
        "-dynamicData",
        N,
        "pubsubperf's types are generated in code",
    ),
    refuse(
        "-unbounded",
        Arg::Optional("<allocation_threshold>"),
        "each middleware's size limit is fixed (pubsubperf bindings)",
    ),
    refuse("-preallocateFragmentedSamples", N, CONNEXT),
    refuse(
        "-loadDataFromFile",
        Arg::Value("<path>"),
        "payloads are generated",
    ),
    refuse(
        "-maximumAllocableBufferSize",
        Arg::Value("<bytes>"),
        CONNEXT,
    ),
    refuse("-crc", N, "use -checkConsistency"),
    refuse("-crcKind", Arg::Value("<value>"), "use -checkConsistency"),
    refuse("-enable-message-length", N, CONNEXT),
    refuse(
        "-compressionId",
        Arg::Value("<kind>"),
        "compression is not measured",
    ),
    refuse(
        "-compressionLevel",
        Arg::Value("<level>"),
        "compression is not measured",
    ),
    refuse(
        "-compressionThreshold",
        Arg::Value("<threshold>"),
        "compression is not measured",
    ),
    refuse("-enableInstanceStateRecovery", N, CONNEXT),
    refuse("-enableMonitoring2", N, CONNEXT),
    refuse("-collectorPeer", Arg::Value("<address>"), CONNEXT),
    refuse("-networkCapture", N, CONNEXT),
    refuse("-doNotDropNetworkCapture", N, CONNEXT),
    // Transport and network.
    map(
        "-transport",
        Arg::Value("<kind>"),
        "`--transport`",
        set_transport,
        "`UDPv4` udp, `UDPv6` udp + `--ipv6`, `SHMEM` shm, `TCP` tcp; TLS, DTLS and WAN kinds are refused",
    ),
    map(
        "-rawTransport",
        N,
        "`--binding udp|shm`",
        |i, _| {
            i.raw = true;
            Ok(())
        },
        "sockets without middleware: udp, or shm with `-transport SHMEM`",
    ),
    map(
        "-nic",
        Arg::Value("<ipaddr/name>"),
        "`--data-address`",
        |i, v| set(i, "-nic", "data-address", v),
        "on `-sub` the address this host's endpoints use",
    ),
    map(
        "-allowInterfaces",
        Arg::Value("<ipaddr>"),
        "`--data-address`",
        |i, v| set(i, "-allowInterfaces", "data-address", v),
        "as `-nic`",
    ),
    map(
        "-peer",
        Arg::Value("<address>"),
        "`--connect ADDR:7400`",
        set_peer,
        "on `-pub`: a `-sub` host (repeat for several); on `-sub` no effect (the publisher connects)",
    ),
    map(
        "-multicast",
        N,
        "`--multicast`",
        |i, v| set(i, "-multicast", "multicast", v),
        "",
    ),
    refuse(
        "-multicastAddr",
        Arg::Value("<address>"),
        "groups are derived per run; use -multicast",
    ),
    noop(
        "-transportVerbosity",
        Arg::Value("<level>"),
        "Connext's transport logging; pubsubperf logs only errors",
    ),
    refuse(
        "-transportServerBindPort",
        Arg::Value("<p>"),
        "TCP ports are chosen per run",
    ),
    refuse("-transportWan", N, CONNEXT),
    refuse("-transportPublicAddress", Arg::Value("<ip>"), CONNEXT),
    refuse("-transportHostPort", Arg::Value("<port>"), CONNEXT),
    refuse("-transportWanServerAddress", Arg::Value("<a>"), CONNEXT),
    refuse("-transportWanServerPort", Arg::Value("<p>"), CONNEXT),
    refuse("-transportWanId", Arg::Value("<id>"), CONNEXT),
    refuse("-transportSecureWan", N, CONNEXT),
    refuse(
        "-transportCertAuthority",
        Arg::Value("<file>"),
        "TLS transports are not measured",
    ),
    refuse(
        "-transportCertFile",
        Arg::Value("<file>"),
        "TLS transports are not measured",
    ),
    refuse(
        "-transportPrivateKey",
        Arg::Value("<file>"),
        "TLS transports are not measured",
    ),
    refuse(
        "-noBlockingSockets",
        N,
        "raw sockets block; choose --wait busy for polling",
    ),
    refuse("-fastQueue", N, CONNEXT),
    map(
        "-domain",
        Arg::Value("<id>"),
        "`--domain N`",
        |i, v| set(i, "-domain", "domain", v),
        "by default each run has its own",
    ),
    // Security.
    refuse(
        "-secureGovernanceFile",
        Arg::Value("<file>"),
        "DDS Security is not measured",
    ),
    refuse(
        "-securePermissionsFile",
        Arg::Value("<file>"),
        "DDS Security is not measured",
    ),
    refuse(
        "-secureCertAuthority",
        Arg::Value("<file>"),
        "DDS Security is not measured",
    ),
    refuse(
        "-secureCertFile",
        Arg::Value("<file>"),
        "DDS Security is not measured",
    ),
    refuse(
        "-securePrivateKey",
        Arg::Value("<file>"),
        "DDS Security is not measured",
    ),
    refuse(
        "-secureEncryptionAlgorithm",
        Arg::Value("<value>"),
        "DDS Security is not measured",
    ),
    refuse("-secureEnableAAD", N, "DDS Security is not measured"),
    refuse(
        "-secureLibrary",
        Arg::Value("<file>"),
        "DDS Security is not measured",
    ),
    refuse(
        "-secureDebug",
        Arg::Value("<level>"),
        "DDS Security is not measured",
    ),
    refuse("-lightWeightSecurity", N, "DDS Security is not measured"),
    refuse(
        "-securePSK",
        Arg::Value("<seed>"),
        "DDS Security is not measured",
    ),
    refuse(
        "-securePSKAlgorithm",
        Arg::Value("<seed>"),
        "DDS Security is not measured",
    ),
    refuse(
        "-secureRtpsHmacOnly",
        Arg::Value("<seed>"),
        "DDS Security is not measured",
    ),
];

/// The option a word names: an exact name, else the one option it is a
/// prefix of, case-insensitively (as Perftest matches). A prefix of several
/// is refused, naming them.
pub fn lookup(word: &str) -> Result<&'static Opt, UsageError> {
    let w = word.to_ascii_lowercase();
    let w = w
        .strip_prefix('-')
        .map(|r| format!("-{}", r.trim_start_matches('-')))
        .unwrap_or(w);
    if let Some(o) = OPTIONS.iter().find(|o| o.name.eq_ignore_ascii_case(&w)) {
        return Ok(o);
    }
    let hits: Vec<&Opt> = OPTIONS
        .iter()
        .filter(|o| w.len() > 1 && o.name.to_ascii_lowercase().starts_with(&w))
        .collect();
    match hits.as_slice() {
        [o] => Ok(o),
        [] => Err(UsageError(format!(
            "{word}: not an RTI Perftest option (docs/perftest.md lists them)"
        ))),
        many => Err(UsageError(format!(
            "{word}: ambiguous, could be {}; write more of it",
            many.iter().map(|o| o.name).collect::<Vec<_>>().join(", ")
        ))),
    }
}

/// Reads a Perftest command line (the words after `perftest`).
pub fn parse(args: &[String]) -> Result<Invocation, UsageError> {
    let mut inv = Invocation::default();
    let mut i = 0;
    while i < args.len() {
        let word = &args[i];
        if !word.starts_with('-') {
            return Err(UsageError(format!(
                "'{word}': expected an option (Perftest's start with '-')"
            )));
        }
        let opt = lookup(word)?;
        let next = args
            .get(i + 1)
            .filter(|n| !is_option(n))
            .map(String::as_str);
        let value = match opt.arg {
            Arg::None => None,
            Arg::Value(what) => {
                Some(next.ok_or_else(|| UsageError(format!("{}: needs a value {what}", opt.name)))?)
            }
            Arg::Optional(_) => next,
        };
        i += 1 + usize::from(value.is_some());
        match opt.how {
            How::Map { apply, .. } => apply(&mut inv, value)?,
            How::NoOp(_) => {}
            How::Refuse(why) => {
                return Err(UsageError(format!("{}: not supported: {why}", opt.name)));
            }
        }
    }
    Ok(inv)
}

/// A word that is an option, not a value (a negative number is a value).
fn is_option(w: &str) -> bool {
    w.starts_with('-') && !w[1..].starts_with(|c: char| c.is_ascii_digit())
}

/// Sets a pubsubperf setting for a Perftest flag, remembering which.
fn set(
    inv: &mut Invocation,
    pf: &'static str,
    ours: &'static str,
    v: Option<&str>,
) -> Result<(), UsageError> {
    inv.request
        .set(ours, v)
        .map_err(|e| UsageError(format!("{pf}: {}", e.0)))?;
    inv.applied.push((pf, ours));
    Ok(())
}

fn number<T: std::str::FromStr>(pf: &str, v: Option<&str>) -> Result<T, UsageError> {
    let v = v.unwrap_or_default();
    v.parse()
        .map_err(|_| UsageError(format!("{pf} '{v}': not a valid number")))
}

fn set_middleware(inv: &mut Invocation, v: Option<&str>) -> Result<(), UsageError> {
    inv.middleware = v.map(String::from);
    Ok(())
}

fn set_data_len(inv: &mut Invocation, v: Option<&str>) -> Result<(), UsageError> {
    let s = v.unwrap_or_default();
    inv.data_len = Some(parse_size(s).map_err(|e| UsageError(format!("-dataLen: {e}")))?);
    Ok(())
}

fn set_scan(inv: &mut Invocation, v: Option<&str>) -> Result<(), UsageError> {
    inv.scan = Some(match v {
        None => SCAN_SIZES.to_vec(),
        Some(list) => list
            .split(':')
            .map(|s| parse_size(s).map_err(|e| UsageError(format!("-scan '{list}': {e}"))))
            .collect::<Result<_, _>>()?,
    });
    Ok(())
}

fn set_duration(inv: &mut Invocation, v: Option<&str>) -> Result<(), UsageError> {
    let secs: u64 = number("-executionTime", v)?;
    set(inv, "-executionTime", "duration", Some(&format!("{secs}s")))
}

fn set_latency_count(inv: &mut Invocation, v: Option<&str>) -> Result<(), UsageError> {
    let n: u64 = number("-latencyCount", v)?;
    if n == 0 {
        return Err(UsageError("-latencyCount 0: must be at least 1".into()));
    }
    inv.latency_count = Some(n);
    Ok(())
}

fn set_pub_rate(inv: &mut Invocation, v: Option<&str>) -> Result<(), UsageError> {
    let s = v.unwrap_or_default();
    let (rate, method) = s.split_once(':').unwrap_or((s, "spin"));
    if !method.eq_ignore_ascii_case("spin") {
        return Err(UsageError(format!(
            "-pubRate {s}: method '{method}' not supported: pubsubperf's pacing spins (use {rate}:spin)"
        )));
    }
    let n: u64 = number("-pubRate", Some(rate))?;
    set(inv, "-pubRate", "rate", Some(&n.to_string()))
}

fn set_format(inv: &mut Invocation, v: Option<&str>) -> Result<(), UsageError> {
    inv.format = match v.unwrap_or_default().to_ascii_lowercase().as_str() {
        "csv" => Format::Csv,
        "json" => Format::Json,
        "legacy" => Format::Legacy,
        other => {
            return Err(UsageError(format!(
                "-outputFormat '{other}': expected csv, json or legacy"
            )));
        }
    };
    Ok(())
}

fn set_batch(inv: &mut Invocation, v: Option<&str>) -> Result<(), UsageError> {
    let n: i64 = number("-batchSize", v)?;
    match n {
        0 => Ok(()),
        n if n < 0 => Err(UsageError(format!(
            "-batchSize {n}: must be 0 or more bytes"
        ))),
        n => set(inv, "-batchSize", "batch", Some(&n.to_string())),
    }
}

fn set_buffer(inv: &mut Invocation, v: Option<&str>, which: usize) -> Result<(), UsageError> {
    let (pf, other) = if which == 0 {
        ("-sendBufferSize", inv.buffers.1)
    } else {
        ("-receiveBufferSize", inv.buffers.0)
    };
    let n: usize = number(pf, v)?;
    if other.is_some_and(|o| o != n) {
        return Err(UsageError(format!(
            "{pf} {n}: pubsubperf sets both socket buffers to one size; give -sendBufferSize and -receiveBufferSize the same value"
        )));
    }
    if which == 0 {
        inv.buffers.0 = Some(n);
    } else {
        inv.buffers.1 = Some(n);
    }
    set(inv, pf, "socket-buffer", Some(&n.to_string()))
}

fn set_durability(inv: &mut Invocation, v: Option<&str>) -> Result<(), UsageError> {
    let kind = match v.unwrap_or_default() {
        "0" => "volatile",
        "1" => "transient-local",
        d @ ("2" | "3") => {
            return Err(UsageError(format!(
                "-durability {d}: not supported: transient and persistent durability need a persistence service; use 0 or 1"
            )));
        }
        d => {
            return Err(UsageError(format!(
                "-durability '{d}': expected 0, 1, 2 or 3"
            )));
        }
    };
    set(inv, "-durability", "durability", Some(kind))
}

fn set_flow_controller(_: &mut Invocation, v: Option<&str>) -> Result<(), UsageError> {
    match v.unwrap_or_default() {
        f if f.eq_ignore_ascii_case("default") => Ok(()),
        f => Err(UsageError(format!(
            "-flowController {f}: not supported: flow controllers are not implemented (only 'default', no flow control)"
        ))),
    }
}

fn set_keyed(inv: &mut Invocation, _: Option<&str>) -> Result<(), UsageError> {
    if inv.request.instances.is_none() {
        set(inv, "-keyed", "instances", Some("1"))?;
    }
    Ok(())
}

fn set_transport(inv: &mut Invocation, v: Option<&str>) -> Result<(), UsageError> {
    let t = v.unwrap_or_default();
    match t.to_ascii_uppercase().as_str() {
        "UDPV4" | "UDPV6" | "SHMEM" | "TCP" => {
            inv.transport = Some(t.to_string());
            Ok(())
        }
        "TLS" | "DTLS" | "WAN" | "UDPV4_WAN" => Err(UsageError(format!(
            "-transport {t}: not supported: secure and WAN transports are not measured"
        ))),
        _ => Err(UsageError(format!(
            "-transport '{t}': expected UDPv4, UDPv6, SHMEM or TCP"
        ))),
    }
}

fn set_peer(inv: &mut Invocation, v: Option<&str>) -> Result<(), UsageError> {
    let p = v.unwrap_or_default();
    if p.parse::<std::net::SocketAddr>().is_ok()
        || p.rsplit_once(':')
            .is_some_and(|(h, _)| !h.contains(':') && !h.is_empty())
    {
        return Err(UsageError(format!(
            "-peer {p}: give the host only (a -sub listens on port {})",
            super::sub_port()
        )));
    }
    inv.peers.push(p.to_string());
    Ok(())
}

impl Invocation {
    /// The finished request: middleware, transport, reliability and sizes
    /// settled once every flag is read (Perftest's flags come in any order).
    pub fn finish(&mut self) -> Result<(), UsageError> {
        let binding = self.binding()?;
        self.request.binding = binding.clone();
        if let Some(t) = &self.transport {
            let (name, ipv6) = match t.to_ascii_uppercase().as_str() {
                "UDPV4" => ("udp", false),
                "UDPV6" => ("udp", true),
                "SHMEM" => ("shm", false),
                _ => ("tcp", false),
            };
            // A raw binding is its transport already.
            if !self.raw {
                self.request.transport = Some(name.into());
                self.applied.push(("-transport", "transport"));
            }
            if ipv6 {
                self.request.ipv6 = true;
                self.applied.push(("-transport", "ipv6"));
            }
        }
        // Zero copy works on FlatData samples: Perftest turns it on too.
        if self.request.zero_copy && self.request.data_type.is_none() {
            self.request.data_type = Some(pubsubperf_core::DataType::Flat);
            self.applied.push(("-zeroCopy", "data-type"));
        }
        let caps = pubsubperf_harness::registry::info(&binding).map(|i| i.capabilities);
        // Perftest is reliable unless -bestEffort.
        if !self.request.best_effort && caps.as_ref().is_some_and(|c| c.reliable) {
            self.request.reliable = true;
        }
        let sizes: Vec<usize> = match (&self.scan, self.data_len) {
            (Some(_), Some(_)) => {
                return Err(UsageError(
                    "-scan: not with -dataLen (-scan gives the sizes)".into(),
                ));
            }
            (Some(s), None) => s.clone(),
            (None, Some(n)) => vec![n],
            (None, None) => vec![100],
        };
        self.request.size = sizes
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(",");
        self.applied.push(("-dataLen", "size"));
        match (self.latency_test, self.latency_count) {
            (true, Some(n)) if n != 1 => {
                return Err(UsageError(format!(
                    "-latencyCount {n}: a latency test pings with every sample (1); drop -latencyTest for latency under load"
                )));
            }
            (false, Some(n)) => self.set_latency_every(n)?,
            _ => {}
        }
        if !self.peers.is_empty() && self.role == Role::Pub {
            let port = super::sub_port();
            let connect = self
                .peers
                .iter()
                .map(|p| format!("{p}:{port}"))
                .collect::<Vec<_>>()
                .join(",");
            self.request.connect = Some(connect);
            self.applied.push(("-peer", "connect"));
        }
        self.request.quiet = !self.intervals;
        Ok(())
    }

    fn set_latency_every(&mut self, n: u64) -> Result<(), UsageError> {
        self.request.latency_every = Some(n);
        self.applied.push(("-latencyCount", "latency-every"));
        Ok(())
    }

    /// The binding measured: `-middleware`, else udp or shm for `-raw`,
    /// else the default.
    fn binding(&self) -> Result<String, UsageError> {
        let shm = self
            .transport
            .as_deref()
            .is_some_and(|t| t.eq_ignore_ascii_case("SHMEM"));
        match (&self.middleware, self.raw) {
            (Some(m), true) if !matches!(m.as_str(), "udp" | "tcp" | "uds" | "shm") => {
                Err(UsageError(format!(
                    "-rawTransport: not with -middleware {m} (raw transports are udp, tcp, uds and shm)"
                )))
            }
            (Some(m), _) => Ok(m.clone()),
            (None, true) if shm => Ok("shm".into()),
            (None, true) => Ok(
                match self
                    .transport
                    .as_deref()
                    .map(str::to_ascii_uppercase)
                    .as_deref()
                {
                    Some("TCP") => "tcp".into(),
                    _ => "udp".into(),
                },
            ),
            (None, false) => Ok(DEFAULT_MIDDLEWARE.into()),
        }
    }

    /// A plan error reported under the Perftest flag that set its setting.
    pub fn explain(&self, e: UsageError) -> UsageError {
        let hit = self
            .applied
            .iter()
            .rev()
            .find(|(_, ours)| e.0.starts_with(&format!("--{ours}")));
        match hit {
            Some((pf, _)) => UsageError(format!("{pf}: {}", e.0)),
            None => e,
        }
    }
}

/// The option table as docs/perftest.md shows it (a test compares them).
pub fn markdown_table() -> String {
    let mut s = String::from("| Perftest | value | pubsubperf | notes |\n|---|---|---|---|\n");
    for o in OPTIONS {
        let value = match o.arg {
            Arg::None => String::new(),
            Arg::Value(v) => format!("`{v}`"),
            Arg::Optional(v) => format!("`[{v}]`"),
        };
        let (ours, note) = match o.how {
            How::Map { ours, note, .. } => (ours.to_string(), note.to_string()),
            How::NoOp(why) => ("accepted, no effect".into(), why.to_string()),
            How::Refuse(why) => ("**refused**".into(), why.to_string()),
        };
        s.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            o.name,
            value,
            ours.replace('|', "\\|"),
            note.replace('|', "\\|")
        ));
    }
    s
}
