//! Text tables of the CLI's analysis commands: `compare`, `history`,
//! `merge`. Plain, aligned, deterministic (snapshot-tested).

use crate::compare::{CellComparison, Comparison, cell_labels};
use crate::db::StoredRun;
use crate::failif::pct;
use crate::key::qos_label;
use crate::stat::TTest;
use pubsubperf_core::escape::printable_all;
use pubsubperf_core::result::Run;
use pubsubperf_core::size::format_size;
use std::fmt::Write as _;

/// Nanoseconds with an adaptive unit: `850 ns`, `12.345 µs`, `1.234 ms`, `2.500 s`.
pub fn format_ns(v: f64) -> String {
    let a = v.abs();
    if a < 1e3 {
        format!("{v:.0} ns")
    } else if a < 1e6 {
        format!("{:.3} µs", v / 1e3)
    } else if a < 1e9 {
        format!("{:.3} ms", v / 1e6)
    } else {
        format!("{:.3} s", v / 1e9)
    }
}

/// Nanoseconds as microseconds with 3 decimals (the CLI's table unit).
pub fn us(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

pub(crate) fn p_value(t: &TTest) -> String {
    match t {
        TTest::NotApplicable => "n/a".into(),
        TTest::NoVariance { equal: true } => "1 (equal)".into(),
        TTest::NoVariance { equal: false } => "n/a (no var.)".into(),
        TTest::Welch { p, .. } if *p < 0.001 => "<0.001 *".into(),
        TTest::Welch { p, .. } if *p < 0.05 => format!("{p:.3} *"),
        TTest::Welch { p, .. } => format!("{p:.3}"),
    }
}

/// Pads the columns of rows: `align` has one `l` or `r` per column
/// (missing: right). Every cell is printed with its control characters
/// escaped: labels, names and hosts come from results files, which may be
/// imported from anywhere.
pub(crate) fn table(rows: &[Vec<String>], align: &str) -> String {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r.iter().map(|c| printable_all(c)).collect())
        .collect();
    let align: Vec<char> = align.chars().collect();
    let n = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut w = vec![0usize; n];
    for r in &rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let mut s = String::new();
    for r in &rows {
        let mut line = String::new();
        for (i, c) in r.iter().enumerate() {
            let pad = w[i] - c.chars().count();
            if i > 0 {
                line.push_str("  ");
            }
            if align.get(i) == Some(&'l') {
                line.push_str(c);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str(&" ".repeat(pad));
                line.push_str(c);
            }
        }
        s.push_str(line.trim_end());
        s.push('\n');
    }
    s
}

/// The text of `pubsubperf compare`.
pub fn comparison(c: &Comparison) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "BASE {}  vs  NEW {}: {} cell(s) matched, {} only in BASE, {} only in NEW",
        printable_all(&c.base_name),
        printable_all(&c.new_name),
        c.cells.len(),
        c.only_base.len(),
        c.only_new.len()
    );
    let g = &c.graphs;
    if !(g.graphs.is_empty() && g.only_base.is_empty() && g.only_new.is_empty()) {
        let _ = write!(
            s,
            "; {} topolog{} matched, {} only in BASE, {} only in NEW",
            g.graphs.len(),
            if g.graphs.len() == 1 { "y" } else { "ies" },
            g.only_base.len(),
            g.only_new.len()
        );
    }
    s.push('\n');
    let lat: Vec<&CellComparison> = c.cells.iter().filter(|x| x.key.test == "latency").collect();
    let tp: Vec<&CellComparison> = c.cells.iter().filter(|x| x.key.test != "latency").collect();
    if !lat.is_empty() {
        let labels = cell_labels(&lat.iter().map(|x| x.key.clone()).collect::<Vec<_>>());
        let _ = writeln!(
            s,
            "\nLatency, one-way µs (repetitions merged; p-value: Welch's t-test on per-repetition p50):"
        );
        let mut rows = vec![
            [
                "CELL", "REPS", "p50 BASE", "p50 NEW", "Δ p50", "p99 BASE", "p99 NEW", "Δ p99",
                "max NEW", "p-value",
            ]
            .map(String::from)
            .to_vec(),
        ];
        for (x, label) in lat.iter().zip(labels) {
            let (Some(b), Some(n)) = (&x.base.latency_ns, &x.new.latency_ns) else {
                rows.push(vec![
                    label,
                    format!("{}/{}", x.reps.0, x.reps.1),
                    "no latency data".into(),
                ]);
                continue;
            };
            rows.push(vec![
                label,
                format!("{}/{}", x.reps.0, x.reps.1),
                us(b.p50),
                us(n.p50),
                pct(crate::failif::relative_change(b.p50 as f64, n.p50 as f64)),
                us(b.p99),
                us(n.p99),
                pct(crate::failif::relative_change(b.p99 as f64, n.p99 as f64)),
                us(n.max),
                p_value(&x.test),
            ]);
        }
        s.push_str(&table(&rows, "l"));
    }
    if !tp.is_empty() {
        let labels = cell_labels(&tp.iter().map(|x| x.key.clone()).collect::<Vec<_>>());
        let _ = writeln!(
            s,
            "\nThroughput (repetitions merged; p-value: Welch's t-test on per-repetition samples/s):"
        );
        let mut rows = vec![
            [
                "CELL",
                "REPS",
                "samples/s BASE",
                "samples/s NEW",
                "Δ",
                "Mbit/s BASE",
                "Mbit/s NEW",
                "Δ",
                "lost% BASE",
                "lost% NEW",
                "p-value",
            ]
            .map(String::from)
            .to_vec(),
        ];
        for (x, label) in tp.iter().zip(labels) {
            let (Some(b), Some(n)) = (&x.base.throughput, &x.new.throughput) else {
                rows.push(vec![
                    label,
                    format!("{}/{}", x.reps.0, x.reps.1),
                    "no throughput data".into(),
                ]);
                continue;
            };
            rows.push(vec![
                label,
                format!("{}/{}", x.reps.0, x.reps.1),
                format!("{:.1}", b.samples_per_s),
                format!("{:.1}", n.samples_per_s),
                pct(crate::failif::relative_change(
                    b.samples_per_s,
                    n.samples_per_s,
                )),
                format!("{:.3}", b.mbps),
                format!("{:.3}", n.mbps),
                pct(crate::failif::relative_change(b.mbps, n.mbps)),
                format!("{:.4}", b.lost_percent),
                format!("{:.4}", n.lost_percent),
                p_value(&x.test),
            ]);
        }
        s.push_str(&table(&rows, "l"));
    }
    let explained: Vec<_> = c
        .cells
        .iter()
        .filter_map(|x| Some((x, x.base.explanation.as_ref()?, x.new.explanation.as_ref()?)))
        .collect();
    if !explained.is_empty() {
        let labels = cell_labels(
            &explained
                .iter()
                .map(|x| x.0.key.clone())
                .collect::<Vec<_>>(),
        );
        let _ = writeln!(
            s,
            "\nExplained (--explain: each band's time over the p50 by cause, BASE  |  NEW):"
        );
        for ((_, b, n), label) in explained.iter().zip(labels) {
            let _ = writeln!(s, "{label}");
            for line in crate::explanation::compare(b, n) {
                let _ = writeln!(s, "  {line}");
            }
        }
    }
    s.push_str(&crate::graph_text::comparison(&c.graphs));
    if !c.cells.is_empty() || c.graphs.graphs.iter().any(|g| !g.paths.is_empty()) {
        let _ = writeln!(
            s,
            "(* p < 0.05; n/a: a test needs at least 2 repetitions on each side)"
        );
    }
    if !c.only_base.is_empty() {
        let _ = writeln!(s, "\nOnly in BASE:");
        for k in &c.only_base {
            let _ = writeln!(s, "  {}", printable_all(&k.label()));
        }
    }
    if !c.only_new.is_empty() {
        let _ = writeln!(s, "\nOnly in NEW:");
        for k in &c.only_new {
            let _ = writeln!(s, "  {}", printable_all(&k.label()));
        }
    }
    s.push_str(&crate::graph_text::unmatched(&c.graphs));
    if !c.setting_differences.is_empty() {
        let _ = writeln!(s, "\nSettings that differ (not used to match cells):");
        for d in &c.setting_differences {
            let _ = writeln!(s, "  {}", printable_all(d));
        }
    }
    if !c.environment_differences.is_empty() {
        let _ = writeln!(s, "\nEnvironment differences:");
        for d in &c.environment_differences {
            let _ = writeln!(s, "  {}", printable_all(d));
        }
    }
    for u in &c.unchecked {
        let _ = writeln!(
            s,
            "\n--fail-if '{}': no matched cell, path or topic has this metric; not checked",
            printable_all(u)
        );
    }
    if !c.violations.is_empty() {
        let _ = writeln!(
            s,
            "\nFAILED: {} --fail-if violation(s):",
            c.violations.len()
        );
        for v in &c.violations {
            let _ = writeln!(
                s,
                "  {}: {}: {}",
                printable_all(&v.condition),
                printable_all(&v.cell),
                printable_all(&v.found)
            );
        }
    }
    s
}

/// What a run set differently from its middleware's own defaults
/// (`config.deviations`, recorded from `Binding::deviations`); a run from
/// before the record says whether it batched.
pub fn deviation_list(r: &Run) -> Vec<String> {
    let c = &r.config;
    match c["deviations"].as_array() {
        Some(d) => d
            .iter()
            .filter_map(|x| x.as_str().map(String::from))
            .collect(),
        None => match c["endpoint"]["batch_bytes"].as_u64() {
            Some(b) if b > 0 => vec![format!("batched {b} B")],
            _ => Vec::new(),
        },
    }
}

/// A stored run's mark for where it ran: `NOT AS PLANNED` when its
/// sides did not run where planned; `pinning unverified` for a run of a
/// sweep or of the main job stored by a version before 0.2.0, which
/// recorded no placement and pinned only the first run of a process (the
/// later ones ran both sides on one core; CHANGELOG, 0.2.0).
pub fn placement_mark(r: &StoredRun) -> &'static str {
    if !r.run.conditions.is_empty() {
        " (NOT AS PLANNED)"
    } else if r.run.placement.is_empty() && (r.sweep.is_some() || r.cell.is_some()) {
        " (pinning unverified)"
    } else {
        ""
    }
}

/// The text of `pubsubperf history`.
pub fn history(runs: &[StoredRun]) -> String {
    if runs.is_empty() {
        return "no runs match\n".into();
    }
    // Runs that differ in rate, subscribers or publishers say theirs
    // after the size.
    let axes = crate::axes::AxisColumns::of(runs.iter().map(|r| &r.run));
    let mut rows = vec![
        [
            "ID",
            "TIME",
            "BINDING",
            "TEST",
            "SIZE",
            "QOS",
            "p50 µs",
            "p99 µs",
            "samples/s",
            "Mbit/s",
            "lost%",
            "SWEEP",
            "GROUP",
            "AS RUN",
            "MACHINE",
        ]
        .map(String::from)
        .to_vec(),
    ];
    rows[0].splice(5..5, axes.headers().iter().map(|h| h.to_uppercase()));
    for r in runs {
        let run = &r.run;
        let lat = run.latency_ns.as_ref().filter(|l| l.count > 0);
        let tp = run.throughput.as_ref();
        let binding = if run.transport == run.binding {
            run.binding.clone()
        } else {
            format!("{}/{}", run.binding, run.transport)
        };
        rows.push(vec![
            r.id.to_string(),
            r.time.clone(),
            binding,
            run.test.to_string() + if run.complete { "" } else { " (partial)" } + placement_mark(r),
            format_size(run.size),
            qos_label(run.reliable, run.zero_copy, &run.data_type),
            lat.map_or("-".into(), |l| us(l.p50)),
            lat.map_or("-".into(), |l| us(l.p99)),
            tp.map_or("-".into(), |t| format!("{:.1}", t.samples_per_s)),
            tp.map_or("-".into(), |t| format!("{:.3}", t.mbps)),
            tp.map_or("-".into(), |t| format!("{:.4}", t.lost_percent)),
            match (&r.sweep, &r.cell) {
                (Some(s), _) => format!("{s}#{}", r.repetition),
                (None, Some(c)) => format!("{c}#{}", r.repetition),
                _ => "-".into(),
            },
            r.group.clone(),
            match deviation_list(run).join(", ") {
                d if d.is_empty() => "-".into(),
                d => d,
            },
            match pubsubperf_core::doctor::tally(&r.environment.doctor) {
                t if t.is_empty() => "-".into(),
                t => t,
            },
        ]);
        if let Some(row) = rows.last_mut() {
            row.splice(5..5, axes.cells(run));
        }
    }
    let mut align = String::from("rlllrlrrrrrllll");
    align.insert_str(5, &"r".repeat(axes.headers().len()));
    table(&rows, &align)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ns_units() {
        assert_eq!(format_ns(850.0), "850 ns");
        assert_eq!(format_ns(12_345.0), "12.345 µs");
        assert_eq!(format_ns(1_234_000.0), "1.234 ms");
        assert_eq!(format_ns(2.5e9), "2.500 s");
        assert_eq!(us(1_234), "1.234");
    }

    fn stored(sweep: Option<&str>, run: serde_json::Value) -> StoredRun {
        let mut r = serde_json::json!({
            "binding": "udp", "transport": "udp", "test": "latency", "size": 64,
            "zero_copy": false, "data_type": "bytes", "reliable": false, "config": {},
            "resources": {"publisher": {"cpu_percent": 1.0, "max_rss_kib": 1, "voluntary_cs": 0, "involuntary_cs": 0},
                          "subscriber": {"cpu_percent": 1.0, "max_rss_kib": 1, "voluntary_cs": 0, "involuntary_cs": 0}}
        });
        for (k, v) in run.as_object().unwrap() {
            r[k] = v.clone();
        }
        StoredRun {
            id: 1,
            group: "g".into(),
            time: String::new(),
            sweep: sweep.map(String::from),
            cell: None,
            repetition: 1,
            tool_version: "0.1.0".into(),
            environment: pubsubperf_core::environment::Environment::detect(),
            host: None,
            labels: Default::default(),
            run: serde_json::from_value(r).unwrap(),
        }
    }

    /// A run not as planned is marked; a sweep's run stored before 0.2.0
    /// (no placement) is unverified; a lone run of then, or one with its
    /// placement as planned, is not marked.
    #[test]
    fn history_marks_where_runs_ran() {
        let placed = serde_json::json!({"placement": [{"side": "publisher", "kernel": "k",
            "planned_cpu": 0, "affinity": [0], "ran_on": [0], "migrations": 0, "policy": "other",
            "priority": 0, "voluntary_cs": 0, "involuntary_cs": 0, "on_cpu_ns": 0, "run_queue_ns": 0,
            "others_ns": 0, "steal_ns": 0, "span_ns": 1, "online": 2}]});
        let mut bad = placed.clone();
        bad["conditions"] = serde_json::json!(["x"]);
        assert_eq!(placement_mark(&stored(Some("s"), bad)), " (NOT AS PLANNED)");
        assert_eq!(
            placement_mark(&stored(Some("s"), serde_json::json!({}))),
            " (pinning unverified)"
        );
        assert_eq!(placement_mark(&stored(None, serde_json::json!({}))), "");
        assert_eq!(placement_mark(&stored(Some("s"), placed)), "");
    }
}
