//! Curves against the axes one command or sweep may list (issue 47): one-way
//! latency p50 and p99 against the offered rate, against subscribers,
//! publishers and topics, and received throughput against subscribers,
//! publishers and topics (all topics' together). A curve joins the cells that differ only in that axis (same
//! binding, settings, size and the other axes); a plot is drawn where some
//! curve has two points or more.
//!
//! The x of a latency cell at `--rate max` is the rate its pings achieved
//! (echoes per second of measurement): the offered rate of a ping-pong
//! that sends each ping when the previous echo came.

use crate::axes::Axes;
use crate::colors::{binding_color, shade};
use crate::key::CellKey;
use crate::svg::{Axis, Plot, Scale, Series, Style, StyleKey, Unit};
use pubsubperf_core::result::{Run, TestKind};
use pubsubperf_core::size::format_size;
use std::collections::BTreeMap;

/// An axis a curve may run along.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Along {
    /// Samples per second offered.
    Rate,
    /// Subscribers.
    Subscribers,
    /// Publishers.
    Publishers,
    /// Topics side by side.
    Topics,
}

impl Along {
    fn name(self) -> &'static str {
        match self {
            Along::Rate => "rate",
            Along::Subscribers => "subscribers",
            Along::Publishers => "publishers",
            Along::Topics => "topics",
        }
    }

    /// The config keys (flattened) that hold this axis.
    fn keys(self) -> &'static [&'static str] {
        match self {
            Along::Rate => &["rate"],
            Along::Subscribers => &["subscribers", "endpoint.subscribers"],
            Along::Publishers => &["publishers", "endpoint.publishers"],
            Along::Topics => &["topics"],
        }
    }

    /// The x of a run on this axis.
    fn x(self, run: &Run) -> Option<f64> {
        let a = Axes::of(run);
        match self {
            Along::Rate => match a.rate {
                Some(r) if r > 0.0 => Some(r),
                Some(_) => {
                    let p = run.pings.as_ref()?;
                    (run.duration_s > 0.0).then(|| p.echoed as f64 / run.duration_s)
                }
                None => None,
            },
            Along::Subscribers => Some(a.subscribers as f64),
            Along::Publishers => Some(a.publishers as f64),
            Along::Topics => Some(a.topics as f64),
        }
    }
}

/// One cell of the report: its run (repetitions merged) and how many.
pub struct AxisCell<'a> {
    /// The merged run.
    pub run: &'a Run,
    /// Repetitions.
    pub reps: usize,
}

/// A curve: its binding, label and its cells in x order.
struct Curve<'a> {
    binding: String,
    label: String,
    points: Vec<(f64, &'a AxisCell<'a>)>,
}

/// The curves of `test` runs along `along`: cells grouped by their key
/// without that axis.
fn curves<'a>(cells: &'a [AxisCell<'a>], test: TestKind, along: Along) -> Vec<Curve<'a>> {
    let mut groups: BTreeMap<CellKey, Curve<'a>> = BTreeMap::new();
    for c in cells.iter().filter(|c| c.run.test == test) {
        let Some(x) = along.x(c.run) else { continue };
        let mut key = CellKey::of(c.run);
        for k in along.keys() {
            key.essentials.remove(*k);
        }
        let others = {
            let mut a = Axes::of(c.run);
            match along {
                Along::Rate => a.rate = None,
                Along::Subscribers => a.subscribers = 1,
                Along::Publishers => a.publishers = 1,
                Along::Topics => a.topics = 1,
            }
            a.note()
        };
        let mut label = format!(
            "{}/{} {}",
            key.binding,
            key.transport,
            format_size(key.size)
        );
        if !others.is_empty() {
            label.push_str(&format!(", {others}"));
        }
        let binding = key.binding.clone();
        groups
            .entry(key)
            .or_insert_with(|| Curve {
                binding,
                label,
                points: Vec::new(),
            })
            .points
            .push((x, c));
    }
    let mut out: Vec<Curve<'a>> = groups
        .into_values()
        .filter(|c| c.points.len() > 1)
        .collect();
    for c in &mut out {
        c.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out
}

/// The color of each curve: its binding's, a shade of it for the second
/// and further curves of one binding.
fn colors(curves: &[Curve<'_>]) -> Vec<String> {
    curves
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let k = curves[..i]
                .iter()
                .filter(|o| o.binding == c.binding)
                .count();
            shade(binding_color(&c.binding), k)
        })
        .collect()
}

/// Latency p50 (solid) and p99 (dashed) against each axis with a curve.
pub fn latency(cells: &[AxisCell<'_>]) -> Vec<Plot> {
    let mut plots = Vec::new();
    for along in [
        Along::Rate,
        Along::Subscribers,
        Along::Publishers,
        Along::Topics,
    ] {
        let curves = curves(cells, TestKind::Latency, along);
        if curves.is_empty() {
            continue;
        }
        let mut p = plot(
            &format!("latency-vs-{}", along.name()),
            &format!("One-way latency vs {}", along.name()),
            along,
            Axis {
                label: "one-way latency".into(),
                scale: Scale::Log,
                unit: Unit::Nanos,
            },
        );
        p.style_keys = vec![
            StyleKey::new("p50", Style::Solid),
            StyleKey::new("p99", Style::Dashed),
        ];
        for (c, color) in curves.iter().zip(colors(&curves)) {
            for (metric, style) in [("p50", Style::Solid), ("p99", Style::Dashed)] {
                let pts: Vec<(f64, f64, &AxisCell)> = c
                    .points
                    .iter()
                    .filter_map(|(x, cell)| {
                        let l = cell.run.latency_ns.as_ref().filter(|l| l.count > 0)?;
                        let v = if metric == "p50" { l.p50 } else { l.p99 };
                        Some((*x, v as f64, *cell))
                    })
                    .collect();
                p.series
                    .push(line(c, &color, style, metric, along, &pts, "µs", 1e3));
            }
        }
        plots.push(p);
    }
    plots
}

/// Received samples per second against subscribers and publishers.
pub fn throughput(cells: &[AxisCell<'_>]) -> Vec<Plot> {
    let mut plots = Vec::new();
    for along in [Along::Subscribers, Along::Publishers, Along::Topics] {
        let curves = curves(cells, TestKind::Throughput, along);
        if curves.is_empty() {
            continue;
        }
        let mut p = plot(
            &format!("throughput-vs-{}", along.name()),
            &format!("Throughput vs {}", along.name()),
            along,
            Axis {
                label: "received samples per second, all subscribers".into(),
                scale: Scale::Log,
                unit: Unit::Number,
            },
        );
        for (c, color) in curves.iter().zip(colors(&curves)) {
            let pts: Vec<(f64, f64, &AxisCell)> = c
                .points
                .iter()
                .filter_map(|(x, cell)| {
                    Some((*x, cell.run.throughput.as_ref()?.samples_per_s, *cell))
                })
                .collect();
            p.series.push(line(
                c,
                &color,
                Style::Solid,
                "samples/s",
                along,
                &pts,
                "",
                1.0,
            ));
        }
        plots.push(p);
    }
    plots
}

fn plot(id: &str, title: &str, along: Along, y: Axis) -> Plot {
    Plot {
        id: id.into(),
        title: title.into(),
        x: Axis {
            label: match along {
                Along::Rate => "offered rate, samples/s (max: the rate achieved)".into(),
                Along::Subscribers => "subscribers".into(),
                Along::Publishers => "publishers".into(),
                Along::Topics => "topics side by side".into(),
            },
            scale: Scale::Log,
            unit: Unit::Number,
        },
        y,
        series: Vec::new(),
        style_keys: Vec::new(),
    }
}

/// One line of a curve: `metric` of its cells, with a tooltip each.
#[allow(clippy::too_many_arguments)]
fn line(
    curve: &Curve<'_>,
    color: &str,
    style: Style,
    metric: &str,
    along: Along,
    pts: &[(f64, f64, &AxisCell)],
    unit: &str,
    divide: f64,
) -> Series {
    let label = &curve.label;
    Series {
        name: label.clone(),
        legend: style == Style::Solid,
        binding: curve.binding.clone(),
        color: color.into(),
        style,
        width: if style == Style::Solid { 2.5 } else { 1.8 },
        opacity: if style == Style::Solid { 1.0 } else { 0.75 },
        markers: (0..pts.len()).collect(),
        points: pts.iter().map(|(x, y, _)| (*x, *y)).collect(),
        tips: pts
            .iter()
            .map(|(x, y, c)| {
                format!(
                    "{label}, {} {x:.0}: {metric} {:.3}{}{unit} ({} run(s))",
                    along.name(),
                    y / divide,
                    if unit.is_empty() { "" } else { " " },
                    c.reps
                )
            })
            .collect(),
    }
}
