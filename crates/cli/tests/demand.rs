//! RTI's Throughput example's demand ramp: `throughput --demand` over the
//! mock and udp bindings (one row per demand, every column filled, the
//! bursts' pacing), its bad values (one line, exit 2), and the example's
//! own command lines as two processes on this host over the default
//! middleware (`throughput-example`, seed 003's quick UDP line). No figure
//! is asserted but the bound the pacing sets on how many samples go out.

mod pair;

use pair::{Pair, bin, exits_within};
use std::path::Path;
use std::process::Output;
use std::time::Duration;

fn run(args: &[&str]) -> Output {
    bin()
        .args(args)
        .env(
            "PUBSUBPERF_TOKEN_FILE",
            concat!(env!("CARGO_TARGET_TMPDIR"), "/demand-agent.token"),
        )
        .output()
        .expect("runs")
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("json written")).expect("valid json")
}

/// A `--demand 100:100:300` ramp of 1 s per demand over `binding`:
/// checks the table, the JSON and the CSV, returns the runs.
fn ramp(binding: &str) -> Vec<serde_json::Value> {
    let dir = tempfile::tempdir().unwrap();
    let (j, c) = (dir.path().join("r.json"), dir.path().join("r.csv"));
    let o = run(&[
        "throughput",
        "-b",
        binding,
        "--size",
        "1024",
        "--demand",
        "100:100:300",
        "--recovery-time",
        "100",
        "--duration",
        "1s",
        "--warmup",
        "0s",
        "--cpu",
        "none",
        "-q",
        "--no-save",
        "--json",
        j.to_str().unwrap(),
        "--csv",
        c.to_str().unwrap(),
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{binding}: {}\n{out}",
        String::from_utf8_lossy(&o.stderr)
    );
    // The table: a header and one row per demand, all 16 columns filled.
    let lines: Vec<&str> = out.lines().collect();
    let head = lines
        .iter()
        .position(|l| l.trim_start().starts_with("Demand"))
        .unwrap_or_else(|| panic!("{binding}: no ramp table:\n{out}"));
    let header: Vec<&str> = lines[head].split_whitespace().collect();
    assert_eq!(
        header,
        [
            "Demand",
            "Length(B)",
            "Sent",
            "Rejected",
            "Received",
            "Lost",
            "Lost(%)",
            "Pub",
            "Smpl/s",
            "Pub",
            "Mbps",
            "Sub",
            "Smpl/s",
            "Sub",
            "Mbps",
            "Dur(s)",
            "CPUpub",
            "CPUsub",
            "RSSpub",
            "RSSsub"
        ]
    );
    for (k, d) in ["100", "200", "300"].iter().enumerate() {
        let row: Vec<&str> = lines[head + 1 + k].split_whitespace().collect();
        assert_eq!(row.len(), 16, "{binding}: {}", lines[head + 1 + k]);
        assert_eq!((row[0], row[1]), (*d, "1024"));
        assert!(
            row[14].ends_with("MiB") && row[15].ends_with("MiB"),
            "{row:?}"
        );
    }
    // The JSON: one run per demand, with both sides' figures.
    let runs = json(&j)["runs"].as_array().unwrap().clone();
    assert_eq!(runs.len(), 3, "{binding}");
    for (r, d) in runs.iter().zip([100u64, 200, 300]) {
        assert_eq!(r["config"]["demand"], d);
        assert_eq!(r["config"]["recovery_ms"], 100);
        assert_eq!(r["config"]["rate"], 0.0);
        let t = &r["throughput"];
        let sent = t["sent"].as_u64().unwrap();
        assert!(sent > 0, "{binding} demand {d}: nothing sent");
        assert!(
            t["received"].as_u64().unwrap() + t["lost"].as_u64().unwrap() == sent,
            "{binding} demand {d}: {t}"
        );
        assert!(t["sent_per_s"].as_f64().unwrap() > 0.0);
        assert!(t["samples_per_s"].as_f64().unwrap() > 0.0);
        assert!(t["rejected"].is_u64());
        // Bursts of d, each followed by 10 ms: at most d × 101 in 1 s.
        assert!(
            sent <= d * 101,
            "{binding} demand {d}: {sent} samples is more than the bursts allow"
        );
        for side in ["publisher", "subscriber"] {
            let res = &r["resources"][side];
            assert!(res["max_rss_kib"].as_u64().unwrap() > 0, "{side}: {res}");
            assert!(res["cpu_percent"].as_f64().unwrap() >= 0.0, "{side}: {res}");
        }
    }
    // The CSV: the demand column, fourth from the end.
    let csv = std::fs::read_to_string(&c).unwrap();
    let demands: Vec<&str> = csv.lines().map(|l| l.rsplit(',').nth(3).unwrap()).collect();
    assert_eq!(demands, ["demand", "100", "200", "300"]);
    runs
}

#[test]
fn demand_ramp_over_mock() {
    let runs = ramp("mock");
    for r in &runs {
        // Reliable and virtual: nothing lost, nothing refused.
        assert_eq!(r["throughput"]["lost"], 0);
        assert_eq!(r["throughput"]["rejected"], 0);
    }
}

#[test]
fn demand_ramp_over_udp() {
    ramp("udp");
}

/// Asserts a one-line error on stderr, exit code 2, starting with `start`.
fn usage_error(args: &[&str], start: &str) {
    let o = run(args);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
    assert_eq!(e.trim_end().lines().count(), 1, "{args:?}: {e}");
    assert!(
        e.starts_with(&format!("pubsubperf: {start}")),
        "{args:?}: {e}"
    );
}

#[test]
fn bad_demands_are_one_line_exit_2() {
    let t = |extra: &[&'static str]| {
        let mut v = vec!["throughput", "-b", "udp", "--no-save"];
        v.extend_from_slice(extra);
        v
    };
    usage_error(
        &t(&["--demand", "1000:1000"]),
        "--demand '1000:1000': not three numbers",
    );
    usage_error(&t(&["--demand", "a:1:2"]), "--demand 'a:1:2': START 'a'");
    usage_error(
        &t(&["--demand", "9000:1000:1000"]),
        "--demand '9000:1000:1000': END 1000 is below START 9000",
    );
    usage_error(
        &t(&["--demand", "1:0:5"]),
        "--demand '1:0:5': STEP must be at least 1",
    );
    usage_error(
        &t(&["--demand", "1:1:3", "--rate", "100"]),
        "--demand: paces the sender itself",
    );
    usage_error(&t(&["--demand", "1:1:3", "--find-max"]), "--demand: a ramp");
    usage_error(
        &t(&["--recovery-time", "5"]),
        "--recovery-time: the pause between demands",
    );
    usage_error(
        &["latency", "--demand", "1:1:3", "--no-save"],
        "--demand: only for 'throughput'",
    );
    usage_error(
        &[
            "throughput-example",
            "-middleware",
            "cyclonedds",
            "-demand",
            "1:1:2",
            "-no_push_on_write",
        ],
        "-no_push_on_write: --no-push-on-write: CycloneDDS 0.10 always pushes",
    );
    usage_error(
        &["throughput-example", "-demand", "3:1:1"],
        "-demand: --demand '3:1:1': END 1 is below START 3",
    );
}

/// Seed 003's "1-1 BE over UDP unicast" pair on this host, shortened (1 s
/// per demand, 1000:1000:3000), on the default middleware (RTI Connext, as
/// the example's: scripts/test.sh installs it): the subscriber
/// (-participantId 1) first, then the publisher, which reaches it through
/// -peer and prints its table, the subscriber its own; the subscriber
/// serves that session and exits.
#[test]
fn throughput_example_pair_over_udp() {
    let stdout = example_pair(
        "-domainId 88 -participantId 1 -nic 127.0.0.1 -transport 1 -peer 127.0.0.1",
        "-domainId 88 -nic 127.0.0.1 -transport 1 -peer 127.0.0.1 -subscribers 1 -duration 1 -size 1024 -demand 1000:1000:3000",
    );
    tables(&stdout, 1024, &["1000", "2000", "3000"]);
}

/// Seed 003's "1-1 pull SR over shmem" pair (reliable, the writer does not
/// push: Connext's pull-mode reliability), shortened, on Connext.
#[test]
fn throughput_example_pull_pair_over_shmem_on_connext() {
    let stdout = example_pair(
        "-domainId 88 -participantId 1 -nic 127.0.0.1 -transport 2 -peer shmem:// -reliable",
        "-domainId 88 -nic 127.0.0.1 -transport 2 -peer shmem:// -subscribers 1 -duration 1 -size 1024 -demand 1000:1000:2000 -reliable -no_push_on_write",
    );
    tables(&stdout, 1024, &["1000", "2000"]);
}

/// Runs one subscriber then one publisher of the example, both on the
/// default middleware, which must be Connext; each process's stdout.
fn example_pair(sub: &str, publisher: &str) -> Stdouts {
    let p = Pair::new("throughput-example");
    let (mut child, lines) = p.sub(sub);
    let out = p.run(publisher);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let status = exits_within(&mut child, Duration::from_secs(15), sub);
    let said = pair::rest(&lines);
    assert!(
        out.status.success(),
        "{publisher}: {:?}\n{stdout}\n{stderr}",
        out.status
    );
    assert!(status.success(), "{sub}: {status:?}: {said:?}");
    assert!(
        said.iter().any(|l| l.contains("session 1 ended")),
        "the subscriber served no session: {said:?}"
    );
    assert!(
        !stderr.contains("no -middleware given, so cyclonedds"),
        "prerequisite missing: RTI Connext's libraries (scripts/setup.sh --with-connext): {stderr}"
    );
    assert!(
        stderr.contains("Subscriber 1 (-participantId 1):"),
        "the publisher's standard error lacks the subscriber's table: {stderr}"
    );
    Stdouts {
        publisher: stdout,
        subscriber: p.sub_stdout(),
    }
}

/// What the example's two processes printed on their standard output.
struct Stdouts {
    publisher: String,
    subscriber: String,
}

/// Each process's standard output is its table alone, as seed 003's
/// "Typical output" shows it: `Starting test...`, a blank line, the
/// columns, one row per demand of `size` bytes (every field a number; the
/// subscriber's counts whole numbers), a blank line, `Test Completed.`.
fn tables(out: &Stdouts, size: usize, demands: &[&str]) {
    let rows = |stdout: &str, header: &str, whole: &[usize]| {
        let lines: Vec<&str> = stdout.lines().collect();
        assert_eq!(lines[..3], ["Starting test...", "", header], "{stdout}");
        let n = demands.len();
        assert_eq!(lines.len(), 3 + n + 2, "{stdout}");
        assert_eq!(lines[3 + n..], ["", "Test Completed."], "{stdout}");
        for (k, d) in demands.iter().enumerate() {
            let f: Vec<&str> = lines[3 + k].split(",\t").collect();
            assert_eq!(f.len(), header.split('\t').count(), "{:?}", lines[3 + k]);
            assert_eq!(f[0], size.to_string(), "{stdout}");
            for v in &f {
                assert!(v.parse::<f64>().is_ok(), "not a number: {v:?} in\n{stdout}");
            }
            for &i in whole {
                assert!(
                    f[i].parse::<u64>().is_ok(),
                    "not a count: {:?} in\n{stdout}",
                    f[i]
                );
            }
            let demand = if header.starts_with("bytes\tsamples") {
                f[4]
            } else {
                f[1]
            };
            assert_eq!(demand, *d, "{stdout}");
        }
    };
    rows(
        &out.publisher,
        "bytes\tsamples\tMbit/sec\tduration\tdemand\tCPU %\tmemory",
        &[0, 1, 4],
    );
    rows(
        &out.subscriber,
        "bytes\tdemand\tsamples\tlost(A)\tNreject\tlost(N)\tMbit/s\tduration\tCPU %\tmemory",
        &[0, 1, 2, 3, 4, 5],
    );
}

/// On the mock binding's virtual clock the pauses are exact: 250 samples
/// in bursts of 100 take two 10 ms pauses (after the 100th and the 200th
/// write) more than the same 250 unpaced.
#[test]
fn demand_pauses_are_exact_on_the_mock_clock() {
    let dir = tempfile::tempdir().unwrap();
    let duration = |extra: &[&str], name: &str| -> f64 {
        let out = dir.path().join(name);
        let mut args = vec![
            "throughput",
            "-b",
            "mock",
            "-n",
            "250",
            "--warmup",
            "0s",
            "--no-save",
            "-q",
            "--json",
        ];
        args.push(out.to_str().unwrap());
        args.extend_from_slice(extra);
        let o = run(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let r = &json(&out)["runs"][0];
        assert_eq!(r["throughput"]["sent"], 250);
        r["duration_s"].as_f64().unwrap()
    };
    let paced = duration(&["--demand", "100:100:100"], "paced.json");
    let unpaced = duration(&[], "unpaced.json");
    assert!(
        (paced - unpaced - 0.020).abs() < 1e-9,
        "paced {paced} s, unpaced {unpaced} s: not two 10 ms pauses apart"
    );
}

/// Seed 003's "1-4 BE 32 bytes over UDP multicast" lines, one subscriber,
/// shortened (1 s, one demand): the subscriber's `-mcast_recv_addr`
/// becomes its readers' group, which the kernel shows joined while the
/// publisher (`-multicast_ttl 1`: a multicast run) runs; without
/// `-multicast_ttl` the publisher's run is unicast and the subscriber
/// refuses it naming the flag, rather than ignoring its group.
#[test]
fn throughput_example_multicast_pair() {
    use pubsubperf_testkit::groups::is_joined;
    let group: std::net::IpAddr = "225.3.2.1".parse().unwrap();
    let sub = "-domainId 88 -participantId 1 -nic 127.0.0.1 -transport 1 -peer 127.0.0.1 -mcast_recv_addr 225.3.2.1";
    let publisher = "-domainId 88 -nic 127.0.0.1 -transport 1 -peer 127.0.0.1 -subscribers 1 -duration 1 -size 32 -demand 1000:1000:1000 -multicast_ttl 1";
    let p = Pair::new("throughput-example");
    let (mut child, lines) = p.sub(sub);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (out, seen) = std::thread::scope(|s| {
        let watch = s.spawn(|| {
            let mut seen = false;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                seen |= is_joined(group);
                std::thread::sleep(Duration::from_millis(20));
            }
            seen
        });
        let out = p.run(publisher);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        (out, watch.join().unwrap())
    });
    let status = exits_within(&mut child, Duration::from_secs(15), sub);
    let said = pair::rest(&lines);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{publisher}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(status.success(), "{sub}: {status:?}: {said:?}");
    assert!(stdout.contains("Test Completed."), "{stdout}");
    assert!(seen, "225.3.2.1 was never joined during the run");

    let p = Pair::new("throughput-example");
    let (mut child, _lines) = p.sub(sub);
    let unicast = publisher.replace(" -multicast_ttl 1", "");
    let out = p.run(&unicast);
    let _ = exits_within(&mut child, Duration::from_secs(15), sub);
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "{all}");
    assert!(
        all.contains(
            "--multicast-address 225.3.2.1: this subscriber receives on a multicast group"
        ),
        "{all}"
    );
}
