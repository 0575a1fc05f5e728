//! The binding conformance suite over every transport and mode of `fastdds`.

use pubsubperf_core::EndpointConfig;
use pubsubperf_fastdds::FastDds;
use pubsubperf_testkit::{TestConfig, conformance_suite};

fn on(id: &str, transport: &str) -> EndpointConfig {
    EndpointConfig::for_test(id)
        .transport(transport)
        .max_sample_size(64 * 1024)
}

fn zero_copy(id: &str) -> EndpointConfig {
    on(id, "shm").flat().zero_copy().max_sample_size(1 << 20)
}

conformance_suite!(udp_reliable_block, FastDds, |id| on(id, "udp"));
conformance_suite!(udp_reliable_busy, FastDds, |id| on(id, "udp").busy());
conformance_suite!(udp_best_effort_block, FastDds, |id| on(id, "udp")
    .best_effort());
conformance_suite!(udp_best_effort_busy, FastDds, |id| on(id, "udp")
    .best_effort()
    .busy());
conformance_suite!(udp_multicast_best_effort, FastDds, |id| on(id, "udp")
    .best_effort()
    .multicast());
conformance_suite!(udp_flat_copy, FastDds, |id| on(id, "udp")
    .flat()
    .max_sample_size(4096));
conformance_suite!(tcp_reliable_block, FastDds, |id| on(id, "tcp"));
conformance_suite!(tcp_best_effort_busy, FastDds, |id| on(id, "tcp")
    .best_effort()
    .busy());
conformance_suite!(shm_reliable_block, FastDds, |id| on(id, "shm"));
conformance_suite!(shm_best_effort_busy, FastDds, |id| on(id, "shm")
    .best_effort()
    .busy());
conformance_suite!(zero_copy_reliable_block, FastDds, zero_copy);
conformance_suite!(zero_copy_best_effort_busy, FastDds, |id| zero_copy(id)
    .best_effort()
    .busy());
// --receive listener: the checks' subscribers receive through recv_window,
// on Fast DDS's receive thread (data sharing: its listening thread).
conformance_suite!(udp_listener, FastDds, |id| on(id, "udp").listener());
conformance_suite!(udp_best_effort_listener, FastDds, |id| on(id, "udp")
    .best_effort()
    .listener());
conformance_suite!(zero_copy_listener, FastDds, |id| zero_copy(id).listener());
