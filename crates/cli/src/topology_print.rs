//! The tables of a topology run: paths, hops, relays, topics and nodes,
//! latencies in µs with every nanosecond; each table's first column as
//! wide as its longest label.

use pubsubperf_core::graph_result::GraphRun;
use pubsubperf_core::stats::LatencySummary;
use pubsubperf_report::live::us;

const LATENCY_HEAD: [&str; 5] = ["count", "p50", "p90", "p99", "max"];

fn latency_cells(l: &LatencySummary) -> [String; 5] {
    [
        l.count.to_string(),
        us(l.p50),
        us(l.p90),
        us(l.p99),
        us(l.max),
    ]
}

/// One table: a title, its column heads and its rows (a label, then the
/// cells), right-aligned cells of at least 10 characters.
fn table(title: &str, head: &[&str], rows: &[(String, Vec<String>)]) {
    let width = rows
        .iter()
        .map(|(l, _)| l.chars().count())
        .chain([title.chars().count()])
        .max()
        .unwrap_or(0);
    let mut line = format!("{title:<width$}");
    for h in head {
        line.push_str(&format!(" {h:>10}"));
    }
    println!("\n{line}");
    for (label, cells) in rows {
        let mut line = format!("{label:<width$}");
        for c in cells {
            line.push_str(&format!(" {c:>10}"));
        }
        println!("{line}");
    }
}

/// Prints the tables.
pub fn print(g: &GraphRun) {
    let rows: Vec<(String, Vec<String>)> = g
        .paths
        .iter()
        .map(|p| (p.name.clone(), latency_cells(&p.latency_ns).to_vec()))
        .collect();
    table("paths, end to end (us)", &LATENCY_HEAD, &rows);
    let rows: Vec<(String, Vec<String>)> = g
        .hops
        .iter()
        .map(|h| {
            let topic = match &h.relays {
                Some(from) => format!("{} (of {from})", h.topic),
                None => h.topic.clone(),
            };
            let mut cells = latency_cells(&h.latency_ns).to_vec();
            cells.extend([h.sent, h.lost, h.late, h.too_late].map(|n| n.to_string()));
            (format!("{topic} {}->{}", h.from, h.to), cells)
        })
        .collect();
    let mut head = LATENCY_HEAD.to_vec();
    head.extend(["sent", "lost", "late", "too late"]);
    table("hops (us)", &head, &rows);
    if !g.relays.is_empty() {
        let rows: Vec<(String, Vec<String>)> = g
            .relays
            .iter()
            .map(|r| {
                let label = format!("{} {}->{}", r.node, r.from, r.to);
                (label, latency_cells(&r.residence_ns).to_vec())
            })
            .collect();
        table("relays, inside the node (us)", &LATENCY_HEAD, &rows);
    }
    let rows: Vec<(String, Vec<String>)> = g
        .topics
        .iter()
        .map(|x| {
            let cells = vec![
                x.size.to_string(),
                x.sent.to_string(),
                x.received.to_string(),
                format!("{:.3}", x.lost_percent),
                x.late.to_string(),
                x.too_late.to_string(),
            ];
            (x.name.clone(), cells)
        })
        .collect();
    let head = ["size", "sent", "received", "lost %", "late", "too late"];
    table("topics", &head, &rows);
    let rows: Vec<(String, Vec<String>)> = g
        .nodes
        .iter()
        .map(|n| {
            let r = &n.resources;
            let mut ran_on: Vec<usize> =
                n.placement.iter().flat_map(|p| p.ran_on.clone()).collect();
            ran_on.sort_unstable();
            ran_on.dedup();
            let cells = vec![
                n.place.clone(),
                match ran_on.as_slice() {
                    [] => "-".into(),
                    c => pubsubperf_doctor::cpu_list_text(c),
                },
                format!("{:.1}", r.cpu_percent),
                format!("{:.1}", r.max_rss_kib as f64 / 1024.0),
                r.voluntary_cs.to_string(),
                r.involuntary_cs.to_string(),
            ];
            let label = match &n.binding {
                Some(b) => format!("{} ({b})", n.name),
                None => n.name.clone(),
            };
            (label, cells)
        })
        .collect();
    table(
        "nodes",
        &["place", "cores", "cpu %", "rss MiB", "cs vol", "cs invol"],
        &rows,
    );
    for n in g.nodes.iter().filter(|n| !n.conditions.is_empty()) {
        println!(
            "NOT AS PLANNED: node {}: {}; its figures were not measured as planned",
            pubsubperf_core::escape::printable_all(&n.name),
            pubsubperf_core::escape::printable_all(&n.conditions.join("; "))
        );
    }
    for n in &g.nodes {
        if let (Some(off), Some(bound)) = (n.clock_offset_ns, n.clock_bound_ns) {
            println!(
                "clock of {} ({}): {off:+} ns against this host's, +- {} (every latency it takes part in carries it)",
                n.name,
                n.place,
                us(bound)
            );
        }
    }
    if !g.deviations.is_empty() {
        println!("\ndeviations: {}", g.deviations.join(", "));
    }
}
