//! The lines under a `--one-way` latency table: each direction's p50 and
//! p99, and how the two clocks were related (one host's, or an estimated
//! offset with its bound and drift; see the harness's `clock_offset`).

use pubsubperf_core::result::Run;
use std::fmt::Write;

/// One line per `--one-way` run, and one more where the table shows round
/// trip / 2 because the offset's bound is too wide for one-way figures.
pub fn lines(runs: &[&Run]) -> String {
    let mut s = String::new();
    for r in runs {
        let Some(o) = &r.one_way else { continue };
        let size = pubsubperf_core::size::format_size_with_unit(r.size);
        let us = |ns: u64| ns as f64 / 1e3;
        let clocks = match o.offsets.iter().max_by_key(|c| c.before_bound_ns) {
            None => "one clock".to_string(),
            Some(c) => format!(
                "clocks estimated: offset {:+.6} s, +-{:.1} us over the run{}",
                c.before_ns as f64 / 1e9,
                us(o.bound_ns),
                c.drift_ppm
                    .map(|d| format!(", drift {d:.2} ppm"))
                    .unwrap_or_default()
            ),
        };
        let _ = writeln!(
            s,
            "one-way: {size}: forward p50 {:.1} p99 {:.1} us, back p50 {:.1} p99 {:.1} us; {clocks}",
            us(o.forward.p50),
            us(o.forward.p99),
            us(o.back.p50),
            us(o.back.p99),
        );
        if o.below_zero > 0 {
            let _ = writeln!(
                s,
                "one-way: {size}: {} values fell below zero after the offset's correction (recorded as 0; within the bound)",
                o.below_zero
            );
        }
        if o.headline != "forward" {
            let _ = writeln!(
                s,
                "one-way: {size}: the bound (+-{:.1} us) is more than a tenth of the forward p50: the table shows round trip / 2",
                us(o.bound_ns)
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(one_way: serde_json::Value) -> Run {
        let summary = |p50: u64, p99: u64| {
            serde_json::json!({"count": 10, "mean": 1.0, "std": 0.0, "min": 1, "max": p99,
                "p50": p50, "p90": p50, "p99": p99, "p99_9": p99, "p99_99": p99,
                "p99_9999": p99, "histogram": ""})
        };
        let mut o = one_way;
        o["forward"] = summary(1_065_000, 1_102_300);
        o["back"] = summary(43_400, 60_100);
        crate::fixture::run(
            pubsubperf_core::result::TestKind::Latency,
            "udp",
            64,
            serde_json::json!({ "one_way": o }),
        )
    }

    #[test]
    fn one_host_and_estimated_clocks() {
        let one =
            run(serde_json::json!({"clocks": "one clock", "bound_ns": 0, "headline": "forward"}));
        assert_eq!(
            lines(&[&one]),
            "one-way: 64 B: forward p50 1065.0 p99 1102.3 us, back p50 43.4 p99 60.1 us; one clock\n"
        );
        let est = run(
            serde_json::json!({"clocks": "estimated", "bound_ns": 44_500,
            "headline": "round trip / 2", "below_zero": 3,
            "offsets": [{"subscriber": 0, "before_ns": 999_999_995_473i64, "before_bound_ns": 15_944,
                "before_min_delay_ns": 32_669, "after_ns": 999_999_999_779i64, "after_bound_ns": 8_313,
                "drift_ppm": 2.9956, "probes": 64}]}),
        );
        assert_eq!(
            lines(&[&est]),
            "one-way: 64 B: forward p50 1065.0 p99 1102.3 us, back p50 43.4 p99 60.1 us; clocks estimated: offset +999.999995 s, +-44.5 us over the run, drift 3.00 ppm\n\
             one-way: 64 B: 3 values fell below zero after the offset's correction (recorded as 0; within the bound)\n\
             one-way: 64 B: the bound (+-44.5 us) is more than a tenth of the forward p50: the table shows round trip / 2\n"
        );
    }
}
