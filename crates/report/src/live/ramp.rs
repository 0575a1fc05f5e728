//! The demand ramp's table (`throughput --demand`, RTI's Throughput
//! example): one row per demand.

use pubsubperf_core::result::Run;
use std::fmt::Write as _;

/// The demand of a run of a ramp, if it is one.
pub fn demand_of(r: &Run) -> Option<u64> {
    r.config.get("demand").and_then(|v| v.as_u64())
}

/// Peak RSS in MiB, as the tables print it.
pub fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// The ramp's table: one row per demand, both sides' rates, CPU and peak
/// RSS (the columns of the Throughput example's two tables in one).
pub fn table(runs: &[&Run]) -> String {
    let mut s = String::new();
    // A ramp per number of subscribers or publishers: a column each.
    let axes = crate::axes::AxisColumns::of(runs.iter().copied());
    let _ = writeln!(
        s,
        "{}{:>8} {:>9} {:>10} {:>8} {:>10} {:>8} {:>8} {:>12} {:>10} {:>12} {:>10} {:>8} {:>7} {:>7} {:>9} {:>9}",
        axes.header_prefix(7),
        "Demand",
        "Length(B)",
        "Sent",
        "Rejected",
        "Received",
        "Lost",
        "Lost(%)",
        "Pub Smpl/s",
        "Pub Mbps",
        "Sub Smpl/s",
        "Sub Mbps",
        "Dur(s)",
        "CPUpub",
        "CPUsub",
        "RSSpub",
        "RSSsub"
    );
    for r in runs {
        let (Some(d), Some(t)) = (demand_of(r), &r.throughput) else {
            continue;
        };
        let (p, q) = (&r.resources.publisher, &r.resources.subscriber);
        let _ = writeln!(
            s,
            "{}{:>8} {:>9} {:>10} {:>8} {:>10} {:>8} {:>8.3} {:>12.1} {:>10.3} {:>12.1} {:>10.3} {:>8.2} {:>6.1}% {:>6.1}% {:>5.1}MiB {:>5.1}MiB{}",
            axes.row_prefix(r, 7),
            d,
            r.size,
            t.sent,
            t.rejected,
            t.received,
            t.lost,
            t.lost_percent,
            t.sent_per_s,
            pub_mbps(t.sent_per_s, r.size),
            t.samples_per_s,
            t.mbps,
            r.duration_s,
            p.cpu_percent,
            q.cpu_percent,
            mib(p.max_rss_kib),
            mib(q.max_rss_kib),
            if r.complete { "" } else { "  (partial)" }
        );
    }
    s
}

/// The publisher's Mbit/s (10^6 bits) from its samples per second.
pub fn pub_mbps(sent_per_s: f64, size: usize) -> f64 {
    sent_per_s * size as f64 * 8.0 / 1e6
}
