//! `--profile` through the real binary: each side's system calls by name
//! over udp and cyclonedds (two processes), with the method in the table and
//! the JSON; no tracer found says so in one line and keeps the kernel's
//! counters; where sides cannot be told apart it is refused. No test
//! asserts a count, a time or a rate: only names and presence. The tracers
//! are prerequisites (strace: Debian strace; perf: Debian linux-perf, run
//! as root); without one the test fails naming it. strace is the default,
//! perf is forced with `PUBSUBPERF_PROFILER=perf`.

use pubsubperf_testkit::require;
use std::path::Path;
use std::process::{Command, Output};

fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pubsubperf"))
        .args(args)
        .args(["--no-save", "--quiet"])
        .envs(env.iter().copied())
        .output()
        .expect("runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A profiled run of `test` over `binding` (plus `more` options) written
/// to `json`: its stdout, after checking that it succeeded.
fn profiled(test: &str, binding: &str, more: &[&str], env: &[(&str, &str)], json: &Path) -> String {
    let mut args = vec![
        test,
        "--binding",
        binding,
        "--duration",
        "1s",
        "--warmup",
        "200ms",
        "--profile",
        "--json",
        json.to_str().unwrap(),
    ];
    args.extend(more);
    let o = run(&args, env);
    let out = text(&o.stdout);
    assert!(o.status.success(), "{args:?}: {}\n{out}", text(&o.stderr));
    out
}

/// The run's profile as JSON.
fn profile(json: &Path) -> serde_json::Value {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).expect("json written"))
            .expect("valid json");
    v["runs"][0]["profile"].clone()
}

/// The names of a side's system calls.
fn names(side: &serde_json::Value) -> Vec<String> {
    side["syscalls"]
        .as_array()
        .expect("syscalls")
        .iter()
        .map(|s| s["name"].as_str().expect("name").to_string())
        .collect()
}

/// Both sides traced by `method`, the publisher with one of `sends`, the
/// subscriber with one of `receives`, each with samples; the printed table
/// shows both sides and the method.
fn assert_traced(out: &str, json: &Path, method: &str, sends: &[&str], receives: &[&str]) {
    let p = profile(json);
    let sides = [&p["publisher"], &p["subscribers"][0]];
    for (side, want) in sides.iter().zip([sends, receives]) {
        assert_eq!(side["method"], method, "{p}");
        assert!(side.get("note").is_none(), "{p}");
        assert!(side["samples"].as_u64().unwrap() > 0, "{p}");
        assert!(side["tracer_cost_ns"].is_number(), "{p}");
        let n = names(side);
        assert!(
            want.iter().any(|w| n.iter().any(|x| x == w)),
            "none of {want:?} in {n:?}"
        );
    }
    assert_eq!(p["subscribers"].as_array().unwrap().len(), 1, "{p}");
    assert!(out.contains("Profile of 64 B"), "{out}");
    for side in ["publisher", "subscriber 0"] {
        assert!(
            out.lines()
                .any(|l| l.starts_with(side) && l.contains(method)),
            "no {side} row with {method}:\n{out}"
        );
    }
    assert!(
        out.lines()
            .any(|l| l.starts_with(&format!("measured under {method}, which added"))),
        "the tracer's cost is not printed:\n{out}"
    );
    // The same cell without the tracer ran first, for comparison.
    let u = &p["unprofiled"];
    assert!(u["p50_ns"].is_u64() || u["samples_per_s"].is_f64(), "{p}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("the same cell without --profile, run just before: ")),
        "the unprofiled figures are not printed:\n{out}"
    );
}

const UDP_SENDS: &[&str] = &["sendto", "sendmsg"];
const UDP_RECEIVES: &[&str] = &["recvfrom", "recvmsg", "epoll_wait", "poll", "ppoll"];

#[test]
fn udp_latency_under_perf_names_both_sides_calls() {
    require::root("perf trace on another process's tracepoints");
    require::command("perf", "linux-perf");
    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("r.json");
    let out = profiled(
        "latency",
        "udp",
        &[],
        &[("PUBSUBPERF_PROFILER", "perf")],
        &json,
    );
    assert_traced(&out, &json, "perf trace -s", UDP_SENDS, UDP_RECEIVES);
    let p = profile(&json);
    assert_eq!(
        p["publisher"]["samples_are"],
        "pings sent, warm-up included"
    );
}

/// strace is the default tracer, before perf trace: with both installed
/// and nothing forced, both sides are traced by strace.
#[test]
fn strace_is_the_default_before_perf() {
    require::command("strace", "strace");
    require::command("perf", "linux-perf");
    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("r.json");
    let out = profiled("latency", "udp", &[], &[], &json);
    assert_traced(&out, &json, "strace -c -f", UDP_SENDS, UDP_RECEIVES);
}

#[test]
fn udp_throughput_under_strace_names_both_sides_calls() {
    require::command("strace", "strace");
    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("r.json");
    let out = profiled(
        "throughput",
        "udp",
        &["--rate", "2000"],
        &[("PUBSUBPERF_PROFILER", "strace")],
        &json,
    );
    assert_traced(&out, &json, "strace -c -f", UDP_SENDS, UDP_RECEIVES);
    let p = profile(&json);
    assert_eq!(
        p["subscribers"][0]["samples_are"],
        "samples received, warm-up included"
    );
}

#[test]
fn cyclonedds_latency_under_perf_names_both_sides_calls() {
    require::root("perf trace on another process's tracepoints");
    require::command("perf", "linux-perf");
    require::library("libddsc.so", "cyclonedds-dev");
    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("r.json");
    let out = profiled(
        "latency",
        "cyclonedds",
        &[],
        &[("PUBSUBPERF_PROFILER", "perf")],
        &json,
    );
    assert_traced(
        &out,
        &json,
        "perf trace -s",
        &["sendmsg", "sendto"],
        &["recvmsg", "recvfrom"],
    );
}

/// Without a tracer (an empty PATH), the run still succeeds, says so in
/// one line naming both sides and what to install, and keeps the kernel's
/// counters.
#[test]
fn without_a_tracer_the_run_says_so_in_one_line() {
    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("r.json");
    let empty = d.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = profiled(
        "latency",
        "udp",
        &[],
        &[("PATH", empty.to_str().unwrap())],
        &json,
    );
    let said: Vec<&str> = out.lines().filter(|l| l.contains("no tracer")).collect();
    assert_eq!(
        said,
        [
            "publisher, subscriber 0: no tracer: strace not found in PATH; perf not found in PATH (install Debian strace or linux-perf)"
        ],
        "{out}"
    );
    let p = profile(&json);
    for side in [&p["publisher"], &p["subscribers"][0]] {
        assert_eq!(side["method"], "none", "{p}");
        assert!(side["note"].as_str().unwrap().starts_with("no tracer"));
        assert!(names(side).is_empty(), "{p}");
        assert!(side["samples"].as_u64().unwrap() > 0, "{p}");
        // One ping-pong per sample blocks in a receive: the kernel counted.
        assert!(side["voluntary_cs"].as_u64().unwrap() > 0, "{p}");
    }
}

/// Where sides cannot be told apart, or a run is many trials, `--profile`
/// is refused with one line naming it, exit code 2.
#[test]
fn refused_where_it_cannot_work() {
    for (args, start) in [
        (
            &["latency", "--binding", "intra", "--profile"][..],
            "pubsubperf: --profile: 'intra' runs both sides as threads of one process",
        ),
        (
            &["throughput", "--binding", "udp", "--find-max", "--profile"][..],
            "pubsubperf: --profile: not with --find-max",
        ),
        (
            &[
                "throughput",
                "--binding",
                "udp",
                "--publishers",
                "2",
                "--profile",
            ][..],
            "pubsubperf: --profile: one publisher process only",
        ),
    ] {
        let o = run(args, &[]);
        let e = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert_eq!(e.trim_end().lines().count(), 1, "{args:?}: {e}");
        assert!(e.starts_with(start), "{args:?}: {e}");
    }
}
