use super::*;
use pubsubperf_core::{Binding, EndpointConfig, History, TopicSpec, Writer};
use pubsubperf_testkit::TestConfig;

fn udp(id: &str) -> EndpointConfig {
    EndpointConfig::for_test(id).transport("udp")
}

fn shm_reliable(id: &str) -> EndpointConfig {
    udp(id).transport("shm")
}

#[test]
fn zero_copy_needs_shm_and_flat() {
    let mut c = udp("zc");
    c.zero_copy = true;
    let e = CycloneDds::validate(&c).unwrap_err().to_string();
    assert!(e.starts_with("--zero-copy"), "{e}");
    c.transport = "shm".into();
    assert!(CycloneDds::validate(&c).is_err(), "bytes cannot be loaned");
}

#[test]
fn udp_refuses_samples_above_its_verified_size() {
    let mut c = udp("big");
    c.max_sample_size = MAX_UDP_SAMPLE + 1;
    let e = CycloneDds::validate(&c).unwrap_err().to_string();
    assert!(e.starts_with("--size"), "{e}");
    c.max_sample_size = MAX_UDP_SAMPLE;
    assert!(CycloneDds::validate(&c).is_ok());
}

#[test]
fn keep_all_is_refused_over_shm() {
    let mut c = shm_reliable("ka");
    c.history = Some(History::KeepAll);
    let e = CycloneDds::validate(&c).unwrap_err().to_string();
    assert!(e.starts_with("--history keep-all"), "{e}");
}

#[test]
fn unmatched_writer_times_out_clearly() {
    let mut b = CycloneDds::open(&udp(&pubsubperf_testkit::conformance::unique_id("lonely")))
        .expect("open");
    let t = TopicSpec {
        name: "data".into(),
        index: 0,
    };
    let mut w = b.create_writer(&t, &[]).expect("writer");
    let e = w
        .wait_matched(1, Duration::from_millis(300))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no match") && e.contains("0 of 1 readers"),
        "{e}"
    );
}
