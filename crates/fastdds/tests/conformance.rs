//! The binding conformance suite over every transport and mode of `fastdds`.

use pubsubperf_core::{DataType, EndpointConfig, Reliability, WaitMode};
use pubsubperf_fastdds::FastDds;

fn base(id: &str, transport: &str, rel: Reliability, wait: WaitMode) -> EndpointConfig {
    let mut c = EndpointConfig::for_test(id);
    c.transport = transport.into();
    c.reliability = rel;
    c.wait = wait;
    c.max_sample_size = 64 * 1024;
    c
}

fn udp_rel_block(id: &str) -> EndpointConfig {
    base(id, "udp", Reliability::Reliable, WaitMode::Block)
}
fn udp_rel_busy(id: &str) -> EndpointConfig {
    base(id, "udp", Reliability::Reliable, WaitMode::Busy)
}
fn udp_be_block(id: &str) -> EndpointConfig {
    base(id, "udp", Reliability::BestEffort, WaitMode::Block)
}
fn udp_be_busy(id: &str) -> EndpointConfig {
    base(id, "udp", Reliability::BestEffort, WaitMode::Busy)
}
fn udp_multicast(id: &str) -> EndpointConfig {
    let mut c = base(id, "udp", Reliability::BestEffort, WaitMode::Block);
    c.multicast = true;
    c
}
fn udp_flat(id: &str) -> EndpointConfig {
    let mut c = base(id, "udp", Reliability::Reliable, WaitMode::Block);
    c.data_type = DataType::Flat;
    c.max_sample_size = 4096;
    c
}
fn tcp_rel_block(id: &str) -> EndpointConfig {
    base(id, "tcp", Reliability::Reliable, WaitMode::Block)
}
fn tcp_be_busy(id: &str) -> EndpointConfig {
    base(id, "tcp", Reliability::BestEffort, WaitMode::Busy)
}
fn shm_rel_block(id: &str) -> EndpointConfig {
    base(id, "shm", Reliability::Reliable, WaitMode::Block)
}
fn shm_be_busy(id: &str) -> EndpointConfig {
    base(id, "shm", Reliability::BestEffort, WaitMode::Busy)
}
fn zero_copy_rel_block(id: &str) -> EndpointConfig {
    let mut c = base(id, "shm", Reliability::Reliable, WaitMode::Block);
    c.data_type = DataType::Flat;
    c.zero_copy = true;
    c.max_sample_size = 1 << 20;
    c
}
fn zero_copy_be_busy(id: &str) -> EndpointConfig {
    let mut c = zero_copy_rel_block(id);
    c.reliability = Reliability::BestEffort;
    c.wait = WaitMode::Busy;
    c
}

pubsubperf_testkit::conformance_suite!(udp_reliable_block, FastDds, udp_rel_block);
pubsubperf_testkit::conformance_suite!(udp_reliable_busy, FastDds, udp_rel_busy);
pubsubperf_testkit::conformance_suite!(udp_best_effort_block, FastDds, udp_be_block);
pubsubperf_testkit::conformance_suite!(udp_best_effort_busy, FastDds, udp_be_busy);
pubsubperf_testkit::conformance_suite!(udp_multicast_best_effort, FastDds, udp_multicast);
pubsubperf_testkit::conformance_suite!(udp_flat_copy, FastDds, udp_flat);
pubsubperf_testkit::conformance_suite!(tcp_reliable_block, FastDds, tcp_rel_block);
pubsubperf_testkit::conformance_suite!(tcp_best_effort_busy, FastDds, tcp_be_busy);
pubsubperf_testkit::conformance_suite!(shm_reliable_block, FastDds, shm_rel_block);
pubsubperf_testkit::conformance_suite!(shm_best_effort_busy, FastDds, shm_be_busy);
pubsubperf_testkit::conformance_suite!(zero_copy_reliable_block, FastDds, zero_copy_rel_block);
pubsubperf_testkit::conformance_suite!(zero_copy_best_effort_busy, FastDds, zero_copy_be_busy);
