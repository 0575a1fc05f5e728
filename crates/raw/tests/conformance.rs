//! The binding conformance suite over every mode of udp, tcp, uds and intra.

use pubsubperf_core::EndpointConfig;
use pubsubperf_raw::udp::MAX_DATAGRAM;
use pubsubperf_raw::{Intra, Tcp, Udp, Uds};
use pubsubperf_testkit::{TestConfig, conformance_suite};

fn udp(id: &str) -> EndpointConfig {
    EndpointConfig::for_test(id)
        .transport("udp")
        .best_effort()
        .max_sample_size(MAX_DATAGRAM)
}

fn stream(id: &str, transport: &str) -> EndpointConfig {
    EndpointConfig::for_test(id)
        .transport(transport)
        .max_sample_size(1 << 20)
}

conformance_suite!(ipv4_block, Udp, udp);
conformance_suite!(ipv4_busy, Udp, |id| udp(id).busy());
conformance_suite!(ipv4_batch, Udp, |id| udp(id)
    .batch(8192)
    .max_sample_size(4096));
conformance_suite!(ipv6, Udp, |id| udp(id).ipv6());
conformance_suite!(ipv4_multicast, Udp, |id| udp(id).multicast());

conformance_suite!(tcp_block, Tcp, |id| stream(id, "tcp"));
conformance_suite!(tcp_busy_poll, Tcp, |id| stream(id, "tcp").busy());
conformance_suite!(tcp_batched, Tcp, |id| stream(id, "tcp").batch(16 << 10));
conformance_suite!(tcp_ipv6, Tcp, |id| stream(id, "tcp").ipv6());
conformance_suite!(uds_block, Uds, |id| stream(id, "uds"));
conformance_suite!(uds_busy_poll, Uds, |id| stream(id, "uds").busy());

conformance_suite!(intra_block, Intra, |id| stream(id, "intra"));
conformance_suite!(intra_busy, Intra, |id| stream(id, "intra").busy());
conformance_suite!(intra_best_effort, Intra, |id| stream(id, "intra")
    .best_effort());
