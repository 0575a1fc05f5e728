//! Process helpers for the tests that run the `pubsubperf` binary and kill
//! its sides (each binding's leave-nothing-behind tests).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
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

/// The processes (other than this one) whose command line names `needle`,
/// such as a temporary directory that only the processes a test started
/// were given.
pub fn naming(needle: &str) -> Vec<u32> {
    let me = std::process::id();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    procs
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != me)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle))
        })
        .collect()
}

/// Sends SIGINT (what Ctrl-C sends) to `pid`.
pub fn interrupt(pid: u32) {
    // SAFETY: a signal to a process the test started.
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
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

/// [`cli_binary`], or the test fails naming it (`scripts/test.sh` builds
/// the binary before the tests).
pub fn require_cli_binary() -> PathBuf {
    cli_binary().expect(
        "prerequisite missing: the pubsubperf binary of this build (cargo build --release -p pubsubperf; scripts/test.sh builds it first)",
    )
}

/// Starts `bin ARGS` (a CLI test whose interval reports go to stderr) and
/// returns it with its first subscriber process once the run is under way
/// (its first interval report is out); fails the test after `within`, with
/// what the run printed.
pub fn start_run(bin: &Path, args: &[&str], within: Duration) -> (Child, u32) {
    let mut run = Command::new(bin)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", bin.display()));
    let (tx, rx) = std::sync::mpsc::channel();
    let err = run.stderr.take().expect("piped");
    std::thread::spawn(move || {
        // Interval reports ("[ 1.0s] size 1KiB: N pings ...") go to stderr;
        // anything else is kept in case the run fails.
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + within;
    let mut said = Vec::new();
    loop {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(line) if line.contains("pings") => break,
            Ok(line) => said.push(line),
            Err(e) => {
                let _ = run.kill();
                let _ = run.wait();
                panic!("no interval report ({e}): the run never got under way: {said:?}");
            }
        }
    }
    let sub = *children(run.id()).first().expect("a subscriber process");
    (run, sub)
}

/// Waits for a publisher whose subscriber was killed: it must report the
/// loss by exiting with a failure within `within`.
pub fn expect_failure_within(publisher: &mut Child, within: Duration) {
    let start = Instant::now();
    loop {
        if let Some(st) = publisher.try_wait().expect("wait") {
            assert!(!st.success(), "publisher succeeded without its subscriber");
            return;
        }
        assert!(start.elapsed() < within, "publisher hangs");
        std::thread::sleep(Duration::from_millis(20));
    }
}
