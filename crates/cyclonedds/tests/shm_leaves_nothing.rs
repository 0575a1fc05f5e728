//! A cyclonedds shm run in its own process leaves no RouDi, no shared
//! memory and no iceoryx files behind once that process exits.

use pubsubperf_core::{DataType, EndpointConfig, Reliability};
use pubsubperf_cyclonedds::CycloneDds;
use pubsubperf_testkit::{conformance, peer};

const CHILD: &str = "PUBSUBPERF_CYCLONEDDS_SHM_CHILD";

/// The run itself; only does something when started by the test below.
#[test]
#[ignore = "run by shm_run_leaves_nothing in a child process"]
fn child_shm_run() {
    if !peer::is_child(CHILD) {
        return;
    }
    let mut c = EndpointConfig::for_test(&conformance::unique_id("leftover"));
    c.transport = "shm".into();
    c.data_type = DataType::Flat;
    c.zero_copy = true;
    c.reliability = Reliability::BestEffort;
    conformance::ping_pong::<CycloneDds>(&c);
}

#[test]
fn shm_run_leaves_nothing() {
    assert!(
        pubsubperf_roudi::find_binary().is_some(),
        "prerequisite missing: iox-roudi (Debian package iceoryx; scripts/setup.sh installs it)"
    );
    // The check is of files only this run's RouDi makes: someone else's
    // RouDi would make them too (iceoryx allows one per host).
    let others: Vec<u32> = pubsubperf_roudi::running().iter().map(|r| r.pid).collect();
    assert!(
        others.is_empty(),
        "a RouDi already runs here (pid {others:?}); this test starts its own and checks what it leaves: stop it and rerun"
    );
    peer::run_to_end("child_shm_run", &[(CHILD, "1")]);
    assert!(
        pubsubperf_roudi::running().is_empty(),
        "iox-roudi still runs"
    );
    // Child pids are not known here; any iceoryx_rt file of a dead process
    // would be reported by stale_files.
    let left = pubsubperf_roudi::leftover_files("iceoryx_rt_0_");
    assert!(left.is_empty(), "left: {left:?}");
    assert!(
        pubsubperf_roudi::stale_files().is_empty(),
        "left: {:?}",
        pubsubperf_roudi::stale_files()
    );
}
