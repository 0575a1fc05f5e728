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
