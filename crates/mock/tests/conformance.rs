//! The binding conformance suite over the mock binding, reliable and best
//! effort.

use pubsubperf_core::EndpointConfig;
use pubsubperf_mock::Mock;
use pubsubperf_testkit::{TestConfig, conformance_suite};

fn reliable(id: &str) -> EndpointConfig {
    EndpointConfig::for_test(id)
        .transport("mock")
        .max_sample_size(1 << 20)
}

conformance_suite!(mock_reliable, Mock, reliable);
conformance_suite!(mock_best_effort, Mock, |id| reliable(id).best_effort());
