//! What the iceoryx2 binding leaves on the machine: nothing, after a normal
//! end and after a run whose processes were killed with SIGKILL (then the
//! next run removes the dead nodes' files).
//!
//! "Nothing" is checked in iceoryx2's default domain, where the binding
//! runs: no `iox2_*` entry in /dev/shm and no /tmp/iceoryx2. Other iceoryx2
//! processes on the machine would own files there too; when one is alive
//! the checks say so and only check that the dead nodes' files are gone.
//!
//! The CLI checks need the `pubsubperf` binary of the same target directory
//! (`cargo build [--release] -p pubsubperf`), or `PUBSUBPERF_BIN`; without
//! it they fail naming it.

use pubsubperf_core::Received;
use pubsubperf_core::{Binding, EndpointConfig, Reader, TopicSpec, WaitMode, Writer};
use pubsubperf_iceoryx2::{Iceoryx2, tidy};
use pubsubperf_testkit::process::{
    expect_failure_within, kill9, require_cli_binary, start_run, wait_gone,
};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The checks look at machine-wide state: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Asserts that iceoryx2 left nothing, allowing for the files of live
/// iceoryx2 processes that are not ours.
fn assert_nothing_left(what: &str) {
    // Node files vanish when their last port does; give a just-ended
    // process's exit a moment.
    let start = Instant::now();
    loop {
        let (alive, dead) = tidy::count_nodes();
        let left = tidy::leftovers();
        if dead == 0 && (alive > 0 || left.is_empty()) {
            if alive > 0 {
                eprintln!("{alive} live iceoryx2 node(s) of other processes: their files stay");
            }
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{what}: left behind ({alive} live, {dead} dead nodes): {left:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn cfg(id: &str, wait: WaitMode, zero_copy: bool) -> EndpointConfig {
    let mut c = EndpointConfig::for_test(id);
    c.transport = "shm".into();
    c.max_sample_size = 4096;
    c.wait = wait;
    c.zero_copy = zero_copy;
    c
}

#[test]
fn a_normal_end_leaves_nothing() {
    let _g = serial();
    for (wait, zc) in [(WaitMode::Busy, true), (WaitMode::Block, false)] {
        let cfg = cfg(&format!("clean{}", std::process::id()), wait, zc);
        let topic = TopicSpec {
            name: "data".into(),
            index: 0,
        };
        let mut sub = Iceoryx2::open(&cfg).unwrap();
        let (mut r, loc) = sub.create_reader(&topic).unwrap();
        let mut publ = Iceoryx2::open(&cfg).unwrap();
        let mut w = publ.create_writer(&topic, &[loc]).unwrap();
        w.wait_matched(1, Duration::from_secs(5)).unwrap();
        r.wait_matched(Duration::from_secs(5)).unwrap();
        assert!(!tidy::leftovers().is_empty(), "a live run has files");
        let mut got = 0;
        for i in 0..10u8 {
            w.send(4096, |b| b[0] = i).unwrap();
            while r
                .recv(Duration::from_millis(100), &mut |s: Received| {
                    let s = s.as_slice().expect("one piece");
                    assert_eq!((s.len(), s[0]), (4096, i));
                    got += 1
                })
                .unwrap()
                == 0
            {}
        }
        assert_eq!(got, 10);
        // The harness's order on the publisher side: binding first.
        drop(publ);
        drop(w);
        drop(r);
        drop(sub);
        assert_nothing_left("after a normal end");
    }
}

/// Starts a 20-second latency run and returns it with its subscriber's
/// pid, once the run is under way.
fn start(bin: &Path, extra: &[&str]) -> (Child, u32) {
    let mut args = vec![
        "latency",
        "-b",
        "iceoryx2",
        "-s",
        "1KiB",
        "--duration",
        "20s",
        "--no-save",
    ];
    args.extend_from_slice(extra);
    start_run(bin, &args, Duration::from_secs(60))
}

/// A short run that must end well.
fn next_run(bin: &Path) {
    let st = Command::new(bin)
        .args(["latency", "-b", "iceoryx2", "-s", "64", "--duration", "1s"])
        .args(["--warmup", "200ms", "--no-save", "-q"])
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success(), "the run after the kill failed");
}

#[test]
fn cli_sigkill_of_the_subscriber_then_next_run_leaves_nothing() {
    let _g = serial();
    let bin = require_cli_binary();
    for extra in [&["--wait", "busy"][..], &["--zero-copy"][..]] {
        let (mut publ, sub) = start(&bin, extra);
        kill9(sub);
        expect_failure_within(&mut publ, Duration::from_secs(30));
        wait_gone(sub, "the subscriber");
        // The publisher removed the dead subscriber's node as it ended.
        assert_nothing_left("after the publisher outlived its killed subscriber");
        next_run(&bin);
        assert_nothing_left("after the next run");
    }
}

#[test]
fn cli_sigkill_of_both_sides_is_cleaned_by_the_next_run() {
    let _g = serial();
    let bin = require_cli_binary();
    let (mut publ, sub) = start(&bin, &["--wait", "block"]);
    kill9(sub);
    kill9(publ.id());
    publ.wait().unwrap();
    wait_gone(sub, "the subscriber");
    let (_, dead) = tidy::count_nodes();
    assert!(
        dead >= 1,
        "no dead node left to clean: {:?}",
        tidy::leftovers()
    );
    assert!(!tidy::leftovers().is_empty());
    next_run(&bin);
    assert_nothing_left("after the run that followed the SIGKILLs");
}
