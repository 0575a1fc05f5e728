//! The report's "Topologies" section: for each topology run its drawing
//! ([`crate::graph_svg`]), its paths table (end-to-end latency) and its
//! topics table (samples sent, received, lost, late, too late). Topology
//! runs are shown one by one, as measured (not merged).

use crate::html::slug;
use crate::svg::esc;
use crate::text::us;
use pubsubperf_core::graph_result::GraphRun;
use std::fmt::Write as _;

/// The section's HTML; each drawing is also added to `plots` as
/// (file name, standalone SVG).
pub fn section(graphs: &[&GraphRun], plots: &mut Vec<(String, String)>) -> String {
    let mut h = String::from(
        "<p>Runs of <code>pubsubperf topology</code>: a graph of nodes, each hop one writer of a topic to one of its readers. Latencies are one way, on one clock: a path's is, sample by sample, the sum of its hops' and its relays' residences (see docs/topology.md).</p>\n",
    );
    for (i, g) in graphs.iter().enumerate() {
        let id = format!("topology-{}-{}", i + 1, slug(&g.name));
        let svg = crate::graph_svg::render(g, &id);
        plots.push((format!("{id}.svg"), svg.clone()));
        let binding = if g.transport == g.binding {
            g.binding.clone()
        } else {
            format!("{}/{}", g.binding, g.transport)
        };
        let _ = writeln!(
            h,
            "<h3 id=\"{}-heading\">{} over {}</h3>\n<p>Started {}; {} s measured after {} s of warm-up; clock {}{}.</p>",
            esc(&id),
            esc(&g.name),
            esc(&binding),
            esc(&g.started),
            g.duration_s,
            g.warmup_s,
            esc(&g.clock),
            if g.deviations.is_empty() {
                String::new()
            } else {
                format!("; deviations: {}", esc(&g.deviations.join(", ")))
            }
        );
        let _ = writeln!(
            h,
            "<figure>\n{svg}<figcaption>Nodes in columns by their depth from the sources (blue: a source, grey: a relay with the p50 of a sample's time inside it, green: a sink); each arrow a hop with its topic and its latency p50 and p99 in µs, red with its loss when samples were lost. Hover a box or an arrow for every figure.</figcaption>\n</figure>"
        );
        // Across hosts a path's latencies carry the clocks' bound.
        let bounds = g.paths.iter().any(|p| p.clock_bound_ns > 0);
        let _ = writeln!(
            h,
            "<table class=\"num\">\n<caption>Paths, end to end, µs</caption>\n<thead><tr><th>path</th><th>count</th><th>p50</th><th>p90</th><th>p99</th><th>max</th>{}</tr></thead>\n<tbody>",
            if bounds {
                "<th>clocks ±</th><th>below zero</th>"
            } else {
                ""
            }
        );
        for p in &g.paths {
            let l = &p.latency_ns;
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>{}</tr>",
                esc(&p.name),
                l.count,
                us(l.p50),
                us(l.p90),
                us(l.p99),
                us(l.max),
                if bounds {
                    format!("<td>{}</td><td>{}</td>", us(p.clock_bound_ns), p.below_zero)
                } else {
                    String::new()
                }
            );
        }
        h.push_str("</tbody>\n</table>\n");
        h.push_str(
            "<table class=\"num\">\n<caption>Topics (late, too late: received samples over the topic's deadline, over its too_late; -: the topic has none)</caption>\n<thead><tr><th>topic</th><th>size</th><th>sent</th><th>received</th><th>lost %</th><th>late</th><th>too late</th></tr></thead>\n<tbody>\n",
        );
        for t in &g.topics {
            // A topic without the deadline counts nothing against it.
            let count = |limit: Option<u64>, n: u64| limit.map_or("-".into(), |_| n.to_string());
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.3}</td><td>{}</td><td>{}</td></tr>",
                esc(&t.name),
                t.size,
                t.sent,
                t.received,
                t.lost_percent,
                count(t.deadline_ns, t.late),
                count(t.too_late_ns, t.too_late)
            );
        }
        h.push_str("</tbody>\n</table>\n");
    }
    h
}
