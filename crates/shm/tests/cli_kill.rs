//! The same robustness check through the real CLI: `pubsubperf latency -b
//! shm` starts its subscriber as a child process; SIGKILL the subscriber
//! (the publisher must end with an error, not hang) or the publisher (the
//! orphaned subscriber must notice and exit), then nothing of the run may
//! be left in /dev/shm.
//!
//! Needs the `pubsubperf` binary of the same target directory
//! (`cargo build [--release] -p pubsubperf`), or `PUBSUBPERF_BIN`; without
//! it the checks say so and pass (the binding-level SIGKILL tests in
//! `kill.rs` always run).

use pubsubperf_testkit::process::{children, cli_binary, kill9, wait_gone};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Names in /dev/shm of runs started by the publisher `pid` (run ids are
/// `pp<pid>x...`) or created by it.
fn leftovers(pids: &[u32]) -> Vec<String> {
    std::fs::read_dir("/dev/shm")
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| {
            pids.iter().any(|p| {
                n.contains(&format!("-pp{p}x")) || n.starts_with(&format!("pubsubperf-shm-{p}-"))
            })
        })
        .collect()
}

/// Starts a 10-second latency run and returns it with its subscriber's
/// pid, once the run is under way (its first interval report is out).
fn start(bin: &PathBuf, extra: &[&str]) -> (Child, u32) {
    let mut args = vec!["latency", "-b", "shm", "-s", "1KiB", "--duration", "10s"];
    args.extend_from_slice(extra);
    let mut publ = Command::new(bin)
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let err = publ.stderr.take().unwrap();
    std::thread::spawn(move || {
        // Interval reports ("[ 1.0s] size 1KiB: N pings ...") go to stderr.
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            if line.contains("pings") {
                let _ = tx.send(());
            }
        }
    });
    rx.recv_timeout(Duration::from_secs(30))
        .expect("no interval report: the run never got under way");
    let sub = *children(publ.id()).first().expect("a subscriber process");
    (publ, sub)
}

#[test]
fn cli_sigkill_subscriber_leaves_nothing() {
    let Some(bin) = cli_binary() else {
        eprintln!("pubsubperf binary not built: CLI SIGKILL check not run");
        return;
    };
    for extra in [&[][..], &["--zero-copy"][..]] {
        let (mut publ, sub) = start(&bin, extra);
        kill9(sub);
        let t = Instant::now();
        loop {
            if let Some(st) = publ.try_wait().unwrap() {
                // The publisher reports the lost subscriber as a failure.
                assert!(!st.success(), "publisher succeeded without its subscriber");
                break;
            }
            assert!(t.elapsed() < Duration::from_secs(30), "publisher hangs");
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(leftovers(&[publ.id(), sub]), Vec::<String>::new());
    }
}

#[test]
fn cli_sigkill_publisher_leaves_nothing() {
    let Some(bin) = cli_binary() else {
        eprintln!("pubsubperf binary not built: CLI SIGKILL check not run");
        return;
    };
    for extra in [&[][..], &["--zero-copy", "--wait", "busy"][..]] {
        let (mut publ, sub) = start(&bin, extra);
        kill9(publ.id());
        publ.wait().unwrap();
        wait_gone(sub, "the orphaned subscriber");
        assert_eq!(leftovers(&[publ.id(), sub]), Vec::<String>::new());
    }
}
