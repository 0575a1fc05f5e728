//! The binding conformance suite over the transports and modes of
//! `connext`. It needs RTI's libraries (scripts/setup.sh --with-connext,
//! which scripts/test.sh runs): without them every check fails naming it.

use pubsubperf_connext::Connext;
use pubsubperf_core::EndpointConfig;
use pubsubperf_testkit::{TestConfig, conformance_suite};

fn on(id: &str, transport: &str) -> EndpointConfig {
    EndpointConfig::for_test(id)
        .transport(transport)
        .max_sample_size(64 * 1024)
}

// Perftest's default: both transports, reliable, the listener.
conformance_suite!(default_listener, Connext, |id| on(id, "udp+shm").listener());
conformance_suite!(udp_reliable_block, Connext, |id| on(id, "udp"));
conformance_suite!(udp_multicast_best_effort, Connext, |id| on(id, "udp")
    .best_effort()
    .multicast());
conformance_suite!(shm_reliable_block, Connext, |id| on(id, "shm"));
conformance_suite!(shm_best_effort_busy, Connext, |id| on(id, "shm")
    .best_effort()
    .busy());
// Large samples: asynchronous publishing, fragments.
conformance_suite!(shm_large_listener, Connext, |id| on(id, "shm")
    .max_sample_size(1 << 20)
    .listener());
