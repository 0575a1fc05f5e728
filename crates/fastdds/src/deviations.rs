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

/// The settings of a run over `cfg` that Fast DDS's defaults (built-in
/// UDPv4 and SHM transports, data sharing automatic, KEEP_LAST 1, a
/// transient-local writer, the timings above) do not have.
pub fn of(cfg: &EndpointConfig) -> Vec<String> {
    let mut d = vec![match cfg.transport.as_str() {
        "udp" => "UDPv4 transport only".to_string(),
        "tcp" => "TCPv4 transport".into(),
        t => format!("{t} transport only"),
    }];
    if !cfg.zero_copy {
        d.push("data sharing off".into());
    }
    let reliable = cfg.reliability == Reliability::Reliable;
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
        (0, "udp") => d.push(format!("receive buffer {} MiB", UDP_RECEIVE_BUFFER >> 20)),
        (0, _) => {}
        (n, _) => d.push(format!("socket buffers {n} B")),
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
    fn best_effort_zero_copy_over_shm_says_less() {
        let mut c = EndpointConfig::for_test("d");
        c.transport = "shm".into();
        c.reliability = Reliability::BestEffort;
        c.zero_copy = true;
        c.durability = Some(Durability::TransientLocal);
        assert_eq!(of(&c), ["shm transport only"]);
        c.history = Some(History::KeepLast(8));
        assert_eq!(of(&c), ["shm transport only", "keep-last 8"]);
    }
}
