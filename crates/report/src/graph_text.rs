//! Text of topology runs in the CLI's analysis commands: their lines in
//! `history` and their tables in `compare`. Plain, aligned, deterministic
//! (snapshot-tested), latencies in µs with every nanosecond.

use crate::db::{StoredGraph, StoredRun};
use crate::failif::{pct, relative_change};
use crate::graph_compare::GraphsCompared;
use crate::text::{p_value, table, us};
use pubsubperf_core::graph_result::{GraphPath, GraphRun};
use std::fmt::Write as _;

/// The slowest path of a topology run: the highest p99 (then p50) among
/// the paths with samples.
pub fn worst_path(g: &GraphRun) -> Option<&GraphPath> {
    g.paths
        .iter()
        .filter(|p| p.latency_ns.count > 0)
        .max_by_key(|p| (p.latency_ns.p99, p.latency_ns.p50))
}

/// The table of topology runs in `history`: one line each.
pub fn graph_history(graphs: &[StoredGraph]) -> String {
    let mut rows = vec![
        [
            "ID",
            "TIME",
            "TOPOLOGY",
            "BINDING",
            "NODES",
            "PATHS",
            "worst p50 µs",
            "worst p99 µs",
            "lost",
            "late",
            "too late",
            "GROUP",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for s in graphs {
        let g = &s.graph;
        let worst = worst_path(g).map(|p| &p.latency_ns);
        let sum = |f: fn(&pubsubperf_core::graph_result::GraphTopic) -> u64| -> String {
            g.topics.iter().map(f).sum::<u64>().to_string()
        };
        rows.push(vec![
            s.id.to_string(),
            s.time.clone(),
            g.name.clone(),
            if g.transport == g.binding {
                g.binding.clone()
            } else {
                format!("{}/{}", g.binding, g.transport)
            },
            g.nodes.len().to_string(),
            g.paths.len().to_string(),
            worst.map_or("-".into(), |l| us(l.p50)),
            worst.map_or("-".into(), |l| us(l.p99)),
            sum(|t| t.lost),
            sum(|t| t.late),
            sum(|t| t.too_late),
            s.group.clone(),
        ]);
    }
    table(&rows, "rlllrrrrrrrl")
}

/// The text of `pubsubperf history`: the runs, then the topology runs
/// under a heading of their own.
pub fn history(runs: &[StoredRun], graphs: &[StoredGraph]) -> String {
    if graphs.is_empty() {
        return crate::text::history(runs);
    }
    let mut s = String::new();
    if !runs.is_empty() {
        s.push_str(&crate::text::history(runs));
        s.push('\n');
    }
    s.push_str("Topology runs (worst: the path with the highest p99):\n");
    s.push_str(&graph_history(graphs));
    s
}

/// A signed count change: `+3`, `-2`, `+0`.
fn count_change(b: u64, n: u64) -> String {
    let d = i128::from(n) - i128::from(b);
    format!("{d:+}")
}

/// The topology tables of `pubsubperf compare`: per path p50 and p99, per
/// topic late, too late and lost %, BASE → NEW. Empty when no topology
/// matched.
pub fn comparison(c: &GraphsCompared) -> String {
    let mut s = String::new();
    let paths: Vec<_> = c
        .graphs
        .iter()
        .flat_map(|g| g.paths.iter().map(move |p| (g, p)))
        .collect();
    if !paths.is_empty() {
        let _ = writeln!(
            s,
            "\nTopologies, paths end to end µs (repetitions merged; p-value: Welch's t-test on per-repetition p50):"
        );
        let mut rows = vec![
            [
                "TOPOLOGY", "PATH", "REPS", "p50 BASE", "p50 NEW", "Δ p50", "p99 BASE", "p99 NEW",
                "Δ p99", "max NEW", "p-value",
            ]
            .map(String::from)
            .to_vec(),
        ];
        for (g, p) in &paths {
            let (b, n) = (&p.base, &p.new);
            rows.push(vec![
                g.key.label(),
                p.name.clone(),
                format!("{}/{}", g.reps.0, g.reps.1),
                us(b.p50),
                us(n.p50),
                pct(relative_change(b.p50 as f64, n.p50 as f64)),
                us(b.p99),
                us(n.p99),
                pct(relative_change(b.p99 as f64, n.p99 as f64)),
                us(n.max),
                p_value(&p.test),
            ]);
        }
        s.push_str(&table(&rows, "ll"));
    }
    let topics: Vec<_> = c
        .graphs
        .iter()
        .flat_map(|g| g.topics.iter().map(move |t| (g, t)))
        .collect();
    if !topics.is_empty() {
        let _ = writeln!(
            s,
            "\nTopologies, topics (received samples over the topic's deadline: late; over too_late: too late; -: no such deadline):"
        );
        let mut rows = vec![
            [
                "TOPOLOGY",
                "TOPIC",
                "late BASE",
                "late NEW",
                "Δ late",
                "too late BASE",
                "too late NEW",
                "Δ too late",
                "lost% BASE",
                "lost% NEW",
                "Δ lost%",
            ]
            .map(String::from)
            .to_vec(),
        ];
        for (g, t) in &topics {
            let (b, n) = (&t.base, &t.new);
            // A topic without the deadline on a side counts nothing there.
            let counts = |has: (bool, bool), (x, y): (u64, u64)| -> [String; 3] {
                let one = |on: bool, v: u64| if on { v.to_string() } else { "-".into() };
                [
                    one(has.0, x),
                    one(has.1, y),
                    if has.0 && has.1 {
                        count_change(x, y)
                    } else {
                        "-".into()
                    },
                ]
            };
            let mut row = vec![g.key.label(), t.name.clone()];
            row.extend(counts(
                (b.deadline_ns.is_some(), n.deadline_ns.is_some()),
                (b.late, n.late),
            ));
            row.extend(counts(
                (b.too_late_ns.is_some(), n.too_late_ns.is_some()),
                (b.too_late, n.too_late),
            ));
            row.extend([
                format!("{:.4}", b.lost_percent),
                format!("{:.4}", n.lost_percent),
                format!("{:+.4}pp", n.lost_percent - b.lost_percent),
            ]);
            rows.push(row);
        }
        s.push_str(&table(&rows, "ll"));
    }
    s
}

/// The topologies and paths only one side of `compare` has.
pub fn unmatched(c: &GraphsCompared) -> String {
    let mut s = String::new();
    let mut only = |title: &str, items: Vec<String>| {
        if !items.is_empty() {
            let _ = writeln!(s, "\n{title}:");
            for i in items {
                let _ = writeln!(s, "  {}", pubsubperf_core::escape::printable_all(&i));
            }
        }
    };
    only(
        "Topologies only in BASE",
        c.only_base.iter().map(|k| k.label()).collect(),
    );
    only(
        "Topologies only in NEW",
        c.only_new.iter().map(|k| k.label()).collect(),
    );
    only(
        "Paths only in BASE",
        c.graphs
            .iter()
            .flat_map(|g| {
                g.only_base_paths
                    .iter()
                    .map(|p| format!("{}: {p}", g.key.label()))
            })
            .collect(),
    );
    only(
        "Paths only in NEW",
        c.graphs
            .iter()
            .flat_map(|g| {
                g.only_new_paths
                    .iter()
                    .map(|p| format!("{}: {p}", g.key.label()))
            })
            .collect(),
    );
    s
}
