//! `pubsubperf doctor` as a user runs it: on a fake tree (`--root`) with
//! known verdicts, `--strict`'s exit code, `--json`, a bad `--root`; on
//! this machine; and the findings a measuring command keeps in its
//! results' environment.

use std::path::Path;
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pubsubperf"))
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A container whose cpuset lacks core 1, on a machine whose clock source
/// is HPET.
fn tree(root: &Path) {
    for (path, body) in [
        (
            "proc/cpuinfo",
            "processor\t: 0\nflags\t\t: fpu tsc constant_tsc nonstop_tsc\n",
        ),
        (
            "sys/devices/system/clocksource/clocksource0/current_clocksource",
            "hpet\n",
        ),
        (
            "sys/devices/system/clocksource/clocksource0/available_clocksource",
            "tsc hpet\n",
        ),
        ("proc/self/cgroup", "0::/c\n"),
        ("sys/fs/cgroup/c/cpuset.cpus.effective", "0\n"),
    ] {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body).unwrap();
    }
}

#[test]
fn a_fake_tree_gives_its_verdicts_and_strict_fails_on_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path());
    let root = dir.path().to_str().unwrap();
    let o = run(&["doctor", "--root", root, "--cpu", "0,1"]);
    assert!(o.status.success(), "{o:?}");
    let out = text(&o.stdout);
    let pad = " ".repeat(23);
    let first: Vec<&str> = out.lines().take(3).collect();
    assert_eq!(
        first,
        [
            "fail  clocksource      hpet (available: tsc hpet)".to_string(),
            format!(
                "{pad}why: clock_gettime becomes a system call of about a microsecond: every timestamp costs that, and latencies read high"
            ),
            format!(
                "{pad}fix: echo tsc > /sys/devices/system/clocksource/clocksource0/current_clocksource (and tsc=reliable clocksource=tsc on the kernel command line to keep it)"
            ),
        ],
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l == "fail  cpuset           cpu 1 outside the cpuset 0"),
        "{out}"
    );

    let o = run(&["doctor", "--root", root, "--cpu", "0,1", "--strict"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");

    let o = run(&["doctor", "--root", root, "--cpu", "0,1", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let checks: Vec<(&str, &str)> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["check"].as_str().unwrap(), f["verdict"].as_str().unwrap()))
        .collect();
    assert_eq!(checks[0], ("clocksource", "fail"));
    assert_eq!(checks[1], ("tsc", "ok"));
    assert!(checks.contains(&("cpuset", "fail")), "{checks:?}");
}

#[test]
fn bad_input_is_one_line_exit_2() {
    for (args, starts) in [
        (
            vec!["doctor", "--root", "/no/such/dir"],
            "pubsubperf: --root /no/such/dir: not a directory",
        ),
        (
            vec!["doctor", "--cpu", "7"],
            "pubsubperf: --cpu '7': expected",
        ),
        (
            vec!["doctor", "--interface", "192.0.2.99"],
            "pubsubperf: --interface 192.0.2.99: no interface",
        ),
    ] {
        let o = run(&args);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with(starts), "{err}");
    }
}

/// A core the machine does not have is refused before any check (every
/// per-core check passed on it: "ok irq: no device interrupt on cpu 2-3"
/// on a machine of two cores), naming `--cpu` and the cores online: in a
/// tree that says which are online, and on this machine.
#[test]
fn a_core_that_is_not_online_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path());
    let online = dir.path().join("sys/devices/system/cpu/online");
    std::fs::create_dir_all(online.parent().unwrap()).unwrap();
    std::fs::write(&online, "0-1\n").unwrap();
    let root = dir.path().to_str().unwrap();
    let o = run(&["doctor", "--root", root, "--cpu", "2,3", "--strict"]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(
        err,
        "pubsubperf: --cpu 2,3: cores 2-3 are not online on this machine (the cores online: 0-1)\n"
    );
    assert!(o.stdout.is_empty(), "{}", text(&o.stdout));
    // The cores it has are checked as before.
    assert!(
        run(&["doctor", "--root", root, "--cpu", "1,0"])
            .status
            .success()
    );

    // This machine: the core after its last online one.
    let here = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let cores = pubsubperf_doctor::cpu_list(&here).unwrap();
    let past = cores.iter().max().unwrap() + 1;
    let cpu = format!("{},{past}", cores[0]);
    let o = run(&["doctor", "--cpu", &cpu, "--strict", "--no-link"]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!(
            "pubsubperf: --cpu {cpu}: core {past} is not online on this machine (the cores online: {})",
            here.trim()
        )),
        "{err}"
    );
}

/// An interface this host does not have fails the nic check, and its
/// offloads and coalescing are not said to be ok.
#[test]
fn a_missing_interface_is_not_ok_in_any_nic_check() {
    let name = "nosuchnic0";
    assert!(!Path::new("/sys/class/net").join(name).exists());
    let o = run(&["doctor", "--interface", name, "--no-link", "--strict"]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    let line = |check: &str| {
        out.lines()
            .find(|l| l.split_whitespace().nth(1) == Some(check))
            .unwrap_or_else(|| panic!("no {check}: {out}"))
            .to_string()
    };
    assert_eq!(
        line("nic"),
        format!("fail  nic              {name}: no such interface")
    );
    for check in ["nic-offloads", "nic-coalescing"] {
        assert!(
            line(check).starts_with("warn ")
                && line(check).ends_with(&format!("{name}: not checkable (no such interface)")),
            "{out}"
        );
    }
}

#[test]
fn this_machine_is_examined_and_a_run_keeps_the_findings() {
    let o = run(&["doctor", "--no-link"]);
    assert!(o.status.success(), "{o:?}");
    let out = text(&o.stdout);
    let verdicts: Vec<&str> = out
        .lines()
        .filter(|l| !l.starts_with(' '))
        .map(|l| l.split_whitespace().next().unwrap_or(""))
        .collect();
    // The machine's 18 checks, and whether --explain can run here (the
    // doctor's own line; a run keeps the 18).
    assert_eq!(verdicts.len(), 19, "{out}");
    assert!(
        verdicts.iter().all(|v| ["ok", "warn", "fail"].contains(v)),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.split_whitespace().nth(1) == Some("explain")),
        "{out}"
    );

    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let o = run(&[
        "latency",
        "-b",
        "udp",
        "--count",
        "200",
        "--warmup",
        "0s",
        "--no-save",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{o:?}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let doctor = v["environment"]["doctor"].as_array().expect("findings");
    assert_eq!(doctor.len(), 18, "{doctor:?}");
    assert_eq!(doctor[0]["check"], "clocksource");
}

/// Each result beside its physical limit: on one host, shared-memory
/// throughput against calibrate's memcpy bandwidth and latency against its
/// cache-line floor, in the table and the JSON; without a calibration,
/// none (nothing guessed).
#[test]
fn results_are_read_against_this_machines_limits() {
    let data = tempfile::tempdir().unwrap();
    let with_data = |args: &[&str]| {
        bin()
            .args(args)
            .env("XDG_DATA_HOME", data.path())
            .output()
            .expect("runs")
    };
    let json = data.path().join("tp.json");
    let tp = [
        "throughput",
        "-b",
        "shm",
        "--size",
        "1KiB",
        "--duration",
        "1s",
        "--no-save",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ];
    let o = with_data(&tp);
    assert!(o.status.success(), "{o:?}");
    assert!(!text(&o.stdout).contains("limit:"), "{}", text(&o.stdout));

    let o = with_data(&["calibrate"]);
    assert!(o.status.success(), "{o:?}");
    let o = with_data(&tp);
    let out = text(&o.stdout);
    assert!(
        out.lines()
            .any(|l| l.starts_with("limit: 1KiB: ") && l.contains("% of the memcpy of 64KiB (")),
        "{out}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let limit = &v["runs"][0]["limit"];
    assert_eq!(limit["what"], "memcpy of 64KiB", "{v}");
    assert_eq!(limit["unit"], "Mbit/s");
    assert!(
        limit["percent"].as_f64().is_some_and(|p| p > 0.0),
        "{limit}"
    );

    let o = with_data(&[
        "latency",
        "-b",
        "udp",
        "--count",
        "500",
        "--warmup",
        "0s",
        "--no-save",
        "-q",
    ]);
    let out = text(&o.stdout);
    assert!(
        out.lines().any(|l| l.starts_with("limit: 64 B: p50 ")
            && l.contains("x the cache-line one-way (")),
        "{out}"
    );
}

/// `--trace` names a CPU hog of our own, pinned to the watched core, by
/// its name: `yes` started as `pubsubperfhog` (a task's name is its
/// executable's), busy for the whole trace, holds most of that core's time
/// and none of the other's. Needs root (eBPF).
#[test]
fn trace_names_a_hog_on_the_watched_core() {
    // SAFETY: geteuid has no preconditions.
    assert_eq!(
        unsafe { libc::geteuid() },
        0,
        "--trace loads eBPF programs: run the tests as root"
    );
    let d = tempfile::tempdir().unwrap();
    let hog = d.path().join("pubsubperfhog");
    std::os::unix::fs::symlink("/usr/bin/yes", &hog).unwrap();
    // Real-time (SCHED_FIFO 1), so that it holds most of cpu 1 whatever
    // else the machine runs: at the ordinary policy it shared the core half
    // and half with a build beside the tests (share 0.4996).
    let mut child = Command::new("chrt")
        .args(["-f", "1", "taskset", "-c", "1"])
        .arg(&hog)
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("chrt and taskset (util-linux) start the hog");
    let o = run(&[
        "doctor",
        "--cpu",
        "0,1",
        "--no-link",
        "--trace",
        "1",
        "--json",
    ]);
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let trace = j["trace"].as_array().unwrap();
    let share = |cpu: u64| -> f64 {
        let c = trace.iter().find(|c| c["cpu"] == cpu).unwrap();
        let span = c["span_ns"].as_f64().unwrap();
        c["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["what"].as_str().unwrap().starts_with("pubsubperfhog "))
            .map(|t| t["ns"].as_f64().unwrap() / span)
            .sum()
    };
    assert!(
        share(1) > 0.5,
        "the hog's share of cpu 1: {}\n{trace:#?}",
        share(1)
    );
    assert_eq!(share(0), 0.0, "the hog is pinned to cpu 1");
}

/// `--trace` reads this machine's kernel: refused with `--root`, and a
/// length outside 0-3600 s is bad input.
#[test]
fn trace_refuses_a_tree_and_a_bad_length() {
    let d = tempfile::tempdir().unwrap();
    tree(d.path());
    let root = d.path().to_str().unwrap();
    for (args, needle) in [
        (
            vec!["doctor", "--root", root, "--trace", "1"],
            "--trace: watches this machine's cores",
        ),
        (
            vec!["doctor", "--no-link", "--trace", "0"],
            "--trace 0: give the seconds",
        ),
        (
            vec!["doctor", "--no-link", "--trace", "4000"],
            "--trace 4000: give the seconds",
        ),
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let e = text(&o.stderr);
        assert!(
            e.contains(needle) && e.lines().count() == 1,
            "{args:?}: {e}"
        );
    }
}
