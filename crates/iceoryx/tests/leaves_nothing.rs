//! An iceoryx run in its own process leaves no RouDi, no shared
//! memory and no iceoryx files behind once that process exits.

use pubsubperf_core::{DataType, EndpointConfig, Reliability};
use pubsubperf_iceoryx::Iceoryx;
use pubsubperf_testkit::conformance;
use std::process::Command;

const CHILD: &str = "PUBSUBPERF_ICEORYX_SHM_CHILD";

/// The run itself; only does something when started by the test below.
#[test]
#[ignore = "run by shm_run_leaves_nothing in a child process"]
fn child_shm_run() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let mut c = EndpointConfig::for_test(&conformance::unique_id("leftover"));
    c.transport = "shm".into();
    c.data_type = DataType::Flat;
    c.zero_copy = true;
    c.reliability = Reliability::BestEffort;
    conformance::ping_pong::<Iceoryx>(&c);
}

#[test]
fn shm_run_leaves_nothing() {
    if pubsubperf_roudi::find_binary().is_none() {
        eprintln!("skipped: iox-roudi not installed");
        return;
    }
    if !pubsubperf_roudi::running().is_empty() {
        eprintln!("skipped: a RouDi already runs here; its files are not ours to check");
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let child = Command::new(exe)
        .args(["--exact", "child_shm_run", "--ignored", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .expect("start child");
    assert!(
        child.status.success(),
        "child run failed: {}{}",
        String::from_utf8_lossy(&child.stdout),
        String::from_utf8_lossy(&child.stderr)
    );
    let out = String::from_utf8_lossy(&child.stdout);
    assert!(out.contains("1 passed"), "the child did not run: {out}");
    assert!(
        pubsubperf_roudi::running().is_empty(),
        "iox-roudi still runs"
    );
    // Child pids are not known here; any iceoryx_rt file of a dead process
    // would be reported by stale_files.
    let left = pubsubperf_roudi::leftover_files("pubsubperf_iox_0");
    assert!(left.is_empty(), "left: {left:?}");
    assert!(
        pubsubperf_roudi::stale_files().is_empty(),
        "left: {:?}",
        pubsubperf_roudi::stale_files()
    );
}
