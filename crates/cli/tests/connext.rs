//! The connext binding through the real binary: runs with other vendors
//! over RTPS in both directions (issue 48 item 4), its QoS knobs applied
//! (every sample delivered, the setting recorded), and its refusals. Each
//! test needs RTI's libraries and fails naming `scripts/setup.sh
//! --with-connext` without them (scripts/test.sh installs them). No test
//! asserts a latency or throughput figure.

mod dds;

use dds::*;

fn latency_runs(binding: &str, peer: &str) {
    let r = run_json(&[
        "latency",
        "-b",
        binding,
        "--peer-binding",
        peer,
        "--transport",
        "udp",
        "-s",
        "64",
        "-n",
        "300",
    ]);
    assert_eq!(r["pings"]["echoed"], 300, "{binding} -> {peer}: {r}");
    assert_eq!(r["latency_ns"]["count"], 300, "{binding} -> {peer}");
}

/// Connext talks to CycloneDDS and Fast DDS on the wire: the same type,
/// topics and domain, pings one way and echoes the other, and a reliable
/// stream that arrives whole, each vendor on either side.
#[test]
fn connext_runs_with_the_other_vendors_both_ways() {
    require_dds("connext");
    for other in ["cyclonedds", "fastdds"] {
        require_dds(other);
        for (a, b) in [("connext", other), (other, "connext")] {
            latency_runs(a, b);
            exact_run(a, b, 2000, &["--transport", "udp"]);
        }
    }
}

/// The QoS knobs connext maps: each run delivers every sample and records
/// its setting. Keep-last history is paced (5000 samples/s): a reliable
/// keep-last writer overwrites what its reader has not taken when it runs
/// ahead (DDS's rule; on a loaded machine 1940 of 2000 arrived flat out).
#[test]
fn connext_knobs_deliver_every_sample() {
    require_dds("connext");
    for extra in [
        &["--no-push-on-write"][..],
        &["--no-positive-acks"],
        &["--history", "keep-last:64", "--rate", "5000"],
        &["--bandwidth-limit", "20MB"],
        &["--instances", "4"],
        &["--async"],
        &["--durability", "transient-local"],
        &[
            "--transport",
            "shm",
            "--send-queue",
            "200",
            "--receive-queue",
            "300",
        ],
        &["--batch", "2048"],
        &["--receive", "thread"],
    ] {
        let r = exact_run("connext", "connext", 2000, extra);
        let said = r["config"]["deviations"].to_string();
        assert!(
            said.contains("one participant per endpoint"),
            "{extra:?}: {said}"
        );
    }
}

/// What the binding cannot do is refused before anything runs, one line
/// naming the flag, exit code 2.
#[test]
fn connext_refuses_what_connector_cannot_do() {
    require_dds("connext");
    for (args, start) in [
        (&["--zero-copy"][..], "--zero-copy"),
        (&["--data-type", "flat"], "--data-type"),
        (&["--transport", "tcp"], "--transport"),
        (&["--qos-file", "/etc/hostname"], "--qos-file"),
    ] {
        let mut a = vec!["throughput", "-b", "connext", "-n", "10"];
        a.extend_from_slice(args);
        let o = run(&a);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{a:?}: {e}");
        assert_eq!(e.trim_end().lines().count(), 1, "{a:?}: {e}");
        assert!(e.contains(start), "{a:?}: {e}");
        if start == "--zero-copy" || start == "--data-type" {
            assert!(e.contains("rtiddsgen"), "the reason: {e}");
        }
    }
}

/// Without RTI's libraries the binding is listed as unavailable and a run
/// exits 2 with the one command that installs them.
#[test]
fn without_the_libraries_the_install_command_is_named() {
    let bin = env!("CARGO_BIN_EXE_pubsubperf");
    let o = std::process::Command::new(bin)
        .args(["latency", "-b", "connext", "-n", "10", "--no-save"])
        .env("PUBSUBPERF_CONNEXT_LIB", "/nonexistent")
        .output()
        .expect("runs");
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.starts_with("pubsubperf: --binding connext: ")
            && e.contains("scripts/setup.sh --with-connext"),
        "{e}"
    );
    let o = std::process::Command::new(bin)
        .args(["bindings"])
        .env("PUBSUBPERF_CONNEXT_LIB", "/nonexistent")
        .output()
        .expect("runs");
    let out = String::from_utf8_lossy(&o.stdout);
    let line = out
        .lines()
        .find(|l| l.starts_with("connext "))
        .expect("a connext row");
    assert!(
        line.contains("no: ") && line.contains("scripts/setup.sh --with-connext"),
        "{line}"
    );
}
