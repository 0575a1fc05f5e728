//! The same robustness check through the real CLI: `pubsubperf latency -b
//! shm` starts its subscriber as a child process; SIGKILL the subscriber
//! (the publisher must end with an error, not hang) or the publisher (the
//! orphaned subscriber must notice and exit), then nothing of the run may
//! be left in /dev/shm.
//!
//! Needs the `pubsubperf` binary of the same target directory
//! (`cargo build [--release] -p pubsubperf`), or `PUBSUBPERF_BIN`; without
//! it the tests fail naming it.

use pubsubperf_testkit::process::{
    expect_failure_within, kill9, require_cli_binary, start_run, wait_gone,
};
use std::path::Path;
use std::process::Child;
use std::time::Duration;

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
/// pid, once the run is under way.
fn start(bin: &Path, extra: &[&str]) -> (Child, u32) {
    let mut args = vec![
        "latency",
        "-b",
        "shm",
        "-s",
        "1KiB",
        "--duration",
        "10s",
        "--no-save",
    ];
    args.extend_from_slice(extra);
    start_run(bin, &args, Duration::from_secs(30))
}

#[test]
fn cli_sigkill_subscriber_leaves_nothing() {
    let bin = require_cli_binary();
    for extra in [&[][..], &["--zero-copy"][..]] {
        let (mut publ, sub) = start(&bin, extra);
        kill9(sub);
        expect_failure_within(&mut publ, Duration::from_secs(30));
        assert_eq!(leftovers(&[publ.id(), sub]), Vec::<String>::new());
    }
}

#[test]
fn cli_sigkill_publisher_leaves_nothing() {
    let bin = require_cli_binary();
    for extra in [&[][..], &["--zero-copy", "--wait", "busy"][..]] {
        let (mut publ, sub) = start(&bin, extra);
        kill9(publ.id());
        publ.wait().unwrap();
        wait_gone(sub, "the orphaned subscriber");
        assert_eq!(leftovers(&[publ.id(), sub]), Vec::<String>::new());
    }
}
