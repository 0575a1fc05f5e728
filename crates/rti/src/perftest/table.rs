//! The one table of Perftest 4.x's options: for each, what it becomes here
//! (a setting of the [`Invocation`], applied by a setter of
//! [`super::options`]), a no-op with the reason, or a refusal with the
//! reason. docs/perftest.md's option table is generated from it.

use super::options::*;
use crate::plan::UsageError;

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

/// Our `--profile`. Perftest has no such option; the name begins with none
/// of Perftest's options but `-pub`, which is matched exactly, so every
/// prefix that named one of Perftest's options still names it (a test
/// checks).
pub const PROFILE_FLAG: &str = "-pubsubperfProfile";
/// Our `--explain` (named as [`PROFILE_FLAG`] is).
pub const EXPLAIN_FLAG: &str = "-pubsubperfExplain";
/// Our choice of Perftest version where versions differ (named as
/// [`PROFILE_FLAG`] is).
pub const VERSION_FLAG: &str = "-pubsubperfVersion";
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
        "ours: the middleware to measure (default connext where RTI Connext runs, as Perftest measures it, else cyclonedds; `pubsubperf bindings` lists them)",
    ),
    map(
        PROFILE_FLAG,
        N,
        "`--profile`",
        |i, v| set(i, PROFILE_FLAG, "profile", v),
        "ours: each side's system calls, context switches and CPU per sample, printed under the output (on standard error with `-outputFormat json`); see [profiling](profiling.md)",
    ),
    map(
        EXPLAIN_FLAG,
        N,
        "`--explain`",
        |i, v| set(i, EXPLAIN_FLAG, "explain", v),
        "ours: the kernel's account of the slow samples by percentile band (root), printed under the output; see [explain](explain.md)",
    ),
    map(
        "-latencyHighResolution",
        N,
        "(Perftest's formats)",
        |i, _| {
            i.clock = super::formats::Clock::Nano;
            Ok(())
        },
        "ours: latencies as Perftest's high-resolution build prints them (`build.sh --latency-high-resolution`: microseconds with three decimals); without it, as its default build (whole microseconds, Std with one decimal)",
    ),
    map(
        VERSION_FLAG,
        Arg::Value("<version>"),
        "(Perftest's behaviour)",
        set_version,
        "ours: `4.0` or `4.1` accepts `-scan`, which Perftest 4.2 removed; `4.2`, `4.3` (the default) refuse it",
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
        "Perftest 2.x to 4.1 (removed in 4.2): with `-pubsubperfVersion 4.1`, one run per size; without a list 32 B to 63000 B",
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
        "throughput tests (default 10000, as Perftest: the publisher prints that latency); in a latency test only 1 (every sample is a ping)",
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
    map(
        "-sleep",
        Arg::Value("<millisec>"),
        "`--sleep TIME`",
        set_sleep,
        "throughput: the publisher sleeps after each write (a batch is flushed first); not with -pubRate",
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
        "0 = no batching; without it, 8192 in a throughput test of samples up to 4096 B where the middleware batches (cyclonedds over udp), as Perftest's default; cyclonedds, udp, tcp and uds batch",
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
    map(
        "-noPositiveAcks",
        N,
        "`--no-positive-acks`",
        |i, v| set(i, "-noPositiveAcks", "no-positive-acks", v),
        "fastdds (writers keep samples 100 ms); refused by the other middleware, which have no such QoS",
    ),
    refuse(
        "-keepDurationUsec",
        Arg::Value("<usec>"),
        "the keep duration of -noPositiveAcks is fixed at 100 ms (Debian's Fast DDS 2.9.1 aborts when a write outlasts a shorter one)",
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
        "`--bandwidth-limit BYTES`",
        set_flow_controller,
        "`default` (no limit), `1Gbps` (125000000 bytes/s), `10Gbps` (1250000000 bytes/s); a limit needs fastdds",
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
        "a file in the middleware's own format (Connext's XML fits Connext only). A `-pub` sends its `-sub` the file's name only, and the `-sub` applies the file of that name in the directory of its own `-qosFile` (without one, it refuses the run); see [two hosts](two-hosts.md#vendor-files---qos-dir)",
    ),
    refuse(
        "-qosLibrary",
        Arg::Value("<lib name>"),
        "pass the whole file with -qosFile",
    ),
    noop("-noXmlQos", N, "pubsubperf always sets QoS in code"),
    map(
        "-useReadThread",
        N,
        "`--receive thread`",
        |i, _| set(i, "-useReadThread", "receive", Some("thread")),
        "without it, as in Perftest, the middleware's thread runs the subscriber where the binding can (cyclonedds: a listener)",
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
    map(
        "-multicastAddr",
        Arg::Value("<address>"),
        "`--multicast --multicast-address ADDR`",
        |i, v| {
            set(i, "-multicastAddr", "multicast", None)?;
            set(i, "-multicastAddr", "multicast-address", v)
        },
        "the group the data goes to (udp, cyclonedds, fastdds); on `-sub`, the group its readers join",
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
