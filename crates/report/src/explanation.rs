//! `--explain`'s account of a run, as lines under its table and as a
//! stacked bar per percentile band in the HTML report.

use crate::svg::esc;
use crate::text::us;
use pubsubperf_core::escape::printable;
use pubsubperf_core::explanation::{Band, Explanation};
use pubsubperf_core::result::Run;
use std::fmt::Write;

/// Longest cause name shown (task names come from the kernel, or from an
/// imported file).
const NAME: usize = 80;

/// A share as a percentage, `64 %`.
fn pct(share: f64) -> String {
    format!("{:.0} %", share * 100.0)
}

/// A band's causes and unexplained share, in one line.
fn shares(b: &Band) -> String {
    let mut parts: Vec<String> = b
        .causes
        .iter()
        .map(|c| format!("{} {}", pct(c.share), printable(&c.cause, NAME)))
        .collect();
    parts.push(format!("{} unexplained", pct(b.unexplained)));
    parts.join(", ")
}

/// The lines under a run's table.
pub fn text(run: &Run) -> String {
    let Some(e) = &run.explanation else {
        return String::new();
    };
    let mut out = String::new();
    let lost = match e.lost_events {
        0 => "none lost".to_string(),
        n => format!("{n} lost"),
    };
    let _ = writeln!(
        out,
        "explained ({} kernel events, {:.1} a sample, {lost}): each band's time over the p50 ({} µs), by cause",
        e.events,
        e.events_per_sample,
        us(e.p50_ns)
    );
    if e.median.samples > 0 {
        let _ = writeln!(
            out,
            "  {:<10} {} µs (n {}) itself: {}",
            "p40-p60",
            us(e.median.added_ns),
            e.median.samples,
            shares(&e.median).replace("unexplained", "the path's own work")
        );
    }
    for b in &e.bands {
        if b.samples == 0 {
            let _ = writeln!(out, "  {:<10} no samples accounted", b.band);
            continue;
        }
        let _ = writeln!(
            out,
            "  {:<10} +{} µs (n {}): {}",
            b.band,
            us(b.added_ns),
            b.samples,
            shares(b)
        );
    }
    if e.uncovered > 0 {
        let _ = writeln!(
            out,
            "  {} tail samples not accounted (events lost, or beyond the slowest kept)",
            e.uncovered
        );
    }
    if !e.missing_probes.is_empty() {
        let _ = writeln!(
            out,
            "  this kernel lacks the probes {}: their causes cannot be named",
            e.missing_probes.join(", ")
        );
    }
    out
}

/// Colours of the causes' kinds in the bars.
fn color(kind: &str) -> &'static str {
    match kind {
        "preempted" => "#cc3311",
        "shared_core" => "#ee7733",
        "own_thread" => "#ddaa33",
        "irq" => "#0077bb",
        "softirq" => "#33bbee",
        "ipi" => "#009988",
        "wake_from_idle" => "#aa3377",
        "wakeup" => "#994455",
        _ => "#777777",
    }
}

/// One band's stacked bar, 100 % wide, with its causes' names as tips.
fn bar(b: &Band) -> String {
    let mut svg = String::from(
        r#"<svg width="600" height="18" viewBox="0 0 600 18" xmlns="http://www.w3.org/2000/svg">"#,
    );
    let mut x = 0.0;
    let parts = b
        .causes
        .iter()
        .map(|c| (c.share, color(&c.kind), c.cause.as_str()))
        .chain(std::iter::once((b.unexplained, "#dddddd", "unexplained")));
    for (share, fill, name) in parts {
        let w = share * 600.0;
        let _ = write!(
            svg,
            r#"<rect x="{x:.1}" y="0" width="{w:.1}" height="18" fill="{fill}"><title>{} {}</title></rect>"#,
            pct(share),
            esc(&printable(name, NAME))
        );
        x += w;
    }
    svg.push_str("</svg>");
    svg
}

/// The report's section for one run: a bar per band, with its line.
pub fn html(run: &Run, label: &str) -> String {
    let Some(e) = &run.explanation else {
        return String::new();
    };
    let mut h = format!("<h3>{}</h3>\n<table class=\"explain\">\n", esc(label));
    for b in e.bands.iter().filter(|b| b.samples > 0) {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>+{} µs</td><td>{}</td><td>{}</td></tr>",
            esc(&b.band),
            us(b.added_ns),
            bar(b),
            esc(&shares(b))
        );
    }
    h.push_str("</table>\n");
    h
}

/// Two runs' accounts side by side (`compare`): per band, the added time
/// and the largest causes of each.
pub fn compare(a: &Explanation, b: &Explanation) -> Vec<String> {
    let mut out = vec![format!(
        "{:<10} {} µs: {}  |  {} µs: {}",
        "p40-p60",
        us(a.median.added_ns),
        shares(&a.median),
        us(b.median.added_ns),
        shares(&b.median)
    )];
    for (x, y) in a.bands.iter().zip(&b.bands) {
        out.push(format!(
            "{:<10} +{} µs: {}  |  +{} µs: {}",
            x.band,
            us(x.added_ns),
            shares(x),
            us(y.added_ns),
            shares(y)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pubsubperf_core::explanation::Share;

    fn run() -> Run {
        let band = |name: &str, added_ns, causes: Vec<Share>, unexplained| Band {
            band: name.into(),
            samples: 10,
            added_ns,
            causes,
            unexplained,
        };
        let mut r = crate::fixture::run(
            pubsubperf_core::result::TestKind::Latency,
            "udp",
            64,
            serde_json::json!({}),
        );
        r.explanation = Some(Explanation {
            events: 1200,
            events_per_sample: 4.0,
            p50_ns: 30_000,
            samples: 40,
            bands: vec![
                band("p50-p90", 1_000, vec![], 1.0),
                band(
                    "p99.9+",
                    85_000,
                    vec![
                        Share {
                            cause: "subscriber preempted by kworker/1:2 (pid 93)".into(),
                            kind: "preempted".into(),
                            share: 0.64,
                        },
                        Share {
                            cause: "IRQ 36 virtio0-input\u{1b}[2J".into(),
                            kind: "irq".into(),
                            share: 0.30,
                        },
                    ],
                    0.06,
                ),
            ],
            ..Explanation::default()
        });
        r
    }

    #[test]
    fn the_lines_name_each_bands_causes_and_escape_what_the_kernel_named() {
        let t = text(&run());
        assert!(
            t.contains("p99.9+     +85.000 µs (n 10): 64 % subscriber preempted by kworker/1:2 (pid 93), 30 % IRQ 36 virtio0-input"),
            "{t}"
        );
        assert!(t.contains("6 % unexplained"), "{t}");
        assert!(!t.contains('\u{1b}'), "{t}");
    }

    #[test]
    fn two_accounts_compare_band_by_band() {
        let a = run().explanation.unwrap();
        let mut b = a.clone();
        b.bands[1].added_ns = 2_000;
        let lines = compare(&a, &b);
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(
            lines[2].starts_with("p99.9+     +85.000 µs: 64 % subscriber preempted"),
            "{lines:?}"
        );
        assert!(lines[2].contains("|  +2.000 µs: 64 %"), "{lines:?}");
    }

    #[test]
    fn the_bars_are_as_wide_as_the_shares() {
        let h = html(&run(), "udp <latency>");
        assert!(h.contains(r#"width="384.0""#), "{h}");
        assert!(h.contains("udp &lt;latency&gt;"), "{h}");
    }
}
