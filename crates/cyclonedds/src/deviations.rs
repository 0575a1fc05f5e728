//! What a cyclonedds run sets differently from CycloneDDS's own defaults
//! ([`pubsubperf_core::Binding::deviations`]).

use crate::config::Opts;
use pubsubperf_core::{EndpointConfig, Reliability};

/// CycloneDDS's default RELIABILITY max_blocking_time (100 ms).
const CYCLONE_MAX_BLOCKING_MS: u64 = 100;

/// The settings of a run over `cfg` that CycloneDDS's defaults do not have:
/// unicast discovery to the peers, write batching, the writer's blocking
/// time, socket buffers, the shm transport's iceoryx.
pub fn of(cfg: &EndpointConfig) -> Vec<String> {
    let mut d = Vec::new();
    if cfg.transport == "shm" {
        d.push("shared memory (iceoryx)".into());
    }
    let peers = Opts::parse(cfg)
        .map(|o| o.discovery_peers(cfg))
        .unwrap_or_default();
    if cfg.held_discovery.is_some() {
        let list: Vec<String> = peers.iter().map(|p| p.to_string()).collect();
        d.push(format!(
            "unicast discovery to {}, no SPDP multicast (a session from the network)",
            list.join(",")
        ));
    } else if !cfg.multicast && !peers.is_empty() {
        // On loopback, as on every one-host run before; elsewhere, the
        // address (a one-host run on the host's own address, or peers).
        if peers.iter().all(|p| p.is_loopback()) {
            d.push("unicast discovery".into());
        } else {
            let list: Vec<String> = peers.iter().map(|p| p.to_string()).collect();
            d.push(format!("unicast discovery to {}", list.join(",")));
        }
    }
    d.extend(pubsubperf_core::binding::batched(cfg));
    if cfg.reliability == Reliability::Reliable
        && cfg.reliable_block_timeout_ms != CYCLONE_MAX_BLOCKING_MS
    {
        d.push(format!(
            "max blocking time {}",
            pubsubperf_core::time::format_millis(cfg.reliable_block_timeout_ms)
        ));
    }
    if cfg.socket_buffer > 0 {
        d.push(format!("socket buffers {} B", cfg.socket_buffer));
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> EndpointConfig {
        let mut c = EndpointConfig::for_test("d");
        c.transport = "udp".into();
        c
    }

    #[test]
    fn a_loopback_run_says_unicast_discovery_and_its_blocking_time() {
        assert_eq!(of(&cfg()), ["unicast discovery", "max blocking time 10 s"]);
    }

    #[test]
    fn batching_buffers_and_shm_are_said() {
        let mut c = cfg();
        c.batch_bytes = 14_720;
        c.socket_buffer = 1 << 20;
        c.reliable_block_timeout_ms = CYCLONE_MAX_BLOCKING_MS;
        assert_eq!(
            of(&c),
            [
                "unicast discovery",
                "batched 14720 B",
                "socket buffers 1048576 B"
            ]
        );
        c.transport = "shm".into();
        c.batch_bytes = 0;
        c.socket_buffer = 0;
        assert_eq!(of(&c), ["shared memory (iceoryx)", "unicast discovery"]);
    }

    #[test]
    fn multicast_or_another_interface_is_not_unicast_discovery() {
        let mut c = cfg();
        c.reliability = Reliability::BestEffort;
        c.multicast = true;
        assert!(of(&c).is_empty(), "{:?}", of(&c));
        c.multicast = false;
        c.bind_ip = "10.1.2.3".into();
        assert!(of(&c).is_empty(), "{:?}", of(&c));
    }

    #[test]
    fn held_discovery_says_so_with_multicast_too() {
        let mut c = cfg();
        c.bind_ip = "198.18.0.2".into();
        c.multicast = true;
        c.held_discovery = Some(vec!["198.18.0.1".parse().unwrap()]);
        assert_eq!(
            of(&c)[0],
            "unicast discovery to 198.18.0.1, no SPDP multicast (a session from the network)"
        );
    }

    #[test]
    fn discovery_off_loopback_names_its_address() {
        let mut c = cfg();
        c.bind_ip = "192.0.2.2".into();
        c.options.insert("peers".into(), "192.0.2.2".into());
        assert_eq!(of(&c)[0], "unicast discovery to 192.0.2.2");
    }
}
