//! The binding conformance suite over every transport and mode of `zenoh`.

use pubsubperf_core::EndpointConfig;
use pubsubperf_testkit::{TestConfig, conformance_suite};
use pubsubperf_zenoh::Zenoh;

fn on(id: &str, transport: &str) -> EndpointConfig {
    EndpointConfig::for_test(id).transport(transport)
}

conformance_suite!(tcp_block_suite, Zenoh, |id| on(id, "tcp"));
conformance_suite!(tcp_busy_suite, Zenoh, |id| on(id, "tcp").busy());
conformance_suite!(tcp_best_effort_suite, Zenoh, |id| on(id, "tcp")
    .best_effort());
// A throughput test's data batches by default (as z_pub_thr); express too.
conformance_suite!(tcp_express_suite, Zenoh, |id| on(id, "tcp")
    .option("express", "true"));
conformance_suite!(udp_block_suite, Zenoh, |id| on(id, "udp").best_effort());
conformance_suite!(udp_busy_suite, Zenoh, |id| on(id, "udp")
    .best_effort()
    .busy());
conformance_suite!(shm_copy_suite, Zenoh, |id| on(id, "shm"));
conformance_suite!(shm_zero_copy_suite, Zenoh, |id| on(id, "shm")
    .zero_copy()
    .busy());
// --receive listener: the checks' subscribers receive through recv_window,
// and the ping-pong's publisher through recv_on_arrival, on zenoh's task.
conformance_suite!(tcp_listener_suite, Zenoh, |id| on(id, "tcp").listener());
conformance_suite!(tcp_best_effort_listener_suite, Zenoh, |id| on(id, "tcp")
    .best_effort()
    .listener());
conformance_suite!(shm_listener_suite, Zenoh, |id| on(id, "shm").listener());
// With --wait busy a listener's channel holds zenoh's samples, not copies.
conformance_suite!(tcp_busy_listener_suite, Zenoh, |id| on(id, "tcp")
    .busy()
    .listener());
