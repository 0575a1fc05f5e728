//! Topology runs in the analysis crate: stored in and read back from the
//! database, listed by `history`, drawn in the report, matched by
//! `compare` with `--fail-if` on paths and topics. Every graph is built
//! here from fixed values, never measured.

mod common;

use common::*;
use pubsubperf_core::graph_result::GraphRun;
use pubsubperf_core::result::ResultsFile;
use pubsubperf_report::compare::compare;
use pubsubperf_report::db::{Database, Filter, SaveMeta, to_results_file};
use pubsubperf_report::failif::Condition;
use pubsubperf_report::{graph_svg, graph_text, html, text};
use serde_json::json;

/// A summary of the values, as JSON.
fn lat(vals: &[u64]) -> serde_json::Value {
    serde_json::to_value(recorder(vals).summary()).unwrap()
}

/// A source, a relay and two sinks: `src -a-> mid -b-> sink1`, `... ->
/// sink2`; hop latencies from `values(base, 200, seed)` scaled by `scale`;
/// the hop to sink2 lost `lost` of its 200 samples; topic `a` had `late`
/// late and `too_late` too-late samples.
fn chain(name: &str, binding: &str, scale: u64, lost: u64, late: u64, too_late: u64) -> GraphRun {
    let hop = |seed| values(1_000 * scale, 200, seed);
    let (a, b1, b2) = (hop(1), hop(2), hop(3));
    let b2: Vec<u64> = b2[..(200 - lost) as usize].to_vec();
    let stay: Vec<u64> = values(200, 200, 4);
    let path = |b: &[u64]| -> Vec<u64> {
        b.iter()
            .zip(&a)
            .zip(&stay)
            .map(|((x, y), z)| x + y + z)
            .collect()
    };
    let resources = json!({"cpu_percent": 1.5, "max_rss_kib": 20480, "voluntary_cs": 10,
        "involuntary_cs": 1});
    serde_json::from_value(json!({
        "name": name, "binding": binding, "transport": binding,
        "started": format!("2026-12-0{}T10:00:00Z", scale), "duration_s": 0.2, "warmup_s": 0.01,
        "clock": "clock_monotonic",
        "nodes": [
            {"name": "src", "place": "process", "resources": resources},
            {"name": "mid", "place": "process", "resources": resources},
            {"name": "sink1", "place": "process", "resources": resources},
            {"name": "sink2", "place": "process", "resources": resources}
        ],
        "topics": [
            {"name": "a", "size": 64, "rate": 1000.0, "reliability": "best-effort", "sent": 200,
             "received": 200, "lost": 0, "lost_percent": 0.0, "deadline_ns": 1_200,
             "too_late_ns": 1_400, "late": late, "too_late": too_late},
            {"name": "b", "size": 128, "reliability": "best-effort", "sent": 200,
             "received": 400 - lost, "lost": lost, "lost_percent": lost as f64 * 100.0 / 400.0,
             "late": 0, "too_late": 0}
        ],
        "hops": [
            {"topic": "a", "from": "src", "to": "mid", "sent": 200, "received": 200, "lost": 0,
             "late": late, "too_late": too_late, "latency_ns": lat(&a)},
            {"topic": "b", "from": "mid", "to": "sink1", "relays": "a", "sent": 200,
             "received": 200, "lost": 0, "late": 0, "too_late": 0, "latency_ns": lat(&b1)},
            {"topic": "b", "from": "mid", "to": "sink2", "relays": "a", "sent": 200,
             "received": 200 - lost, "lost": lost, "late": 0, "too_late": 0,
             "latency_ns": lat(&b2)}
        ],
        "paths": [
            {"name": "src -a-> mid -b-> sink1", "nodes": ["src", "mid", "sink1"],
             "topics": ["a", "b"], "latency_ns": lat(&path(&b1))},
            {"name": "src -a-> mid -b-> sink2", "nodes": ["src", "mid", "sink2"],
             "topics": ["a", "b"], "latency_ns": lat(&path(&b2))}
        ],
        "relays": [
            {"node": "mid", "from": "a", "to": "b", "residence_ns": lat(&stay)}
        ]
    }))
    .expect("a graph")
}

fn with_graphs(mut f: ResultsFile, graphs: Vec<GraphRun>) -> ResultsFile {
    f.graphs = graphs;
    f
}

#[test]
fn graph_svg_snapshot() {
    let g = chain("chain", "udp", 1, 3, 7, 2);
    let svg = graph_svg::render(&g, "topology-1-chain");
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"topology\""));
    assert_eq!(svg.matches("<g class=\"node\"").count(), 4, "{svg}");
    assert_eq!(svg.matches("<g class=\"hop\"").count(), 3, "{svg}");
    // Each hop's label holds its p50 and p99 as stored; the lossy hop its loss.
    for h in &g.hops {
        let p50 = format!("p50 {} µs", text::us(h.latency_ns.p50));
        assert!(svg.contains(&p50), "{p50}");
    }
    assert!(svg.contains(">lost 3 (1.50 %)</text>"), "{svg}");
    assert_eq!(
        svg.matches("stroke=\"#d62728\"").count(),
        1,
        "one red arrow"
    );
    // The relay's box says its residence p50.
    let stay = format!("p50 {} µs", text::us(g.relays[0].residence_ns.p50));
    let mid = &svg[svg.find("data-name=\"mid\"").unwrap()..];
    assert!(mid[..mid.find("</g>").unwrap()].contains(&stay), "{mid}");
    // Columns by depth: src, then mid, then both sinks, left to right.
    let x = |name: &str| -> f64 {
        let g = &svg[svg.find(&format!("data-name=\"{name}\"")).unwrap()..];
        let r = &g[g.find("<rect x=\"").unwrap() + 9..];
        r[..r.find('"').unwrap()].parse().unwrap()
    };
    assert!(x("src") < x("mid") && x("mid") < x("sink1"));
    assert_eq!(x("sink1"), x("sink2"));
    insta::assert_snapshot!("graph_svg", svg);
}

#[test]
fn report_has_a_topologies_section() {
    let opts = html::Options {
        title: "Topologies".into(),
        generated_at: "2026-12-01T12:00:00Z".into(),
    };
    let g = chain("chain", "udp", 1, 3, 7, 2);
    let only = html::build(
        &[html::Source {
            name: "g.json".into(),
            file: with_graphs(file(Vec::new()), vec![g.clone()]),
        }],
        &opts,
    )
    .unwrap();
    let h = &only.html;
    assert!(h.contains("<section id=\"topologies\">"), "{h}");
    assert!(h.contains("0 run(s) in 0 cell(s) and 1 topology run(s)"));
    assert!(!h.contains("id=\"configuration\""), "no runs, no settings");
    assert_eq!(only.plots.len(), 1);
    assert_eq!(only.plots[0].0, "topology-1-chain.svg");
    assert!(h.contains(&only.plots[0].1), "the drawing is inline");
    // The paths table: every path with its count and percentiles; the
    // topics table with the counts.
    for p in &g.paths {
        let l = &p.latency_ns;
        let row = format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            p.name.replace('>', "&gt;"),
            l.count,
            text::us(l.p50),
            text::us(l.p90),
            text::us(l.p99),
            text::us(l.max)
        );
        assert!(h.contains(&row), "{row}");
    }
    assert!(
        h.contains("<tr><td>b</td><td>128</td><td>200</td><td>397</td><td>0.750</td><td>-</td><td>-</td></tr>"),
        "{h}"
    );
    assert!(h.contains(
        "<tr><td>a</td><td>64</td><td>200</td><td>200</td><td>0.000</td><td>7</td><td>2</td></tr>"
    ));
    assert!(!h.contains("clocks ±"), "one host: no bound");
    // Across hosts each path says how far its latencies can be off.
    let mut far = g.clone();
    far.paths[1].clock_bound_ns = 12_345;
    far.paths[1].below_zero = 2;
    let r = html::build(
        &[html::Source {
            name: "far.json".into(),
            file: with_graphs(file(Vec::new()), vec![far]),
        }],
        &opts,
    )
    .unwrap();
    assert!(r.html.contains("<th>clocks ±</th><th>below zero</th>"));
    assert!(
        r.html.contains("<td>12.345</td><td>2</td></tr>"),
        "{}",
        r.html
    );
    assert!(r.html.contains("<td>0.000</td><td>0</td></tr>"));
    // Beside runs, the runs' plots stay and the section is added.
    let mixed = html::build(
        &[html::Source {
            name: "both.json".into(),
            file: with_graphs(sample(1, 1.0, 1.0), vec![g]),
        }],
        &opts,
    )
    .unwrap();
    assert!(mixed.html.contains("<section id=\"topologies\">"));
    assert!(mixed.html.contains("<section id=\"latency\">"));
    assert!(mixed.plots.iter().any(|(n, _)| n == "latency-vs-size.svg"));
    assert!(mixed.plots.iter().any(|(n, _)| n == "topology-1-chain.svg"));
}

#[test]
fn database_stores_filters_and_lists_graphs() {
    let dir = tempfile::tempdir().unwrap();
    let mut db = Database::open(&dir.path().join("r.sqlite")).unwrap();
    let one = with_graphs(sample(1, 1.0, 1.0), vec![chain("chain", "udp", 1, 3, 7, 2)]);
    db.save(
        &one,
        &SaveMeta {
            group: Some("g1".into()),
            ..Default::default()
        },
    )
    .unwrap();
    let two = with_graphs(
        file(Vec::new()),
        vec![
            chain("chain", "tcp", 2, 0, 0, 0),
            chain("fan", "udp", 3, 0, 1, 0),
        ],
    );
    db.save(
        &two,
        &SaveMeta {
            group: Some("g2".into()),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!((db.count().unwrap(), db.count_graphs().unwrap()), (10, 3));
    let all = db.query_graphs(&Filter::default()).unwrap();
    assert_eq!(all.len(), 3);
    assert_eq!(all[0].graph, one.graphs[0], "read back as saved");
    let n = |f: Filter| db.query_graphs(&f).unwrap().len();
    let f = Filter::default;
    assert_eq!(
        n(Filter {
            name: Some("chain".into()),
            ..f()
        }),
        2
    );
    assert_eq!(
        n(Filter {
            binding: Some("udp".into()),
            ..f()
        }),
        2
    );
    assert_eq!(
        n(Filter {
            since: Some("2026-12-02T00:00:00Z".into()),
            ..f()
        }),
        2
    );
    assert_eq!(
        n(Filter {
            group: Some("g2".into()),
            ..f()
        }),
        2
    );
    assert_eq!(
        n(Filter {
            test: Some("topology".into()),
            ..f()
        }),
        3
    );
    for none in [
        Filter {
            test: Some("latency".into()),
            ..f()
        },
        Filter {
            size: Some(64),
            ..f()
        },
        Filter {
            sweep: Some("s".into()),
            ..f()
        },
    ] {
        assert_eq!(n(none), 0);
    }
    let last = db
        .query_graphs(&Filter {
            limit: Some(1),
            ..f()
        })
        .unwrap();
    assert_eq!(last[0].graph.name, "fan");
    // A topology's name selects no plain run; `topology` no plain run either.
    let runs = |f: Filter| db.query(&f).unwrap().len();
    assert_eq!(
        runs(Filter {
            name: Some("chain".into()),
            ..f()
        }),
        0
    );
    assert_eq!(
        runs(Filter {
            test: Some("topology".into()),
            ..f()
        }),
        0
    );
    // A results file of the selection carries both.
    let g1 = Filter {
        group: Some("g1".into()),
        ..f()
    };
    let (file, _) =
        to_results_file(&db.query(&g1).unwrap(), &db.query_graphs(&g1).unwrap()).unwrap();
    assert_eq!((file.runs.len(), file.graphs.len()), (10, 1));
    let g2 = Filter {
        group: Some("g2".into()),
        ..f()
    };
    let (file, _) = to_results_file(&[], &db.query_graphs(&g2).unwrap()).unwrap();
    assert_eq!(file.graphs, two.graphs);
    assert_eq!(file.environment, two.environment);
    insta::assert_snapshot!(
        "graph_history",
        graph_text::history(
            &db.query(&Filter {
                binding: Some("udp".into()),
                limit: Some(2),
                ..f()
            })
            .unwrap(),
            &all
        )
    );
}

#[test]
fn compare_matches_topologies_paths_and_topics() {
    // BASE: two repetitions of chain over udp, and a topology NEW lacks.
    let base = with_graphs(
        file(Vec::new()),
        vec![
            chain("chain", "udp", 1, 0, 2, 0),
            chain("chain", "udp", 1, 4, 3, 1),
            chain("gone", "udp", 1, 0, 0, 0),
        ],
    );
    // NEW: chain twice as slow with more late samples, one path fewer; a
    // topology BASE lacks; chain over tcp only here.
    let mut slow = chain("chain", "udp", 2, 8, 9, 4);
    slow.paths.retain(|p| p.name.ends_with("sink1"));
    let new = with_graphs(
        file(Vec::new()),
        vec![
            slow,
            chain("chain", "tcp", 1, 0, 0, 0),
            chain("fresh", "udp", 1, 0, 0, 0),
        ],
    );
    let conds: Vec<Condition> = [
        "path_p99>+50%",
        "late>+5",
        "too_late>0",
        "topic_lost_percent>1",
        "p99>1ms",
    ]
    .iter()
    .map(|c| Condition::parse(c).unwrap())
    .collect();
    let c = compare("base.json", &base, "new.json", &new, &conds).unwrap();
    let gc = &c.graphs;
    assert_eq!(gc.graphs.len(), 1);
    let m = &gc.graphs[0];
    assert_eq!(m.key.label(), "chain udp");
    assert_eq!(m.reps, (2, 1));
    assert_eq!(m.paths.len(), 1);
    assert_eq!(m.only_base_paths, ["src -a-> mid -b-> sink2"]);
    assert_eq!(
        gc.only_base.iter().map(|k| k.label()).collect::<Vec<_>>(),
        ["gone udp"]
    );
    assert_eq!(
        gc.only_new.iter().map(|k| k.label()).collect::<Vec<_>>(),
        ["chain tcp", "fresh udp"]
    );
    // BASE's repetitions: the path's histograms merged exactly, the
    // topics' counts summed and lost % over what the hops' writers sent.
    let reps: Vec<_> = base.graphs[..2]
        .iter()
        .map(|g| g.paths[0].latency_ns.clone())
        .collect();
    let mut pooled = pubsubperf_core::stats::LatencyRecorder::from_summary(&reps[0]).unwrap();
    pooled.merge(&pubsubperf_core::stats::LatencyRecorder::from_summary(&reps[1]).unwrap());
    assert_eq!(m.paths[0].base, pooled.summary());
    let b = &m.topics.iter().find(|t| t.name == "b").unwrap().base;
    assert_eq!((b.lost, b.received), (4, 796));
    assert_eq!(b.lost_percent, 4.0 * 100.0 / 800.0);
    let a = &m.topics.iter().find(|t| t.name == "a").unwrap();
    assert_eq!((a.base.late, a.new.late), (5, 9));
    assert_eq!((a.base.too_late, a.new.too_late), (1, 4));
    // Conditions: every matched path and topic; none on runs (there are
    // none), so `p99>1ms` is not checked.
    let v: Vec<(&str, &str)> = c
        .violations
        .iter()
        .map(|v| (v.condition.as_str(), v.cell.as_str()))
        .collect();
    assert_eq!(
        v,
        [
            ("path_p99>+50%", "chain udp path src -a-> mid -b-> sink1"),
            ("too_late>0", "chain udp topic a"),
            ("topic_lost_percent>1", "chain udp topic b"),
        ]
    );
    assert_eq!(c.unchecked, ["p99>1ms"]);
    insta::assert_snapshot!("graph_compare", text::comparison(&c));
    // Alike on both sides: nothing violated.
    let same = compare("a", &base, "b", &base, &conds[..2]).unwrap();
    assert!(same.violations.is_empty(), "{:?}", same.violations);
    assert!(same.unchecked.is_empty());
}
