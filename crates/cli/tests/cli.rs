//! Integration tests: run the real binary. No test asserts a latency or
//! throughput figure; they check behaviour, accounting and clean-up.

use pubsubperf_testkit::process::{children, wait_gone_within};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Every command of these tests finds the agents' token in the target
/// directory, not in the user's configuration.
fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pubsubperf"));
    c.env(
        "PUBSUBPERF_TOKEN_FILE",
        concat!(env!("CARGO_TARGET_TMPDIR"), "/cli-agent.token"),
    );
    c
}

/// Measuring commands get `--no-save`: tests never write the user's
/// results database.
fn with_no_save<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut v = args.to_vec();
    if matches!(args.first(), Some(&"latency") | Some(&"throughput")) && !args.contains(&"--bogus")
    {
        v.push("--no-save");
    }
    v
}

fn run(args: &[&str]) -> Output {
    bin().args(with_no_save(args)).output().expect("runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("json written")).expect("valid json")
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("tempdir")
}

/// Asserts a one-line error on stderr, exit code 2, mentioning `needle`.
fn usage_error(args: &[&str], needle: &str) {
    let o = run(args);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
    assert_eq!(
        e.trim_end().lines().count(),
        1,
        "{args:?}: not one line: {e}"
    );
    assert!(e.contains(needle), "{args:?}: {e}");
}

#[test]
fn bad_input_is_one_line_exit_2() {
    usage_error(&["latency", "--bogus"], "--bogus");
    usage_error(&["latency", "--size", "12XB"], "--size");
    usage_error(&["latency", "--size", "abc"], "--size");
    usage_error(&["latency", "--binding", "nope"], "known: udp, tcp");
    usage_error(
        &["latency", "--binding", "udp", "--size", "70000"],
        "exceeds udp's limit of 65507",
    );
    usage_error(
        &["throughput", "--binding", "tcp", "--best-effort"],
        "--best-effort",
    );
    usage_error(&["latency", "--cpu", "0,99"], "--cpu");
    usage_error(&["latency", "--duration", "soon"], "--duration");
    usage_error(&["nonsense"], "nonsense");
    // clap names a missing argument on a line of its own: the one line
    // keeps it.
    usage_error(&["calibrate", "--link-only"], "--no-save");
}

#[test]
fn calibrate_link_only_measures_the_cache_line_alone() {
    let d = tmp();
    let f = d.path().join("link.json");
    let o = run(&[
        "calibrate",
        "--link-only",
        "--no-save",
        "--json",
        f.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("cache line, cores 0->1: round trip p50 "),
        "{}",
        stdout(&o)
    );
    let v = json(&f);
    assert!(v["cache_line"]["rtt_p50_ns"].as_f64().unwrap() > 0.0, "{v}");
    assert_eq!(v.as_object().unwrap().len(), 1, "the link alone: {v}");
}

#[test]
fn bindings_lists_capabilities() {
    let o = run(&["bindings"]);
    assert!(o.status.success());
    let s = stdout(&o);
    for b in ["udp", "tcp", "uds", "intra"] {
        assert!(
            s.lines().any(|l| l.starts_with(b) && l.contains("yes (")),
            "{b}: {s}"
        );
    }
    let o = run(&["bindings", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let udp = v
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "udp")
        .unwrap();
    assert_eq!(udp["capabilities"]["max_sample_size"], 65507);
    assert_eq!(udp["capabilities"]["reliable"], false);
}

fn check_latency_run(r: &serde_json::Value, binding: &str, size: u64, count: u64) {
    assert_eq!(r["binding"], binding);
    assert_eq!(r["test"], "latency");
    assert_eq!(r["size"], size);
    assert_eq!(r["complete"], true, "{r}");
    let l = &r["latency_ns"];
    assert_eq!(l["count"], count);
    let (min, p50, p99, max) = (
        l["min"].as_u64().unwrap(),
        l["p50"].as_u64().unwrap(),
        l["p99"].as_u64().unwrap(),
        l["max"].as_u64().unwrap(),
    );
    assert!(min > 0 && min <= p50 && p50 <= p99 && p99 <= max, "{l}");
    assert!(!l["histogram"].as_str().unwrap().is_empty());
    assert_eq!(r["latency_method"], "one-way = round trip / 2");
    assert!(r["resources"]["publisher"]["max_rss_kib"].as_u64().unwrap() > 0);
    assert!(
        r["resources"]["subscriber"]["max_rss_kib"]
            .as_u64()
            .unwrap()
            > 0
    );
}

#[test]
fn latency_every_raw_binding_with_sizes() {
    for b in ["udp", "tcp", "uds", "intra"] {
        let d = tmp();
        let j = d.path().join("r.json");
        let c = d.path().join("r.csv");
        let o = run(&[
            "latency",
            "-b",
            b,
            "-s",
            "32,1KiB",
            "-n",
            "300",
            "--warmup",
            "100ms",
            "-q",
            "--check",
            "--json",
            j.to_str().unwrap(),
            "--csv",
            c.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{b}: {}", stderr(&o));
        assert!(stdout(&o).contains("round trip / 2"), "{b}");
        let v = json(&j);
        assert_eq!(v["tool"]["name"], "pubsubperf");
        assert!(v["environment"]["bindings"][b].is_string());
        let runs = v["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2);
        check_latency_run(&runs[0], b, 32, 300);
        check_latency_run(&runs[1], b, 1024, 300);
        assert_eq!(runs[0]["bad_samples"], 0);
        let csv = std::fs::read_to_string(&c).unwrap();
        assert_eq!(csv.lines().count(), 3);
    }
}

#[test]
fn throughput_counts_exactly_on_reliable_bindings() {
    for b in ["tcp", "uds", "intra"] {
        let d = tmp();
        let j = d.path().join("r.json");
        let o = run(&[
            "throughput",
            "-b",
            b,
            "-s",
            "200",
            "-n",
            "20000",
            "--warmup",
            "100ms",
            "-q",
            "--check",
            "--latency-every",
            "100",
            "--json",
            j.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{b}: {}", stderr(&o));
        let r = &json(&j)["runs"][0];
        let t = &r["throughput"];
        assert_eq!(t["sent"], 20000, "{b}");
        assert_eq!(t["received"], 20000, "{b}");
        assert_eq!(t["lost"], 0, "{b}");
        assert_eq!(t["bytes"], 20000 * 200, "{b}");
        assert_eq!(t["duplicates"], 0);
        assert_eq!(r["bad_samples"], 0);
        assert!(
            r["latency_ns"]["count"].as_u64().unwrap() > 0,
            "{b}: latency under load"
        );
    }
}

#[test]
fn udp_throughput_accounts_every_sample() {
    let d = tmp();
    let j = d.path().join("r.json");
    let o = run(&[
        "throughput",
        "-b",
        "udp",
        "-s",
        "64",
        "--duration",
        "1s",
        "--warmup",
        "100ms",
        "-q",
        "--json",
        j.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = &json(&j)["runs"][0]["throughput"];
    let (sent, rec, lost) = (
        t["sent"].as_u64().unwrap(),
        t["received"].as_u64().unwrap(),
        t["lost"].as_u64().unwrap(),
    );
    assert!(sent > 0);
    assert_eq!(sent, rec + lost, "{t}");
}

/// The local ports of the IPv4 UDP sockets that processes `pids` hold
/// (their descriptors' socket inodes, looked up in /proc/net/udp).
fn udp_ports(pids: &[u32]) -> Vec<u16> {
    let mut inodes = Vec::new();
    for pid in pids {
        for fd in std::fs::read_dir(format!("/proc/{pid}/fd"))
            .into_iter()
            .flatten()
            .flatten()
        {
            if let Ok(l) = std::fs::read_link(fd.path())
                && let Some(i) = l.to_string_lossy().strip_prefix("socket:[")
            {
                inodes.push(i.trim_end_matches(']').to_string());
            }
        }
    }
    let table = std::fs::read_to_string("/proc/net/udp").unwrap();
    table
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let port = u16::from_str_radix(f[1].rsplit(':').next()?, 16).ok()?;
            inodes.contains(&f[9].to_string()).then_some(port)
        })
        .collect()
}

/// Runs `throughput -b udp` with `extra` arguments while a third party
/// sends 200 datagrams to each of the run's UDP ports (random bytes, and
/// well-formed headers with the wrong key and sequence numbers far ahead);
/// the run's result.
fn udp_throughput_with_strangers(extra: &[&str]) -> serde_json::Value {
    let d = tmp();
    let j = d.path().join("r.json");
    let mut args = vec![
        "throughput",
        "-b",
        "udp",
        "-s",
        "64",
        "--rate",
        "5000",
        "--duration",
        "3s",
        "--warmup",
        "0s",
        "-q",
        "--json",
        j.to_str().unwrap(),
    ];
    args.extend(extra);
    let child = bin()
        .args(with_no_save(&args))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1200));
    let mut pids = vec![child.id()];
    pids.extend(children(child.id()));
    let ports = udp_ports(&pids);
    assert!(!ports.is_empty(), "no udp socket found for {pids:?}");
    let stranger = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    for i in 0..200u64 {
        let mut b = vec![0u8; (i as usize * 37) % 120];
        for (k, x) in b.iter_mut().enumerate() {
            *x = (i as u8)
                .wrapping_mul(151)
                .wrapping_add(k as u8)
                .wrapping_mul(29);
        }
        if i % 2 == 0 && b.len() >= 24 {
            b[..8].copy_from_slice(&(1_000_000 + i).to_le_bytes());
            b[6] = 0;
            b[7] = 0;
        }
        for &p in &ports {
            let _ = stranger.send_to(&b, ("127.0.0.1", p));
        }
    }
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let r = json(&j)["runs"][0].clone();
    let t = &r["throughput"];
    assert_eq!(r["complete"], true, "{r}");
    assert_eq!(t["out_of_order"], 0, "{t}");
    assert_eq!(t["duplicates"], 0, "{t}");
    let (s, rec, lost) = (
        t["sent"].as_u64().unwrap(),
        t["received"].as_u64().unwrap(),
        t["lost"].as_u64().unwrap(),
    );
    assert_eq!(s, rec + lost, "{t}");
    assert!(lost < s / 10, "foreign datagrams counted as loss: {t}");
    r
}

/// A third party's datagrams on a run's data ports never reach the
/// figures: with one publisher the reader is connected to the sender of
/// the run's first sample and the kernel drops them (none even counted as
/// foreign); with several, the reader takes them and counts them as
/// foreign, never as received, lost, reordered or duplicated.
#[test]
fn foreign_datagrams_on_the_data_ports_never_reach_the_figures() {
    let one = udp_throughput_with_strangers(&[]);
    assert_eq!(one.get("foreign_samples"), None, "{one}");
    let two = udp_throughput_with_strangers(&["--publishers", "2"]);
    assert!(two["foreign_samples"].as_u64().unwrap_or(0) > 0, "{two}");
}

#[test]
fn rate_paces_the_publisher() {
    let d = tmp();
    let j = d.path().join("r.json");
    let o = run(&[
        "throughput",
        "-b",
        "tcp",
        "--rate",
        "2000",
        "--duration",
        "1s",
        "--warmup",
        "0s",
        "-q",
        "--json",
        j.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = &json(&j)["runs"][0]["throughput"];
    // 2000/s for 1 s: the schedule allows 2000 (+1 for the first at t=0).
    let sent = t["sent"].as_u64().unwrap();
    assert!((1990..=2001).contains(&sent), "{sent}");
    let o = run(&[
        "latency",
        "-b",
        "udp",
        "--rate",
        "500",
        "-n",
        "200",
        "--warmup",
        "0s",
        "-q",
        "--json",
        j.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(json(&j)["runs"][0]["config"]["rate"].as_f64().unwrap() == 500.0);
}

#[test]
fn multicast_ipv6_and_busy_wait() {
    for args in [
        &["latency", "-b", "udp", "--multicast"][..],
        &["latency", "-b", "udp", "--ipv6"][..],
        &["latency", "-b", "tcp", "--ipv6", "--wait", "busy"][..],
        &[
            "latency",
            "-b",
            "udp",
            "--wait",
            "busy",
            "--subscribers",
            "2",
        ][..],
        &[
            "throughput",
            "-b",
            "tcp",
            "--subscribers",
            "3",
            "--batch",
            "8KiB",
        ][..],
    ] {
        let mut a = args.to_vec();
        a.extend(["-n", "200", "--warmup", "0s", "-q"]);
        let o = run(&a);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    }
}

/// Round trips are timed by the TSC only with busy waits, and only where the
/// kernel keeps time with it (see `round_trip_clock` in the harness); the
/// result says which clock timed them.
#[test]
fn round_trip_clock_is_recorded() {
    let tsc =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .is_ok_and(|s| s.trim() == "tsc")
            && cfg!(target_arch = "x86_64");
    // --clock monotonic keeps CLOCK_MONOTONIC with busy waits (the method of
    // peer tools and of our minimal comparison programs), and the config says so.
    for (args, clock, config) in [
        (
            &["--wait", "busy"][..],
            if tsc { "tsc" } else { "clock_monotonic" },
            None,
        ),
        (&["--wait", "block"][..], "clock_monotonic", None),
        (
            &["--wait", "busy", "--clock", "monotonic"][..],
            "clock_monotonic",
            Some("monotonic"),
        ),
    ] {
        let d = tmp();
        let j = d.path().join("r.json");
        let mut a = vec![
            "latency", "-b", "udp", "-n", "300", "--warmup", "0s", "-q", "--json",
        ];
        a.push(j.to_str().unwrap());
        a.extend(args);
        let o = run(&a);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let r = &json(&j)["runs"][0];
        check_latency_run(r, "udp", 64, 300);
        assert_eq!(r["latency_clock"], clock, "{args:?}");
        if let Some(c) = config {
            assert_eq!(r["config"]["clock"], c, "{args:?}");
        }
    }
}

#[test]
fn clock_choices_that_cannot_work_are_refused() {
    usage_error(&["latency", "-b", "udp", "--clock", "tsc"], "--clock tsc");
    usage_error(
        &[
            "latency",
            "-b",
            "udp",
            "--clock",
            "tsc",
            "--wait",
            "busy",
            "--one-way",
        ],
        "--clock tsc",
    );
    usage_error(
        &["throughput", "-b", "udp", "--clock", "monotonic"],
        "--clock",
    );
}

#[test]
fn several_subscribers_report_each() {
    let d = tmp();
    let j = d.path().join("r.json");
    let o = run(&[
        "throughput",
        "-b",
        "tcp",
        "--subscribers",
        "2",
        "-n",
        "5000",
        "--warmup",
        "0s",
        "-q",
        "--json",
        j.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = &json(&j)["runs"][0];
    let subs = r["subscribers"].as_array().unwrap();
    assert_eq!(subs.len(), 2);
    for s in subs {
        assert_eq!(s["received"], 5000);
    }
    assert_eq!(r["throughput"]["received"], 10000);
}

/// Latency with several subscribers: each one's own echoes (round robin)
/// recorded apart, adding up to the run's, and the spread printed.
#[test]
fn latency_by_subscriber_adds_up_to_the_run() {
    let d = tmp();
    let j = d.path().join("r.json");
    let o = run(&[
        "latency",
        "-b",
        "tcp",
        "--subscribers",
        "3",
        "-n",
        "300",
        "--warmup",
        "0s",
        "-q",
        "--json",
        j.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("subscribers: 64 B: 3 subscribers, each its own echoes: p50 "),
        "{}",
        stdout(&o)
    );
    let r = &json(&j)["runs"][0];
    let by = r["latency_by_subscriber"].as_array().unwrap();
    assert_eq!(by.len(), 3, "{r}");
    // Reliable: every ping echoed, subscriber i answering pings i, i + 3, ...
    for b in by {
        assert_eq!(b["count"], 100, "{b}");
    }
    assert_eq!(r["latency_ns"]["count"], 300);
}

/// Every run records its discovery times, each side's from the creation of
/// its endpoints: the writer's first match before every subscriber's, and
/// each subscriber's first sample after its reader matched (the publisher
/// sends once every side is ready). Over cyclonedds, which discovers, and
/// tcp, which connects.
#[test]
fn every_run_records_how_long_discovery_took() {
    let d = tmp();
    for (binding, test, subs) in [
        ("cyclonedds", "latency", "1"),
        ("cyclonedds", "throughput", "2"),
        ("tcp", "throughput", "2"),
    ] {
        let j = d.path().join(format!("{binding}-{test}.json"));
        let o = run(&[
            test,
            "-b",
            binding,
            "--subscribers",
            subs,
            "-n",
            "300",
            "--warmup",
            "0s",
            "-q",
            "--json",
            j.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{binding} {test}: {}", stderr(&o));
        assert!(
            stdout(&o).contains("discovery: 64 B: writer matched "),
            "{}",
            stdout(&o)
        );
        let r = &json(&j)["runs"][0];
        let disc = &r["discovery"];
        let n = |v: &serde_json::Value| {
            v.as_u64()
                .unwrap_or_else(|| panic!("{binding} {test}: {disc}"))
        };
        assert!(
            n(&disc["writer_first_match_ns"]) <= n(&disc["writer_matched_ns"]),
            "{disc}"
        );
        assert_eq!(
            disc["echo_readers_matched_ns"].is_u64(),
            test == "latency",
            "{disc}"
        );
        let sides = disc["subscribers"].as_array().unwrap();
        assert_eq!(sides.len().to_string(), subs, "{disc}");
        for s in sides {
            assert!(
                n(&s["first_sample_ns"]) >= n(&s["reader_matched_ns"]),
                "{disc}"
            );
            assert_eq!(
                s["echo_writer_matched_ns"].is_u64(),
                test == "latency",
                "{disc}"
            );
        }
    }
}

/// Starts `pubsubperf sub --listen 127.0.0.1:0` and returns it with its port.
fn remote_sub() -> (Child, String) {
    let mut child = bin()
        .args(["sub", "--listen", "127.0.0.1:0"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut r = BufReader::new(child.stderr.as_mut().unwrap());
    let mut line = String::new();
    while !line.contains("listening on") {
        line.clear();
        assert!(r.read_line(&mut line).unwrap() > 0, "sub --listen exited");
    }
    let addr = line.trim().rsplit(' ').next().unwrap().to_string();
    (child, addr)
}

#[test]
fn remote_subscriber_gets_its_config_from_the_publisher() {
    let (mut sub, addr) = remote_sub();
    let d = tmp();
    let j = d.path().join("r.json");
    let o = run(&[
        "throughput",
        "-b",
        "udp",
        "-s",
        "100",
        "--connect",
        &addr,
        "-n",
        "1000",
        "--rate",
        "20000",
        "--warmup",
        "0s",
        "-q",
        "--json",
        j.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&j);
    assert_eq!(v["runs"][0]["size"], 100);
    assert!(v["environment"]["subscriber_host"]["kernel"].is_string());
    let t = &v["runs"][0]["throughput"];
    assert_eq!(
        t["sent"].as_u64(),
        Some(t["received"].as_u64().unwrap() + t["lost"].as_u64().unwrap())
    );
    // The subscriber ends with the session.
    let start = Instant::now();
    while sub.try_wait().unwrap().is_none() {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "sub --listen did not exit"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn missing_peer_is_a_clear_error_not_a_hang() {
    // Nothing listens on this port.
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    drop(l);
    let start = Instant::now();
    let o = run(&[
        "latency",
        "--connect",
        &addr,
        "--connect-timeout",
        "1s",
        "-n",
        "10",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no subscriber at"), "{}", stderr(&o));
    assert!(start.elapsed() < Duration::from_secs(5));
}

fn wait_for_child(pid: u32) -> u32 {
    let start = Instant::now();
    loop {
        if let Some(c) = children(pid).first() {
            return *c;
        }
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "no subscriber child"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn killed_subscriber_ends_the_run_within_5s_and_keeps_results() {
    for test in ["latency", "throughput"] {
        let d = tmp();
        let j = d.path().join("r.json");
        let mut p = bin()
            .args([
                test,
                "-b",
                "tcp",
                "-s",
                "64,128",
                "--duration",
                "30s",
                "--no-save",
                "--warmup",
                "0s",
                "-q",
                "--json",
                j.to_str().unwrap(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let child = wait_for_child(p.id());
        std::thread::sleep(Duration::from_millis(1500));
        unsafe { libc::kill(child as i32, libc::SIGKILL) };
        let killed = Instant::now();
        let status = loop {
            if let Some(s) = p.try_wait().unwrap() {
                break s;
            }
            assert!(
                killed.elapsed() < Duration::from_secs(5),
                "{test}: publisher still running 5 s after the subscriber died"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut err = String::new();
        std::io::Read::read_to_string(p.stderr.as_mut().unwrap(), &mut err).unwrap();
        assert_eq!(status.code(), Some(1), "{test}: {err}");
        assert!(err.contains("subscriber"), "{test}: {err}");
        let v = json(&j);
        let r = &v["runs"][0];
        assert_eq!(r["complete"], false);
        assert!(r["error"].as_str().unwrap().contains("subscriber"));
        if test == "latency" {
            assert!(r["latency_ns"]["count"].as_u64().unwrap() > 0);
        } else {
            assert!(r["throughput"]["sent"].as_u64().unwrap() > 0);
        }
    }
}

#[test]
fn ctrl_c_writes_partial_results_and_reaps_the_subscriber() {
    for test in ["latency", "throughput"] {
        let d = tmp();
        let j = d.path().join("r.json");
        let mut p = bin()
            .args([
                test,
                "-b",
                "udp",
                "--duration",
                "30s",
                "--no-save",
                "--warmup",
                "0s",
                "-q",
                "--json",
                j.to_str().unwrap(),
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let child = wait_for_child(p.id());
        std::thread::sleep(Duration::from_millis(1500));
        unsafe { libc::kill(p.id() as i32, libc::SIGINT) };
        let start = Instant::now();
        let status = loop {
            if let Some(s) = p.try_wait().unwrap() {
                break s;
            }
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "{test}: still running after Ctrl-C"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        assert_eq!(status.code(), Some(130));
        let r = &json(&j)["runs"][0];
        assert_eq!(r["complete"], false);
        let mut out = String::new();
        std::io::Read::read_to_string(p.stdout.as_mut().unwrap(), &mut out).unwrap();
        assert!(out.contains("(partial)"), "{out}");
        wait_gone_within(child, "the subscriber", Duration::from_secs(3));
    }
}

#[test]
fn rt_priority_mlock_and_pinning() {
    let d = tmp();
    let j = d.path().join("r.json");
    // As root SCHED_FIFO works; otherwise a clear error naming the flag.
    let o = run(&[
        "latency",
        "-b",
        "udp",
        "--rt-priority",
        "10",
        "--mlock",
        "--cpu",
        "1,0",
        "-n",
        "100",
        "--warmup",
        "0s",
        "-q",
        "--json",
        j.to_str().unwrap(),
    ]);
    if o.status.success() {
        let c = &json(&j)["runs"][0]["config"];
        assert_eq!(c["rt_priority"], 10);
        assert_eq!(
            (c["pub_cpu"].as_u64(), c["sub_cpu"].as_u64()),
            (Some(1), Some(0))
        );
    } else {
        assert!(
            stderr(&o).contains("--rt-priority") || stderr(&o).contains("--mlock"),
            "{}",
            stderr(&o)
        );
    }
}

#[test]
fn several_publishers_are_accounted_per_publisher() {
    let d = tmp();
    let j = d.path().join("r.json");
    let o = run(&[
        "throughput",
        "-b",
        "udp",
        "--publishers",
        "3",
        "--subscribers",
        "2",
        "-s",
        "100",
        "--rate",
        "5000",
        "--duration",
        "1s",
        "--warmup",
        "100ms",
        "-q",
        "--json",
        j.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = &json(&j)["runs"][0];
    let pubs = r["publishers"].as_array().unwrap();
    assert_eq!(pubs.len(), 3);
    let mut total = 0;
    for p in pubs {
        let (s, rcv, l) = (
            p["sent"].as_u64().unwrap(),
            p["received"].as_u64().unwrap(),
            p["lost"].as_u64().unwrap(),
        );
        assert!(s > 0);
        assert_eq!(s, rcv + l, "{p}");
        total += s;
    }
    assert_eq!(r["throughput"]["sent"].as_u64().unwrap(), total);
    assert_eq!(r["subscribers"].as_array().unwrap().len(), 2);
    usage_error(
        &["throughput", "-b", "tcp", "--publishers", "2"],
        "--publishers 2",
    );
    usage_error(
        &["latency", "-b", "udp", "--publishers", "2"],
        "--publishers",
    );
}

/// A publisher that stops (SIGSTOP: hung, as a blocked link looks) is
/// given up by its subscriber and its extra publisher within the promised
/// 5 s of silence (docs/faults.md), not after the run's 30 s.
#[test]
fn a_hung_publisher_ends_its_subscriber_and_extra_publisher_within_5s() {
    let mut p = bin()
        .args(with_no_save(&[
            "throughput",
            "-b",
            "udp",
            "--publishers",
            "2",
            "--rate",
            "2000",
            "--duration",
            "30s",
            "--warmup",
            "0s",
            "-q",
        ]))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let kids = loop {
        let k = children(p.id());
        if k.len() >= 2 {
            break k;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "no subscriber and extra publisher: {k:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: signals to the process this test started.
    unsafe { libc::kill(p.id() as i32, libc::SIGSTOP) };
    let stopped = Instant::now();
    for k in &kids {
        wait_gone_within(
            *k,
            "a peer of the stopped publisher",
            Duration::from_secs(5 + 3),
        );
    }
    eprintln!(
        "peers of the stopped publisher gone after {:.1} s",
        stopped.elapsed().as_secs_f64()
    );
    unsafe {
        libc::kill(p.id() as i32, libc::SIGKILL);
        libc::kill(p.id() as i32, libc::SIGCONT);
    }
    let _ = p.wait();
}

#[test]
fn find_max_searches_the_rate() {
    let d = tmp();
    let j = d.path().join("r.json");
    // A reliable binding is lossless at full speed: one trial.
    let o = run(&[
        "throughput",
        "-b",
        "tcp",
        "-s",
        "1KiB",
        "--find-max",
        "--duration",
        "300ms",
        "--warmup",
        "0s",
        "-q",
        "--json",
        j.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = &json(&j)["runs"][0];
    let fm = &r["config"]["find_max"];
    assert_eq!(fm["found"], true);
    assert_eq!(fm["trials"].as_array().unwrap().len(), 1);
    assert_eq!(r["throughput"]["lost"], 0);
    usage_error(&["throughput", "--find-max", "--rate", "10"], "--find-max");
    usage_error(&["latency", "--find-max"], "--find-max");
    usage_error(
        &["throughput", "--find-max", "--max-loss", "100"],
        "--max-loss",
    );
}
