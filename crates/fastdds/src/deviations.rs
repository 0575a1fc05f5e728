//! What a fastdds run sets differently from Fast DDS's own defaults
//! ([`pubsubperf_core::Binding::deviations`]).

use crate::{HEARTBEAT_RESPONSE, UDP_RECEIVE_BUFFER, heartbeat_period};
use pubsubperf_core::time::format_millis;
use pubsubperf_core::{Durability, EndpointConfig, History, Reliability};

/// Fast DDS 2.9's defaults the binding may change: RELIABILITY
/// max_blocking_time, a writer's heartbeat period, a reader's
/// heartbeatResponseDelay (ms).
const FASTDDS_MAX_BLOCKING_MS: u64 = 100;
const FASTDDS_HEARTBEAT_MS: u64 = 3000;
const FASTDDS_HEARTBEAT_RESPONSE_MS: u64 = 5;
/// Fast DDS 2.9's shared-memory transport segment (512 KiB).
const FASTDDS_SHM_SEGMENT_KIB: usize = 512;

/// The settings of a run over `cfg` that Fast DDS's defaults (built-in
/// UDPv4 and SHM transports, data sharing automatic, KEEP_LAST 1, a
/// transient-local writer, the timings above) and its LatencyTest's and
/// ThroughputTest's (best effort) do not have.
pub fn of(cfg: &EndpointConfig) -> Vec<String> {
    let mut d: Vec<String> = match cfg.transport.as_str() {
        "udp" => vec!["UDPv4 transport only".into()],
        "tcp" => vec!["TCPv4 transport".into()],
        _ => Vec::new(),
    };
    if cfg.held_discovery.is_some() {
        d.push(format!(
            "unicast discovery to {}, no discovery multicast (a session from the network)",
            crate::options::held_peers(cfg).join(",")
        ));
    }
    if !cfg.zero_copy {
        d.push("data sharing off".into());
    }
    let reliable = cfg.reliability == Reliability::Reliable;
    if reliable {
        d.push("reliable".into());
    }
    match cfg.history {
        Some(History::KeepAll) => d.push("keep-all history".into()),
        None if reliable => d.push("keep-all history".into()),
        Some(History::KeepLast(n)) if n != 1 => d.push(format!("keep-last {n}")),
        _ => {}
    }
    if cfg.durability != Some(Durability::TransientLocal) {
        d.push("volatile writer".into());
    }
    if reliable {
        let ms = |t: std::time::Duration| t.as_millis() as u64;
        if cfg.reliable_block_timeout_ms != FASTDDS_MAX_BLOCKING_MS {
            d.push(format!(
                "max blocking time {}",
                format_millis(cfg.reliable_block_timeout_ms)
            ));
        }
        let heartbeat = ms(heartbeat_period(cfg));
        if heartbeat != FASTDDS_HEARTBEAT_MS {
            d.push(format!("heartbeat {}", format_millis(heartbeat)));
        }
        if ms(HEARTBEAT_RESPONSE) != FASTDDS_HEARTBEAT_RESPONSE_MS {
            d.push(format!(
                "heartbeat response {}",
                format_millis(ms(HEARTBEAT_RESPONSE))
            ));
        }
    }
    match (cfg.socket_buffer, cfg.transport.as_str()) {
        (0, "tcp") => {}
        (0, _) => d.push(format!("receive buffer {} MiB", UDP_RECEIVE_BUFFER >> 20)),
        (n, _) => d.push(format!("socket buffers {n} B")),
    }
    if crate::with_shm(cfg) {
        let kib = crate::shm_segment(cfg) >> 10;
        if kib != FASTDDS_SHM_SEGMENT_KIB {
            d.push(format!("shared-memory segment {kib} KiB"));
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_default_udp_run_lists_what_differs_from_fast_dds() {
        let mut c = EndpointConfig::for_test("d");
        c.transport = "udp".into();
        assert_eq!(
            of(&c),
            [
                "UDPv4 transport only",
                "data sharing off",
                "reliable",
                "keep-all history",
                "volatile writer",
                "max blocking time 10 s",
                "heartbeat 5 ms",
                "heartbeat response 0 ms",
                "receive buffer 4 MiB",
            ]
        );
    }

    #[test]
    fn held_discovery_is_said() {
        let mut c = EndpointConfig::for_test("d");
        c.transport = "udp".into();
        c.held_discovery = Some(vec!["198.18.0.1".parse().unwrap()]);
        assert_eq!(
            of(&c)[1],
            "unicast discovery to 198.18.0.1, no discovery multicast (a session from the network)"
        );
    }

    #[test]
    fn the_default_run_differs_in_data_sharing_durability_and_buffer() {
        let mut c = EndpointConfig::for_test("d");
        c.transport = "udp+shm".into();
        c.reliability = Reliability::BestEffort;
        assert_eq!(
            of(&c),
            [
                "data sharing off",
                "volatile writer",
                "receive buffer 4 MiB",
                "shared-memory segment 1024 KiB"
            ]
        );
    }

    #[test]
    fn best_effort_zero_copy_over_shm_says_less() {
        let mut c = EndpointConfig::for_test("d");
        c.transport = "shm".into();
        c.reliability = Reliability::BestEffort;
        c.zero_copy = true;
        c.durability = Some(Durability::TransientLocal);
        c.socket_buffer = 1 << 20;
        let segment = "shared-memory segment 1024 KiB";
        assert_eq!(of(&c), ["socket buffers 1048576 B", segment]);
        c.history = Some(History::KeepLast(8));
        assert_eq!(of(&c), ["keep-last 8", "socket buffers 1048576 B", segment]);
    }
}
