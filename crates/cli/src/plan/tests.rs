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
    assert_eq!(parse_cpu(None, 2).unwrap(), (Some(0), Some(1)));
    assert_eq!(parse_cpu(None, 1).unwrap(), (None, None));
    assert_eq!(parse_cpu(Some("1,0"), 2).unwrap(), (Some(1), Some(0)));
    assert_eq!(parse_cpu(Some("none"), 2).unwrap(), (None, None));
    assert!(
        parse_cpu(Some("0,5"), 2)
            .unwrap_err()
            .0
            .contains("does not exist")
    );
    assert!(parse_cpu(Some("x"), 2).is_err());
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
