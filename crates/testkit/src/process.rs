//! Process helpers for the tests that run the `pubsubperf` binary and kill
//! its sides (each binding's leave-nothing-behind tests).

use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The CLI binary of this build: `$PUBSUBPERF_BIN`, else the release or
/// debug `pubsubperf` of the target directory the test runs from
/// (`<target>/<profile>/deps/`).
pub fn cli_binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PUBSUBPERF_BIN") {
        return Some(PathBuf::from(p));
    }
    let exe = std::env::current_exe().ok()?;
    let target = exe.parent()?.parent()?.parent()?;
    ["release", "debug"]
        .iter()
        .map(|p| target.join(p).join("pubsubperf"))
        .find(|p| p.is_file())
}

/// Child processes of `pid` (of any of its threads).
pub fn children(pid: u32) -> Vec<u32> {
    let mut v = Vec::new();
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for t in tasks.flatten() {
            if let Ok(s) = std::fs::read_to_string(t.path().join("children")) {
                v.extend(s.split_whitespace().filter_map(|x| x.parse::<u32>().ok()));
            }
        }
    }
    v
}

/// Sends SIGKILL to `pid`.
pub fn kill9(pid: u32) {
    // SAFETY: a signal to a process the test started (or its child).
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
}

/// True while any thread of `pid` runs: a zombie thread-group leader
/// whose other threads still run still holds its files and mappings.
pub fn alive(pid: u32) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/task")).is_ok_and(|tasks| {
        tasks.flatten().any(|t| {
            std::fs::read_to_string(t.path().join("stat")).is_ok_and(|s| {
                !s.rsplit_once(')')
                    .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
            })
        })
    })
}

/// Waits until no thread of `pid` runs (an orphan is reaped by init);
/// fails the test after 20 s, naming `what`.
pub fn wait_gone(pid: u32, what: &str) {
    wait_gone_within(pid, what, Duration::from_secs(20));
}

/// [`wait_gone`] with its own bound.
pub fn wait_gone_within(pid: u32, what: &str, within: Duration) {
    let start = Instant::now();
    while alive(pid) {
        assert!(
            start.elapsed() < within,
            "{what} ({pid}) still runs after {within:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
