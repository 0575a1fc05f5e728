//! The reading of the Throughput example's command lines: every line of
//! seed 003's table 6.1 (its placeholders pub_IP, subN_IP given addresses),
//! the plan each publisher line builds, the refusals, and
//! docs/throughput-example.md's flag table against the code's.

use super::options::{self, Invocation, Role};
use super::plan;
use crate::plan::UsageError;
use crate::rti_default::{FALLBACK, RtiDefault};

/// A line read as on a machine without Connext, whose default is
/// CycloneDDS: the expectations below name it.
fn read(args: &[String]) -> Result<Invocation, UsageError> {
    super::read_with(args, || RtiDefault::of(FALLBACK))
}

#[test]
fn default_middleware_is_asked_only_without_middleware() {
    let inv = super::read_with(&line("-pub -transport 1 -demand 1:1:2"), || {
        RtiDefault::of("connext")
    })
    .unwrap();
    assert_eq!(inv.request.binding, "connext");
    let never = || -> RtiDefault { panic!("the default was asked") };
    let inv = super::read_with(&line("-pub -middleware udp -demand 1:1:2"), never).unwrap();
    assert_eq!(inv.request.binding, "udp");
}
use pubsubperf_core::Reliability;

/// Seed 003's placeholders as addresses.
fn line(l: &str) -> Vec<String> {
    l.replace("pub_IP", "10.0.0.1")
        .replace("sub1_IP", "10.0.0.11")
        .replace("sub2_IP", "10.0.0.12")
        .replace("sub3_IP", "10.0.0.13")
        .replace("sub4_IP", "10.0.0.14")
        .split_whitespace()
        .map(String::from)
        .collect()
}

fn err(l: &str) -> String {
    read(&line(l)).expect_err("should be refused").0
}

/// What a seed line must become.
#[derive(Debug, PartialEq)]
struct Expect {
    role: Role,
    binding: &'static str,
    transport: &'static str,
    ipv6: bool,
    domain: Option<u32>,
    nic: &'static str,
    subscribers: usize,
    duration: Option<&'static str>,
    size: &'static str,
    demand: Option<&'static str>,
    reliable: bool,
    connect: Option<&'static str>,
}

fn got(l: &str) -> Expect {
    let inv = read(&line(l)).unwrap_or_else(|e| panic!("{l}: {e}"));
    let r = &inv.request;
    let leak = |s: &Option<String>| s.clone().map(|s| &*s.leak());
    assert_ne!(r.reliable, r.best_effort, "{l}: one reliability");
    Expect {
        role: inv.role(),
        binding: r.binding.clone().leak(),
        transport: r.transport.clone().unwrap_or_default().leak(),
        ipv6: r.ipv6,
        domain: r.domain,
        nic: r.data_address.clone().unwrap_or_default().leak(),
        subscribers: r.subscribers.parse().unwrap(),
        duration: leak(&r.duration),
        size: r.size.clone().leak(),
        demand: leak(&r.demand),
        reliable: r.reliable,
        connect: leak(&r.connect),
    }
}

/// The publisher of a line: 1 subscriber, 1024 bytes, 10 s, 1000:1000:9000,
/// best effort, over `transport` (as most of the seed's lines are).
fn publisher(transport: &'static str, connect: Option<&'static str>) -> Expect {
    Expect {
        role: Role::Pub,
        binding: "cyclonedds",
        transport,
        ipv6: false,
        domain: Some(88),
        nic: "10.0.0.1",
        subscribers: 1,
        duration: Some("10s"),
        size: "1024",
        demand: Some("1000:1000:9000"),
        reliable: false,
        connect,
    }
}

/// Subscriber `n` of a line (its publisher sends the test's settings).
fn subscriber(n: u32, transport: &'static str, reliable: bool) -> Expect {
    Expect {
        role: Role::Sub,
        nic: ["", "10.0.0.11", "10.0.0.12", "10.0.0.13", "10.0.0.14"][n as usize],
        subscribers: 1,
        duration: None,
        size: "64",
        demand: None,
        reliable,
        connect: None,
        ..publisher(transport, None)
    }
}

#[test]
fn seed_003_shmem_lines() {
    // 1-1 BE 1024 bytes over shmem.
    assert_eq!(
        got(
            "-domainId 88 -nic pub_IP -transport 2 -peer shmem:// -subscribers 1 -duration 10 -size 1024 -demand 1000:1000:9000"
        ),
        publisher("shm", None)
    );
    assert_eq!(
        got("-domainId 88 -participantId 1 -nic sub1_IP -transport 2 -peer shmem://"),
        subscriber(1, "shm", false)
    );
    // 1-4 BE 8192 bytes over shmem.
    assert_eq!(
        got(
            "-domainId 88 -nic pub_IP -transport 2 -peer shmem:// -subscribers 4 -duration 10 -size 8192 -demand 1000:1000:9000"
        ),
        Expect {
            subscribers: 4,
            size: "8192",
            ..publisher("shm", None)
        }
    );
    for n in 1..=4 {
        assert_eq!(
            got(&format!(
                "-domainId 88 -participantId {n} -nic sub{n}_IP -transport 2 -peer shmem://"
            )),
            subscriber(n, "shm", false)
        );
    }
    // 1-4 push SR over shmem, demand 100:100:900.
    assert_eq!(
        got(
            "-domainId 88 -nic pub_IP -transport 2 -peer shmem:// -subscribers 4 -duration 10 -size 1024 -demand 100:100:900 -reliable"
        ),
        Expect {
            subscribers: 4,
            demand: Some("100:100:900"),
            reliable: true,
            ..publisher("shm", None)
        }
    );
    assert_eq!(
        got("-domainId 88 -participantId 3 -nic sub3_IP -transport 2 -peer shmem:// -reliable"),
        subscriber(3, "shm", true)
    );
}

#[test]
fn seed_003_udp_lines() {
    // 1-1 BE over UDP unicast: the subscriber on sub1_IP, port 7400.
    assert_eq!(
        got(
            "-domainId 88 -nic pub_IP -transport 1 -peer sub1_IP -subscribers 1 -duration 10 -size 1024 -demand 1000:1000:9000"
        ),
        publisher("udp", Some("10.0.0.11:7400"))
    );
    assert_eq!(
        got("-domainId 88 -participantId 1 -nic sub1_IP -transport 1 -peer pub_IP"),
        subscriber(1, "udp", false)
    );
    // 1-4 BE over UDP unicast: subscriber N on subN_IP, port 7400 + N - 1.
    assert_eq!(
        got(
            "-domainId 88 -nic pub_IP -transport 1 -peer sub1_IP -peer sub2_IP -peer sub3_IP -peer sub4_IP -subscribers 4 -duration 10 -size 1024 -demand 1000:1000:9000"
        ),
        Expect {
            subscribers: 4,
            connect: Some("10.0.0.11:7400,10.0.0.12:7401,10.0.0.13:7402,10.0.0.14:7403"),
            ..publisher("udp", None)
        }
    );
    // Four subscribers on one host: one peer for all.
    assert_eq!(
        got("-nic pub_IP -transport 1 -peer sub1_IP -subscribers 2 -demand 1:1:2").connect,
        Some("10.0.0.11:7400,10.0.0.11:7401")
    );
    // UDPv6, its peers' addresses in brackets.
    let v6 = got("-transport 8 -peer fd00::11 -demand 1:1:2");
    assert_eq!((v6.transport, v6.ipv6), ("udp", true));
    assert_eq!(v6.connect, Some("[fd00::11]:7400"));
}

/// The example's knobs become ours (seed 003's pull SR and multicast
/// lines); what the binding cannot apply it refuses under the example's
/// flag, and the knobs nothing here has are refused naming why.
#[test]
fn seed_003_knobs_map_to_ours_or_are_refused() {
    let r = read(&line(
        "-demand 1:1:2 -reliable -maxBlockingTime 250 -bw_limit 100 -multicast_ttl 1",
    ))
    .unwrap()
    .request;
    assert_eq!(r.max_blocking_time.as_deref(), Some("250ms"));
    assert_eq!(r.bandwidth_limit.as_deref(), Some("12500000"));
    assert!(r.multicast);
    assert_eq!(r.multicast_ttl, Some(1));
    let seed = read(&line(
        "-domainId 88 -nic pub_IP -transport 2 -peer shmem:// -subscribers 1 -duration 10 -size 1024 -demand 1000:1000:9000 -reliable -no_push_on_write",
    ))
    .unwrap();
    assert!(seed.request.no_push_on_write);
    let inv = read(&line("-demand 1:1:2 -reliable -no_push_on_write")).unwrap();
    let e = plan(&inv).unwrap_err().0;
    assert!(
        e.starts_with("-no_push_on_write: --no-push-on-write: "),
        "{e}"
    );
    assert!(
        err("-demand 1:1:2 -maxBlockingTime x")
            .starts_with("-maxBlockingTime 'x': expected whole milliseconds")
    );
    // Seed 003's multicast subscribers: their readers join the group.
    for flag in ["-mcast_recv_addr", "-mcast_rcv_addr"] {
        let sub = read(&line(&format!(
            "-domainId 88 -participantId 1 -nic 127.0.0.1 -transport 1 -peer 127.0.0.1 {flag} 225.3.2.1"
        )))
        .unwrap();
        assert!(sub.request.multicast, "{flag}");
        assert_eq!(sub.request.multicast_address.as_deref(), Some("225.3.2.1"));
        let p = plan(&sub).unwrap();
        assert_eq!(
            p.specs[0].endpoint.multicast_address.as_deref(),
            Some("225.3.2.1")
        );
    }
    let e = plan(&read(&line("-demand 1:1:2 -mcast_recv_addr 10.0.0.1")).unwrap())
        .unwrap_err()
        .0;
    assert!(
        e.starts_with("-mcast_recv_addr: --multicast-address 10.0.0.1: not a multicast address"),
        "{e}"
    );
    let e = err("-demand 1:1:2 -strength 2");
    assert!(e.starts_with("-strength: not supported"), "{e}");
}

#[test]
fn bad_lines_name_the_flag() {
    assert!(
        err("-domainId 88 -bogus").starts_with("-bogus: not a flag of RTI's Throughput example")
    );
    assert!(err("-transport 3 -demand 1:1:2").starts_with("-transport '3': expected 1 (UDPv4), 2"));
    assert!(err("-duration ten -demand 1:1:2").starts_with("-duration 'ten'"));
    assert!(err("-size").starts_with("-size: needs a value"));
    assert!(err("-participantId x").starts_with("-participantId 'x'"));
    assert!(err("-pub -sub").starts_with("-pub, -sub"));
    assert!(err("-sub -participantId 0").starts_with("-participantId 0"));
    assert!(err("-size 1024").starts_with("-demand: the publisher needs the ramp"));
    let e = plan(&read(&line("-demand 9:1:1")).unwrap()).unwrap_err().0;
    assert!(
        e.starts_with("-demand: --demand '9:1:1': END 1 is below START 9"),
        "{e}"
    );
    assert!(
        err("-demand 1:1:2 -peer a -peer b -subscribers 3")
            .starts_with("-peer: 2 peers for -subscribers 3")
    );
    assert!(err("-demand 1:1:2 -peer shmem:// -peer b").starts_with("-peer: shmem:// and host"));
    assert!(err("-demand 1:1:2 -peer 10.0.0.11:7400").starts_with(
        "-peer 10.0.0.11:7400: give the host only (subscriber N listens on port N - 1 + 7400)"
    ));
}

/// The publishers' lines build their plan (`-nic` as this host's loopback):
/// one run per demand, each with the seed's settings.
#[test]
fn seed_lines_plan() {
    for (l, demands, size, subs, rel) in [
        (
            "-domainId 88 -nic 127.0.0.1 -transport 1 -peer 10.0.0.11 -subscribers 1 -duration 10 -size 1024 -demand 1000:1000:9000",
            (1..=9).map(|i| i * 1000).collect::<Vec<u64>>(),
            1024,
            1,
            Reliability::BestEffort,
        ),
        (
            "-domainId 88 -nic 127.0.0.1 -transport 1 -peer 10.0.0.11 -peer 10.0.0.12 -peer 10.0.0.13 -peer 10.0.0.14 -subscribers 4 -duration 10 -size 1024 -demand 100:100:900 -reliable",
            (1..=9).map(|i| i * 100).collect(),
            1024,
            4,
            Reliability::Reliable,
        ),
        (
            "-domainId 88 -nic 127.0.0.1 -transport 1 -duration 1 -size 1024 -demand 1000:1000:3000 -recoveryTime 250",
            vec![1000, 2000, 3000],
            1024,
            1,
            Reliability::BestEffort,
        ),
    ] {
        let p = plan(&read(&line(l)).unwrap()).unwrap_or_else(|e| panic!("{l}: {e}"));
        assert_eq!(
            p.specs.iter().map(|s| s.demand).collect::<Vec<_>>(),
            demands,
            "{l}"
        );
        for s in &p.specs {
            assert_eq!(
                (s.binding.as_str(), s.endpoint.transport.as_str()),
                ("cyclonedds", "udp")
            );
            assert_eq!(
                (s.size, s.subscribers, s.endpoint.reliability),
                (size, subs, rel),
                "{l}"
            );
            assert_eq!(s.endpoint.domain, Some(88));
            assert_eq!(s.rate, 0.0);
        }
        assert_eq!(
            p.connect.len(),
            if subs == 4 || l.contains("-peer") {
                subs
            } else {
                0
            }
        );
    }
    let p = plan(&read(&line("-duration 1 -demand 1:1:2 -recoveryTime 250")).unwrap()).unwrap();
    assert_eq!(
        p.specs
            .iter()
            .map(|s| (s.duration_ns, s.recovery_ms))
            .collect::<Vec<_>>(),
        vec![(1_000_000_000, 250); 2]
    );
    // A plan error is told under the example's flag.
    let e = plan(&read(&line("-middleware udp -domainId 88 -demand 1:1:2")).unwrap()).unwrap_err();
    assert!(e.0.starts_with("-domainId: --domain"), "{e}");
}

/// docs/throughput-example.md's flag table is the code's.
#[test]
fn docs_table_is_the_codes() {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/throughput-example.md"),
    )
    .expect("docs/throughput-example.md");
    assert!(
        doc.contains(&options::markdown_table()),
        "docs/throughput-example.md: paste the table of 'pubsubperf throughput-example -help':\n{}",
        options::markdown_table()
    );
}
