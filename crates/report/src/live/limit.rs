//! The `limit:` lines under a table: each run's figure against its limit
//! (`Run::limit`, set by the runner).

use pubsubperf_core::result::Run;

/// The lines under a table: each run's figure against its limit.
pub fn lines(runs: &[&Run]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    for r in runs {
        let Some(l) = &r.limit else { continue };
        let size = pubsubperf_core::size::format_size_with_unit(r.size);
        let _ = match (l.percent, l.multiple) {
            (Some(p), _) => writeln!(
                s,
                "limit: {size}: {:.1} % of the {} ({:.0} {})",
                p, l.what, l.value, l.unit
            ),
            (None, Some(m)) if l.what.starts_with("udp") => writeln!(
                s,
                "limit: {size}: p50 {:.2}x the {} ({:.1} us p50, measured before the run)",
                m,
                l.what,
                l.value / 1e3
            ),
            (None, Some(m)) => writeln!(
                s,
                "limit: {size}: p50 {:.1}x the {} ({:.1} {}, from 'pubsubperf calibrate')",
                m, l.what, l.value, l.unit
            ),
            (None, None) => Ok(()),
        };
    }
    s
}
