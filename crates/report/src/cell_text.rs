//! The report's table cells that read a run's extra records: its physical
//! limit, `--one-way`'s two directions, its discovery times.

use crate::text::us;
use pubsubperf_core::result::Run;

/// The run against its physical limit (`Run::limit`), worked out from the
/// cell's figures (a merged cell's, not one repetition's): `9.1 % of the
/// memcpy of 64KiB`, `774x the cache-line one-way`; `-` without one.
pub(crate) fn limit_text(run: &Run) -> String {
    let Some(l) = run.limit.as_ref().filter(|l| l.value > 0.0) else {
        return "-".into();
    };
    match (&run.throughput, &run.latency_ns) {
        (Some(t), _) if l.unit == "Mbit/s" => {
            format!("{:.1} % of the {}", t.mbps * 100.0 / l.value, l.what)
        }
        (_, Some(lat)) if l.unit == "ns" => {
            format!("{:.1}x the {}", lat.p50 as f64 / l.value, l.what)
        }
        _ => "-".into(),
    }
}

/// `--one-way`: each direction's p50 and the bound of both (µs), `(round
/// trip / 2 above)` where the bound was too wide for the headline; `-`
/// without.
pub(crate) fn one_way_text(run: &Run) -> String {
    let Some(o) = &run.one_way else {
        return "-".into();
    };
    let mut t = format!(
        "{} / {} ±{:.1}",
        us(o.forward.p50),
        us(o.back.p50),
        o.bound_ns as f64 / 1e3
    );
    if o.headline != "forward" {
        t.push_str(" (round trip / 2 above)");
    }
    t
}

/// How long the run's endpoints took to match (`Run::discovery`): the
/// publisher's writer, every subscriber matched, and the slowest
/// subscriber's reader, in ms; `-` without (a run of an earlier version).
pub(crate) fn discovery_text(run: &Run) -> String {
    let Some(d) = &run.discovery else {
        return "-".into();
    };
    let reader = d.subscribers.iter().map(|s| s.reader_matched_ns).max();
    format!(
        "{:.2} / {}",
        d.writer_matched_ns as f64 / 1e6,
        reader.map_or_else(|| "-".into(), |r| format!("{:.2}", r as f64 / 1e6))
    )
}
