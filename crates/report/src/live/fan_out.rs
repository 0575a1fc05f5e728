//! The `fan-out:` line under a table of runs with several subscribers on
//! one host: when samples reached the first and the last subscriber, and
//! the spread between them (p50 / p99, µs), over how many samples; and,
//! for throughput, the publisher's CPU per sample sent.

use pubsubperf_core::result::{Run, TestKind};
use std::fmt::Write;

fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1e3)
}

/// One line per run that measured its fan-out.
pub fn lines(runs: &[&Run]) -> String {
    let mut s = String::new();
    for r in runs {
        let Some(f) = &r.fan_out else { continue };
        let size = pubsubperf_core::size::format_size_with_unit(r.size);
        let cost = match (r.test, r.publisher_cpu_per_sample()) {
            (TestKind::Throughput, Some(ns)) => {
                format!("; publisher CPU {:.0} ns per sample sent", ns)
            }
            _ => String::new(),
        };
        let _ = writeln!(
            s,
            "fan-out: {size}: {} subscribers: first delivery p50 {} / p99 {} us, last p50 {} / p99 {} us, spread p50 {} / p99 {} us ({} samples, every {}){cost}",
            f.subscribers,
            us(f.first_ns.p50),
            us(f.first_ns.p99),
            us(f.last_ns.p50),
            us(f.last_ns.p99),
            us(f.spread_ns.p50),
            us(f.spread_ns.p99),
            f.samples,
            f.every,
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use pubsubperf_core::result::FanOut;
    use pubsubperf_core::stats::LatencyRecorder;

    #[test]
    fn first_last_spread_and_the_publisher_s_cost() {
        let mut r = crate::fixture::run(
            TestKind::Throughput,
            "udp",
            64,
            serde_json::json!({
                "duration_s": 2.0, "config": {"subscribers": 2},
                "throughput": {"sent": 2000000, "received": 0, "bytes": 0, "samples_per_s": 0.0,
                    "mbps": 0.0, "lost": 0, "lost_percent": 0.0, "duplicates": 0, "out_of_order": 0},
            }),
        );
        r.resources.publisher.cpu_percent = 50.0;
        assert_eq!(lines(&[&r]), "");
        let h = |v: u64| {
            let mut l = LatencyRecorder::new();
            l.record(v);
            l.summary()
        };
        r.fan_out = Some(FanOut {
            every: 4,
            subscribers: 3,
            samples: 1,
            first_ns: h(10_000),
            last_ns: h(12_500),
            spread_ns: h(2_500),
        });
        assert_eq!(
            lines(&[&r]),
            "fan-out: 64 B: 3 subscribers: first delivery p50 10.0 / p99 10.0 us, last p50 12.5 / p99 12.5 us, spread p50 2.5 / p99 2.5 us (1 samples, every 4); publisher CPU 1000 ns per sample sent\n"
        );
    }
}
