//! Starts a real RouDi, reuses it, stops it, and checks nothing is left.
//!
//! Needs `iox-roudi` (Debian package iceoryx; `scripts/setup.sh` installs
//! it): without it the test fails naming it.
//!
//! A RouDi already running: iceoryx 2.0 allows one RouDi per host (its
//! shared memory `/dev/shm/iceoryx_mgmt` and socket `/tmp/roudi` have fixed
//! names), so this test can neither start its own beside it nor stop it.
//! - One that pubsubperf started for a process that still runs (another
//!   test, a run in progress) stops when that process is done: the test
//!   waits for it, up to [`OTHERS_ROUDI_WAIT`], then fails naming its pid
//!   and its owner's.
//! - One that pubsubperf started for a process that is gone (an orphan) is
//!   what [`Roudi::ensure`] retires itself: the test goes ahead.
//! - Anyone else's fails the test at once, naming its pid and command line:
//!   stop it, or run the tests on a machine where no RouDi runs (CI).

use pubsubperf_roudi::{
    CONFIG_PREFIX, Options, Pool, ROUDI_BIN, Roudi, find_binary, owner_of, running, stale_files,
};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long the test waits for a RouDi that another pubsubperf process
/// started (a binding test's takes a few seconds; a long run longer).
const OTHERS_ROUDI_WAIT: Duration = Duration::from_secs(120);

/// Fails the test unless `iox-roudi` is installed.
fn require_roudi_binary() {
    assert!(
        find_binary().is_some(),
        "prerequisite missing: the command '{ROUDI_BIN}' (Debian package iceoryx; scripts/setup.sh installs it)"
    );
}

/// True while `pid` exists and is not a zombie.
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit_once(')')
            .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
    })
}

/// The command line of `pid`, spaces between arguments.
fn cmdline(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            String::from_utf8_lossy(&b)
                .replace('\0', " ")
                .trim()
                .to_string()
        })
        .unwrap_or_default()
}

/// Returns once no RouDi runs but orphans of ours (see the file's docs).
fn no_other_roudi() {
    let start = Instant::now();
    loop {
        let mut waiting_for = None;
        for r in running() {
            let ours = r
                .config
                .as_deref()
                .is_some_and(|c| c.to_string_lossy().starts_with(CONFIG_PREFIX));
            assert!(
                ours,
                "a RouDi not started by pubsubperf already runs (pid {}: {}); iceoryx allows one per host, so this test can neither start its own nor stop it: stop it (kill {}) and rerun",
                r.pid,
                cmdline(r.pid),
                r.pid
            );
            match r.config.as_deref().and_then(owner_of) {
                Some(owner) if !alive(owner) => {} // an orphan: Roudi::ensure retires it
                // Its owner runs, or its config is already gone (being stopped).
                owner => waiting_for = Some((r.pid, owner)),
            }
        }
        let Some((pid, owner)) = waiting_for else {
            return;
        };
        let whose = owner.map_or("a process whose config file is gone".into(), |o| {
            format!("process {o} ({})", cmdline(o as u32))
        });
        assert!(
            start.elapsed() < OTHERS_ROUDI_WAIT,
            "a RouDi started by pubsubperf for {whose} still runs (pid {pid}) after {OTHERS_ROUDI_WAIT:?}; this test needs the host's only RouDi to itself"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn start_reuse_stop_leaves_nothing() {
    require_roudi_binary();
    no_other_roudi();
    let tag = format!("lifecycle-{}", std::process::id());
    let mut opts = Options::new(&tag);
    // Small pools: starts in well under a second.
    opts.pools = vec![Pool {
        size: 1024,
        count: 100,
    }];
    let ours = Roudi::ensure(&opts).expect("start RouDi");
    assert!(
        ours.is_owned(),
        "reused RouDi {} ({}) instead of starting one",
        ours.pid(),
        cmdline(ours.pid())
    );
    assert_eq!(ours.max_payload(), 1024);
    assert!(Path::new("/tmp/roudi").exists(), "RouDi's socket");
    let again = Roudi::ensure(&opts).expect("reuse RouDi");
    assert!(!again.is_owned());
    assert_eq!(again.pid(), ours.pid());
    assert_eq!(again.max_payload(), 1024, "read from our config file");
    drop(again);
    assert!(
        running().iter().any(|r| r.pid == ours.pid()),
        "reuse must not stop it"
    );
    let pid = ours.pid();
    drop(ours);
    assert!(!running().iter().any(|r| r.pid == pid), "still running");
    assert!(stale_files().is_empty(), "left: {:?}", stale_files());
    let ours = format!("{CONFIG_PREFIX}{tag}");
    let left: Vec<_> = std::fs::read_dir("/tmp")
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().starts_with(&ours))
        .collect();
    assert!(left.is_empty(), "our config/log files remain: {left:?}");
}
