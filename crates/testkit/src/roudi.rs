//! What a run over iceoryx's RouDi (iceoryx, cyclonedds over shm) must
//! leave behind: nothing. The run itself is a test of the binding's own
//! run in a child process ([`crate::peer`]); these are the checks around it.

/// Fails the test unless `iox-roudi` is installed and no RouDi runs here:
/// the checks are of files only the test's own RouDi makes, and iceoryx
/// allows one RouDi per host.
pub fn require_alone() {
    assert!(
        pubsubperf_roudi::find_binary().is_some(),
        "prerequisite missing: iox-roudi (Debian package iceoryx; scripts/setup.sh installs it)"
    );
    let others: Vec<u32> = pubsubperf_roudi::running().iter().map(|r| r.pid).collect();
    assert!(
        others.is_empty(),
        "a RouDi already runs here (pid {others:?}); this test starts its own and checks what it leaves: stop it and rerun"
    );
}

/// Fails the test if a RouDi still runs, or files of the run are left:
/// those named `prefix*` and any iceoryx file of a dead process.
pub fn assert_nothing_left(prefix: &str) {
    assert!(
        pubsubperf_roudi::running().is_empty(),
        "iox-roudi still runs"
    );
    let left = pubsubperf_roudi::leftover_files(prefix);
    assert!(left.is_empty(), "left: {left:?}");
    let stale = pubsubperf_roudi::stale_files();
    assert!(stale.is_empty(), "left: {stale:?}");
}

/// Every `iox-roudi` process on this host with its state letter from
/// `/proc/PID/stat` (`Z` for a zombie: [`pubsubperf_roudi::running`] skips
/// those, their command line is empty).
pub fn roudi_processes() -> Vec<(u32, char)> {
    let mut found = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return found;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // "PID (COMM) S ...": COMM may hold spaces or parentheses.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        if &stat[open + 1..close] == pubsubperf_roudi::ROUDI_BIN {
            let state = stat[close + 1..].trim_start().chars().next().unwrap_or('?');
            found.push((pid, state));
        }
    }
    found
}

/// Fails the test if any `iox-roudi` process exists, a zombie included:
/// a run must stop and reap the RouDi it started before it returns.
pub fn assert_no_roudi_process(after: &str) {
    let left = roudi_processes();
    assert!(
        left.is_empty(),
        "iox-roudi left right after {after} (pid, state): {left:?}"
    );
}
