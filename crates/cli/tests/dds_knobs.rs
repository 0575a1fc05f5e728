//! The middleware knobs of issue 16 through the real binary: `--batch`,
//! `--max-blocking-time`, `--no-positive-acks`, `--bandwidth-limit`,
//! `--no-push-on-write`, `--multicast-ttl`, `--multicast-address` and
//! `--sleep`. Each is either
//! applied (the run delivers every sample and records the setting; the
//! binding crates' tests read the setting back from the middleware) or
//! refused with one line naming the flag and why, exit code 2. No test
//! asserts a latency or throughput figure.

mod dds;

use dds::*;

/// A flag no binding of `bindings` has: refused by each, naming the flag.
fn refused_by(bindings: &[&str], test: &str, args: &[&str], start: &str) {
    for b in bindings {
        let mut a = vec![test, "-b", b, "-n", "10"];
        a.extend_from_slice(args);
        usage_error(&a, start);
    }
}

#[test]
fn knobs_are_refused_where_nothing_applies_them() {
    let raw = ["udp", "tcp", "uds", "shm", "intra", "mock"];
    refused_by(
        &raw,
        "throughput",
        &["--no-positive-acks"],
        "--no-positive-acks: a DDS QoS, which",
    );
    refused_by(
        &raw,
        "throughput",
        &["--bandwidth-limit", "10MB"],
        "--bandwidth-limit: a DDS QoS, which",
    );
    refused_by(
        &raw,
        "throughput",
        &["--no-push-on-write"],
        "--no-push-on-write: a DDS QoS, which",
    );
    // Without multicast there is no TTL to set.
    refused_by(
        &["tcp", "shm"],
        "throughput",
        &["--multicast", "--multicast-ttl", "2"],
        "--multicast: ",
    );
    // Bindings without batching.
    refused_by(
        &["shm", "intra"],
        "throughput",
        &["--batch", "8KiB"],
        "--batch",
    );
    // A best-effort run has no reliable writer to bound.
    refused_by(
        &["udp"],
        "throughput",
        &["--max-blocking-time", "5s"],
        "--max-blocking-time 5s: bounds a reliable writer's wait",
    );
    usage_error(
        &["throughput", "-b", "tcp", "--max-blocking-time", "0"],
        "--max-blocking-time 0: must be at least 1ms",
    );
    usage_error(
        &["throughput", "-b", "tcp", "--multicast-ttl", "3"],
        "--multicast-ttl: needs --multicast",
    );
    usage_error(&["throughput", "--multicast", "--multicast-ttl", "300"], "");
    for (args, start) in [
        (
            &["--multicast", "--multicast-address", "10.1.2.3"][..],
            "--multicast-address 10.1.2.3: not a multicast address",
        ),
        (
            &["--multicast", "--multicast-address", "group"],
            "--multicast-address group: not an IP address",
        ),
        (
            &["--multicast-address", "239.1.2.3"],
            "--multicast-address 239.1.2.3: needs --multicast",
        ),
        (
            &["--multicast", "--multicast-address", "ff15::1"],
            "--multicast-address ff15::1: an IPv6 group, and the run is IPv4",
        ),
    ] {
        let mut a = vec!["throughput", "-b", "udp"];
        a.extend_from_slice(args);
        usage_error(&a, start);
    }
    // Bindings without multicast refuse it, naming --multicast.
    refused_by(
        &["tcp", "uds", "shm", "intra", "mock"],
        "throughput",
        &["--multicast", "--multicast-address", "239.1.2.3"],
        "--multicast: ",
    );
    usage_error(
        &["latency", "--sleep", "1ms"],
        "--sleep 1ms: only for 'throughput'",
    );
    usage_error(
        &["throughput", "--sleep", "1ms", "--rate", "100"],
        "--sleep 1ms: paces the publisher",
    );
    usage_error(
        &["throughput", "--bandwidth-limit", "0"],
        "--bandwidth-limit: bad size '0'",
    );
}

#[test]
fn dds_refusals_say_why() {
    require_dds("cyclonedds");
    require_dds("fastdds");
    let c = |args: &[&str], start: &str| {
        let mut a = vec!["throughput", "-b", "cyclonedds", "-n", "10"];
        a.extend_from_slice(args);
        usage_error(&a, start);
    };
    c(
        &["--no-positive-acks"],
        "--no-positive-acks: CycloneDDS 0.10 has no QoS",
    );
    c(
        &["--bandwidth-limit", "10MB"],
        "--bandwidth-limit: CycloneDDS 0.10 (OSS) has no flow controller",
    );
    c(
        &["--no-push-on-write"],
        "--no-push-on-write: CycloneDDS 0.10 always pushes",
    );
    c(
        &["--batch", "1000"],
        "--batch 1000: cyclonedds batches into one UDP packet",
    );
    c(
        &["-t", "shm", "--batch", "8KiB"],
        "--batch 8192: cyclonedds batches over --transport udp only",
    );
    let f = |args: &[&str], start: &str| {
        let mut a = vec!["throughput", "-b", "fastdds", "-n", "10"];
        a.extend_from_slice(args);
        usage_error(&a, start);
    };
    f(
        &["--batch", "8KiB"],
        "--batch 8192: Fast DDS 2.9 has no write batching",
    );
    f(
        &["--no-push-on-write"],
        "--no-push-on-write: Fast DDS 2.9 always pushes",
    );
    f(
        &["--bandwidth-limit", "1000"],
        "--bandwidth-limit 1000: fastdds's flow controller takes",
    );
    f(
        &["--no-positive-acks", "--best-effort"],
        "--no-positive-acks: applies to reliable",
    );
    f(
        &["-t", "shm", "--multicast", "--multicast-ttl", "2"],
        "--multicast",
    );
    // Across vendors, the side without the knob refuses it.
    usage_error(
        &[
            "throughput",
            "-b",
            "fastdds",
            "--peer-binding",
            "cyclonedds",
            "--no-positive-acks",
        ],
        "--no-positive-acks: CycloneDDS 0.10 has no QoS",
    );
}

/// A batched cyclonedds throughput run delivers every sample (nothing
/// stays in the batch at the end), flat out, paced (flushed before each
/// wait) and with `--sleep`; the result says it was batched.
#[test]
fn batched_cyclonedds_delivers_every_sample() {
    require_dds("cyclonedds");
    for extra in [
        &["--batch", "8KiB"][..],
        &["--batch", "60000", "--rate", "2000"],
        &["--batch", "8KiB", "--sleep", "1ms"],
    ] {
        let r = exact_run("cyclonedds", "cyclonedds", 1003, extra);
        let ep = &r["config"]["endpoint"];
        assert_eq!(
            ep["batch_bytes"],
            extra[1].replace("8KiB", "8192").parse::<u64>().unwrap()
        );
        if extra.contains(&"--sleep") {
            assert_eq!(r["config"]["sleep_ns"], 1_000_000);
        }
    }
    // The table's banner says so too.
    let o = run(&[
        "throughput",
        "-b",
        "cyclonedds",
        "--batch",
        "8KiB",
        "-n",
        "200",
        "--warmup",
        "100ms",
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("; as run: unicast discovery") && out.contains(", batched 8192 B,"),
        "{out}"
    );
}

/// udp applies `--multicast-ttl` to its writer's socket (read back in the
/// raw crate's tests); the run records it.
#[test]
fn udp_multicast_ttl_runs_and_is_recorded() {
    let r = run_json(&[
        "throughput",
        "-b",
        "udp",
        "--multicast",
        "--multicast-ttl",
        "2",
        "-n",
        "200",
        "--rate",
        "2000",
    ]);
    assert_eq!(r["config"]["endpoint"]["multicast_ttl"], 2);
    assert!(r["throughput"]["received"].as_u64().unwrap() > 0);
}

/// udp's readers join `--multicast-address` (read back from the kernel in
/// the raw crate's tests); the run delivers through it and records it.
#[test]
fn udp_multicast_address_runs_and_is_recorded() {
    let r = run_json(&[
        "throughput",
        "-b",
        "udp",
        "--multicast",
        "--multicast-address",
        "239.255.77.51",
        "-n",
        "200",
        "--rate",
        "2000",
    ]);
    assert_eq!(
        r["config"]["endpoint"]["multicast_address"],
        "239.255.77.51"
    );
    assert!(r["throughput"]["received"].as_u64().unwrap() > 0);
}

/// The knobs each DDS binding applies: the run delivers every sample and
/// the JSON records the setting.
#[test]
fn dds_knobs_run_and_are_recorded() {
    for b in ["cyclonedds", "fastdds"] {
        require_dds(b);
        let r = exact_run(b, b, 2000, &["--max-blocking-time", "2500ms"]);
        assert_eq!(r["config"]["endpoint"]["reliable_block_timeout_ms"], 2500);
        let r = exact_run(
            b,
            b,
            500,
            &["--multicast", "--multicast-ttl", "2", "--sleep", "1ms"],
        );
        assert_eq!(r["config"]["endpoint"]["multicast_ttl"], 2, "{b}");
        let r = exact_run(
            b,
            b,
            500,
            &["--multicast", "--multicast-address", "239.255.77.52"],
        );
        assert_eq!(
            r["config"]["endpoint"]["multicast_address"], "239.255.77.52",
            "{b}"
        );
    }
    // Without positive acks a sample lost on the way is repaired only while
    // the writer keeps it (100 ms): the run counts any loss, it need not be 0.
    let r = run_json(&[
        "throughput",
        "-b",
        "fastdds",
        "-n",
        "2000",
        "--reliable",
        "--no-positive-acks",
    ]);
    assert_eq!(r["config"]["endpoint"]["no_positive_acks"], true);
    let t = &r["throughput"];
    assert_eq!(t["sent"], 2000);
    assert_eq!(
        t["received"].as_u64().unwrap() + t["lost"].as_u64().unwrap(),
        2000,
        "{t}"
    );
    let r = exact_run("fastdds", "fastdds", 2000, &["--bandwidth-limit", "100MB"]);
    assert_eq!(r["config"]["endpoint"]["bandwidth_limit"], 100_000_000);
}

/// `--sleep` is the harness's, for every binding: 100 writes with 5 ms
/// after each cannot take less than 0.5 s (a bound from the sleeps, not a
/// performance figure), and every sample arrives.
#[test]
fn sleep_pauses_after_each_write() {
    for b in ["tcp", "intra"] {
        let r = run_json(&["throughput", "-b", b, "-n", "100", "--sleep", "5ms"]);
        assert_eq!(r["config"]["sleep_ns"], 5_000_000, "{b}");
        assert_eq!(r["throughput"]["received"], 100, "{b}");
        let d = r["duration_s"].as_f64().expect("duration_s");
        assert!(d >= 0.5, "{b}: 100 sleeps of 5 ms took {d} s");
    }
}

/// Without `--max-blocking-time` a reliable writer blocks as long as its
/// middleware's own default, recorded in the config: zenoh's
/// `wait_before_close`, ddsperf's max_blocking_time for CycloneDDS.
#[test]
fn a_writer_blocks_for_its_middlewares_own_time_by_default() {
    let r = exact_run("zenoh", "zenoh", 500, &[]);
    assert_eq!(r["config"]["endpoint"]["reliable_block_timeout_ms"], 5000);
    require_dds("cyclonedds");
    let r = exact_run("cyclonedds", "cyclonedds", 500, &[]);
    assert_eq!(r["config"]["endpoint"]["reliable_block_timeout_ms"], 10000);
}

/// A cyclonedds throughput run over udp batches as `ddsperf pub` does unless
/// `--batch` says otherwise; the config records what it did.
#[test]
fn cyclonedds_throughput_batches_as_ddsperf_pub_by_default() {
    require_dds("cyclonedds");
    let r = exact_run("cyclonedds", "cyclonedds", 2000, &[]);
    assert_eq!(r["config"]["endpoint"]["batch_bytes"], 14720);
    // Recorded among the settings unlike CycloneDDS's own defaults.
    // One-host cyclonedds runs on this host's own address (docs/bindings/
    // cyclonedds.md), loopback where it has none.
    let unicast = |r: &serde_json::Value| {
        let first = r["config"]["deviations"][0].as_str().unwrap().to_string();
        assert!(first.starts_with("unicast discovery"), "{first}");
        first
    };
    let u = unicast(&r);
    assert_eq!(
        r["config"]["deviations"],
        serde_json::json!([u, "batched 14720 B", "max blocking time 10 s"])
    );
    let r = exact_run("cyclonedds", "cyclonedds", 500, &["--batch", "0"]);
    let b = &r["config"]["endpoint"]["batch_bytes"];
    assert!(b.is_null() || b == 0, "--batch 0 batched: {b}");
    let u = unicast(&r);
    assert_eq!(
        r["config"]["deviations"],
        serde_json::json!([u, "max blocking time 10 s"])
    );
}
