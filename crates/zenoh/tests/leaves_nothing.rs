//! What a zenoh `--transport shm` run leaves in /dev/shm: nothing, after a
//! normal end (copy and zero copy), and after a run whose processes were
//! killed with SIGKILL once the next shm run has opened (it removes the
//! dead processes' segments).
//!
//! zenoh 1.x names its POSIX shared-memory segments `/dev/shm/<u64>.zenoh`
//! (provider pools, and the metadata and watchdog segments it keeps in
//! process-wide statics); it creates nothing in /tmp on Linux. Every
//! segment's creator and every process that opened it hold a `flock` on it
//! while they use it. A leftover is therefore a `<u64>.zenoh` segment that
//! was not there before the check and that no live process locks: segments
//! of other zenoh processes on the machine (locked by their owners) are not
//! counted.
//!
//! The CLI checks need the `pubsubperf` binary of the same target directory
//! (`cargo build [--release] -p pubsubperf`), or `PUBSUBPERF_BIN`; without
//! it they fail naming it. The binding check runs a ping-pong in a child
//! process of this test binary.

use pubsubperf_testkit::process::{
    expect_failure_within, kill9, require_cli_binary, start_run, wait_gone,
};
use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The checks look at machine-wide state: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// zenoh's segment names: digits, then `.zenoh`.
fn is_zenoh_segment(name: &str) -> bool {
    name.strip_suffix(".zenoh")
        .is_some_and(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()))
}

/// `(major:minor, inode)` of every file some live process holds a lock on,
/// as /proc/locks prints them ("1: FLOCK ADVISORY READ 1234 00:19:5678 0 EOF";
/// waiters, with "->" in the second field, are skipped).
fn locked() -> BTreeSet<(String, u64)> {
    let locks = std::fs::read_to_string("/proc/locks").unwrap_or_default();
    locks
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() < 6 || f[1] == "->" {
                return None;
            }
            let (dev, ino) = f[5].rsplit_once(':')?;
            Some((dev.to_string(), ino.parse().ok()?))
        })
        .collect()
}

/// zenoh segments in /dev/shm: name, and whether a live process locks it.
fn segments() -> Vec<(String, bool)> {
    let locks = locked();
    let Ok(dir) = std::fs::read_dir("/dev/shm") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            if !is_zenoh_segment(&name) {
                return None;
            }
            let m = e.metadata().ok()?;
            let dev = format!("{:02x}:{:02x}", libc::major(m.dev()), libc::minor(m.dev()));
            let held = locks.contains(&(dev, m.ino()));
            Some((name, held))
        })
        .collect()
}

fn names() -> BTreeSet<String> {
    segments().into_iter().map(|(n, _)| n).collect()
}

/// Segments that were not there `before` and that no live process holds.
fn orphans_since(before: &BTreeSet<String>) -> Vec<String> {
    segments()
        .into_iter()
        .filter(|(n, held)| !held && !before.contains(n))
        .map(|(n, _)| n)
        .collect()
}

/// Asserts that nothing new is left (giving just-ended processes a moment),
/// and says how many segments of live zenoh processes it did not count.
fn assert_nothing_left(before: &BTreeSet<String>, what: &str) {
    let start = Instant::now();
    loop {
        let left = orphans_since(before);
        if left.is_empty() {
            let live = segments().iter().filter(|(_, held)| *held).count();
            if live > 0 {
                eprintln!("{live} zenoh segment(s) held by live processes: not counted");
            }
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{what}: left behind in /dev/shm: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn segment_names() {
    assert!(is_zenoh_segment("12345678901234.zenoh"));
    assert!(!is_zenoh_segment(".zenoh"));
    assert!(!is_zenoh_segment("iox2_x.zenoh"));
    assert!(!is_zenoh_segment("123.zenoh.tmp"));
}

// ---- The binding, in a child process (both sides in it) ----

const CHILD: &str = "PUBSUBPERF_ZENOH_SHM_CHILD";

/// The run itself; only does something when started by the test below.
#[test]
#[ignore = "run by binding_shm_run_leaves_nothing in a child process"]
fn child_shm_run() {
    let Some(mode) = std::env::var_os(CHILD) else {
        return;
    };
    let mut c = pubsubperf_core::EndpointConfig::for_test(
        &pubsubperf_testkit::conformance::unique_id("zshm"),
    );
    c.transport = "shm".into();
    c.max_sample_size = 4096;
    c.zero_copy = mode == "zero-copy";
    pubsubperf_testkit::conformance::ping_pong::<pubsubperf_zenoh::Zenoh>(&c);
}

#[test]
fn binding_shm_run_leaves_nothing() {
    let _g = serial();
    let exe = std::env::current_exe().unwrap();
    for mode in ["copy", "zero-copy"] {
        let before = names();
        let child = Command::new(&exe)
            .args(["--exact", "child_shm_run", "--ignored", "--test-threads=1"])
            .env(CHILD, mode)
            .output()
            .expect("start child");
        let out = String::from_utf8_lossy(&child.stdout);
        assert!(
            child.status.success(),
            "{mode}: child run failed: {out}{}",
            String::from_utf8_lossy(&child.stderr)
        );
        assert!(
            out.contains("1 passed"),
            "{mode}: the child did not run: {out}"
        );
        assert_nothing_left(&before, &format!("binding, {mode}, after a normal end"));
    }
}

// ---- The CLI: publisher and subscriber processes ----

/// Options of every CLI run here: both sides on CPU 0 (leaving other cores
/// to whatever else runs), and long timeouts, because on a loaded machine
/// zenoh's matching can take longer than the 10 s default.
const COMMON: [&str; 5] = ["--cpu", "0,0", "--connect-timeout", "60s", "--no-save"];

fn shm_run(bin: &Path, extra: &[&str]) {
    let out = Command::new(bin)
        .args([
            "latency",
            "-b",
            "zenoh",
            "--transport",
            "shm",
            "-s",
            "64,64KiB",
        ])
        .args(["--duration", "1s", "--warmup", "200ms", "-q"])
        .args(COMMON)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "pubsubperf {extra:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn cli_shm_run_leaves_nothing() {
    let _g = serial();
    let bin = require_cli_binary();
    for extra in [&["--wait", "block"][..], &["--zero-copy"][..]] {
        let before = names();
        shm_run(&bin, extra);
        assert_nothing_left(&before, &format!("CLI {extra:?}, after a normal end"));
    }
}

/// Starts a 30-second shm latency run and returns it with its
/// subscriber's pid, once the run is under way.
fn start(bin: &Path, extra: &[&str]) -> (Child, u32) {
    let mut args = vec![
        "latency",
        "-b",
        "zenoh",
        "--transport",
        "shm",
        "-s",
        "1KiB",
        "--duration",
        "30s",
    ];
    args.extend_from_slice(&COMMON);
    args.extend_from_slice(extra);
    start_run(bin, &args, Duration::from_secs(90))
}

#[test]
fn cli_sigkill_of_the_subscriber_then_next_run_leaves_nothing() {
    let _g = serial();
    let bin = require_cli_binary();
    for extra in [&["--wait", "block"][..], &["--zero-copy"][..]] {
        let before = names();
        let (mut publ, sub) = start(&bin, extra);
        kill9(sub);
        expect_failure_within(&mut publ, Duration::from_secs(60));
        wait_gone(sub, "the subscriber");
        let after_kill = orphans_since(&before);
        eprintln!("{extra:?}: after the subscriber's SIGKILL: {after_kill:?}");
        // The next shm run removes whatever the dead subscriber left.
        shm_run(&bin, &["--wait", "block"]);
        assert_nothing_left(&before, &format!("{extra:?}, after the next run"));
    }
}

#[test]
fn cli_sigkill_of_the_publisher_is_cleaned_by_the_next_run() {
    let _g = serial();
    let bin = require_cli_binary();
    let before = names();
    let (mut publ, sub) = start(&bin, &["--zero-copy"]);
    kill9(publ.id());
    publ.wait().unwrap();
    // A local subscriber dies with its publisher (PR_SET_PDEATHSIG: SIGKILL),
    // so neither side cleans up: their segments stay, unlocked.
    wait_gone(sub, "the subscriber");
    eprintln!(
        "after the publisher's SIGKILL: {:?}",
        orphans_since(&before)
    );
    shm_run(&bin, &["--wait", "block"]);
    assert_nothing_left(
        &before,
        "after the run that followed the publisher's SIGKILL",
    );
}

#[test]
fn cli_sigkill_of_both_sides_is_cleaned_by_the_next_run() {
    let _g = serial();
    let bin = require_cli_binary();
    let before = names();
    let (mut publ, sub) = start(&bin, &["--zero-copy"]);
    kill9(sub);
    kill9(publ.id());
    publ.wait().unwrap();
    wait_gone(sub, "the subscriber");
    let left = orphans_since(&before);
    assert!(
        !left.is_empty(),
        "a SIGKILLed shm run left no segment: nothing for the next run to clean"
    );
    shm_run(&bin, &["--wait", "block"]);
    assert_nothing_left(&before, "after the run that followed the SIGKILLs");
}
