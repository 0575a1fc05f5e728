//! Unit tests of the plan builder.

use super::*;

/// A test's plan from a command line in our flags, through the settings
/// table (the clap side has its own tests in `cli`).
fn plan(args: &str) -> Result<TestPlan, UsageError> {
    let mut words = args.split_whitespace().peekable();
    let test = match words.next() {
        Some("latency") => TestKind::Latency,
        Some("throughput") => TestKind::Throughput,
        other => panic!("not a test: {other:?}"),
    };
    let mut req = TestRequest::default();
    while let Some(w) = words.next() {
        let name = match w {
            "-n" => "count",
            w => w.strip_prefix("--").expect("a flag"),
        };
        let v = words.next_if(|n| !n.starts_with("--"));
        req.set(name, v)?;
    }
    req.plan(test)
}

fn err(args: &str) -> String {
    plan(args).expect_err("should fail").0
}

#[test]
fn durations() {
    assert_eq!(
        parse_duration("--d", "10").unwrap(),
        Duration::from_secs(10)
    );
    assert_eq!(
        parse_duration("--d", "500ms").unwrap(),
        Duration::from_millis(500)
    );
    assert_eq!(
        parse_duration("--d", "2m").unwrap(),
        Duration::from_secs(120)
    );
    assert_eq!(
        parse_duration("--d", "1.5s").unwrap(),
        Duration::from_millis(1500)
    );
    assert!(parse_duration("--d", "5 parsecs").is_err());
    assert!(parse_duration("--d", "").is_err());
}

#[test]
fn cpu() {
    assert_eq!(parse_cpu(None, &[0, 1]).unwrap(), (Some(0), Some(1)));
    assert_eq!(parse_cpu(None, &[0]).unwrap(), (None, None));
    assert_eq!(parse_cpu(Some("1,0"), &[0, 1]).unwrap(), (Some(1), Some(0)));
    assert_eq!(parse_cpu(Some("none"), &[0, 1]).unwrap(), (None, None));
    assert!(
        parse_cpu(Some("0,5"), &[0, 1])
            .unwrap_err()
            .0
            .contains("cores 0-1")
    );
    assert!(parse_cpu(Some("x"), &[0, 1]).is_err());
}

/// Under `taskset -c 2,3` the default sides are cores 2 and 3, and 0 is
/// refused: the plan takes the process's own cores.
#[test]
fn cpu_defaults_to_the_process_cores() {
    assert_eq!(parse_cpu(None, &[2, 3]).unwrap(), (Some(2), Some(3)));
    assert!(parse_cpu(Some("0,1"), &[2, 3]).is_err());
}

#[test]
fn sizes_become_runs() {
    let p = plan("latency --size 32,64,1KiB").unwrap();
    let sizes: Vec<usize> = p.specs.iter().map(|s| s.size).collect();
    assert_eq!(sizes, vec![32, 64, 1024]);
    // Each run gets its own id (unique names for segments, ports, topics).
    assert_ne!(p.specs[0].endpoint.run_id, p.specs[1].endpoint.run_id);
}

#[test]
fn udp_limit_is_checked_before_running() {
    let e = err("latency --binding udp --size 64,100KiB");
    assert!(
        e.starts_with("--size 102400: exceeds udp's limit of 65507 bytes"),
        "{e}"
    );
}

#[test]
fn unknown_binding_lists_known() {
    let e = err("latency --binding nope");
    assert!(
        e.contains("unknown binding 'nope'") && e.contains("udp") && e.contains("tcp"),
        "{e}"
    );
}

#[test]
fn capability_errors_name_the_flag() {
    assert!(err("latency --binding udp --reliable").starts_with("--reliable"));
    assert!(err("latency --binding tcp --best-effort").starts_with("--best-effort"));
    assert!(err("latency --binding tcp --multicast").starts_with("--multicast"));
    assert!(err("latency --binding udp --zero-copy").starts_with("--zero-copy"));
    assert!(err("latency --binding udp --transport tcp").starts_with("--transport"));
    assert!(err("latency --binding uds --connect 10.0.0.1:1").starts_with("--connect"));
    assert!(err("latency --size 8").starts_with("--size 8"));
    assert!(err("latency --latency-every 10").starts_with("--latency-every"));
    assert!(err("latency --rate=-5").starts_with("--rate"));
    assert!(err("latency --duration 0").starts_with("--duration"));
    assert!(err("latency --size 1XB").starts_with("--size"));
    assert!(err("latency --opt foo").starts_with("--opt"));
    assert!(err("latency --binding udp --send-queue 5").starts_with("--send-queue 5"));
    assert!(err("latency --binding tcp --receive-queue 5").starts_with("--receive-queue 5"));
    assert!(err("latency --binding intra --send-queue 5").starts_with("--send-queue 5"));
}

/// iceoryx2 and iceoryx loan and busy-poll as their benchmarks do; the
/// others copy and block; each flag overrides.
#[test]
fn shared_memory_middleware_wait_and_loan_as_their_benchmarks() {
    for b in ["iceoryx2", "iceoryx"] {
        let e = &plan(&format!("latency --binding {b}"))
            .unwrap_or_else(|e| panic!("{b} (scripts/setup.sh installs iceoryx): {}", e.0))
            .specs[0]
            .endpoint;
        assert_eq!((e.wait, e.zero_copy), (WaitMode::Busy, true), "{b}");
        let e = &plan(&format!(
            "throughput --binding {b} --wait block --zero-copy false"
        ))
        .unwrap()
        .specs[0]
            .endpoint;
        assert_eq!((e.wait, e.zero_copy), (WaitMode::Block, false), "{b}");
    }
    let e = &plan("latency --binding udp").unwrap().specs[0].endpoint;
    assert_eq!((e.wait, e.zero_copy), (WaitMode::Block, false));
}

#[test]
fn defaults() {
    let p = plan("throughput --binding tcp").unwrap();
    let s = &p.specs[0];
    assert_eq!(s.endpoint.reliability, Reliability::Reliable);
    assert_eq!(s.endpoint.transport, "tcp");
    assert_eq!(s.duration_ns, 5_000_000_000);
    assert_eq!(s.warmup_ns, 1_000_000_000);
    let p = plan("latency --binding udp -n 100").unwrap();
    assert_eq!(p.specs[0].endpoint.reliability, Reliability::BestEffort);
    assert_eq!((p.specs[0].count, p.specs[0].duration_ns), (100, 0));
}

/// Issue 47: `--rate`, `--subscribers` and `--publishers` take lists, and
/// every combination with the sizes is one run, subscribers varying
/// slowest, then publishers, size and rate.
#[test]
fn axes_become_runs_in_order() {
    let p =
        plan("throughput --size 64,1KiB --rate 10,max --subscribers 1,2 --publishers 1,3").unwrap();
    let got: Vec<(usize, usize, usize, f64)> = p
        .specs
        .iter()
        .map(|s| (s.subscribers, s.publishers, s.size, s.rate))
        .collect();
    let mut want = Vec::new();
    for subs in [1, 2] {
        for pubs in [1, 3] {
            for size in [64, 1024] {
                for rate in [10.0, 0.0] {
                    want.push((subs, pubs, size, rate));
                }
            }
        }
    }
    assert_eq!(got, want);
    for s in &p.specs {
        // The endpoints and the result's config carry the point's values.
        assert_eq!(
            (s.endpoint.subscribers, s.endpoint.publishers),
            (s.subscribers, s.publishers)
        );
        let c = s.config_json();
        assert_eq!(c["rate"], s.rate, "{c}");
        assert_eq!(c["subscribers"], s.subscribers, "{c}");
        assert_eq!(c["publishers"], s.publishers, "{c}");
    }
    let ids: std::collections::HashSet<_> = p.specs.iter().map(|s| &s.endpoint.run_id).collect();
    assert_eq!(ids.len(), p.specs.len(), "each run its own id");
}

#[test]
fn rates_take_suffixes_and_max() {
    let p = plan("latency --rate 1,10,100,1k,10k,2.5M,max").unwrap();
    let rates: Vec<f64> = p.specs.iter().map(|s| s.rate).collect();
    assert_eq!(rates, vec![1.0, 10.0, 100.0, 1e3, 1e4, 2.5e6, 0.0]);
    // One value is one run, as before; no --rate is `max`.
    assert_eq!(plan("latency --rate 500").unwrap().specs[0].rate, 500.0);
    assert_eq!(plan("latency").unwrap().specs[0].rate, 0.0);
    let p = plan("throughput --subscribers 4").unwrap();
    assert_eq!((p.specs.len(), p.specs[0].subscribers), (1, 4));
}

#[test]
fn bad_lists_name_the_flag_and_the_fix() {
    let cases = [
        (
            "latency --rate 1,,10",
            "--rate: '1,,10' has an empty item (give rates separated by commas, like 1,10,100,1k,max)",
        ),
        (
            "latency --rate 10,",
            "--rate: '10,' has an empty item (give rates separated by commas, like 1,10,100,1k,max)",
        ),
        (
            "latency --rate 0",
            "--rate: '0' must be a positive number of samples per second (or max for no limit)",
        ),
        (
            "latency --rate 100,-5",
            "--rate: '-5' is not a rate (give samples per second like 100, 2.5k or 1M, or max for no limit)",
        ),
        (
            "latency --rate inf",
            "--rate: 'inf' is not a rate (give samples per second like 100, 2.5k or 1M, or max for no limit)",
        ),
        (
            "latency --rate 1k,1000",
            "--rate: 1k/s is given twice in '1k,1000' (give each rate once)",
        ),
        (
            "throughput --find-max --rate 10,max",
            "--find-max: searches the rate itself; drop --rate",
        ),
        (
            "throughput --find-max --rate max",
            "--find-max: searches the rate itself; drop --rate",
        ),
        (
            "throughput --pace sleep --rate max",
            "--pace: sets how a throughput test's --rate waits; add --rate N or drop --pace",
        ),
        (
            "throughput --demand 1:1:3 --rate 10,20",
            "--demand: paces the sender itself (bursts of N samples, then 10 ms pauses); drop --rate",
        ),
        (
            "throughput --subscribers 1,,2",
            "--subscribers '1,,2': an empty item (give counts from 1 to 64 separated by commas, like 1,2,4,8)",
        ),
        (
            "throughput --subscribers 1,0",
            "--subscribers 0: must be between 1 and 64",
        ),
        (
            "throughput --subscribers 2,65",
            "--subscribers 65: must be between 1 and 64",
        ),
        (
            "throughput --subscribers 2,x",
            "--subscribers 'x': not a count (give counts from 1 to 64 separated by commas, like 1,2,4,8)",
        ),
        (
            "throughput --subscribers 1,2,1",
            "--subscribers '1,2,1': 1 is given twice (give each count once)",
        ),
        (
            "throughput --publishers 2,2",
            "--publishers '2,2': 2 is given twice (give each count once)",
        ),
        (
            "latency --publishers 1,2",
            "--publishers: only for 'throughput' (the latency test is one ping-pong)",
        ),
        (
            "throughput --binding udp --connect 10.0.0.1:7400 --subscribers 1,2",
            "--subscribers 1,2: with --connect, the number of addresses (1) is the number of subscribers; give one count or drop --subscribers",
        ),
        (
            "throughput --binding udp --connect 10.0.0.1:7400 --subscribers 2",
            "--subscribers 2: with --connect, the number of addresses (1) is the number of subscribers",
        ),
        (
            "throughput --binding udp --connect-publishers 10.0.0.1:7500 --publishers 1,2",
            "--publishers 1,2: with --connect-publishers, this process plus the addresses (2) are the publishers; give one count or drop --publishers",
        ),
        (
            "throughput --binding udp --profile --publishers 1,2",
            "--profile: one publisher process only; drop --publishers/--connect-publishers",
        ),
    ];
    for (args, want) in cases {
        assert_eq!(err(args), want, "{args}");
    }
    // A binding's refusal holds at each point, naming the point.
    let e = err("throughput --binding tcp --publishers 1,2");
    assert!(
        e.starts_with("--publishers 2: tcp readers take one writer"),
        "{e}"
    );
}

/// Another tool's flag (a front end's) takes one value: lists are ours.
#[test]
fn front_ends_take_one_value() {
    let mut req = TestRequest::default();
    let mut applied = Vec::new();
    for (flag, ours) in [
        ("-numSubscribers", "subscribers"),
        ("-numPublishers", "publishers"),
        ("-pubRate", "rate"),
    ] {
        assert_eq!(
            req.set_for(flag, ours, Some("1,2"), &mut applied)
                .unwrap_err()
                .0,
            format!(
                "{flag} '1,2': takes one value (for a run per value, use pubsubperf's own --{ours} LIST)"
            )
        );
    }
    req.set_for("-numSubscribers", "subscribers", Some("3"), &mut applied)
        .unwrap();
    assert_eq!(req.subscribers, "3");
}

/// An agent at a loopback address shares this host's cores: its
/// subscriber is pinned as a local one is; another host's is not.
#[test]
fn a_loopback_agent_is_on_this_host() {
    assert!(super::on_this_host("127.0.0.1:7400"));
    assert!(super::on_this_host("[::1]:7400"));
    assert!(super::on_this_host("localhost:7400"));
    assert!(!super::on_this_host("192.0.2.10:7400"));
    assert!(!super::on_this_host("ssh://pi@127.0.0.1"));
}

/// A one-host run of a binding that prefers the host's own address
/// (cyclonedds over udp) runs on it, with discovery to it (none: this host
/// has no address but loopback, and the run keeps loopback); one of
/// another binding, or with a peer of another binding, keeps loopback.
#[test]
fn only_a_binding_that_prefers_it_takes_the_hosts_address() {
    let host = pubsubperf_core::sys::host_address().map(|a| a.to_string());
    let on = |args: &str| {
        let s = plan(args).unwrap().specs.remove(0);
        (s.data_address, s.endpoint.options.get("peers").cloned())
    };
    assert_eq!(
        on("latency --binding cyclonedds"),
        (host.clone(), host.clone())
    );
    assert_eq!(on("latency --binding fastdds"), (None, None));
    assert_eq!(
        on("latency --binding cyclonedds --peer-binding fastdds"),
        (None, None)
    );
    assert_eq!(on("latency --binding zenoh"), (None, None));
}
