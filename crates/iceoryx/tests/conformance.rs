//! The binding conformance suite over every mode of `iceoryx` (classic
//! iceoryx through RouDi, flat samples).

use pubsubperf_core::EndpointConfig;
use pubsubperf_iceoryx::Iceoryx;
use pubsubperf_testkit::{TestConfig, conformance_suite};

fn shm(id: &str) -> EndpointConfig {
    EndpointConfig::for_test(id).transport("shm").flat()
}

conformance_suite!(copy_block, Iceoryx, shm);
conformance_suite!(zero_copy_block, Iceoryx, |id| shm(id).zero_copy());
conformance_suite!(zero_copy_busy, Iceoryx, |id| shm(id).zero_copy().busy());
conformance_suite!(zero_copy_best_effort, Iceoryx, |id| shm(id)
    .zero_copy()
    .best_effort());
