//! A cyclonedds shm run in its own process leaves no RouDi, no shared
//! memory and no iceoryx files behind once that process exits.

use pubsubperf_core::{DataType, EndpointConfig, Reliability};
use pubsubperf_cyclonedds::CycloneDds;
use pubsubperf_testkit::{conformance, peer, roudi};

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
    roudi::require_alone();
    peer::run_to_end("child_shm_run", &[(CHILD, "1")]);
    // Child pids are not known here; any iceoryx_rt file of a dead process
    // counts as stale.
    roudi::assert_nothing_left("iceoryx_rt_0_");
}
