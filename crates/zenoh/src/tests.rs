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
    assert_eq!(o.express, Some(false));
    assert_eq!(o.priority, zenoh::qos::Priority::RealTime);
    Zenoh::validate(&udp_busy("a")).expect("udp best effort");
}

#[test]
fn key_expressions_are_plain_and_per_run() {
    let c = tcp_block("run 1/x*");
    assert_eq!(key(&c, "echo0"), "pubsubperf/run_1_x_/echo0");
    assert_ne!(key(&c, "data"), key(&tcp_block("run 2"), "data"));
}

/// A sample larger than zenoh's batch arrives in the pieces it was sent in:
/// the reader hands them over as they are (the measurement reads the head;
/// nothing joins them), and they make up the sample sent, on our thread's
/// take and on zenoh's callback (`--receive listener`) alike. The listener
/// runs with `--wait busy`, whose queue holds zenoh's samples: with
/// `--wait block` a sample arriving before the window opens is queued as a
/// (joined) copy.
#[test]
fn a_sample_larger_than_a_batch_arrives_in_its_pieces() {
    use pubsubperf_core::sample::{Header, check_pattern, fill_pattern};
    use pubsubperf_core::{Reader, Received, Writer};
    let topic = TopicSpec {
        name: "data".into(),
        index: 0,
    };
    let size = 1 << 20;
    for listener in [false, true] {
        let mut c = tcp_block(&pubsubperf_testkit::conformance::unique_id("pieces"));
        c.max_sample_size = size;
        if listener {
            c = c.listener().busy();
        }
        let mut sub = Zenoh::open(&c).expect("open");
        let (mut r, l) = sub.create_reader(&topic).expect("reader");
        let mut publ = Zenoh::open(&c).expect("open");
        let mut w = publ.create_writer(&topic, &[l]).expect("writer");
        std::thread::scope(|s| {
            s.spawn(|| r.wait_matched(Duration::from_secs(10)).expect("matched"));
            w.wait_matched(1, Duration::from_secs(10)).expect("matched");
        });
        w.send(size, |b| {
            let h = Header {
                seq: 7,
                publisher: 0,
                flags: 0,
                timestamp: 1,
                key: 0,
            };
            h.write(b);
            fill_pattern(b, 7);
        })
        .expect("send");
        let mut got = None;
        let start = std::time::Instant::now();
        while got.is_none() && start.elapsed() < Duration::from_secs(10) {
            r.recv_window(Duration::from_millis(50), &mut |s: Received| {
                let seq = Header::read(s.head()).map(|h| h.seq);
                got = Some((s.len(), s.as_slice().is_some(), seq, check_pattern(s, 7)));
            })
            .expect("recv");
        }
        assert_eq!(
            got,
            Some((size, false, Some(7), true)),
            "(length, in one piece, seq, pattern intact), listener {listener}"
        );
    }
}

#[test]
fn a_writer_connects_only_to_a_locator_of_its_transport() {
    let c = base("loc", "tcp");
    for good in ["tcp/127.0.0.1:7447", "tcp/[::1]:7447"] {
        check_locator(&c, good).unwrap();
    }
    for bad in [
        "unixsock-stream//run/docker.sock",
        "udp/127.0.0.1:7447",
        "tcp/localhost:7447",
        "tcp/127.0.0.1:7447\"]",
        "",
    ] {
        let e = check_locator(&c, bad).unwrap_err().to_string();
        assert!(e.starts_with("zenoh locator ") && !e.contains('\n'), "{e}");
    }
    check_locator(&base("loc", "udp"), "udp/127.0.0.1:7447").unwrap();
}

#[test]
fn a_reliable_writer_blocks_for_zenohs_own_wait_before_close_by_default() {
    // zenoh 1.10's default configuration: 5 000 000 µs.
    assert_eq!(Zenoh::default_block_timeout(), Duration::from_secs(5));
}

#[test]
fn express_as_zenohs_own_tools_unless_given() {
    let o = options::Options::parse(&tcp_block("x")).expect("options");
    let topic = |latency| TopicSpec {
        name: TopicSpec::data_name(latency).into(),
        index: 0,
    };
    let (data, ping) = (topic(false), topic(true));
    assert!(
        !o.express_for(&data),
        "a throughput test's data batches, as z_pub_thr"
    );
    assert!(o.express_for(&ping), "a ping is express, as z_ping");
    let mut c = tcp_block("x");
    c.options.insert("express".into(), "true".into());
    let o = options::Options::parse(&c).expect("options");
    assert!(o.express_for(&data));
}
