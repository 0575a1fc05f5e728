//! What a connext run sets differently from how Perftest 4.1 runs Connext
//! by default ([`pubsubperf_core::Binding::deviations`]).

use crate::plan::SEND_QUEUE;
use pubsubperf_core::time::format_millis;
use pubsubperf_core::{EndpointConfig, Reliability};

/// The settings of a run over `cfg` that Perftest's defaults do not have:
/// one participant per endpoint (Perftest has one per side), the type
/// (Perftest's `TestData_t` has its own header fields), the writer's
/// blocking time (Perftest's is infinite), batching, socket buffers; and
/// the participants' start and end sped up (announcements, clean-up
/// period: never the measured path).
pub fn of(cfg: &EndpointConfig) -> Vec<String> {
    let mut d = vec![
        "one participant per endpoint".to_string(),
        "type pubsubperf::Bytes".to_string(),
        "quick discovery and teardown".to_string(),
        "readers unordered".to_string(),
    ];
    if crate::plan::unicast_discovery(cfg) {
        d.push("unicast discovery".into());
    }
    d.extend(pubsubperf_core::binding::batched(cfg));
    if cfg.reliability == Reliability::Reliable {
        d.push(format!(
            "max blocking time {}",
            format_millis(cfg.reliable_block_timeout_ms)
        ));
    }
    if cfg.send_queue > 0 && cfg.send_queue != SEND_QUEUE {
        d.push(format!("send queue {}", cfg.send_queue));
    }
    if cfg.socket_buffer > 0 {
        d.push(format!("socket buffers {} B", cfg.socket_buffer));
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_default_run_says_what_differs_from_perftest() {
        let c = EndpointConfig::for_test("d");
        assert_eq!(
            of(&c),
            [
                "one participant per endpoint",
                "type pubsubperf::Bytes",
                "quick discovery and teardown",
                "readers unordered",
                "unicast discovery",
                "max blocking time 10 s"
            ]
        );
        let mut c = EndpointConfig::for_test("d");
        c.reliability = Reliability::BestEffort;
        c.batch_bytes = 8192;
        c.send_queue = 200;
        assert_eq!(
            of(&c),
            [
                "one participant per endpoint",
                "type pubsubperf::Bytes",
                "quick discovery and teardown",
                "readers unordered",
                "unicast discovery",
                "batched 8192 B",
                "send queue 200"
            ]
        );
    }
}
