//! The `topics:` line under a table of runs of several topics.

use pubsubperf_core::result::Run;

/// The `topics:` line under a table, for runs of several topics: each
/// topic's fastest and slowest p50 (latency) or samples/s (throughput).
pub fn lines(runs: &[&Run]) -> String {
    let mut s = String::new();
    for r in runs.iter().filter(|r| r.by_topic.len() > 1) {
        let n = r.by_topic.len();
        let lat: Vec<u64> = r
            .by_topic
            .iter()
            .filter_map(|t| t.latency_ns.as_ref().map(|l| l.p50))
            .collect();
        let rate: Vec<f64> = r
            .by_topic
            .iter()
            .filter_map(|t| t.throughput.as_ref().map(|t| t.samples_per_s))
            .collect();
        let point = crate::live::point_note(r);
        if let (Some(lo), Some(hi)) = (lat.iter().min(), lat.iter().max()) {
            s += &format!(
                "topics: {} B{point}: {n} side by side, p50 per topic {} to {} us\n",
                r.size,
                crate::live::us(*lo),
                crate::live::us(*hi)
            );
        } else if !rate.is_empty() {
            let lo = rate.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = rate.iter().copied().fold(0.0, f64::max);
            s += &format!(
                "topics: {} B{point}: {n} side by side, samples/s per topic {lo:.0} to {hi:.0}\n",
                r.size
            );
        }
    }
    s
}
