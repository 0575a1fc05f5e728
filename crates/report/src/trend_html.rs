//! The report's trend section: each series across its revisions (the
//! median of each revision's runs, its range in the tooltip) with its
//! change points marked and listed ([`crate::trend`] has the method).

use crate::svg::{Axis, Plot, Scale, Series as Line, Style, Unit, esc};
use crate::trend::{Series, Settings, change_line, machine_line, median};
use pubsubperf_core::escape::printable_all;

/// The series' title: what was measured and on which machine.
fn title(x: &Series) -> String {
    let k = &x.key;
    format!(
        "{}/{} {} {} B {} on {}",
        k.binding,
        k.transport,
        k.test,
        k.size,
        if k.reliable {
            "reliable"
        } else {
            "best effort"
        },
        k.machine
    )
}

/// One series' plot: x the revisions in order, y the medians.
fn plot(i: usize, x: &Series) -> Plot {
    let latency = x.key.test == "latency";
    let points: Vec<(f64, f64)> = x
        .revisions
        .iter()
        .enumerate()
        .map(|(n, r)| ((n + 1) as f64, median(&r.values)))
        .collect();
    let tips = x
        .revisions
        .iter()
        .map(|r| {
            let lo = r.values.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = r.values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            format!(
                "{}: median {:.3} of {} run(s), {:.3} to {:.3}",
                printable_all(&r.name),
                median(&r.values),
                r.values.len(),
                lo,
                hi
            )
        })
        .collect();
    let changes: Vec<(f64, f64)> = x.changes.iter().map(|c| points[c.index]).collect();
    let line = |name: &str, color: &str, points: Vec<(f64, f64)>, tips: Vec<String>| Line {
        name: name.into(),
        legend: true,
        binding: x.key.binding.clone(),
        color: color.into(),
        style: Style::Solid,
        width: 2.0,
        opacity: 1.0,
        markers: (0..points.len()).collect(),
        points,
        tips,
    };
    let mut series = vec![line(
        if latency { "p50" } else { "samples/s" },
        crate::colors::binding_color(&x.key.binding),
        points,
        tips,
    )];
    if !changes.is_empty() {
        let mut marks = line("change point", "#cc3311", changes, Vec::new());
        marks.width = 0.0;
        series.push(marks);
    }
    Plot {
        id: format!("trend-{i}"),
        title: title(x),
        x: Axis {
            label: "revision (in the order measured)".into(),
            scale: Scale::Linear,
            unit: Unit::Number,
        },
        y: Axis {
            label: if latency {
                "p50 one-way latency".into()
            } else {
                "samples/s".into()
            },
            scale: Scale::Linear,
            unit: if latency { Unit::Nanos } else { Unit::Number },
        },
        series,
        style_keys: Vec::new(),
    }
}

/// The section's HTML: a plot per series of two or more revisions, its
/// change points listed under it; each plot is also added to `plots`.
pub fn section(series: &[Series], s: &Settings, plots: &mut Vec<(String, String)>) -> String {
    let mut h = format!(
        "<p>Each series (binding, transport, test, size, QoS, machine) across the revisions measured (the <code>commit</code> label, else the middleware's version): the median of each revision's runs. Change points: a Mann-Whitney step test over windows of {} revisions, at a false-alarm rate of {} per series (docs/store.md).</p>\n",
        s.window, s.alpha
    );
    for (i, x) in series
        .iter()
        .enumerate()
        .filter(|(_, x)| x.revisions.len() > 1)
    {
        let p = plot(i, x);
        let svg = p.render();
        plots.push((format!("{}.svg", p.id), svg.clone()));
        h.push_str(&format!(
            "<figure>\n{svg}<figcaption>{}</figcaption>\n</figure>\n",
            esc(&p.title)
        ));
        if x.changes.is_empty() {
            h.push_str("<p>No change point.</p>\n");
        }
        for c in &x.changes {
            h.push_str(&format!("<p>{}</p>\n", esc(&change_line(c, s))));
        }
        for r in x.revisions.iter().filter(|r| !r.machine_changed.is_empty()) {
            if !x.changes.iter().any(|c| c.revision == r.name) {
                h.push_str(&format!("<p>{}</p>\n", esc(&machine_line(r))));
            }
        }
    }
    h
}
