//! What the tests of the DDS flags through the real binary share: running
//! it, reading its errors and JSON, and checking the DDS libraries are
//! there. Each test binary that includes this module uses part of it.
#![allow(dead_code)]

use pubsubperf_testkit::require;
use std::path::Path;
use std::process::{Command, Output};

pub fn run(args: &[&str]) -> Output {
    let mut v = args.to_vec();
    if matches!(args.first(), Some(&"latency") | Some(&"throughput")) {
        v.push("--no-save");
    }
    Command::new(env!("CARGO_BIN_EXE_pubsubperf"))
        .args(v)
        .output()
        .expect("runs")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("json written")).expect("valid json")
}

/// Fails the test, naming what is missing, unless the DDS binding `name`
/// can run here: its library (from the Debian package `scripts/setup.sh`
/// installs), the binding in this build, and the binding's own check.
pub fn require_dds(name: &str) {
    match name {
        "cyclonedds" => require::library("libddsc.so", "cyclonedds-dev"),
        "fastdds" => require::library("libfastrtps.so", "libfastrtps-dev"),
        // The binding's own check below names scripts/setup.sh --with-connext.
        "connext" => {}
        _ => unreachable!("not a DDS binding: {name}"),
    }
    let o = run(&["bindings", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("bindings json");
    let b = v
        .as_array()
        .expect("list")
        .iter()
        .find(|b| b["name"] == name)
        .unwrap_or_else(|| {
            panic!(
                "prerequisite missing: this build has no {name} binding (the harness feature '{name}' is off)"
            )
        });
    assert!(
        b["available"].get("Ok").is_some(),
        "prerequisite missing: the binding {name} cannot run here: {}",
        b["available"]["Err"]
    );
}

/// Asserts a one-line error on stderr, exit code 2, starting with `start`.
pub fn usage_error(args: &[&str], start: &str) {
    let o = run(args);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
    assert_eq!(
        e.trim_end().lines().count(),
        1,
        "{args:?}: not one line: {e}"
    );
    assert!(
        e.starts_with(&format!("pubsubperf: {start}")),
        "{args:?}: {e}"
    );
}

/// A reliable throughput run of `count` samples with `extra` flags: every
/// sample arrives exactly once; returns the run's JSON.
pub fn exact_run(binding: &str, peer: &str, count: u64, extra: &[&str]) -> serde_json::Value {
    let d = tempfile::tempdir().expect("tempdir");
    let j = d.path().join("r.json");
    let n = count.to_string();
    let mut a = vec![
        "throughput",
        "-b",
        binding,
        "--peer-binding",
        peer,
        "-s",
        "256",
        "-n",
        &n,
        "--reliable",
        "--warmup",
        "100ms",
        "-q",
        "--check",
        "--json",
        j.to_str().unwrap(),
    ];
    a.extend_from_slice(extra);
    let o = run(&a);
    assert!(o.status.success(), "{a:?}: {}", stderr(&o));
    let r = json(&j)["runs"][0].clone();
    let t = &r["throughput"];
    assert_eq!(t["sent"], count, "{a:?}");
    assert_eq!(
        t["received"], count,
        "{a:?}: every sample of every instance"
    );
    assert_eq!(t["lost"], 0, "{a:?}");
    assert_eq!(t["duplicates"], 0, "{a:?}");
    assert_eq!(r["bad_samples"], 0, "{a:?}");
    r
}

/// A run of the binary with a 100 ms warm-up, quiet, its results in a
/// temporary JSON file: the first run's JSON (the run must succeed).
pub fn run_json(args: &[&str]) -> serde_json::Value {
    let d = tempfile::tempdir().expect("tempdir");
    let j = d.path().join("r.json");
    let mut a = args.to_vec();
    a.extend_from_slice(&["--warmup", "100ms", "-q", "--json", j.to_str().unwrap()]);
    let o = run(&a);
    assert!(o.status.success(), "{a:?}: {}", stderr(&o));
    json(&j)["runs"][0].clone()
}
