//! The drawing of a topology run as SVG: each node a labelled box, in
//! columns by its depth from the sources (the longest chain of hops that
//! reaches it), left to right; each hop an arrow from its writer to its
//! reader, labelled with its topic, its p50 and p99 in µs and its loss when
//! any. A relaying node's box says, per relay, the p50 of the time a sample
//! spends inside it. Every box (`<g class="node">`) and arrow (`<g
//! class="hop">`) has a `<title>` tooltip with the whole figures. Every
//! figure comes from the run; the layout is the only thing made here.

use crate::svg::{esc, open_svg};
use crate::text::us;
use pubsubperf_core::graph_result::{GraphHop, GraphRun};
use pubsubperf_core::stats::LatencySummary;
use std::fmt::Write as _;

/// Width of a character of a node's name (12 px) and of a label (11 px).
const CHAR_W: f64 = 7.0;
const SMALL_W: f64 = 6.4;
/// Height of a text line in a box or a label.
const LINE: f64 = 14.0;
const PAD: f64 = 8.0;
const MARGIN: f64 = 20.0;
/// Space for the title above the drawing.
const TOP: f64 = 44.0;
/// Vertical space between boxes of one column, and between labels.
const V_GAP: f64 = 28.0;
const MIN_BOX_W: f64 = 90.0;
/// How far a loop (a node's hop to itself) turns below its box.
const LOOP: f64 = 24.0;

/// A node's box.
struct NodeBox {
    name: String,
    /// Text lines under the name: per relay `from→to` and its p50.
    lines: Vec<String>,
    tip: String,
    fill: &'static str,
    depth: usize,
    x: f64,
    y: f64,
    h: f64,
}

/// A hop's arrow and label.
struct Edge<'a> {
    hop: &'a GraphHop,
    from: usize,
    to: usize,
    lines: Vec<String>,
    w: f64,
    h: f64,
    /// Where it leaves its writer's box and enters its reader's.
    y_out: f64,
    y_in: f64,
    /// The label's center.
    lx: f64,
    ly: f64,
}

fn summary_text(l: &LatencySummary) -> String {
    format!(
        "{} samples, p50 {} µs, p90 {} µs, p99 {} µs, max {} µs",
        l.count,
        us(l.p50),
        us(l.p90),
        us(l.p99),
        us(l.max)
    )
}

fn text_w(lines: &[String], first_w: f64) -> f64 {
    lines
        .iter()
        .enumerate()
        .map(|(i, l)| l.chars().count() as f64 * if i == 0 { first_w } else { SMALL_W })
        .fold(0.0, f64::max)
}

/// Longest-path depth of each node from the nodes no hop reaches.
fn depths(n: usize, edges: &[(usize, usize)]) -> Vec<usize> {
    let mut d = vec![0; n];
    // A topology has no cycle: n rounds settle every depth.
    for _ in 0..n {
        let mut changed = false;
        for &(a, b) in edges {
            if d[b] < d[a] + 1 {
                d[b] = d[a] + 1;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    d
}

/// The nodes of each column, ordered so that arrows cross little: each
/// column by the mean position of its neighbours in the column before,
/// then back up by those in the column after, then down again.
fn columns(depth: &[usize], edges: &[(usize, usize)]) -> Vec<Vec<usize>> {
    let ncols = depth.iter().max().map_or(0, |m| m + 1);
    let mut cols: Vec<Vec<usize>> = vec![Vec::new(); ncols];
    for (i, &d) in depth.iter().enumerate() {
        cols[d].push(i);
    }
    let pos = |cols: &[Vec<usize>], v: usize| -> f64 {
        let c = &cols[depth[v]];
        let i = c.iter().position(|&x| x == v).unwrap_or(0);
        (i as f64 + 0.5) / c.len() as f64
    };
    let reorder = |cols: &mut Vec<Vec<usize>>, k: usize, down: bool| {
        let keys: Vec<(usize, f64)> = cols[k]
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let near: Vec<f64> = edges
                    .iter()
                    .filter_map(|&(a, b)| match down {
                        true if b == v && depth[a] < k => Some(pos(cols, a)),
                        false if a == v && depth[b] > k => Some(pos(cols, b)),
                        _ => None,
                    })
                    .collect();
                let own = (i as f64 + 0.5) / cols[k].len() as f64;
                let key = if near.is_empty() {
                    own
                } else {
                    near.iter().sum::<f64>() / near.len() as f64
                };
                (v, key)
            })
            .collect();
        let mut sorted = keys;
        sorted.sort_by(|x, y| x.1.total_cmp(&y.1));
        cols[k] = sorted.into_iter().map(|(v, _)| v).collect();
    };
    for k in 1..ncols {
        reorder(&mut cols, k, true);
    }
    for k in (0..ncols.saturating_sub(1)).rev() {
        reorder(&mut cols, k, false);
    }
    for k in 1..ncols {
        reorder(&mut cols, k, true);
    }
    cols
}

/// The topology run as a standalone SVG document; `id` names the element
/// (unique within a page).
pub fn render(g: &GraphRun, id: &str) -> String {
    let mut names: Vec<String> = g.nodes.iter().map(|n| n.name.clone()).collect();
    for h in &g.hops {
        for n in [&h.from, &h.to] {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
    }
    let index = |n: &str| names.iter().position(|x| x == n).unwrap_or(0);
    let pairs: Vec<(usize, usize)> = g
        .hops
        .iter()
        .map(|h| (index(&h.from), index(&h.to)))
        .collect();
    // A node that reads a topic it writes has a hop to itself: drawn as a
    // loop, left out of the layout.
    let between: Vec<(usize, usize)> = pairs.iter().copied().filter(|(a, b)| a != b).collect();
    let depth = depths(names.len(), &between);
    let cols = columns(&depth, &between);

    // Boxes: a name, then per relay two lines.
    let mut boxes: Vec<NodeBox> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let relays: Vec<_> = g.relays.iter().filter(|r| &r.node == name).collect();
            let mut lines = Vec::new();
            let mut tip = name.clone();
            if let Some(n) = g.nodes.iter().find(|n| &n.name == name) {
                let _ = write!(
                    tip,
                    " ({}): CPU {:.1} %, RSS {:.1} MiB",
                    n.place,
                    n.resources.cpu_percent,
                    n.resources.max_rss_kib as f64 / 1024.0
                );
            }
            for r in &relays {
                lines.push(format!("{}→{}", r.from, r.to));
                lines.push(format!("p50 {} µs", us(r.residence_ns.p50)));
                let _ = write!(
                    tip,
                    "\nrelays {} to {}, inside the node: {}",
                    r.from,
                    r.to,
                    summary_text(&r.residence_ns)
                );
            }
            let writes = g.hops.iter().any(|h| &h.from == name && h.relays.is_none());
            let fill = if !relays.is_empty() {
                "#f4f6f8"
            } else if writes {
                "#e3effa"
            } else {
                "#e6f4e6"
            };
            NodeBox {
                h: LINE
                    + 10.0
                    + lines.len() as f64 * LINE
                    + if lines.is_empty() { 0.0 } else { 4.0 },
                name: name.clone(),
                lines,
                tip,
                fill,
                depth: depth[i],
                x: 0.0,
                y: 0.0,
            }
        })
        .collect();
    let box_w = boxes
        .iter()
        .map(|b| {
            let mut all = vec![b.name.clone()];
            all.extend(b.lines.iter().cloned());
            text_w(&all, CHAR_W) + 2.0 * PAD
        })
        .fold(MIN_BOX_W, f64::max);

    // Labels: the topic (and what it relays when two hops of one topic
    // join the same nodes), p50, p99, and the loss when any.
    let mut edges: Vec<Edge> = g
        .hops
        .iter()
        .zip(&pairs)
        .map(|(h, &(from, to))| {
            let twin = g
                .hops
                .iter()
                .filter(|x| x.from == h.from && x.to == h.to && x.topic == h.topic)
                .count()
                > 1;
            let mut lines = vec![match (&h.relays, twin) {
                (Some(of), true) => format!("{} (of {of})", h.topic),
                _ => h.topic.clone(),
            }];
            lines.push(format!("p50 {} µs", us(h.latency_ns.p50)));
            lines.push(format!("p99 {} µs", us(h.latency_ns.p99)));
            if h.lost > 0 {
                let pct = if h.sent > 0 {
                    h.lost as f64 * 100.0 / h.sent as f64
                } else {
                    0.0
                };
                lines.push(format!("lost {} ({pct:.2} %)", h.lost));
            }
            Edge {
                w: text_w(&lines, SMALL_W) + 10.0,
                h: lines.len() as f64 * LINE + 6.0,
                hop: h,
                from,
                to,
                lines,
                y_out: 0.0,
                y_in: 0.0,
                lx: 0.0,
                ly: 0.0,
            }
        })
        .collect();
    let gap = edges.iter().map(|e| e.w).fold(60.0, f64::max) + 48.0;

    // Columns, each centered on the tallest.
    let heights: Vec<f64> = cols
        .iter()
        .map(|c| {
            c.iter().map(|&i| boxes[i].h).sum::<f64>() + V_GAP * c.len().saturating_sub(1) as f64
        })
        .collect();
    let tallest = heights.iter().copied().fold(0.0, f64::max);
    for (k, c) in cols.iter().enumerate() {
        let mut y = TOP + (tallest - heights[k]) / 2.0;
        for &i in c {
            boxes[i].x = MARGIN + k as f64 * (box_w + gap);
            boxes[i].y = y;
            y += boxes[i].h + V_GAP;
        }
    }
    let center = |b: &NodeBox| b.y + b.h / 2.0;

    // Ports: the arrows leaving (entering) a box spread along its right
    // (left) side, in the order of the boxes at their other ends.
    for i in 0..boxes.len() {
        let mut out: Vec<usize> = (0..edges.len()).filter(|&e| edges[e].from == i).collect();
        out.sort_by(|&a, &b| center(&boxes[edges[a].to]).total_cmp(&center(&boxes[edges[b].to])));
        for (k, &e) in out.iter().enumerate() {
            edges[e].y_out = boxes[i].y + boxes[i].h * (k as f64 + 1.0) / (out.len() as f64 + 1.0);
        }
        let mut inn: Vec<usize> = (0..edges.len())
            .filter(|&e| edges[e].to == i && edges[e].from != i)
            .collect();
        inn.sort_by(|&a, &b| {
            center(&boxes[edges[a].from]).total_cmp(&center(&boxes[edges[b].from]))
        });
        for (k, &e) in inn.iter().enumerate() {
            edges[e].y_in = boxes[i].y + boxes[i].h * (k as f64 + 1.0) / (inn.len() as f64 + 1.0);
        }
    }
    // Labels in the gap after the writer's column, halfway down the
    // arrow, pushed apart where they would overlap.
    for k in 0..cols.len() {
        let mut here: Vec<usize> = (0..edges.len())
            .filter(|&e| boxes[edges[e].from].depth == k)
            .collect();
        for &e in &here {
            let ed = &mut edges[e];
            ed.lx = MARGIN + k as f64 * (box_w + gap) + box_w + gap / 2.0;
            ed.ly = (ed.y_out + ed.y_in) / 2.0;
        }
        here.sort_by(|&a, &b| edges[a].ly.total_cmp(&edges[b].ly));
        let mut bottom = f64::MIN;
        for &e in &here {
            let ed = &mut edges[e];
            ed.ly = ed.ly.max(bottom + 4.0 + ed.h / 2.0).max(TOP + ed.h / 2.0);
            bottom = ed.ly + ed.h / 2.0;
        }
    }

    let title = format!(
        "Topology {}: {}, {} node(s), {} path(s)",
        g.name,
        if g.transport == g.binding {
            g.binding.clone()
        } else {
            format!("{}/{}", g.binding, g.transport)
        },
        names.len(),
        g.paths.len()
    );
    // A loop turns back under its box.
    let loop_below = |b: &NodeBox| b.y + b.h + LOOP;
    let width =
        (MARGIN * 2.0 + cols.len() as f64 * box_w + cols.len().saturating_sub(1) as f64 * gap)
            .max(title.chars().count() as f64 * 9.0 + 2.0 * MARGIN)
            .max(
                edges
                    .iter()
                    .map(|e| e.lx + e.w / 2.0 + MARGIN)
                    .fold(0.0, f64::max),
            )
            .ceil();
    let height = (boxes.iter().map(|b| b.y + b.h).fold(TOP, f64::max))
        .max(edges.iter().map(|e| e.ly + e.h / 2.0).fold(TOP, f64::max))
        .max(
            edges
                .iter()
                .filter(|e| e.from == e.to)
                .map(|e| loop_below(&boxes[e.to]))
                .fold(TOP, f64::max),
        )
        + MARGIN;
    let height = height.ceil();
    let mut s = open_svg("topology", id, &title, width, height, width / 2.0);
    let marker = format!("{id}-arrow");
    let _ = writeln!(
        s,
        "<defs><marker id=\"{m}\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#55606b\"/></marker><marker id=\"{m}-lost\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#d62728\"/></marker></defs>",
        m = esc(&marker)
    );
    // Arrows: writer's side to the label, through it, on to the reader.
    for e in &edges {
        let (a, b) = (&boxes[e.from], &boxes[e.to]);
        let (x1, x2) = (a.x + box_w, b.x);
        let (l0, l1) = (e.lx - e.w / 2.0, e.lx + e.w / 2.0);
        let (d1, d2) = ((l0 - x1) / 2.0, (x2 - l1) / 2.0);
        // The way back: on to the reader's left side, or for a loop round
        // under the box into its bottom.
        let back = if e.from == e.to {
            // From under the label, down and back into the box.
            let (cx, bottom, low) = (b.x + box_w / 2.0, b.y + b.h, loop_below(b));
            format!(
                "M{lx:.1},{:.1} C{lx:.1},{low:.1} {cx:.1},{low:.1} {cx:.1},{bottom:.1}",
                e.ly + e.h / 2.0,
                lx = e.lx
            )
        } else {
            format!(
                "C{:.1},{ly:.1} {:.1},{y2:.1} {x2:.1},{y2:.1}",
                l1 + d2,
                x2 - d2,
                ly = e.ly,
                y2 = e.y_in
            )
        };
        let h = e.hop;
        let (stroke, end) = if h.lost > 0 {
            ("#d62728", format!("{marker}-lost"))
        } else {
            ("#55606b", marker.clone())
        };
        let _ = writeln!(
            s,
            "<g class=\"hop\"><title>{}</title><path d=\"M{x1:.1},{y1:.1} C{:.1},{y1:.1} {:.1},{ly:.1} {l0:.1},{ly:.1} L{l1:.1},{ly:.1} {back}\" fill=\"none\" stroke=\"{stroke}\" stroke-width=\"1.6\" marker-end=\"url(#{})\"/></g>",
            esc(&format!(
                "{}{} {}→{}: {}; sent {}, received {}, lost {}, late {}, too late {}{}",
                h.topic,
                h.relays
                    .as_ref()
                    .map(|r| format!(" (relaying {r})"))
                    .unwrap_or_default(),
                h.from,
                h.to,
                summary_text(&h.latency_ns),
                h.sent,
                h.received,
                h.lost,
                h.late,
                h.too_late,
                if h.clock_bound_ns > 0 {
                    format!(
                        "; across hosts, each latency within ± {} µs ({} below zero)",
                        us(h.clock_bound_ns),
                        h.below_zero
                    )
                } else {
                    String::new()
                }
            )),
            x1 + d1,
            l0 - d1,
            esc(&end),
            y1 = e.y_out,
            ly = e.ly,
        );
    }
    // Boxes.
    for b in &boxes {
        let _ = write!(
            s,
            "<g class=\"node\" data-name=\"{}\"><title>{}</title><rect x=\"{:.1}\" y=\"{:.1}\" width=\"{box_w:.1}\" height=\"{:.1}\" rx=\"5\" fill=\"{}\" stroke=\"#1d2b3a\" stroke-width=\"1.2\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-weight=\"bold\" fill=\"#1d2b3a\">{}</text>",
            esc(&b.name),
            esc(&b.tip),
            b.x,
            b.y,
            b.h,
            b.fill,
            b.x + box_w / 2.0,
            b.y + LINE + 2.0,
            esc(&b.name)
        );
        for (k, l) in b.lines.iter().enumerate() {
            let _ = write!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\" fill=\"#333\">{}</text>",
                b.x + box_w / 2.0,
                b.y + LINE + 6.0 + (k + 1) as f64 * LINE,
                esc(l)
            );
        }
        s.push_str("</g>\n");
    }
    // Labels over the arrows.
    for e in &edges {
        let top = e.ly - e.h / 2.0;
        let _ = write!(
            s,
            "<g class=\"hop-label\"><rect x=\"{:.1}\" y=\"{top:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"3\" fill=\"#fff\" fill-opacity=\"0.92\" stroke=\"#dde2e7\"/>",
            e.lx - e.w / 2.0,
            e.w,
            e.h
        );
        for (k, l) in e.lines.iter().enumerate() {
            let lost = l.starts_with("lost ") && k > 0;
            let _ = write!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\" fill=\"{}\"{}>{}</text>",
                e.lx,
                top + 3.0 + (k + 1) as f64 * LINE - 3.0,
                if lost { "#d62728" } else { "#222" },
                if k == 0 { " font-weight=\"bold\"" } else { "" },
                esc(l)
            );
        }
        s.push_str("</g>\n");
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_is_the_longest_chain_from_a_source() {
        // 0 -> 1 -> 2, and 0 -> 2 directly: 2 sits after 1.
        assert_eq!(depths(3, &[(0, 1), (1, 2), (0, 2)]), [0, 1, 2]);
        assert_eq!(depths(2, &[]), [0, 0]);
    }

    /// A node that reads what it writes: one column, its loop inside the
    /// drawing, turning back into the box's bottom.
    #[test]
    fn a_hop_to_itself_is_a_loop() {
        let l =
            serde_json::to_value(pubsubperf_core::stats::LatencyRecorder::new().summary()).unwrap();
        let g: GraphRun = serde_json::from_value(serde_json::json!({
            "name": "self", "binding": "mock", "transport": "mock",
            "started": "2026-12-01T10:00:00Z", "duration_s": 0.05, "warmup_s": 0.01,
            "clock": "virtual", "nodes": [], "topics": [],
            "hops": [{"topic": "a", "from": "s", "to": "s", "sent": 5, "received": 5,
                "lost": 0, "late": 0, "too_late": 0, "latency_ns": l}],
            "paths": []
        }))
        .unwrap();
        let svg = render(&g, "t");
        assert_eq!(svg.matches("<g class=\"node\"").count(), 1, "{svg}");
        let width: f64 = {
            let w = &svg[svg.find("width=\"").unwrap() + 7..];
            w[..w.find('"').unwrap()].parse().unwrap()
        };
        let label = &svg[svg.find("class=\"hop-label\"").unwrap()..];
        let label = &label[label.find("<rect x=\"").unwrap() + 9..];
        let left: f64 = label[..label.find('"').unwrap()].parse().unwrap();
        assert!(left > MARGIN + MIN_BOX_W && left < width, "{svg}");
        let hop = &svg[svg.find("<g class=\"hop\">").unwrap()..];
        let d = &hop[hop.find(" d=\"M").unwrap()..];
        let d = &d[..d.find("\" fill").unwrap()];
        // Into the box's bottom: x at its middle, y at its bottom edge.
        let end: Vec<f64> = d
            .rsplit(' ')
            .next()
            .unwrap()
            .split(',')
            .map(|v| v.parse().unwrap())
            .collect();
        let node = &svg[svg.find("<g class=\"node\"").unwrap()..];
        let attr = |a: &str| -> f64 {
            let v = &node[node.find(&format!(" {a}=\"")).unwrap() + a.len() + 3..];
            v[..v.find('"').unwrap()].parse().unwrap()
        };
        let (bx, by, bw, bh) = (attr("x"), attr("y"), attr("width"), attr("height"));
        assert_eq!(end, [bx + bw / 2.0, by + bh], "{d}");
    }

    #[test]
    fn columns_follow_their_neighbours() {
        // Sources 0 and 1 feed 3 and 2 respectively: column 1 is ordered
        // as its writers are, so the arrows do not cross.
        let depth = [0, 0, 1, 1];
        let cols = columns(&depth, &[(0, 3), (1, 2)]);
        assert_eq!(cols, vec![vec![0, 1], vec![3, 2]]);
    }
}
