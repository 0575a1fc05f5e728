//! Issue 47: `--rate`, `--subscribers` and `--publishers` take lists, and
//! every combination with the sizes is one run, with its values in its
//! config. The real binary over udp; no test asserts a latency or
//! throughput figure, only what was run, the accounting and that every
//! process a command started is gone when it ends.

use pubsubperf_testkit::process::{children, wait_gone_within};
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// The binary, with the agents' token in the target directory and never
/// the user's results database.
fn bin(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pubsubperf"));
    c.env(
        "PUBSUBPERF_TOKEN_FILE",
        concat!(env!("CARGO_TARGET_TMPDIR"), "/axes-agent.token"),
    );
    c.args(args).arg("--no-save");
    c
}

/// Runs a measuring command to its end, watching its child processes (the
/// subscribers and extra publishers of each session); asserts it succeeded
/// and that every child it had is gone. Returns its output and how many
/// children were seen.
fn run_watched(args: &[&str]) -> (Output, usize) {
    let mut child = bin(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    let pid = child.id();
    // The pipes are read by threads so that a full pipe never stalls it.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let read_out = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut out, &mut v).unwrap();
        v
    });
    let read_err = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut err, &mut v).unwrap();
        v
    });
    let mut seen = BTreeSet::new();
    let status = loop {
        seen.extend(children(pid));
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let o = Output {
        status,
        stdout: read_out.join().unwrap(),
        stderr: read_err.join().unwrap(),
    };
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    for k in &seen {
        wait_gone_within(*k, "a process of the command", Duration::from_secs(5));
    }
    (o, seen.len())
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("json written")).expect("valid json")
}

#[test]
fn a_latency_run_per_rate() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("r.json");
    let (o, _) = run_watched(&[
        "latency",
        "-b",
        "udp",
        "-s",
        "64",
        "--rate",
        "100,1k,max",
        "-n",
        "200",
        "--warmup",
        "0s",
        "-q",
        "--json",
        f.to_str().unwrap(),
    ]);
    let v = json(&f);
    let runs = v["runs"].as_array().unwrap();
    let rates: Vec<f64> = runs
        .iter()
        .map(|r| r["config"]["rate"].as_f64().unwrap())
        .collect();
    assert_eq!(rates, [100.0, 1000.0, 0.0]);
    for r in runs {
        let (c, p) = (&r["config"], &r["pings"]);
        assert_eq!(
            (r["size"].as_u64(), c["count"].as_u64()),
            (Some(64), Some(200))
        );
        assert_eq!(c["subscribers"], 1);
        assert_eq!(p["sent"], 200, "{p}");
        let echoed = p["echoed"].as_u64().unwrap();
        assert_eq!(echoed + p["lost"].as_u64().unwrap(), 200, "{p}");
        // At a rate the coordinated-omission correction may add the
        // round trips a late echo held back; without one, none.
        let recorded = r["latency_ns"]["count"].as_u64().unwrap();
        if c["rate"] == 0.0 {
            assert_eq!(recorded, echoed);
        } else {
            assert!(recorded >= echoed, "{recorded} < {echoed}");
        }
    }
    // The table has a rate column, one row per rate.
    let s = String::from_utf8_lossy(&o.stdout);
    let head = s
        .lines()
        .find(|l| l.contains("Length(B)"))
        .unwrap_or_else(|| panic!("{s}"));
    assert!(head.trim_start().starts_with("Rate  Length(B)"), "{s}");
    for rate in ["100/s", "1k/s", "max"] {
        assert!(
            s.lines()
                .any(|l| l.trim_start().starts_with(&format!("{rate} "))),
            "no {rate} row: {s}"
        );
    }
}

#[test]
fn a_throughput_run_per_subscribers_and_publishers() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("r.json");
    let (o, seen) = run_watched(&[
        "throughput",
        "-b",
        "udp",
        "-s",
        "64",
        "--subscribers",
        "1,2",
        "--publishers",
        "1,2",
        "--rate",
        "2k",
        "-n",
        "200",
        "--warmup",
        "0s",
        "-q",
        "--json",
        f.to_str().unwrap(),
    ]);
    let v = json(&f);
    let runs = v["runs"].as_array().unwrap();
    let points: Vec<(u64, u64)> = runs
        .iter()
        .map(|r| {
            let c = &r["config"];
            assert_eq!(c["endpoint"]["subscribers"], c["subscribers"]);
            assert_eq!(c["endpoint"]["publishers"], c["publishers"]);
            assert_eq!(c["rate"], 2000.0);
            (
                c["subscribers"].as_u64().unwrap(),
                c["publishers"].as_u64().unwrap(),
            )
        })
        .collect();
    // Subscribers vary slowest, then publishers.
    assert_eq!(points, [(1, 1), (1, 2), (2, 1), (2, 2)]);
    for (r, &(subs, pubs)) in runs.iter().zip(&points) {
        // Each publisher sends 200 to each subscriber.
        let t = &r["throughput"];
        assert_eq!(t["sent"].as_u64(), Some(200 * subs * pubs), "{t}");
        assert_eq!(
            t["sent"].as_u64().unwrap(),
            t["received"].as_u64().unwrap() + t["lost"].as_u64().unwrap(),
            "{t}"
        );
        let per = |k: &str, n: u64| {
            let list = r[k].as_array().map_or(&[][..], |a| a.as_slice());
            if n > 1 {
                assert_eq!(list.len() as u64, n, "{k}: {r}");
            }
            for x in list {
                assert_eq!(
                    x["sent"].as_u64().unwrap(),
                    x["received"].as_u64().unwrap() + x["lost"].as_u64().unwrap(),
                    "{k}: {x}"
                );
            }
        };
        per("subscribers", subs);
        per("publishers", pubs);
    }
    // The sessions' processes: the subscriber processes and the extra
    // publishers of each (subscribers, publishers) pair.
    assert!(seen >= 2, "{seen} child processes seen");
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(s.contains("subscribers per row"), "{s}");
    assert!(
        s.lines()
            .any(|l| l.trim_start().starts_with("Subs    Pubs  Length(B)")),
        "{s}"
    );
}

/// Bad lists are one line naming the flag, exit code 2, and start nothing.
#[test]
fn bad_lists_are_one_line_exit_2() {
    for (args, needle) in [
        (
            &["latency", "--rate", "1,,10"][..],
            "--rate: '1,,10' has an empty item",
        ),
        (
            &["latency", "--rate", "0"],
            "--rate: '0' must be a positive number",
        ),
        (&["latency", "--rate", "10,10"], "is given twice"),
        (&["throughput", "--find-max", "--rate", "max"], "--find-max"),
        (&["throughput", "--subscribers", "1,0"], "--subscribers 0"),
        (
            &["throughput", "--subscribers", "2,2"],
            "--subscribers '2,2'",
        ),
        (&["latency", "--publishers", "1,2"], "--publishers"),
        (
            &[
                "throughput",
                "-b",
                "udp",
                "--connect",
                "127.0.0.1:9",
                "--subscribers",
                "1,2",
            ],
            "give one count or drop --subscribers",
        ),
        (&["latency", "--topics", "0"], "--topics 0"),
        (
            &["latency", "--topics", "2", "--connect", "127.0.0.1:9"],
            "--topics 2: with --connect",
        ),
        (
            &["throughput", "--topics", "1,2", "--find-max"],
            "--topics 1,2: --find-max",
        ),
    ] {
        let o = bin(args).output().expect("runs");
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert_eq!(e.trim_end().lines().count(), 1, "{args:?}: {e}");
        assert!(e.contains(needle), "{args:?}: {e}");
    }
}

/// `--topics`: one run per count, each topic a whole run of its own (its
/// own subscriber process) measured side by side; the run holds every
/// topic's pings together and each topic's own.
#[test]
fn a_latency_run_per_topic_count() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("t.json");
    let (_, children) = run_watched(&[
        "latency",
        "-b",
        "udp",
        "-s",
        "64",
        "--topics",
        "1,3",
        "-n",
        "300",
        "--warmup",
        "0s",
        "-q",
        "--json",
        f.to_str().unwrap(),
    ]);
    assert!(children >= 4, "a subscriber process per topic: {children}");
    let v = json(&f);
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert!(
        runs[0]["config"].get("topics").is_none(),
        "one topic is not recorded"
    );
    assert!(runs[0].get("by_topic").is_none());
    let r = &runs[1];
    assert_eq!(r["config"]["topics"], 3);
    let topics = r["by_topic"].as_array().unwrap();
    assert_eq!(topics.len(), 3);
    let mut echoed = 0;
    for t in topics {
        assert_eq!(t["pings"]["sent"], 300, "{t}");
        echoed += t["pings"]["echoed"].as_u64().unwrap();
        assert_eq!(t["latency_ns"]["count"], t["pings"]["echoed"]);
    }
    assert_eq!(r["pings"]["sent"], 900);
    assert_eq!(r["latency_ns"]["count"].as_u64(), Some(echoed));
}

/// Throughput with `--topics` over the mock: exact counts, summed.
#[test]
fn a_throughput_run_sums_its_topics() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("t.json");
    run_watched(&[
        "throughput",
        "-b",
        "mock",
        "-s",
        "64",
        "--topics",
        "4",
        "-n",
        "5000",
        "--warmup",
        "0s",
        "-q",
        "--json",
        f.to_str().unwrap(),
    ]);
    let v = json(&f);
    let r = &v["runs"][0];
    assert_eq!(r["config"]["topics"], 4);
    let t = &r["throughput"];
    assert_eq!(
        (
            t["sent"].as_u64(),
            t["received"].as_u64(),
            t["lost"].as_u64()
        ),
        (Some(20_000), Some(20_000), Some(0))
    );
    for topic in r["by_topic"].as_array().unwrap() {
        assert_eq!(topic["throughput"]["received"], 5000, "{topic}");
    }
    let sum: f64 = r["by_topic"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["throughput"]["samples_per_s"].as_f64().unwrap())
        .sum();
    assert!((sum - t["samples_per_s"].as_f64().unwrap()).abs() < 1e-6 * sum);
}

/// Fan-out with several subscribers on one host: per sample, its delay to
/// the first and to the last subscriber, and the spread, recorded for
/// every ping (latency) and every Nth sample (throughput); nothing with
/// one subscriber.
#[test]
fn several_subscribers_record_the_fan_out() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("f.json");
    run_watched(&[
        "latency",
        "-b",
        "udp",
        "-s",
        "64",
        "--subscribers",
        "1,3",
        "-n",
        "500",
        "--warmup",
        "0s",
        "-q",
        "--json",
        f.to_str().unwrap(),
    ]);
    let v = json(&f);
    let runs = v["runs"].as_array().unwrap();
    assert!(
        runs[0].get("fan_out").is_none(),
        "one subscriber: no fan-out"
    );
    let fo = &runs[1]["fan_out"];
    assert_eq!(
        (fo["every"].as_u64(), fo["subscribers"].as_u64()),
        (Some(1), Some(3)),
        "{fo}"
    );
    let n = fo["samples"].as_u64().unwrap();
    assert!(n > 0 && n <= 500, "{fo}");
    for k in ["first_ns", "last_ns", "spread_ns"] {
        assert_eq!(fo[k]["count"].as_u64(), Some(n), "{k}: {fo}");
    }
    let g = |k: &str, q: &str| fo[k][q].as_u64().unwrap();
    assert!(g("first_ns", "min") <= g("last_ns", "min"));
    assert!(g("first_ns", "max") <= g("last_ns", "max"));
    assert!(g("spread_ns", "max") <= g("last_ns", "max") - g("first_ns", "min"));
    assert!(runs[1]["config"].get("fan_out_every").is_none());
    // Throughput: every sample of a 20000-sample run (16384 slots hold
    // every 2nd).
    run_watched(&[
        "throughput",
        "-b",
        "udp",
        "-s",
        "64",
        "--subscribers",
        "2",
        "-n",
        "20000",
        "--rate",
        "20k",
        "--warmup",
        "0s",
        "-q",
        "--json",
        f.to_str().unwrap(),
    ]);
    let v = json(&f);
    let fo = &v["runs"][0]["fan_out"];
    assert_eq!(fo["every"], 2, "{fo}");
    assert!(fo["samples"].as_u64().unwrap() <= 10_000, "{fo}");
}
