//! The binding conformance suite over every mode of `iceoryx2`.

use pubsubperf_core::EndpointConfig;
use pubsubperf_iceoryx2::Iceoryx2;
use pubsubperf_testkit::{TestConfig, conformance_suite};

fn shm(id: &str) -> EndpointConfig {
    EndpointConfig::for_test(id)
        .transport("shm")
        .max_sample_size(1 << 20)
}

conformance_suite!(zero_copy_busy_reliable, Iceoryx2, |id| shm(id)
    .zero_copy()
    .busy());
conformance_suite!(zero_copy_busy_best_effort, Iceoryx2, |id| shm(id)
    .zero_copy()
    .busy()
    .best_effort());
conformance_suite!(zero_copy_block_reliable, Iceoryx2, |id| shm(id).zero_copy());
conformance_suite!(zero_copy_block_best_effort, Iceoryx2, |id| shm(id)
    .zero_copy()
    .best_effort());
conformance_suite!(copy_busy_reliable, Iceoryx2, |id| shm(id).busy());
conformance_suite!(copy_block_best_effort, Iceoryx2, |id| shm(id).best_effort());
