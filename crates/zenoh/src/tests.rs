//! The binding's refusals and options (the conformance suite is in
//! tests/conformance.rs).

use super::*;
use pubsubperf_testkit::TestConfig;

fn base(run_id: &str, transport: &str) -> EndpointConfig {
    EndpointConfig::for_test(run_id).transport(transport)
}
fn tcp_block(id: &str) -> EndpointConfig {
    base(id, "tcp")
}
fn udp_block(id: &str) -> EndpointConfig {
    base(id, "udp").best_effort()
}
fn udp_busy(id: &str) -> EndpointConfig {
    udp_block(id).busy()
}
fn shm_zero_copy(id: &str) -> EndpointConfig {
    base(id, "shm").zero_copy().busy()
}

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
