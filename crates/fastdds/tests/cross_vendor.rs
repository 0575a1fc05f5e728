//! Cross-vendor runs: Fast DDS and CycloneDDS (the `cyclonedds` binding) in
//! one process, over UDP, in both directions: the type names, XCDR1 wire
//! form, topic names and QoS of the two bindings must agree. Each check is
//! a ping-pong (data one way, echo the other, as `pubsubperf latency
//! --binding A --peer-binding B` does) and a reliable burst (as in a
//! throughput run).

use pubsubperf_core::Received;
use pubsubperf_core::sample::{HEADER_LEN, Header, check_pattern, fill_pattern};
use pubsubperf_core::{
    Binding, DataType, EndpointConfig, Reader, Reliability, TopicSpec, WaitMode, Writer,
};
use pubsubperf_cyclonedds::CycloneDds;
use pubsubperf_fastdds::FastDds;
use std::sync::Mutex;
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(15);
static SERIAL: Mutex<()> = Mutex::new(());

fn cfg(id: &str, rel: Reliability, data_type: DataType, size: usize) -> EndpointConfig {
    let mut c = EndpointConfig::for_test(&format!("xv{}{id}", std::process::id()));
    c.transport = "udp".into();
    c.reliability = rel;
    c.wait = WaitMode::Block;
    c.data_type = data_type;
    c.max_sample_size = size;
    c
}

fn topic(name: &str) -> TopicSpec {
    TopicSpec {
        name: name.into(),
        index: 0,
    }
}

/// Publisher side on `P`, subscriber side on `S`: `rounds` pings echoed,
/// then (reliable) a burst of `burst` samples that must all arrive intact.
fn run<P: Binding, S: Binding>(cfg: &EndpointConfig, rounds: u64, burst: u64) {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let len = cfg.max_sample_size;
    let mut sub = S::open(cfg).expect("subscriber side open");
    let (mut data_r, data_l) = sub.create_reader(&topic("data")).expect("data reader");
    let mut pb = P::open(cfg).expect("publisher side open");
    let (mut echo_r, echo_l) = pb.create_reader(&topic("echo0")).expect("echo reader");
    let mut data_w = pb
        .create_writer(&topic("data"), &[data_l])
        .expect("data writer");
    let mut echo_w = sub
        .create_writer(&topic("echo0"), &[echo_l])
        .expect("echo writer");
    data_w.wait_matched(1, WAIT).expect("data writer matched");
    echo_w.wait_matched(1, WAIT).expect("echo writer matched");
    data_r.wait_matched(WAIT).expect("data reader matched");
    echo_r.wait_matched(WAIT).expect("echo reader matched");
    for seq in 0..rounds {
        data_w
            .send(len, |b| {
                Header {
                    seq,
                    publisher: 0,
                    flags: 0,
                    timestamp: 0,
                    key: 0,
                }
                .write(b);
                fill_pattern(b, seq);
            })
            .expect("send");
        let mut echoed = false;
        let start = Instant::now();
        while !echoed && start.elapsed() < WAIT {
            data_r
                .recv(Duration::from_millis(50), &mut |s: Received| {
                    let s = s.as_slice().expect("one piece");
                    let h = Header::read(s).expect("header");
                    assert_eq!((h.seq, s.len()), (seq, len), "data sample");
                    assert!(check_pattern(s, seq), "payload corrupted across vendors");
                    let head: [u8; HEADER_LEN] = s[..HEADER_LEN].try_into().expect("a header");
                    echo_w
                        .send(s.len(), |b| b[..HEADER_LEN].copy_from_slice(&head))
                        .expect("echo");
                    echoed = true;
                })
                .expect("recv data");
        }
        assert!(echoed, "ping {seq} never arrived");
        let mut got = None;
        let start = Instant::now();
        while got.is_none() && start.elapsed() < WAIT {
            echo_r
                .recv(Duration::from_millis(50), &mut |s: Received| {
                    let s = s.as_slice().expect("one piece");
                    got = Header::read(s).map(|h| h.seq)
                })
                .expect("recv echo");
        }
        assert_eq!(got, Some(seq), "echo of {seq}");
    }
    if cfg.reliability == Reliability::Reliable && burst > 0 {
        let base = rounds;
        std::thread::scope(|s| {
            let reader = s.spawn(|| {
                let mut next = base;
                let start = Instant::now();
                while next < base + burst && start.elapsed() < WAIT * 2 {
                    data_r
                        .recv(Duration::from_millis(50), &mut |s: Received| {
                            let s = s.as_slice().expect("one piece");
                            let h = Header::read(s).expect("header");
                            assert_eq!(h.seq, next, "reliable burst in order");
                            assert!(check_pattern(s, h.seq));
                            next += 1;
                        })
                        .expect("recv burst");
                }
                next - base
            });
            for seq in base..base + burst {
                data_w
                    .send(len, |b| {
                        Header {
                            seq,
                            publisher: 0,
                            flags: 0,
                            timestamp: 0,
                            key: 0,
                        }
                        .write(b);
                        fill_pattern(b, seq);
                    })
                    .expect("send burst");
            }
            assert_eq!(
                reader.join().expect("reader thread"),
                burst,
                "burst lost samples"
            );
        });
    }
}

#[test]
fn cyclone_publisher_fastdds_subscriber_bytes() {
    run::<CycloneDds, FastDds>(
        &cfg("cf64", Reliability::Reliable, DataType::Bytes, 64),
        50,
        2000,
    );
    run::<CycloneDds, FastDds>(
        &cfg("cf16k", Reliability::Reliable, DataType::Bytes, 16 << 10),
        20,
        200,
    );
    run::<CycloneDds, FastDds>(
        &cfg("cfbe", Reliability::BestEffort, DataType::Bytes, 1024),
        50,
        0,
    );
}

#[test]
fn fastdds_publisher_cyclone_subscriber_bytes() {
    run::<FastDds, CycloneDds>(
        &cfg("fc64", Reliability::Reliable, DataType::Bytes, 64),
        50,
        2000,
    );
    run::<FastDds, CycloneDds>(
        &cfg("fc16k", Reliability::Reliable, DataType::Bytes, 16 << 10),
        20,
        200,
    );
    run::<FastDds, CycloneDds>(
        &cfg("fcbe", Reliability::BestEffort, DataType::Bytes, 1024),
        50,
        0,
    );
}

#[test]
fn flat_types_agree_both_ways() {
    run::<CycloneDds, FastDds>(
        &cfg("cflat", Reliability::Reliable, DataType::Flat, 4096),
        20,
        200,
    );
    run::<FastDds, CycloneDds>(
        &cfg("fflat", Reliability::Reliable, DataType::Flat, 4096),
        20,
        200,
    );
}
