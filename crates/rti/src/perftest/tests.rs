//! The front end's reading of Perftest command lines: every `perftest_cpp`
//! line of the seed documents (/work/shared/seeds, copied here as the
//! users wrote them, `$DATALEN` given a value of their loops), the option
//! table's rules, and docs/perftest.md's table against the code's.

use super::options::{self, EXPLAIN_FLAG, Format, Invocation, OPTIONS, PROFILE_FLAG, Role};
use super::table::VERSION_FLAG;
use crate::plan::UsageError;
use crate::rti_default::{FALLBACK, RtiDefault};
use pubsubperf_core::DataType;

/// A line read as on a machine without Connext, whose default is
/// CycloneDDS: the expectations below name it. The default where Connext
/// runs is [`default_middleware_is_asked_only_without_middleware_or_raw`]'s
/// and crates/cli/tests/perftest.rs's.
fn read(args: &[String]) -> Result<Invocation, UsageError> {
    super::read_with(args, || RtiDefault::of(FALLBACK))
}

#[test]
fn default_middleware_is_asked_only_without_middleware_or_raw() {
    let connext = || RtiDefault::of("connext");
    let inv = super::read_with(&words("-pub -dataLen 64"), connext).unwrap();
    assert_eq!(inv.request.binding, "connext");
    let never = || -> RtiDefault { panic!("the default was asked") };
    let inv = super::read_with(&words("-pub -middleware fastdds"), never).unwrap();
    assert_eq!(inv.request.binding, "fastdds");
    let inv = super::read_with(&words("-pub -raw"), never).unwrap();
    assert_eq!(inv.request.binding, "udp");
    let fallback = || RtiDefault {
        middleware: "cyclonedds",
        fallback_reason: Some("not installed".to_string()),
    };
    let inv = super::read_with(&words("-pub"), fallback).unwrap();
    assert_eq!(
        (
            inv.request.binding.as_str(),
            inv.default_middleware.fallback_reason.as_deref()
        ),
        ("cyclonedds", Some("not installed"))
    );
}

fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(String::from).collect()
}

fn err(line: &str) -> String {
    read(&words(line)).expect_err("should be refused").0
}

/// What a seed line must become.
#[derive(Debug, PartialEq)]
struct Expect {
    role: Role,
    latency: bool,
    binding: &'static str,
    transport: Option<&'static str>,
    size: &'static str,
    duration: Option<&'static str>,
    flat: bool,
    zero_copy: bool,
    send_queue: Option<usize>,
    receive_queue: Option<usize>,
    nic: Option<&'static str>,
    connect: Option<&'static str>,
    quiet: bool,
    reliable: bool,
}

fn got(line: &str) -> Expect {
    let inv = read(&words(line)).unwrap_or_else(|e| panic!("{line}: {e}"));
    let r = &inv.request;
    let leak = |s: &Option<String>| s.clone().map(|s| &*s.leak());
    Expect {
        role: inv.role,
        latency: inv.latency_test,
        binding: r.binding.clone().leak(),
        transport: leak(&r.transport),
        size: r.size.clone().leak(),
        duration: leak(&r.duration),
        flat: r.data_type == Some(DataType::Flat),
        zero_copy: r.zero_copy == Some(true),
        send_queue: r.send_queue,
        receive_queue: r.receive_queue,
        nic: leak(&r.data_address),
        connect: leak(&r.connect),
        quiet: r.quiet,
        reliable: r.reliable,
    }
}

/// Seed 000 (FlatData and Zero Copy on two hosts over UDPv4; SHMEM on one):
/// reliable CycloneDDS, one run per line of the users' loop.
#[test]
fn seed_000_flatdata_and_zero_copy() {
    let udp = Expect {
        role: Role::Pub,
        latency: false,
        binding: "cyclonedds",
        transport: None,
        size: "63001",
        duration: Some("23s"),
        flat: true,
        zero_copy: false,
        send_queue: Some(5),
        receive_queue: None,
        nic: Some("eth0"),
        connect: None,
        quiet: true,
        reliable: true,
    };
    assert_eq!(
        got(
            "-pub -nic eth0 -noPrint -exec 23 -flatData -datalen 63001 -sendqueuesize 5;"
                .trim_end_matches(';')
        ),
        udp
    );
    assert_eq!(
        got(
            "-pub -nic eth0 -noPrint -exec 23 -flatData -datalen 63001 -sendqueuesize 5 -latencyTest"
        ),
        Expect {
            latency: true,
            ..udp
        }
    );
    let udp_sub = Expect {
        role: Role::Sub,
        duration: None,
        size: "52428800",
        ..udp
    };
    assert_eq!(
        got("-sub -nic eth0 -noPrint -flatData -datalen 52428800 -sendqueuesize 5"),
        udp_sub
    );
    let shm = Expect {
        role: Role::Pub,
        latency: false,
        binding: "cyclonedds",
        transport: Some("shm"),
        size: "1048576",
        duration: Some("23s"),
        flat: true,
        zero_copy: true,
        send_queue: Some(5),
        receive_queue: Some(1),
        nic: None,
        connect: None,
        quiet: true,
        reliable: true,
    };
    let pub_shm = "-pub -noPrint -transport SHMEM -exec 23 -zerocopy -datalen 1048576 -sendqueuesize 5  -receivequeue 1";
    assert_eq!(got(pub_shm), shm);
    assert_eq!(
        got(&format!("{pub_shm} -latencytest")),
        Expect {
            latency: true,
            ..shm
        }
    );
    assert_eq!(
        got(
            "-sub -noPrint -transport SHMEM -zerocopy -datalen 1048576 -sendqueuesize 1  -receivequeue 5"
        ),
        Expect {
            role: Role::Sub,
            duration: None,
            send_queue: Some(1),
            receive_queue: Some(5),
            ..shm
        }
    );
}

/// The seeds' lines build their plan here (`-nic eth0` as this host's
/// loopback, which every host has): one run each, with the seed's
/// settings in the run spec.
#[test]
fn seed_lines_plan() {
    use pubsubperf_core::Reliability;
    let spec = |line: &str| {
        let inv = read(&words(line)).unwrap();
        let plan = super::plan(&inv).unwrap_or_else(|e| panic!("{line}: {e}"));
        assert_eq!(plan.specs.len(), 1, "{line}");
        plan.specs.into_iter().next().unwrap()
    };
    let s = spec("-pub -nic 127.0.0.1 -noPrint -exec 23 -flatData -datalen 63001 -sendqueuesize 5");
    assert_eq!(
        (s.binding.as_str(), s.size, s.duration_ns),
        ("cyclonedds", 63001, 23_000_000_000)
    );
    let e = &s.endpoint;
    assert_eq!(
        (e.reliability, e.data_type, e.send_queue),
        (Reliability::Reliable, DataType::Flat, 5)
    );
    assert_eq!(s.data_address.as_deref(), Some("127.0.0.1"));
    let s = spec(
        "-pub -noPrint -transport SHMEM -exec 23 -zerocopy -datalen 1048576 -sendqueuesize 5  -receivequeue 1 -latencytest",
    );
    let e = &s.endpoint;
    assert_eq!(
        (e.transport.as_str(), e.zero_copy, e.receive_queue),
        ("shm", true, 1)
    );
    assert_eq!(s.test, pubsubperf_core::result::TestKind::Latency);
    let s = spec(
        "-pub -peer 10.45.3.119 -nic 127.0.0.1 -raw -pub -noPrint -exec 20 -datalen 1024 -batchSize 0",
    );
    assert_eq!((s.binding.as_str(), s.endpoint.batch_bytes), ("udp", 0));
    assert_eq!(s.endpoint.reliability, Reliability::BestEffort);
    spec("-sub -peer 10.45.3.120 -nic 127.0.0.1 -raw -noPrint -datalen 1024");
    // Without -batchSize, batched as Perftest's default build batches: 8 kB
    // in a throughput test of samples up to 4 kB where the middleware
    // batches, else not (a latency test, 8 kB samples, raw udp).
    let batch = |line: &str| spec(line).endpoint.batch_bytes;
    assert_eq!(batch("-pub -noPrint -exec 2 -datalen 1024"), 8192);
    assert_eq!(batch("-pub -noPrint -exec 2 -datalen 4096"), 8192);
    assert_eq!(batch("-pub -noPrint -exec 2 -datalen 8192"), 0);
    assert_eq!(batch("-pub -noPrint -exec 2 -datalen 1024 -latencyTest"), 0);
    assert_eq!(batch("-pub -noPrint -exec 2 -datalen 1024 -batchSize 0"), 0);
    assert_eq!(
        batch("-pub -noPrint -exec 2 -datalen 1024 -raw -peer 127.0.0.1"),
        0
    );
    spec(
        "-sub -noPrint -transport SHMEM -zerocopy -datalen 63001 -sendqueuesize 1  -receivequeue 5",
    );
}

/// Seed 001 (raw transport between two hosts): pubsubperf's udp baseline,
/// best effort (it has no reliable mode), the -pub reaching the -sub host.
#[test]
fn seed_001_raw_transport() {
    let pub_tp = Expect {
        role: Role::Pub,
        latency: false,
        binding: "udp",
        transport: None,
        size: "1024",
        duration: Some("20s"),
        flat: false,
        zero_copy: false,
        send_queue: None,
        receive_queue: None,
        nic: Some("eth0"),
        connect: Some("10.45.3.119:7400"),
        quiet: true,
        reliable: false,
    };
    assert_eq!(
        got(
            "-pub -peer 10.45.3.119 -nic eth0 -raw -pub -noPrint -exec 20 -datalen 1024 -batchSize 0"
        ),
        pub_tp
    );
    assert_eq!(
        got(
            "-pub -peer 10.45.3.119 -nic eth0 -raw -pub -noPrint -exec 20 -datalen 1024 -latencyTest"
        ),
        Expect {
            latency: true,
            ..pub_tp
        }
    );
    // The -sub's -peer names the publisher, which connects to it.
    assert_eq!(
        got("-sub -peer 10.45.3.120 -nic eth0 -raw -noPrint -datalen 1024;;".trim_end_matches(';')),
        Expect {
            role: Role::Sub,
            duration: None,
            connect: None,
            ..pub_tp
        }
    );
}

/// Seed 003's Connext Throughput example is another program: its flags are
/// refused naming the first one, not half-read, and the line is pointed at
/// `pubsubperf throughput-example`.
#[test]
fn throughput_example_lines_are_refused() {
    let e = err(
        "-domainId 88 -nic 10.0.0.1 -transport 1 -peer 10.0.0.2 -subscribers 1 -duration 10 -size 1024 -demand 1000:1000:9000",
    );
    assert!(
        e.starts_with("-domainId: not an RTI Perftest option but a flag of RTI's Throughput example: run the line as 'pubsubperf throughput-example ...'"),
        "{e}"
    );
}

#[test]
fn flags_are_case_insensitive_and_unique_prefixes() {
    assert_eq!(options::lookup("-DATALEN").unwrap().name, "-dataLen");
    assert_eq!(options::lookup("-exec").unwrap().name, "-executionTime");
    assert_eq!(
        options::lookup("-noPrint").unwrap().name,
        "-noPrintIntervals"
    );
    assert_eq!(
        options::lookup("-receivequeue").unwrap().name,
        "-receiveQueueSize"
    );
    assert_eq!(options::lookup("-raw").unwrap().name, "-rawTransport");
    assert_eq!(options::lookup("--middleware").unwrap().name, "-middleware");
    // An exact name wins over longer names it prefixes.
    assert_eq!(options::lookup("-pub").unwrap().name, "-pub");
    assert!(err("-pub -s").contains("ambiguous, could be -sub, -scan"));
    assert!(err("-pub -nosuch").starts_with("-nosuch: not an RTI Perftest option"));
}

#[test]
fn refusals_name_the_flag_and_why() {
    assert!(err("-pub -keepDurationUsec 5").starts_with("-keepDurationUsec: not supported:"));
    assert!(err("-pub -sleep x").starts_with("-sleep 'x': not a valid number"));
    assert!(err("-pub -flowController 2Gbps").starts_with("-flowController 2Gbps: not supported"));
    assert!(err("-pub -pubRate 100:sleep").contains("method 'sleep' not supported"));
    assert!(err("-pub -durability 3").starts_with("-durability 3: not supported"));
    assert!(err("-pub -transport TLS").starts_with("-transport TLS: not supported"));
    assert!(err("-pub -dataLen").starts_with("-dataLen: needs a value"));
    assert!(err("-pub -latencyTest -latencyCount 10").starts_with("-latencyCount 10:"));
    assert!(err("-pub -peer 10.0.0.1:7000").starts_with("-peer 10.0.0.1:7000: give the host only"));
    assert!(
        err("-pub -raw -middleware zenoh").starts_with("-rawTransport: not with -middleware zenoh")
    );
    // Every refused option of the table is refused by the parser.
    for o in OPTIONS {
        if let options::How::Refuse(why) = o.how {
            let line = match o.arg {
                options::Arg::Value(_) => format!("-pub {} 1", o.name),
                _ => format!("-pub {}", o.name),
            };
            assert_eq!(err(&line), format!("{}: not supported: {why}", o.name));
        }
    }
}

/// A binding's own refusal is reported under the Perftest flag.
#[test]
fn plan_errors_name_the_perftest_flag() {
    let inv = read(&words("-pub -raw -zeroCopy")).unwrap();
    let e = super::plan(&inv).expect_err("udp has no zero copy").0;
    assert!(e.starts_with("-zeroCopy: --zero-copy:"), "{e}");
    let inv = read(&words("-pub -raw -dataLen 100000")).unwrap();
    let e = super::plan(&inv).expect_err("over udp's limit").0;
    assert!(e.starts_with("-dataLen: --size 100000"), "{e}");
}

#[test]
fn other_mappings() {
    let inv = read(&words(
        "-pub -pubsubperfVersion 4.1 -scan 32:1024 -bestEffort -keyed -pubRate 1000 -latencyCount 100 -outputFormat JSON -cpu -noOutputHeaders -middleware udp",
    ))
    .unwrap();
    let r = &inv.request;
    assert_eq!(r.size, "32,1024");
    assert!(r.best_effort && !r.reliable);
    assert_eq!(
        (r.instances, r.rate.clone(), r.latency_every),
        (Some(1), Some("1000".into()), Some(100))
    );
    assert_eq!(
        (inv.format, inv.cpu, inv.headers),
        (Format::Json, true, false)
    );
    assert_eq!(read(&words("-pub")).unwrap().request.size, "100");
    assert_eq!(read(&words("")).unwrap().role, Role::Sub);
    let scan = read(&words("-pub -scan -pubsubperfVersion 4.0"))
        .unwrap()
        .request
        .size;
    assert!(
        scan.starts_with("32,64,") && scan.ends_with(",63000"),
        "{scan}"
    );
    // Perftest 4.2 removed -scan: refused, on either side, at once.
    for line in [
        "-scan",
        "-pub -scan 32:64",
        "-sub -scan -pubsubperfVersion 4.3",
    ] {
        assert!(
            err(line).starts_with("-scan: removed in Perftest 4.2;"),
            "{line}"
        );
    }
    assert!(err("-pub -pubsubperfVersion 5").starts_with("-pubsubperfVersion '5': expected"));
    // A throughput test echoes one sample in 10000 unless told.
    assert_eq!(
        read(&words("-pub")).unwrap().request.latency_every,
        Some(options::DEFAULT_LATENCY_COUNT)
    );
    assert_eq!(
        read(&words("-pub -latencyTest"))
            .unwrap()
            .request
            .latency_every,
        None
    );
    // Not across several -peer hosts (one echo address cannot serve both).
    assert_eq!(
        read(&words("-pub -peer 192.0.2.1 -peer 192.0.2.2"))
            .unwrap()
            .request
            .latency_every,
        None
    );
    assert_eq!(
        read(&words("-pub -latencyHighResolution")).unwrap().clock,
        super::formats::Clock::Nano
    );
    assert_eq!(
        read(&words("-pub")).unwrap().clock,
        super::formats::Clock::Micro
    );
    let v6 = read(&words("-pub -transport UDPv6")).unwrap().request;
    assert_eq!((v6.transport.as_deref(), v6.ipv6), (Some("udp"), true));
}

/// docs/perftest.md's option table is the code's: regenerate it with
/// `pubsubperf perftest -help` when an option changes.
#[test]
fn docs_table_is_the_code_table() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/perftest.md");
    let doc = std::fs::read_to_string(path).expect("docs/perftest.md");
    let table = options::markdown_table();
    assert!(
        doc.contains(&table),
        "docs/perftest.md's option table differs from the code's; replace it with the output of 'pubsubperf perftest -help':\n{table}"
    );
}

/// Every option of Perftest 4.x's parameter manager is in the table (the
/// list below is its option names, read from its documentation and source).
#[test]
fn table_covers_perftest_4() {
    let names = "bestEffort dataLen verbosity dynamicData durability domain instances instanceHashBuckets keyed noDirectCommunication noPositiveAcks keepDurationUsec noPrintIntervals qosFile qosLibrary noXmlQos useReadThread waitsetDelayUsec waitsetEventCount asynchronous messageSizeMax flowController cpu unbounded threadPriorities threadCPUAffinity outputFormat noOutputHeaders flatData zeroCopy checkConsistency networkCapture doNotDropNetworkCapture outputFile crc crcKind enable-message-length preallocateFragmentedSamples sendQueueSize receiveQueueSize receiveBufferSize sendBufferSize showResourceLimits cacheStats compressionId compressionLevel compressionThreshold enableInstanceStateRecovery enableMonitoring2 collectorPeer loaningSendReceive batchSize enableAutoThrottle enableTurboMode pub latencyCount executionTime initialBurstSize latencyTest numIter numSubscribers pidMultiPubTest pubRate latencyFile pubRatebps sleep spin writerStats lowResolutionClock writeInstance showSerializationTime loadDataFromFile maximumAllocableBufferSize sub sidMultiSubTest numPublishers cft nic allowInterfaces peer transport multicast multicastAddr transportVerbosity transportServerBindPort transportWan transportPublicAddress transportHostPort transportWanServerAddress transportWanServerPort transportWanId transportSecureWan transportCertAuthority transportCertFile transportPrivateKey rawTransport noBlockingSockets fastQueue secureGovernanceFile securePermissionsFile secureCertAuthority secureCertFile securePrivateKey secureEncryptionAlgorithm secureEnableAAD secureLibrary lightWeightSecurity securePSK securePSKAlgorithm secureRtpsHmacOnly secureDebug help";
    for n in names.split_whitespace() {
        let name = format!("-{n}");
        assert!(
            OPTIONS.iter().any(|o| o.name == name),
            "{name} is missing from the table"
        );
    }
    let mut seen = std::collections::BTreeSet::new();
    for o in OPTIONS {
        assert!(seen.insert(o.name.to_ascii_lowercase()), "{} twice", o.name);
    }
}

/// The middleware knobs: -noPositiveAcks, -flowController, -sleep and
/// -batchSize become our flags; a middleware without one refuses it under
/// the Perftest flag.
#[test]
fn knob_mappings() {
    let r = read(&words(
        "-pub -noPositiveAcks -flowController 1Gbps -sleep 5 -batchSize 8192",
    ))
    .unwrap()
    .request;
    assert!(r.no_positive_acks);
    assert_eq!(r.bandwidth_limit.as_deref(), Some("125000000"));
    assert_eq!(r.sleep.as_deref(), Some("5ms"));
    assert_eq!(r.batch.as_deref(), Some("8192"));
    let r = read(&words("-pub -flowController 10GBPS -sleep 0"))
        .unwrap()
        .request;
    assert_eq!(r.bandwidth_limit.as_deref(), Some("1250000000"));
    assert_eq!(r.sleep, None);
    let r = read(&words("-pub -flowController default"))
        .unwrap()
        .request;
    assert_eq!(r.bandwidth_limit, None);
    let inv = read(&words("-pub -raw -noPositiveAcks")).unwrap();
    let e = super::plan(&inv).expect_err("udp has no such QoS").0;
    assert!(e.starts_with("-noPositiveAcks: --no-positive-acks:"), "{e}");
}

/// Our `-pubsubperfProfile` takes no prefix from Perftest's options: every
/// prefix (2 characters or more after the dash) that named one of them
/// without it names the same option with it, and the flag and any unique
/// prefix of its own (`-pubsubperfP`) turn `--profile` on; so for
/// `-pubsubperfVersion`.
#[test]
fn profile_flag_leaves_perftests_prefixes_alone() {
    let theirs: Vec<&str> = OPTIONS
        .iter()
        .map(|o| o.name)
        .filter(|n| ![PROFILE_FLAG, EXPLAIN_FLAG, VERSION_FLAG, "-middleware"].contains(n))
        .collect();
    for name in &theirs {
        for end in 2..=name.len() {
            let prefix = &name[..end];
            let before: Vec<&&str> = theirs
                .iter()
                .filter(|n| n.eq_ignore_ascii_case(prefix))
                .chain(theirs.iter().filter(|n| {
                    !theirs.iter().any(|m| m.eq_ignore_ascii_case(prefix))
                        && n.to_ascii_lowercase()
                            .starts_with(&prefix.to_ascii_lowercase())
                }))
                .collect();
            if let [one] = before.as_slice() {
                assert_eq!(
                    options::lookup(prefix).map(|o| o.name).ok(),
                    Some(**one),
                    "{prefix}"
                );
            }
        }
    }
    for w in [PROFILE_FLAG, "-pubsubperfprofile", "-pubsubperfP"] {
        let r = read(&words(&format!("-pub {w}"))).unwrap().request;
        assert!(r.profile, "{w}");
    }
    assert!(!read(&words("-pub")).unwrap().request.profile);
}

/// `-multicastAddr` is `--multicast --multicast-address`; a unicast
/// address is refused under the Perftest flag, exit 2.
#[test]
fn multicast_addr_maps_to_ours() {
    let inv = read(&words("-pub -multicastAddr 239.255.1.2")).unwrap();
    assert!(inv.request.multicast);
    let p = super::plan(&inv).unwrap();
    assert_eq!(
        p.specs[0].endpoint.multicast_address.as_deref(),
        Some("239.255.1.2")
    );
    let inv = read(&words("-sub -multicastAddr 192.168.1.2")).unwrap();
    let e = super::plan(&inv).unwrap_err().0;
    assert!(
        e.starts_with("-multicastAddr: --multicast-address 192.168.1.2: not a multicast address"),
        "{e}"
    );
}

/// Every option of ours that a Perftest option maps to, as its table's
/// "ours" column names it (`--size N`), is an option of the option table:
/// a renamed or removed option fails here, not in a user's command.
#[test]
fn the_options_perftest_maps_to_are_the_option_tables() {
    use super::table::How;
    let mut checked = 0;
    for o in OPTIONS {
        let How::Map { ours, .. } = o.how else {
            continue;
        };
        // The code spans (between backticks) but those of another command
        // (`pubsubperf sub --listen`), and the flags in them.
        let spans = ours
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|s| !s.starts_with("pubsubperf "));
        for name in spans
            .flat_map(str::split_whitespace)
            .filter_map(|w| w.strip_prefix("--"))
        {
            assert!(
                pubsubperf_runner::options::find(name).is_some(),
                "{}: maps to --{name}, which is not an option of 'latency' or 'throughput'",
                o.name
            );
            checked += 1;
        }
    }
    assert!(checked > 30, "{checked} options named in Perftest's table");
}
