use super::*;
use pubsubperf_testkit::TestConfig;

fn cfg(id: &str) -> EndpointConfig {
    EndpointConfig::for_test(id).transport("udp").best_effort()
}

#[test]
fn multicast_groups_differ_per_run() {
    assert_ne!(
        multicast_addr(&cfg("a"), "t").unwrap(),
        multicast_addr(&cfg("b"), "t").unwrap()
    );
    assert!(multicast_addr(&cfg("a"), "t").unwrap().ip().is_multicast());
    assert!(
        multicast_addr(&cfg("a").ipv6(), "t")
            .unwrap()
            .ip()
            .is_multicast()
    );
}
