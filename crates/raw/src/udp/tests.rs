use super::*;
use pubsubperf_testkit::TestConfig;

fn cfg(id: &str) -> EndpointConfig {
    EndpointConfig::for_test(id).transport("udp").best_effort()
}

#[test]
fn multicast_groups_differ_per_run() {
    assert_ne!(
        multicast_addr(&cfg("a"), "t"),
        multicast_addr(&cfg("b"), "t")
    );
    assert!(multicast_addr(&cfg("a"), "t").ip().is_multicast());
    assert!(multicast_addr(&cfg("a").ipv6(), "t").ip().is_multicast());
}
