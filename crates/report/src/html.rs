//! The HTML report: one self-contained file (inline CSS and SVG, no
//! script, no external resource) that works offline.
//!
//! Contents: latency vs size (p50, p99, max; log-log), throughput vs size
//! (samples/s and Mbit/s) with the trials of each throughput search, the
//! percentile spectrum of every latency series (HDR style: x = percentile
//! on a log(1/(1−p)) axis), per-interval time series, CPU per binding, then
//! the result, environment and configuration tables. A figure over sample
//! sizes that holds one size is a bar chart. Series are named by what a
//! reader compares ([`crate::label`]). Repetitions of a cell are merged
//! exactly (histograms added) before anything is drawn; every figure comes
//! from the results given.

use crate::cell_text::{discovery_text, limit_text, one_way_text};
use crate::colors::{binding_color, shade};
use crate::css::CSS;
use crate::error::{ReportError, Result};
use crate::key::{CellKey, SeriesKey, flatten};
use crate::label::series_labels;
use crate::merge::{group_by_cell, merge_runs};
use crate::search;
use crate::svg::{Axis, Plot, Scale, Series, Style, StyleKey, Unit, esc};
use crate::text::us;
use pubsubperf_core::result::{ResultsFile, Run, SearchRecord};
use pubsubperf_core::size::format_size;
use pubsubperf_core::stats::LatencyRecorder;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One input of a report.
#[derive(Debug, Clone)]
pub struct Source {
    /// Where it came from (file name or database selection).
    pub name: String,
    /// Its results.
    pub file: ResultsFile,
}

/// Report settings.
#[derive(Debug, Clone)]
pub struct Options {
    /// Page title.
    pub title: String,
    /// When the report was made (RFC 3339), shown in the header. Passed in
    /// so that reports of the same inputs are identical.
    pub generated_at: String,
}

/// A built report.
#[derive(Debug, Clone)]
pub struct Report {
    /// The HTML page.
    pub html: String,
    /// Every plot, as (file name, standalone SVG).
    pub plots: Vec<(String, String)>,
}

/// One cell with its repetitions merged.
struct Cell {
    key: CellKey,
    run: Run,
    reps: usize,
    /// The throughput search of each repetition that was one.
    searches: Vec<SearchRecord>,
}

/// A series (one line per plot) and its cells sorted by size.
struct SeriesData {
    key: SeriesKey,
    label: String,
    /// The binding's color, or a shade of it for its second and further
    /// variants.
    color: String,
    cells: Vec<usize>,
}

/// Builds the report.
pub fn build(sources: &[Source], opts: &Options) -> Result<Report> {
    build_with_trends(sources, opts, None)
}

/// Builds the report, with a trend section when `trends` holds the
/// stored runs' series ([`crate::trend`]).
pub fn build_with_trends(
    sources: &[Source],
    opts: &Options,
    trends: Option<(&[crate::trend::Series], &crate::trend::Settings)>,
) -> Result<Report> {
    let all: Vec<&Run> = sources.iter().flat_map(|s| s.file.runs.iter()).collect();
    let graphs: Vec<_> = sources.iter().flat_map(|s| s.file.graphs.iter()).collect();
    if all.is_empty() && graphs.is_empty() {
        return Err(ReportError::Empty("no runs to report".into()));
    }
    let mut cells = Vec::new();
    for (key, runs) in group_by_cell(all.iter().copied()) {
        let searches = runs
            .iter()
            .filter_map(|r| search::record(r).transpose())
            .collect::<Result<Vec<_>>>()?;
        cells.push(Cell {
            run: merge_runs(&runs)?,
            reps: runs.len(),
            key,
            searches,
        });
    }
    // Series: one per series key, sorted by binding then the rest. The
    // color is the binding's (crate::colors), the same in every plot and
    // report; its variants (labels) are shades of it, one per label (a
    // binding's latency and throughput series are named alike and drawn
    // alike).
    let mut skeys: Vec<SeriesKey> = cells.iter().map(|c| c.key.series()).collect();
    skeys.sort();
    skeys.dedup();
    let labels = series_labels(&skeys);
    let mut names: Vec<(&str, &String)> = Vec::new();
    for (k, l) in skeys.iter().zip(&labels) {
        if !names.contains(&(k.binding.as_str(), l)) {
            names.push((&k.binding, l));
        }
    }
    let series: Vec<SeriesData> = skeys
        .iter()
        .zip(&labels)
        .map(|(k, label)| {
            let variant = names
                .iter()
                .filter(|(b, _)| *b == k.binding)
                .position(|(_, n)| *n == label)
                .unwrap_or(0);
            let mut idx: Vec<usize> = cells
                .iter()
                .enumerate()
                .filter(|(_, c)| c.key.series() == *k)
                .map(|(i, _)| i)
                .collect();
            idx.sort_by_key(|&i| cells[i].key.size);
            SeriesData {
                key: k.clone(),
                label: label.clone(),
                color: shade(binding_color(&k.binding), variant),
                cells: idx,
            }
        })
        .collect();
    let lat_series: Vec<&SeriesData> = series.iter().filter(|s| s.key.test == "latency").collect();
    let tp_series: Vec<&SeriesData> = series
        .iter()
        .filter(|s| s.key.test == "throughput")
        .collect();

    let mut sections: Vec<(String, String, String)> = Vec::new(); // (id, heading, html)
    let mut plots: Vec<(String, String)> = Vec::new();
    let add_plot = |plots: &mut Vec<(String, String)>, p: &Plot, caption: &str| -> Option<String> {
        if !p.has_data() {
            return None;
        }
        let svg = p.render();
        plots.push((format!("{}.svg", p.id), svg.clone()));
        Some(format!(
            "<figure>\n{svg}<figcaption>{}</figcaption>\n</figure>\n",
            esc(caption)
        ))
    };

    // Latency vs size.
    if !lat_series.is_empty() {
        let mut p = Plot {
            id: "latency-vs-size".into(),
            title: "One-way latency vs sample size".into(),
            x: Axis {
                label: "sample size (bytes)".into(),
                scale: Scale::Log,
                unit: Unit::Bytes,
            },
            y: Axis {
                label: "one-way latency".into(),
                scale: Scale::Log,
                unit: Unit::Nanos,
            },
            series: Vec::new(),
            style_keys: vec![
                StyleKey::new("p50", Style::Solid),
                StyleKey::new("p99", Style::Dashed),
                StyleKey::new("max", Style::Dotted),
            ],
        };
        for s in &lat_series {
            let pts: Vec<(&Cell, &pubsubperf_core::stats::LatencySummary)> = s
                .cells
                .iter()
                .filter_map(|&i| {
                    cells[i]
                        .run
                        .latency_ns
                        .as_ref()
                        .filter(|l| l.count > 0)
                        .map(|l| (&cells[i], l))
                })
                .collect();
            for (metric, style, width) in [
                ("p50", Style::Solid, 2.5),
                ("p99", Style::Dashed, 1.8),
                ("max", Style::Dotted, 1.5),
            ] {
                let points: Vec<(f64, f64)> = pts
                    .iter()
                    .map(|(c, l)| {
                        let v = match metric {
                            "p50" => l.p50,
                            "p99" => l.p99,
                            _ => l.max,
                        };
                        (c.key.size as f64, v as f64)
                    })
                    .collect();
                let tips = pts
                    .iter()
                    .zip(&points)
                    .map(|((c, l), (_, v))| {
                        format!(
                            "{} {} {}: {} µs ({} samples, {} run(s))",
                            s.label,
                            format_size(c.key.size),
                            metric,
                            us(*v as u64),
                            l.count,
                            c.reps
                        )
                    })
                    .collect();
                p.series.push(Series {
                    name: s.label.clone(),
                    legend: style == Style::Solid,
                    binding: s.key.binding.clone(),
                    color: s.color.clone(),
                    style,
                    width,
                    opacity: if style == Style::Solid { 1.0 } else { 0.75 },
                    markers: (0..points.len()).collect(),
                    points,
                    tips,
                });
            }
        }
        p.title = size_title("One-way latency", "", &p);
        let mut html = String::new();
        if let Some(f) = add_plot(
            &mut plots,
            &p,
            "One-way latency (round trip / 2 unless the run says otherwise) per sample size: p50 (solid, filled markers), p99 (dashed) and maximum (dotted). Repetitions of a cell are merged exactly (HDR histograms added). Hover a marker for its value.",
        ) {
            html.push_str(&f);
        }
        for p in crate::axis_plots::latency(&axis_cells(&cells)) {
            if let Some(f) = add_plot(
                &mut plots,
                &p,
                "One-way latency p50 (solid) and p99 (dashed) along an axis the runs were listed over: each curve joins runs that differ only in it. A run without a rate limit sits at the rate its pings achieved.",
            ) {
                html.push_str(&f);
            }
        }
        html.push_str(&latency_table(&cells, &lat_series));
        sections.push(("latency".into(), "Latency".into(), html));
    }

    // Throughput vs size.
    if !tp_series.is_empty() {
        let mut html = String::new();
        for (id, unit, ylabel, metric) in [
            (
                "throughput-samples",
                ": samples/s",
                "received samples per second",
                "samples",
            ),
            (
                "throughput-mbps",
                ": Mbit/s",
                "received Mbit/s (10^6 bit/s)",
                "mbps",
            ),
        ] {
            let mut p = Plot {
                id: id.into(),
                title: String::new(),
                x: Axis {
                    label: "sample size (bytes)".into(),
                    scale: Scale::Log,
                    unit: Unit::Bytes,
                },
                y: Axis {
                    label: ylabel.into(),
                    scale: Scale::Log,
                    unit: Unit::Number,
                },
                series: Vec::new(),
                style_keys: Vec::new(),
            };
            for s in &tp_series {
                let pts: Vec<(&Cell, f64, f64)> = s
                    .cells
                    .iter()
                    .filter_map(|&i| {
                        let t = cells[i].run.throughput.as_ref()?;
                        let v = if metric == "samples" {
                            t.samples_per_s
                        } else {
                            t.mbps
                        };
                        Some((&cells[i], v, t.lost_percent))
                    })
                    .collect();
                let points: Vec<(f64, f64)> = pts
                    .iter()
                    .map(|(c, v, _)| (c.key.size as f64, *v))
                    .collect();
                let tips = pts
                    .iter()
                    .map(|(c, v, lost)| {
                        format!(
                            "{} {}: {} {} (lost {:.4}%, {} run(s))",
                            s.label,
                            format_size(c.key.size),
                            if metric == "samples" {
                                format!("{v:.1}")
                            } else {
                                format!("{v:.3}")
                            },
                            if metric == "samples" {
                                "samples/s"
                            } else {
                                "Mbit/s"
                            },
                            lost,
                            c.reps
                        )
                    })
                    .collect();
                p.series.push(Series {
                    name: s.label.clone(),
                    legend: true,
                    binding: s.key.binding.clone(),
                    color: s.color.clone(),
                    style: Style::Solid,
                    width: 2.5,
                    opacity: 1.0,
                    markers: (0..points.len()).collect(),
                    points,
                    tips,
                });
            }
            p.title = size_title("Throughput", unit, &p);
            if let Some(f) = add_plot(
                &mut plots,
                &p,
                "Distinct samples received per second of measurement, per sample size (repetitions: counters summed over the summed measured time).",
            ) {
                html.push_str(&f);
            }
        }
        for p in crate::axis_plots::throughput(&axis_cells(&cells)) {
            if let Some(f) = add_plot(
                &mut plots,
                &p,
                "Distinct samples received per second, summed over the subscribers, along an axis the runs were listed over: each curve joins runs that differ only in it.",
            ) {
                html.push_str(&f);
            }
        }
        html.push_str(&throughput_table(&cells, &tp_series));
        html.push_str(&searches_html(&cells, &tp_series));
        sections.push(("throughput".into(), "Throughput".into(), html));
    }

    // Percentile spectrum per series with latency data.
    let mut spec_html = String::new();
    for s in &series {
        let mut p = Plot {
            id: format!("spectrum-{}", slug(&format!("{}-{}", s.key.test, s.label))),
            title: format!(
                "Percentile spectrum: {}{}",
                s.label,
                if s.key.test == "throughput" {
                    " (latency under load)"
                } else {
                    ""
                }
            ),
            x: Axis {
                label: "percentile".into(),
                scale: Scale::Linear,
                unit: Unit::Percentile,
            },
            y: Axis {
                label: "one-way latency".into(),
                scale: Scale::Log,
                unit: Unit::Nanos,
            },
            series: Vec::new(),
            style_keys: Vec::new(),
        };
        for (j, &i) in s.cells.iter().enumerate() {
            let c = &cells[i];
            let Some(l) = c.run.latency_ns.as_ref().filter(|l| l.count > 0) else {
                continue;
            };
            let rec = LatencyRecorder::from_summary(l).map_err(|m| ReportError::Histogram {
                context: c.key.label(),
                message: m,
            })?;
            // Up to the resolution of the sample count: p = 1 − 1/count.
            let xmax = (l.count as f64).log10().max(0.0);
            let mut points = Vec::new();
            let steps = (xmax / 0.05).ceil() as usize;
            for k in 0..=steps {
                let x = (k as f64 * 0.05).min(xmax);
                let q = 1.0 - 10f64.powf(-x);
                points.push((x, rec.quantile(q) as f64));
            }
            let mut markers = Vec::new();
            let mut tips = Vec::new();
            for (name, x, v) in [
                ("p50", std::f64::consts::LOG10_2, l.p50),
                ("p90", 1.0, l.p90),
                ("p99", 2.0, l.p99),
                ("p99.9", 3.0, l.p99_9),
                ("p99.99", 4.0, l.p99_99),
                ("p99.9999", 6.0, l.p99_9999),
            ] {
                if x <= xmax + 1e-9 {
                    markers.push(points.len());
                    points.push((x, v as f64));
                    tips.push(format!(
                        "{} {}: {} µs",
                        format_size(c.key.size),
                        name,
                        us(v)
                    ));
                }
            }
            if markers.is_empty() {
                // Too few samples for p50: mark the lone value.
                markers.push(0);
                tips.push(format!(
                    "{}: {} sample(s), max {} µs",
                    format_size(c.key.size),
                    l.count,
                    us(l.max)
                ));
            }
            // Keep the line in x order with the marker points inside it.
            let mut order: Vec<usize> = (0..points.len()).collect();
            order.sort_by(|&a, &b| points[a].0.total_cmp(&points[b].0));
            let sorted: Vec<(f64, f64)> = order.iter().map(|&k| points[k]).collect();
            let markers: Vec<usize> = markers
                .iter()
                .map(|m| order.iter().position(|&k| k == *m).unwrap_or(0))
                .collect();
            p.series.push(Series {
                name: format!("{} ({} samples)", format_size(c.key.size), l.count),
                legend: true,
                binding: s.key.binding.clone(),
                color: shade(&s.color, j),
                style: Style::Solid,
                width: 2.0,
                opacity: 1.0,
                points: sorted,
                markers,
                tips,
            });
        }
        if let Some(f) = add_plot(
            &mut plots,
            &p,
            "Latency at each percentile, from the merged HDR histogram of every sample (x: percentile on a log(1/(1−p)) axis, up to the resolution of the sample count). Markers: p50, p90, p99, p99.9, p99.99, p99.9999.",
        ) {
            spec_html.push_str(&f);
        }
    }
    if !spec_html.is_empty() {
        sections.push(("spectrum".into(), "Percentile spectrum".into(), spec_html));
    }

    // Time series: a line of fewer than two points (a run of one interval)
    // shows no time and is left out; a plot left without lines is left out,
    // and a line under the section says which and why.
    let mut ts_html = String::new();
    let mut ts_left_out: Vec<String> = Vec::new();
    for s in &series {
        let throughput = s.key.test == "throughput";
        let mut p = Plot {
            id: format!(
                "timeseries-{}",
                slug(&format!("{}-{}", s.key.test, s.label))
            ),
            title: if throughput {
                format!("Throughput per interval: {}", s.label)
            } else {
                format!("Mean latency per interval: {}", s.label)
            },
            x: Axis {
                label: "time since the start of measurement".into(),
                scale: Scale::Linear,
                unit: Unit::Seconds,
            },
            y: if throughput {
                Axis {
                    label: "received samples per second".into(),
                    scale: Scale::Linear,
                    unit: Unit::Number,
                }
            } else {
                Axis {
                    label: "mean one-way latency in the interval".into(),
                    scale: Scale::Log,
                    unit: Unit::Nanos,
                }
            },
            series: Vec::new(),
            style_keys: Vec::new(),
        };
        let mut k = 0;
        let mut short: Vec<String> = Vec::new();
        for &i in &s.cells {
            let c = &cells[i];
            let mut subs: Vec<usize> = c.run.intervals.iter().map(|iv| iv.subscriber).collect();
            subs.sort_unstable();
            subs.dedup();
            for sub in subs {
                let ivs: Vec<_> = c
                    .run
                    .intervals
                    .iter()
                    .filter(|iv| iv.subscriber == sub)
                    .collect();
                let points: Vec<(f64, f64)> = ivs
                    .iter()
                    .filter_map(|iv| {
                        if throughput {
                            Some((iv.t_s, iv.samples_per_s))
                        } else {
                            iv.latency_mean_ns.map(|m| (iv.t_s, m))
                        }
                    })
                    .collect();
                if points.is_empty() {
                    continue;
                }
                let name = if subs_many(&c.run) {
                    format!("{} sub {sub}", format_size(c.key.size))
                } else {
                    format_size(c.key.size)
                };
                if points.len() < 2 {
                    short.push(name);
                    continue;
                }
                p.series.push(Series {
                    name,
                    legend: true,
                    binding: s.key.binding.clone(),
                    color: shade(&s.color, k),
                    style: Style::Solid,
                    width: 1.8,
                    opacity: 1.0,
                    markers: (0..points.len()).collect(),
                    points,
                    tips: Vec::new(),
                });
                k += 1;
            }
        }
        if p.series.is_empty() {
            if !short.is_empty() {
                ts_left_out.push(format!("{} ({})", s.label, s.key.test));
            }
            continue;
        }
        let mut caption = if throughput {
            "Samples received in each interval (one per second per subscriber, as the subscriber measured). Repetitions follow one another on the time axis.".to_string()
        } else {
            "Mean one-way latency of the pings in each interval. Repetitions follow one another on the time axis.".to_string()
        };
        if !short.is_empty() {
            let _ = write!(
                caption,
                " Not drawn, one interval each: {}.",
                short.join(", ")
            );
        }
        if let Some(f) = add_plot(&mut plots, &p, &caption) {
            ts_html.push_str(&f);
        }
    }
    if !ts_left_out.is_empty() {
        let _ = writeln!(
            ts_html,
            "<p class=\"left-out\">No time series of {}: each of their runs measured one interval, and a time series needs two (an interval is a second of measurement).</p>",
            esc(&ts_left_out.join(", "))
        );
    }
    if !ts_html.is_empty() {
        sections.push(("timeseries".into(), "Time series".into(), ts_html));
    }

    // CPU per binding.
    let mut cpu_html = String::new();
    for (test, group) in [("latency", &lat_series), ("throughput", &tp_series)] {
        if group.is_empty() {
            continue;
        }
        let mut p = Plot {
            id: format!("cpu-{test}"),
            title: String::new(),
            x: Axis {
                label: "sample size (bytes)".into(),
                scale: Scale::Log,
                unit: Unit::Bytes,
            },
            y: Axis {
                label: "CPU (% of one core)".into(),
                scale: Scale::Linear,
                unit: Unit::Percent,
            },
            series: Vec::new(),
            style_keys: vec![
                StyleKey::new("publisher", Style::Solid),
                StyleKey::new("subscriber", Style::Dashed),
            ],
        };
        for s in group.iter() {
            for (side, style) in [("publisher", Style::Solid), ("subscriber", Style::Dashed)] {
                let points: Vec<(f64, f64)> = s
                    .cells
                    .iter()
                    .map(|&i| {
                        let r = &cells[i].run.resources;
                        let v = if side == "publisher" {
                            r.publisher.cpu_percent
                        } else {
                            r.subscriber.cpu_percent
                        };
                        (cells[i].key.size as f64, v)
                    })
                    .collect();
                let tips = s
                    .cells
                    .iter()
                    .zip(&points)
                    .map(|(&i, (_, v))| {
                        format!(
                            "{} {} {side}: {v:.1}% CPU",
                            s.label,
                            format_size(cells[i].key.size)
                        )
                    })
                    .collect();
                p.series.push(Series {
                    name: s.label.clone(),
                    legend: side == "publisher",
                    binding: s.key.binding.clone(),
                    color: s.color.clone(),
                    style,
                    width: 2.0,
                    opacity: 1.0,
                    markers: (0..points.len()).collect(),
                    points,
                    tips,
                });
            }
        }
        p.title = size_title("CPU use", &format!(" in the {test} test"), &p);
        if let Some(f) = add_plot(
            &mut plots,
            &p,
            "User + system CPU time over wall time of each side's process during the measurement, in % of one core.",
        ) {
            cpu_html.push_str(&f);
        }
    }
    if !cpu_html.is_empty() {
        sections.push(("cpu".into(), "CPU".into(), cpu_html));
    }
    let profile_html: String = cells
        .iter()
        .map(|c| {
            let first = if c.reps > 1 { ", first repetition" } else { "" };
            let label = format!(
                "{} {}, size {}{first}",
                c.run.binding,
                c.run.test,
                format_size(c.key.size)
            );
            crate::profile::html(&c.run, &label)
        })
        .collect();
    if !profile_html.is_empty() {
        sections.push((
            "profile".into(),
            "Profile".into(),
            format!(
                "<p>Runs with <code>--profile</code>: each side's system calls (traced by the method shown), context switches and CPU time, per sample it handled. A tracer slows every system call: the latency and rates of these runs are not those of unprofiled runs.</p>\n{profile_html}"
            ),
        ));
    }

    let explain_html: String = cells
        .iter()
        .map(|c| {
            let label = format!(
                "{} {}, size {}",
                c.run.binding,
                c.run.test,
                format_size(c.key.size)
            );
            crate::explanation::html(&c.run, &label)
        })
        .collect();
    if !explain_html.is_empty() {
        sections.push((
            "explained".into(),
            "Explained".into(),
            format!(
                "<p>Runs with <code>--explain</code>: each percentile band's time over the p50, shared by the causes the kernel recorded in its samples (docs/explain.md).</p>\n{explain_html}"
            ),
        ));
    }

    if !graphs.is_empty() {
        let html = crate::graph_html::section(&graphs, &mut plots);
        sections.push(("topologies".into(), "Topologies".into(), html));
    }
    if let Some(html) = not_as_planned_html(&cells) {
        sections.insert(0, ("not-as-planned".into(), "Not as planned".into(), html));
    }
    if let Some((series, settings)) = trends
        && series.iter().any(|x| x.revisions.len() > 1)
    {
        let html = crate::trend_html::section(series, settings, &mut plots);
        sections.push(("trends".into(), "Trends".into(), html));
    }
    sections.push((
        "environment".into(),
        "Environment".into(),
        environment_html(sources),
    ));
    if !cells.is_empty() {
        let html = config_html(&cells);
        sections.push(("configuration".into(), "Configuration".into(), html));
    }

    // Page.
    let mut h = String::new();
    let nruns = all.len();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"generator\" content=\"pubsubperf\">\n<title>{title}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<header>\n<h1>{title}</h1>\n<p class=\"meta\">{nruns} run(s) in {ncells} cell(s){topologies} from {sources}; generated {gen} by pubsubperf {ver}.</p>\n<nav>",
        title = esc(&opts.title),
        ncells = cells.len(),
        topologies = match graphs.len() {
            0 => String::new(),
            n => format!(" and {n} topology run(s)"),
        },
        sources = esc(&sources.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(", ")),
        gen = esc(&opts.generated_at),
        ver = esc(&sources.first().map(|s| s.file.tool.version.clone()).unwrap_or_default()),
    );
    for (id, heading, _) in &sections {
        let _ = write!(h, "<a href=\"#{id}\">{}</a>", esc(heading));
    }
    h.push_str("</nav>\n</header>\n<main>\n");
    for (id, heading, body) in &sections {
        let _ = write!(
            h,
            "<section id=\"{id}\">\n<h2>{}</h2>\n{body}</section>\n",
            esc(heading)
        );
    }
    h.push_str("</main>\n<footer>Made by pubsubperf from the results listed above; every figure is measured, none is estimated. Latency percentiles come from HDR histograms (3 significant digits); repetitions are merged, never averaged.</footer>\n</body>\n</html>\n");
    Ok(Report { html: h, plots })
}

fn subs_many(r: &Run) -> bool {
    r.intervals.iter().any(|i| i.subscriber > 0)
}

/// The cells whose runs did not run where they were planned, first in
/// the report: their figures in every plot below are not the planned
/// measurement.
fn not_as_planned_html(cells: &[Cell]) -> Option<String> {
    let rows: String = cells
        .iter()
        .filter(|c| !c.run.conditions.is_empty())
        .map(|c| {
            format!(
                "<tr><td>{}</td><td>{}</td></tr>\n",
                esc(&c.key.label()),
                esc(&c.run.conditions.join("; "))
            )
        })
        .collect();
    (!rows.is_empty()).then(|| {
        format!(
            "<p class=\"warn\">These cells' sides did not run where they were planned (read back from the kernel: <code>placement</code> in the results). Their figures below were not measured as planned.</p>\n<table>\n<tr><th>cell</th><th>what differed</th></tr>\n{rows}</table>\n"
        )
    })
}

/// A file-name-safe version of a label.
pub fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

/// `subject vs sample size detail` over several sizes; over one, drawn as
/// bars, `subject at 1KiB detail`.
fn size_title(subject: &str, detail: &str, p: &Plot) -> String {
    match p.sizes()[..] {
        [one] => {
            let size = format_size(one as usize);
            let unit = if size.ends_with(|c: char| c.is_ascii_digit()) {
                " B"
            } else {
                ""
            };
            format!("{subject} at {size}{unit}{detail}")
        }
        _ => format!("{subject} vs sample size{detail}"),
    }
}

/// The trials of every throughput search, one table per series.
fn searches_html(cells: &[Cell], series: &[&SeriesData]) -> String {
    let tables: String = series
        .iter()
        .map(|s| {
            let per_size: Vec<(usize, &[SearchRecord])> = s
                .cells
                .iter()
                .map(|&i| (cells[i].key.size, cells[i].searches.as_slice()))
                .collect();
            search::table(&s.label, &s.color, &per_size)
        })
        .collect();
    if tables.is_empty() {
        return tables;
    }
    format!(
        "<h3>Throughput searches</h3>\n<p>A best-effort throughput is the highest offered rate whose loss stayed within the bound (<code>--find-max</code>; the quick comparison searches every best-effort binding). Each trial offered a rate for a while; the figure above is the best trial within the bound.</p>\n{tables}"
    )
}

/// The cells as [`crate::axis_plots`] takes them.
fn axis_cells(cells: &[Cell]) -> Vec<crate::axis_plots::AxisCell<'_>> {
    cells
        .iter()
        .map(|c| crate::axis_plots::AxisCell {
            run: &c.run,
            reps: c.reps,
        })
        .collect()
}

fn latency_table(cells: &[Cell], series: &[&SeriesData]) -> String {
    let mut h = String::from(
        "<table class=\"num\">\n<caption>One-way latency in µs</caption>\n<thead><tr><th>series</th><th>size</th><th>runs</th><th>samples</th><th>mean</th><th>std</th><th>min</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>p99.99</th><th>p99.9999</th><th>max</th><th>CPU pub</th><th>CPU sub</th><th>limit</th><th>one-way p50 forward / back</th><th>discovery ms, writer / reader</th></tr></thead>\n<tbody>\n",
    );
    for s in series {
        for &i in &s.cells {
            let c = &cells[i];
            let Some(l) = &c.run.latency_ns else { continue };
            let _ = writeln!(
                h,
                "<tr><td><span class=\"sw\" style=\"background:{}\"></span>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.3}</td><td>{:.3}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}%</td><td>{:.1}%</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                s.color,
                esc(&s.label),
                format_size(c.key.size),
                c.reps,
                l.count,
                l.mean / 1e3,
                l.std / 1e3,
                us(l.min),
                us(l.p50),
                us(l.p90),
                us(l.p99),
                us(l.p99_9),
                us(l.p99_99),
                us(l.p99_9999),
                us(l.max),
                c.run.resources.publisher.cpu_percent,
                c.run.resources.subscriber.cpu_percent,
                esc(&limit_text(&c.run)),
                esc(&one_way_text(&c.run)),
                esc(&discovery_text(&c.run))
            );
        }
    }
    h.push_str("</tbody>\n</table>\n");
    h
}

fn throughput_table(cells: &[Cell], series: &[&SeriesData]) -> String {
    let mut h = String::from(
        "<table class=\"num\">\n<caption>Throughput</caption>\n<thead><tr><th>series</th><th>size</th><th>runs</th><th>sent</th><th>received</th><th>samples/s</th><th>Mbit/s</th><th>lost</th><th>lost %</th><th>rejected</th><th>dup</th><th>out of order</th><th>CPU pub</th><th>CPU sub</th><th>limit</th><th>discovery ms, writer / reader</th></tr></thead>\n<tbody>\n",
    );
    for s in series {
        for &i in &s.cells {
            let c = &cells[i];
            let Some(t) = &c.run.throughput else { continue };
            let _ = writeln!(
                h,
                "<tr><td><span class=\"sw\" style=\"background:{}\"></span>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}</td><td>{:.3}</td><td>{}</td><td>{:.4}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}%</td><td>{:.1}%</td><td>{}</td><td>{}</td></tr>",
                s.color,
                esc(&s.label),
                format_size(c.key.size),
                c.reps,
                t.sent,
                t.received,
                t.samples_per_s,
                t.mbps,
                t.lost,
                t.lost_percent,
                t.rejected,
                t.duplicates,
                t.out_of_order,
                c.run.resources.publisher.cpu_percent,
                c.run.resources.subscriber.cpu_percent,
                esc(&limit_text(&c.run)),
                esc(&discovery_text(&c.run))
            );
        }
    }
    h.push_str("</tbody>\n</table>\n");
    h
}

fn environment_html(sources: &[Source]) -> String {
    let mut h = String::new();
    let mut shown: Vec<&pubsubperf_core::environment::Environment> = Vec::new();
    for s in sources {
        let e = &s.file.environment;
        if shown.contains(&e) {
            let _ = writeln!(h, "<p>{}: same environment as above.</p>", esc(&s.name));
            continue;
        }
        shown.push(e);
        let _ = writeln!(
            h,
            "<table class=\"kv\">\n<caption>{}</caption>\n<tbody>",
            esc(&s.name)
        );
        let mut row = |k: &str, v: &str| {
            let _ = writeln!(h, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
        };
        row(
            "tool",
            &format!("{} {}", s.file.tool.name, s.file.tool.version),
        );
        row("host", &e.hostname);
        row("CPU", &e.cpu_model);
        if !e.arch.is_empty() {
            row("architecture", &e.arch);
        }
        if let Some(how) = &e.emulated {
            row(
                "emulated",
                &format!("{how}: not this architecture's performance"),
            );
        }
        row("cores", &e.cores.to_string());
        row("kernel", &e.kernel);
        row("OS", &e.os);
        for (b, v) in &e.bindings {
            row(&format!("binding {b}"), v);
        }
        if let Some(sub) = &e.subscriber_host {
            row(
                "subscriber host",
                &format!(
                    "{} ({}, {} cores, {})",
                    sub.hostname, sub.cpu_model, sub.cores, sub.kernel
                ),
            );
        }
        if let Some(c) = &e.calibration {
            row("calibration", &c.to_string());
        }
        let hosts = std::iter::once(("machine", e))
            .chain(e.subscriber_host.as_deref().map(|s| ("subscriber host", s)));
        for (whose, env) in hosts {
            for f in env
                .doctor
                .iter()
                .filter(|f| f.verdict != pubsubperf_core::doctor::Verdict::Ok)
            {
                row(
                    &format!("{whose}: {} {}", f.verdict, f.check),
                    &format!("{} ({}; fix: {})", f.value, f.why, f.fix),
                );
            }
        }
        h.push_str("</tbody>\n</table>\n");
    }
    h
}

fn config_html(cells: &[Cell]) -> String {
    // Settings equal in every run, then the ones that vary, per cell.
    let flat: Vec<BTreeMap<String, String>> = cells
        .iter()
        .map(|c| {
            let mut f = flatten(&c.run.config);
            // A search's trials have a table of their own.
            f.retain(|k, _| {
                !k.ends_with("run_id")
                    && k != "endpoint.max_sample_size"
                    && k != "size"
                    && k != "find_max.trials"
            });
            f
        })
        .collect();
    let mut keys: Vec<String> = flat.iter().flat_map(|f| f.keys().cloned()).collect();
    keys.sort();
    keys.dedup();
    let (common, varying): (Vec<String>, Vec<String>) = keys
        .into_iter()
        .partition(|k| flat.iter().all(|f| f.get(k) == flat[0].get(k)));
    let mut h = String::from(
        "<p>Every setting that shaped the runs (the <code>config</code> of each result).</p>\n<table class=\"kv\">\n<caption>Settings common to all runs</caption>\n<tbody>\n",
    );
    for k in &common {
        let _ = writeln!(
            h,
            "<tr><th>{}</th><td>{}</td></tr>",
            esc(k),
            esc(flat[0].get(k).map_or("", String::as_str))
        );
    }
    h.push_str("</tbody>\n</table>\n");
    if !varying.is_empty() {
        h.push_str("<div class=\"scroll\"><table class=\"num\">\n<caption>Settings that differ between cells</caption>\n<thead><tr><th>cell</th><th>runs</th>");
        for k in &varying {
            let _ = write!(h, "<th>{}</th>", esc(k));
        }
        h.push_str("</tr></thead>\n<tbody>\n");
        for (c, f) in cells.iter().zip(&flat) {
            let _ = write!(h, "<tr><td>{}</td><td>{}</td>", esc(&c.key.label()), c.reps);
            for k in &varying {
                let _ = write!(h, "<td>{}</td>", esc(f.get(k).map_or("-", String::as_str)));
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</tbody>\n</table></div>\n");
    }
    h
}
