//! `--explain` against causes we make ourselves, with known answers: a
//! hog of ours on the subscriber's core is named for the tail it made;
//! both sides on one core show as a shared core; a run's shares and its
//! unexplained rest add up to the whole; a run at 10 samples a second is
//! made of wake-ups. The checks are on who is named and on shares, never on
//! a latency.
//!
//! Needs root and a kernel with BTF (the probes), and two cores: each
//! test fails naming what is missing. The tests run one at a time (a
//! hog of one would be another's cause), and those of
//! `on_a_quiet_machine` on a quiet machine: a build beside them is named
//! as a cause too (scripts/test.sh runs them last).

mod lab;

use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn require_probes() {
    // SAFETY: geteuid has no preconditions.
    assert_eq!(
        unsafe { libc::geteuid() },
        0,
        "--explain loads eBPF programs: run these tests as root"
    );
    assert!(
        Path::new("/sys/kernel/btf/vmlinux").exists(),
        "--explain needs the kernel's BTF (/sys/kernel/btf/vmlinux)"
    );
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert!(
        n >= 2,
        "these tests pin two sides to two cores; this machine has {n}"
    );
}

/// Runs `pubsubperf ARGS --explain --json F` in a directory of its own and
/// returns the run's `explanation`.
fn explained(args: &[&str]) -> Value {
    let dir = tempfile::tempdir().expect("a directory");
    let json = dir.path().join("run.json");
    let o = Command::new(env!("CARGO_BIN_EXE_pubsubperf"))
        .current_dir(dir.path())
        .args(args)
        .args(["--explain", "--no-save", "--json"])
        .arg(&json)
        .output()
        .expect("runs");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{args:?}: {out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("explained ("), "the account is printed: {out}");
    let v: Value =
        serde_json::from_slice(&std::fs::read(&json).expect("the results")).expect("JSON");
    v["runs"][0]["explanation"].clone()
}

/// A band's share of the causes whose name contains `what`.
fn share(band: &Value, what: &str) -> f64 {
    band["causes"]
        .as_array()
        .expect("causes")
        .iter()
        .filter(|c| c["cause"].as_str().unwrap_or("").contains(what))
        .map(|c| c["share"].as_f64().unwrap_or(0.0))
        .sum()
}

fn band<'a>(e: &'a Value, name: &str) -> &'a Value {
    e["bands"]
        .as_array()
        .expect("bands")
        .iter()
        .find(|b| b["band"] == name)
        .unwrap_or_else(|| panic!("no band {name} in {e}"))
}

fn pin(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is a valid empty set.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        assert_eq!(
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set),
            0
        );
    }
}

/// The tests that measure: each a known answer whose check needs a quiet
/// machine (a compiler beside them is named as a cause too), so
/// scripts/test.sh runs them after the builds it runs beside the rest.
mod on_a_quiet_machine {
    use super::*;

    /// (a) A thread of ours, `explain-hog`, pinned to the subscriber's core
    /// at normal priority, spinning 2 ms in every 20: the slowest samples
    /// wait for it, and their added time is put on it by name.
    #[test]
    fn a_hog_on_the_subscribers_core_is_named_for_the_tail_it_makes() {
        require_probes();
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let hog = {
            let stop = stop.clone();
            std::thread::Builder::new()
                .name("explain-hog".into())
                .spawn(move || {
                    pin(1);
                    while !stop.load(Ordering::Relaxed) {
                        let t = Instant::now();
                        while t.elapsed() < Duration::from_millis(2) {
                            std::hint::spin_loop();
                        }
                        std::thread::sleep(Duration::from_millis(18));
                    }
                })
                .expect("the hog")
        };
        let e = explained(&["latency", "-b", "udp", "--cpu", "0,1", "--duration", "3s"]);
        stop.store(true, Ordering::Relaxed);
        hog.join().expect("the hog ends");
        // The hog leads the slowest band's causes. Not necessarily more than
        // half of it: a kernel thread on the same core takes its part too
        // (this VM's DAMON thread, kdamond.0, took 21 % once, the hog 49 %).
        let top = band(&e, "p99.9+");
        let first = top["causes"][0]["cause"].as_str().unwrap_or_default();
        assert!(
            first.starts_with("subscriber preempted by explain-hog"),
            "the hog leads the slowest band's added time: {top}"
        );
        // The samples the hog held up (it is most of their account): their
        // added time is the hog's for at least 90 %, the rest named or not.
        let (mut hog, mut added, mut held) = (0u64, 0u64, 0);
        for s in e["slowest"].as_array().expect("the slowest samples") {
            let of_hog: u64 = s["causes"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|c| c["cause"].as_str().unwrap().contains("explain-hog"))
                .map(|c| c["ns"].as_u64().unwrap())
                .sum();
            let a = s["added_ns"].as_u64().unwrap();
            if of_hog * 2 > a {
                (hog, added, held) = (hog + of_hog, added + a, held + 1);
            }
        }
        assert!(
            held >= 5,
            "the hog held up {held} of the slowest samples: {e}"
        );
        assert!(
            hog as f64 >= 0.9 * added as f64,
            "the hog holds {:.0} % of the added time of the {held} samples it held up",
            100.0 * hog as f64 / added as f64
        );
    }

    /// (d) Both sides on one core: each waits for the other's time slice, in
    /// every sample, the median's own account included.
    #[test]
    fn both_sides_on_one_core_show_as_a_shared_core() {
        require_probes();
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
        let e = explained(&["latency", "-b", "udp", "--cpu", "1,1", "--duration", "1s"]);
        let median = &e["median"];
        assert!(
            share(
                median,
                "shared core: each side waits for the other's time slice"
            ) > 0.0,
            "the median's account names the shared core: {median}"
        );
    }

    /// (e) Every band's causes and its unexplained rest add up to its whole
    /// added time, and no cause is over it: nothing is invented to fill the
    /// account of a quiet run.
    #[test]
    fn each_bands_shares_and_its_unexplained_rest_add_up_to_one() {
        require_probes();
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
        let e = explained(&["latency", "-b", "udp", "--cpu", "0,1", "--duration", "1s"]);
        assert_eq!(e["lost_events"], 0, "{e}");
        for b in e["bands"].as_array().unwrap().iter().chain([&e["median"]]) {
            if b["samples"] == 0 {
                continue;
            }
            let causes: f64 = b["causes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["share"].as_f64().unwrap())
                .sum();
            let unexplained = b["unexplained"].as_f64().unwrap();
            assert!(
                (causes + unexplained - 1.0).abs() < 1e-3 && (0.0..=1.0).contains(&unexplained),
                "{b}"
            );
        }
    }

    /// (b) At 10 samples a second each side sleeps 100 ms between samples and
    /// is woken for each: the wake-ups take longer in the median's account
    /// than back to back, and the wake-up from idle is among what the slower
    /// half of the samples added. (Which cause leads that band is not fixed:
    /// with 16 samples in it, the publisher's own work on caches cooled by the
    /// 100 ms sleep led it once, 46 % against 11 % for the wake-up from idle.)
    #[test]
    fn a_slow_rate_is_made_of_wake_ups() {
        require_probes();
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
        let wakeups_ns = |e: &Value| {
            let m = &e["median"];
            m["added_ns"].as_f64().unwrap()
                * m["causes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|c| matches!(c["kind"].as_str(), Some("wake_from_idle" | "wakeup")))
                    .map(|c| c["share"].as_f64().unwrap())
                    .sum::<f64>()
        };
        let slow = explained(&[
            "latency",
            "-b",
            "udp",
            "--cpu",
            "0,1",
            "--rate",
            "10",
            "--duration",
            "4s",
        ]);
        let fast = explained(&["latency", "-b", "udp", "--cpu", "0,1", "--duration", "1s"]);
        assert!(
            wakeups_ns(&slow) > wakeups_ns(&fast),
            "the median's wake-ups at 10/s {:.0} ns, back to back {:.0} ns: {slow}",
            wakeups_ns(&slow),
            wakeups_ns(&fast)
        );
        let upper = band(&slow, "p50-p90");
        assert!(
            upper["causes"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["kind"] == "wake_from_idle" && c["share"].as_f64().unwrap() > 0.0),
            "{upper}"
        );
    }

    /// The time a run's causes of `kinds` with a name containing one of
    /// `names` took, over the median and every band (ns, one-way, summed over
    /// the samples accounted).
    fn time_of(e: &Value, kinds: &[&str], names: &[&str]) -> f64 {
        let bands = e["bands"].as_array().unwrap().iter().chain([&e["median"]]);
        bands
            .map(|b| {
                let added = b["added_ns"].as_f64().unwrap() * b["samples"].as_f64().unwrap();
                added
                    * b["causes"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter(|c| {
                            kinds.contains(&c["kind"].as_str().unwrap())
                                && names
                                    .iter()
                                    .any(|n| c["cause"].as_str().unwrap().contains(n))
                        })
                        .map(|c| c["share"].as_f64().unwrap())
                        .sum::<f64>()
            })
            .sum()
    }

    /// (c) An interrupt source we drive: datagrams from one namespace to
    /// another over a veth whose receive work is steered (RPS) to the
    /// subscriber's core, so that core runs the network's softirq for
    /// datagrams that are not the run's; the sender is a thread of ours of the
    /// lowest priority (SCHED_IDLE) on the publisher's core. The run's
    /// account then holds more NET_RX softirq (or its thread, ksoftirqd/1,
    /// when the kernel defers it) than the same run without the flood (here
    /// 50 ms against 17 ms over a 2 s run).
    #[test]
    fn a_network_flood_steered_to_the_subscribers_core_shows_as_its_softirq() {
        require_probes();
        lab::require_netns();
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
        let mut l = lab::Lab::new();
        let a = l.ns("a");
        let b = l.ns("b");
        l.link(&a, "pf0", "198.18.7.1/24", &b, "pf1", "198.18.7.2/24");
        lab::sh(&[
            "ip",
            "netns",
            "exec",
            &b,
            "sh",
            "-c",
            "echo 2 > /sys/class/net/pf1/queues/rx-0/rps_cpus",
        ]);
        let net_rx = |e: &Value| time_of(e, &["softirq", "preempted"], &["NET_RX", "ksoftirqd/1"]);
        let quiet = explained(&["latency", "-b", "udp", "--cpu", "0,1", "--duration", "2s"]);
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let flood = {
            let stop = stop.clone();
            let ns = format!("/run/netns/{a}");
            std::thread::spawn(move || {
                let f = std::fs::File::open(&ns).expect("the namespace");
                // SAFETY: setns on a namespace file we opened, for this thread
                // only; sched_setscheduler with a valid sched_param.
                unsafe {
                    assert_eq!(
                        libc::setns(std::os::fd::AsRawFd::as_raw_fd(&f), libc::CLONE_NEWNET),
                        0
                    );
                    let p = libc::sched_param { sched_priority: 0 };
                    assert_eq!(libc::sched_setscheduler(0, libc::SCHED_IDLE, &p), 0);
                }
                pin(0);
                let s = std::net::UdpSocket::bind("198.18.7.1:0").expect("a socket");
                while !stop.load(Ordering::Relaxed) {
                    for _ in 0..64 {
                        let _ = s.send_to(&[0u8; 64], "198.18.7.2:9");
                    }
                    std::thread::sleep(Duration::from_micros(200));
                }
            })
        };
        let flooded = explained(&["latency", "-b", "udp", "--cpu", "0,1", "--duration", "2s"]);
        stop.store(true, Ordering::Relaxed);
        flood.join().expect("the flood ends");
        assert!(
            net_rx(&flooded) > 1.5 * net_rx(&quiet),
            "NET_RX time {:.0} ns with the flood, {:.0} ns without: {flooded}",
            net_rx(&flooded),
            net_rx(&quiet)
        );
    }

    /// A list of sizes runs twice in one process: the second run's probes
    /// are set up like the first's (fresh records, both sides watched), so
    /// both runs carry an account of both sides and neither loses events.
    #[test]
    fn the_second_run_of_a_process_is_explained_like_its_first() {
        require_probes();
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
        let dir = tempfile::tempdir().expect("a directory");
        let json = dir.path().join("runs.json");
        let o = Command::new(env!("CARGO_BIN_EXE_pubsubperf"))
            .current_dir(dir.path())
            .args([
                "latency",
                "-b",
                "udp",
                "--cpu",
                "0,1",
                "--size",
                "64,1024",
                "--duration",
                "1s",
                "--explain",
                "--no-save",
                "--json",
            ])
            .arg(&json)
            .output()
            .expect("runs");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        let runs = v["runs"].as_array().expect("runs");
        assert_eq!(runs.len(), 2);
        let sides = |e: &Value| -> Vec<bool> {
            let text = e["median"]["causes"].to_string();
            vec![text.contains("publisher"), text.contains("subscriber")]
        };
        for r in runs {
            let e = &r["explanation"];
            assert_eq!(e["lost_events"], 0, "{e}");
            assert!(e["median"]["samples"].as_u64().unwrap() > 0, "{e}");
            assert_eq!(sides(e), vec![true, true], "both sides in the account: {e}");
            assert!(
                r["conditions"].as_array().is_none_or(|c| c.is_empty()),
                "{r}"
            );
        }
        let per_sample: Vec<f64> = runs
            .iter()
            .map(|r| r["explanation"]["events_per_sample"].as_f64().unwrap())
            .collect();
        // Each run records its own window: the second's events are not the
        // first's plus its own.
        assert!(
            per_sample[1] < 2.0 * per_sample[0] && per_sample[0] < 2.0 * per_sample[1],
            "events per sample {per_sample:?}"
        );
    }

    /// A throughput run's echoes (`--latency-every`) are its samples: the
    /// echo thread, which shares the sender's core, waits behind the sender.
    #[test]
    fn a_throughput_runs_echoes_are_explained() {
        require_probes();
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
        let e = explained(&[
            "throughput",
            "-b",
            "udp",
            "--cpu",
            "0,1",
            "--latency-every",
            "10",
            "--duration",
            "1s",
        ]);
        assert!(e["median"]["samples"].as_u64().unwrap() > 0, "{e}");
        assert!(
            share(&e["median"], "publisher waits for its own thread") > 0.0,
            "the echo thread waits behind the sending thread on the publisher's core: {}",
            e["median"]
        );
    }
}

/// Without --latency-every a throughput run has no samples to explain:
/// refused, naming the fix.
#[test]
fn explain_on_throughput_asks_for_latency_samples() {
    let o = Command::new(env!("CARGO_BIN_EXE_pubsubperf"))
        .args(["throughput", "-b", "udp", "--explain", "--no-save"])
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("add --latency-every N"), "{err}");
}

/// Refused with the reason where it cannot run: a binding whose sides are
/// threads of one process.
#[test]
fn explain_is_refused_for_a_binding_in_one_process() {
    let o = Command::new(env!("CARGO_BIN_EXE_pubsubperf"))
        .args(["latency", "-b", "intra", "--explain", "--no-save"])
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--explain: 'intra' runs both sides in one process"),
        "{err}"
    );
}
