//! The demand ramp (`throughput --demand START:STEP:END`), as RTI's
//! Throughput example runs it: for each demand N from START to END by STEP
//! the publisher writes N samples back to back, pauses 10 ms, and again,
//! for `--duration`; then waits `--recovery-time` before the next demand.
//! Each demand is one run of the plan (the harness's `RunSpec::demand`);
//! this module reads the flag's values and prints the ramp's table.

use crate::plan::UsageError;
use pubsubperf_core::result::Run;
use std::fmt::Write as _;

/// The most demands one ramp may have (each is a run of `--duration`).
pub const MAX_STEPS: u64 = 1000;

/// The demands of `--demand START:STEP:END`, in order.
pub fn parse_demand(v: &str) -> Result<Vec<u64>, UsageError> {
    let bad = |why: &str| {
        UsageError(format!(
            "--demand '{v}': {why} (expected START:STEP:END samples per burst, like 1000:1000:9000)"
        ))
    };
    let parts: Vec<&str> = v.split(':').map(str::trim).collect();
    let [start, step, end] = parts.as_slice() else {
        return Err(bad("not three numbers"));
    };
    let num = |s: &str, what: &str| -> Result<u64, UsageError> {
        s.parse::<u64>()
            .map_err(|_| bad(&format!("{what} '{s}' is not a whole number")))
    };
    let (start, step, end) = (num(start, "START")?, num(step, "STEP")?, num(end, "END")?);
    if start == 0 {
        return Err(bad("START must be at least 1"));
    }
    if step == 0 {
        return Err(bad("STEP must be at least 1"));
    }
    if end < start {
        return Err(bad(&format!("END {end} is below START {start}")));
    }
    let steps = (end - start) / step + 1;
    if steps > MAX_STEPS {
        return Err(bad(&format!(
            "{steps} demands; at most {MAX_STEPS} (use a larger STEP)"
        )));
    }
    Ok((0..steps).map(|i| start + i * step).collect())
}

/// `--recovery-time`: milliseconds (a bare number), or a time like `1s`.
pub fn parse_recovery(v: &str) -> Result<u64, UsageError> {
    if let Ok(ms) = v.trim().parse::<u64>() {
        return Ok(ms);
    }
    crate::plan::parse_duration("--recovery-time", v).map(|d| d.as_millis() as u64)
}

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
    let axes = pubsubperf_report::axes::AxisColumns::of(runs.iter().copied());
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demands_from_start_to_end_by_step() {
        assert_eq!(
            parse_demand("1000:1000:9000").unwrap(),
            (1..=9).map(|i| i * 1000).collect::<Vec<_>>()
        );
        assert_eq!(parse_demand("100:100:900").unwrap().len(), 9);
        assert_eq!(parse_demand("5:10:30").unwrap(), vec![5, 15, 25]);
        assert_eq!(parse_demand("7:1:7").unwrap(), vec![7]);
    }

    #[test]
    fn bad_demands_name_the_flag_and_why() {
        for (v, why) in [
            ("1000:1000", "not three numbers"),
            ("a:1:2", "START 'a' is not a whole number"),
            ("1:-1:2", "STEP '-1' is not a whole number"),
            ("0:1:2", "START must be at least 1"),
            ("1:0:2", "STEP must be at least 1"),
            ("9000:1000:1000", "END 1000 is below START 9000"),
            ("1:1:5000", "5000 demands; at most 1000"),
        ] {
            let e = parse_demand(v).unwrap_err().0;
            assert!(e.starts_with(&format!("--demand '{v}': {why}")), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn recovery_is_ms_or_a_time() {
        assert_eq!(parse_recovery("250").unwrap(), 250);
        assert_eq!(parse_recovery("2s").unwrap(), 2000);
        assert!(
            parse_recovery("soon")
                .unwrap_err()
                .0
                .starts_with("--recovery-time")
        );
    }
}
