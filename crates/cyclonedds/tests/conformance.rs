//! The binding conformance suite over every transport and mode of
//! `cyclonedds`.

use pubsubperf_core::EndpointConfig;
use pubsubperf_cyclonedds::CycloneDds;
use pubsubperf_testkit::{TestConfig, conformance_suite};

fn udp(id: &str) -> EndpointConfig {
    EndpointConfig::for_test(id).transport("udp")
}

// Over shm, CycloneDDS 0.10 hands samples to readers through an iceoryx
// queue that discards the oldest sample when full (its capacity is the
// reader's history depth, at most 256), whatever the reliability: a
// reliable writer does not wait for a slow reader there. The full suite
// therefore runs best effort (lock step); reliable runs every check but the
// unpaced burst of `in_order_delivery`.
fn shm(id: &str) -> EndpointConfig {
    EndpointConfig::for_test(id).transport("shm").best_effort()
}

fn shm_reliable(id: &str) -> EndpointConfig {
    EndpointConfig::for_test(id).transport("shm")
}

conformance_suite!(udp_block, CycloneDds, udp);
conformance_suite!(udp_busy_poll, CycloneDds, |id| udp(id).busy());
conformance_suite!(udp_listener, CycloneDds, |id| udp(id).listener());
conformance_suite!(udp_best_listener, CycloneDds, |id| udp(id)
    .best_effort()
    .listener());
conformance_suite!(udp_best, CycloneDds, |id| udp(id).best_effort());
conformance_suite!(udp_flat_type, CycloneDds, |id| udp(id).flat());
conformance_suite!(shm_copy, CycloneDds, shm);
conformance_suite!(shm_flat_copy_busy, CycloneDds, |id| shm(id).flat().busy());
conformance_suite!(shm_loan, CycloneDds, |id| shm(id).flat().zero_copy());
conformance_suite!(shm_loan_listener, CycloneDds, |id| shm(id)
    .flat()
    .zero_copy()
    .listener());
conformance_suite!(shm_loan_busy, CycloneDds, |id| shm(id)
    .flat()
    .zero_copy()
    .busy());
conformance_suite!(
    shm_reliable_copy,
    CycloneDds,
    shm_reliable,
    checks = [
        exact_loss_accounting,
        largest_sample,
        several_subscribers,
        ping_pong,
        quiet_reader_times_out,
        clean_shutdown
    ]
);
conformance_suite!(
    shm_reliable_loan,
    CycloneDds,
    |id| shm_reliable(id).flat().zero_copy(),
    checks = [
        exact_loss_accounting,
        largest_sample,
        several_subscribers,
        ping_pong,
        quiet_reader_times_out,
        clean_shutdown
    ]
);
