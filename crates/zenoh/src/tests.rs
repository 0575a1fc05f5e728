//! Conformance suite over every transport and mode, and the refusals.

use super::*;

fn base(run_id: &str, transport: &str) -> EndpointConfig {
    let mut c = EndpointConfig::for_test(run_id);
    c.transport = transport.into();
    c
}

fn tcp_block(id: &str) -> EndpointConfig {
    base(id, "tcp")
}
fn tcp_busy(id: &str) -> EndpointConfig {
    let mut c = base(id, "tcp");
    c.wait = WaitMode::Busy;
    c
}
fn tcp_best_effort(id: &str) -> EndpointConfig {
    let mut c = base(id, "tcp");
    c.reliability = Reliability::BestEffort;
    c
}
fn tcp_batched(id: &str) -> EndpointConfig {
    let mut c = base(id, "tcp");
    c.options.insert("express".into(), "false".into());
    c
}
fn udp_block(id: &str) -> EndpointConfig {
    let mut c = base(id, "udp");
    c.reliability = Reliability::BestEffort;
    c
}
fn udp_busy(id: &str) -> EndpointConfig {
    let mut c = udp_block(id);
    c.wait = WaitMode::Busy;
    c
}
fn shm_copy(id: &str) -> EndpointConfig {
    base(id, "shm")
}
fn shm_zero_copy(id: &str) -> EndpointConfig {
    let mut c = base(id, "shm");
    c.zero_copy = true;
    c.wait = WaitMode::Busy;
    c
}

pubsubperf_testkit::conformance_suite!(tcp_block_suite, Zenoh, tcp_block);
pubsubperf_testkit::conformance_suite!(tcp_busy_suite, Zenoh, tcp_busy);
pubsubperf_testkit::conformance_suite!(tcp_best_effort_suite, Zenoh, tcp_best_effort);
pubsubperf_testkit::conformance_suite!(tcp_batched_suite, Zenoh, tcp_batched);
pubsubperf_testkit::conformance_suite!(udp_block_suite, Zenoh, udp_block);
pubsubperf_testkit::conformance_suite!(udp_busy_suite, Zenoh, udp_busy);
pubsubperf_testkit::conformance_suite!(shm_copy_suite, Zenoh, shm_copy);
pubsubperf_testkit::conformance_suite!(shm_zero_copy_suite, Zenoh, shm_zero_copy);

fn refused(c: &EndpointConfig, flag: &str) {
    match Zenoh::validate(c) {
        Err(BindingError::Unsupported(m)) => {
            assert!(m.starts_with(flag), "message '{m}' does not name {flag}");
            assert!(!m.contains('\n'), "message '{m}' is not one line");
        }
        other => panic!("{flag} not refused: {other:?}"),
    }
}

#[test]
fn refuses_what_does_not_apply() {
    let mut c = tcp_block("r");
    c.multicast = true;
    refused(&c, "--multicast");
    let mut c = tcp_block("r");
    c.batch_bytes = 1024;
    refused(&c, "--batch");
    let mut c = tcp_block("r");
    c.data_type = DataType::Flat;
    refused(&c, "--data-type flat");
    let mut c = tcp_block("r");
    c.zero_copy = true;
    refused(&c, "--zero-copy");
    let mut c = udp_block("r");
    c.zero_copy = true;
    refused(&c, "--zero-copy");
    let c = base("r", "udp");
    refused(&c, "--transport udp");
    let mut c = udp_block("r");
    c.max_sample_size = MAX_UDP + 1;
    refused(&c, "--size");
    let mut c = tcp_block("r");
    c.max_sample_size = MAX_TCP + 1;
    refused(&c, "--size");
    let c = base("r", "quic");
    refused(&c, "--transport quic");
    let mut c = tcp_block("r");
    c.send_queue = 10;
    refused(&c, "--send-queue");
    let mut c = udp_block("r");
    c.socket_buffer = 1 << 20;
    refused(&c, "--socket-buffer");
    let mut c = tcp_block("r");
    c.options.insert("colour".into(), "blue".into());
    refused(&c, "--opt colour");
    let mut c = tcp_block("r");
    c.options.insert("express".into(), "maybe".into());
    refused(&c, "--opt express");
    let mut c = tcp_block("r");
    c.options.insert("priority".into(), "urgent".into());
    refused(&c, "--opt priority");
}

#[test]
fn accepts_its_options() {
    let mut c = shm_zero_copy("a");
    c.options.insert("express".into(), "false".into());
    c.options.insert("priority".into(), "real-time".into());
    Zenoh::validate(&c).expect("valid");
    let o = options::Options::parse(&c).expect("options");
    assert!(!o.express);
    assert_eq!(o.priority, zenoh::qos::Priority::RealTime);
    Zenoh::validate(&udp_busy("a")).expect("udp best effort");
}

#[test]
fn key_expressions_are_plain_and_per_run() {
    let c = tcp_block("run 1/x*");
    assert_eq!(key(&c, "echo0"), "pubsubperf/run_1_x_/echo0");
    assert_ne!(key(&c, "data"), key(&tcp_block("run 2"), "data"));
}
