//! An iceoryx run in its own process leaves no RouDi, no shared
//! memory and no iceoryx files behind once that process exits.

use pubsubperf_core::{DataType, EndpointConfig, Reliability, conformance};
use pubsubperf_iceoryx::Iceoryx;
use std::path::Path;
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

fn our_files(pid: u32) -> Vec<String> {
    let mut v = Vec::new();
    for p in [
        "/dev/shm/iceoryx_mgmt",
        "/tmp/roudi",
        "/tmp/roudi.lock",
        "/tmp/iox-unique-roudi.lock",
    ] {
        if Path::new(p).exists() {
            v.push(p.to_string());
        }
    }
    // The payload segment is named after the user (root here).
    let user = std::env::var("USER").unwrap_or_else(|_| "root".into());
    if Path::new(&format!("/dev/shm/{user}")).exists() {
        v.push(format!("/dev/shm/{user}"));
    }
    for e in std::fs::read_dir("/tmp").unwrap().flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        if n.starts_with(&format!("pubsubperf_iox_{pid}")) || n.starts_with("pubsubperf-roudi-") {
            v.push(format!("/tmp/{n}"));
        }
    }
    v
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
    let left = our_files(0);
    assert!(left.is_empty(), "left: {left:?}");
    assert!(
        pubsubperf_roudi::stale_files().is_empty(),
        "left: {:?}",
        pubsubperf_roudi::stale_files()
    );
}
