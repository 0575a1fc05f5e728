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
fn round_trip_writers_keep_the_last_sample_unless_told() {
    let topic = |name: &str| TopicSpec {
        name: name.into(),
        index: 0,
    };
    // The writer's depth, after the readers of `first` in the same binding.
    let depth = |c: &EndpointConfig, first: &[&str], name: &str| {
        let mut b = CycloneDds::open(c).expect("open");
        let _readers: Vec<_> = first
            .iter()
            .map(|t| b.create_reader(&topic(t)).expect("reader"))
            .collect();
        let w = b.create_writer(&topic(name), &[]).expect("writer");
        w.history_depth()
    };
    let mut c = udp(&pubsubperf_testkit::conformance::unique_id("history"));
    c.receive = pubsubperf_core::ReceiveMode::Thread;
    assert_eq!(depth(&c, &[], "ping"), Some(1));
    assert_eq!(depth(&c, &["ping"], "echo0"), Some(1), "a latency echo");
    assert_eq!(
        depth(&c, &["data"], "echo0"),
        Some(0),
        "a throughput test's --latency-every echoes may be many in flight"
    );
    assert_eq!(
        depth(&c, &[], "data"),
        Some(0),
        "reliable udp data: KEEP_ALL"
    );
    c.history = Some(History::KeepAll);
    assert_eq!(depth(&c, &[], "ping"), Some(0), "--history is honoured");
    c.receive = pubsubperf_core::ReceiveMode::Listener;
    assert_eq!(
        depth(&c, &[], "ping"),
        Some(1),
        "a listener's writer never waits"
    );
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

/// `--multicast-address`: CycloneDDS joins that group (the kernel says
/// so) and a sample written reaches the reader; without `--multicast` it
/// is refused.
#[test]
fn multicast_address_is_the_group_cyclonedds_joins() {
    use pubsubperf_testkit::groups::{delivers, is_joined};
    let group = "239.255.77.42";
    let ip: std::net::IpAddr = group.parse().unwrap();
    assert!(!is_joined(ip), "{group} joined before the test");
    let mut c = udp(&pubsubperf_testkit::conformance::unique_id("mcaddr"));
    c.multicast_address = Some(group.into());
    let e = CycloneDds::validate(&c).unwrap_err().to_string();
    assert!(
        e.starts_with("--multicast-address 239.255.77.42: needs --multicast"),
        "{e}"
    );
    c.multicast = true;
    let mut b = CycloneDds::open(&c).expect("open");
    let t = TopicSpec {
        name: "data".into(),
        index: 0,
    };
    let (mut r, loc) = b.create_reader(&t).expect("reader");
    let mut w = b.create_writer(&t, &[loc]).expect("writer");
    w.wait_matched(1, Duration::from_secs(5)).expect("matched");
    assert!(is_joined(ip), "{group} not among the kernel's groups");
    assert!(delivers(&mut w, &mut r), "nothing arrived through {group}");
}
