//! The `subscribers:` line under a latency table of several subscribers:
//! the spread of their p50s and p99s (each subscriber's own echoes, round
//! robin), naming the fastest and the slowest.

use pubsubperf_core::result::Run;
use std::fmt::Write;

/// One line per run with latencies by subscriber.
pub fn lines(runs: &[&Run]) -> String {
    let mut s = String::new();
    for r in runs {
        let subs = &r.latency_by_subscriber;
        if subs.len() < 2 {
            continue;
        }
        let size = pubsubperf_core::size::format_size_with_unit(r.size);
        let spread = |f: fn(&pubsubperf_core::stats::LatencySummary) -> u64| {
            let vals = subs
                .iter()
                .enumerate()
                .filter(|(_, l)| l.count > 0)
                .map(|(i, l)| (i, f(l)));
            match (
                vals.clone().min_by_key(|&(_, v)| v),
                vals.max_by_key(|&(_, v)| v),
            ) {
                (Some((a, lo)), Some((b, hi))) => format!(
                    "{:.1}-{:.1} us (subscriber {a} to {b})",
                    lo as f64 / 1e3,
                    hi as f64 / 1e3
                ),
                _ => "-".into(),
            }
        };
        let _ = writeln!(
            s,
            "subscribers: {size}: {} subscribers, each its own echoes: p50 {}, p99 {}",
            subs.len(),
            spread(|l| l.p50),
            spread(|l| l.p99)
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use pubsubperf_core::stats::LatencyRecorder;

    #[test]
    fn the_fastest_and_the_slowest_subscriber() {
        let mut r = crate::fixture::run(
            pubsubperf_core::result::TestKind::Latency,
            "udp",
            64,
            serde_json::json!({}),
        );
        assert_eq!(lines(&[&r]), "");
        r.latency_by_subscriber = [20_000u64, 15_000, 30_000]
            .iter()
            .map(|&v| {
                let mut rec = LatencyRecorder::new();
                rec.record(v);
                rec.record(v * 2);
                rec.summary()
            })
            .collect();
        let l = lines(&[&r]);
        assert!(
            l.starts_with("subscribers: 64 B: 3 subscribers, each its own echoes: p50 15.0-30.0 us (subscriber 1 to 2), p99 "),
            "{l}"
        );
    }
}
