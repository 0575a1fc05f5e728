//! The binding conformance suite over every mode of `shm`: copy and zero
//! copy, blocking and busy waits, bytes and flat, reliable and best effort
//! (eight of the sixteen combinations, each value of each axis twice).

use pubsubperf_core::EndpointConfig;
use pubsubperf_shm::Shm;
use pubsubperf_testkit::{TestConfig, conformance_suite};

fn shm(id: &str) -> EndpointConfig {
    EndpointConfig::for_test(id)
        .transport("shm")
        .max_sample_size(1 << 20)
}

conformance_suite!(shm_copy_block_bytes_rel, Shm, shm);
conformance_suite!(shm_copy_block_flat_be, Shm, |id| shm(id)
    .flat()
    .best_effort());
conformance_suite!(shm_copy_busy_bytes_be, Shm, |id| shm(id)
    .busy()
    .best_effort());
conformance_suite!(shm_copy_busy_flat_rel, Shm, |id| shm(id).busy().flat());
conformance_suite!(shm_zc_block_bytes_be, Shm, |id| shm(id)
    .zero_copy()
    .best_effort());
conformance_suite!(shm_zc_block_flat_rel, Shm, |id| shm(id).zero_copy().flat());
conformance_suite!(shm_zc_busy_bytes_rel, Shm, |id| shm(id).zero_copy().busy());
conformance_suite!(shm_zc_busy_flat_be, Shm, |id| shm(id)
    .zero_copy()
    .busy()
    .flat()
    .best_effort());
