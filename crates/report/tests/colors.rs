//! One color per binding: in every figure of a report a binding is drawn in
//! its own color, no two bindings share one, and a binding keeps its color
//! from one report to the next whatever else the report holds. Variants
//! of a binding are shades of its color.

mod common;

use common::{file, latency_run, throughput_run, values, with_config};
use pubsubperf_core::result::Run;
use pubsubperf_report::colors::{binding_color, shade};
use pubsubperf_report::html;
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};

/// Every binding the registry knows.
const ALL: &[&str] = &[
    "udp",
    "tcp",
    "uds",
    "shm",
    "intra",
    "mock",
    "cyclonedds",
    "fastdds",
    "iceoryx",
    "iceoryx2",
    "zenoh",
    "connext",
];

/// Latency at 64 B and 1 KiB and throughput at 1 KiB of each binding.
fn runs(bindings: &[&str]) -> Vec<Run> {
    let mut runs = Vec::new();
    for (bi, b) in bindings.iter().enumerate() {
        for (si, size) in [64usize, 1024].into_iter().enumerate() {
            let vals = values(5_000 + 700 * bi as u64, 1_000, si as u64);
            runs.push(latency_run(b, size, &vals, "2026-11-21T10:00:00Z"));
        }
        let sent = 100_000 + 10_000 * bi as u64;
        runs.push(throughput_run(b, 1024, sent, sent, "2026-11-21T10:01:00Z"));
    }
    runs
}

fn report(runs: Vec<Run>) -> html::Report {
    html::build(
        &[html::Source {
            name: "colors".into(),
            file: file(runs),
        }],
        &html::Options {
            title: "colors".into(),
            generated_at: "2026-11-21T12:00:00Z".into(),
        },
    )
    .unwrap()
}

/// The value of attribute `name` in the element text `el`.
fn attr<'a>(el: &'a str, name: &str) -> Option<&'a str> {
    let at = el.find(&format!(" {name}=\""))? + name.len() + 3;
    Some(&el[at..at + el[at..].find('"')?])
}

/// The colors each binding is drawn in, in one SVG: the stroke of its
/// lines, markers and legend keys, the fill of its bars.
fn colors(svg: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (at, _) in svg.match_indices(" data-binding=\"") {
        let start = svg[..at].rfind('<').unwrap();
        let el = &svg[start..start + svg[start..].find('>').unwrap()];
        let binding = attr(el, "data-binding").unwrap().to_string();
        let color = if el.starts_with("<rect") {
            attr(el, "fill")
        } else {
            attr(el, "stroke")
        };
        out.entry(binding)
            .or_default()
            .insert(color.expect("a color").to_string());
    }
    out
}

/// A figure of one series (its sizes are its lines), not of every binding.
fn per_series(name: &str) -> bool {
    name.starts_with("spectrum-") || name.starts_with("timeseries-")
}

#[test]
fn every_binding_has_one_color_in_every_figure_and_none_shares_it() {
    let r = report(runs(ALL));
    let mut owner: BTreeMap<String, String> = BTreeMap::new();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for (name, svg) in &r.plots {
        let by_binding = colors(svg);
        if !per_series(name) {
            assert_eq!(by_binding.len(), ALL.len(), "{name}: every binding");
        }
        for (b, cs) in &by_binding {
            seen.insert(b.clone());
            let base = binding_color(b);
            if per_series(name) {
                // Its lines (sizes) are the binding's color and shades of it.
                let family: Vec<String> = (0..cs.len()).map(|k| shade(base, k)).collect();
                assert!(cs.contains(base), "{name}: {b} {cs:?}");
                assert!(cs.iter().all(|c| family.contains(c)), "{name}: {b} {cs:?}");
            } else {
                assert_eq!(
                    cs.iter().collect::<Vec<_>>(),
                    [base],
                    "{name}: {b} in one color"
                );
            }
            for c in cs {
                let prev = owner.entry(c.clone()).or_insert_with(|| b.clone());
                assert_eq!(prev, b, "{name}: {c} is {prev}'s and {b}'s");
            }
        }
    }
    assert_eq!(seen.len(), ALL.len(), "{seen:?}");
    // The tables' swatches say the same.
    for b in ALL {
        let sw = format!(
            "<span class=\"sw\" style=\"background:{}\"></span>{b}</td>",
            binding_color(b)
        );
        assert!(r.html.contains(&sw), "{sw}");
    }
}

#[test]
fn a_binding_keeps_its_color_in_another_report() {
    let mut few = vec!["zenoh", "connext", "udp"];
    few.reverse();
    let a = report(runs(ALL));
    let b = report(runs(&few));
    let of =
        |r: &html::Report, b: &str| colors(common::plot(r, "throughput-samples.svg"))[b].clone();
    for name in few {
        assert_eq!(of(&a, name), of(&b, name), "{name}");
    }
}

#[test]
fn variants_of_a_binding_are_shades_of_its_color() {
    let mut runs = runs(&["zenoh", "udp"]);
    // zenoh over tcp as well.
    let tcp: Vec<Run> = runs
        .iter()
        .filter(|r| r.binding == "zenoh")
        .map(|r| {
            with_config(r.clone(), |c| {
                c["endpoint"]["transport"] = json!("tcp");
            })
        })
        .collect();
    runs.extend(tcp);
    let r = report(runs);
    let svg = common::plot(&r, "latency-vs-size.svg");
    let zenoh = &colors(svg)["zenoh"];
    let base = binding_color("zenoh");
    let want: BTreeSet<String> = [shade(base, 0), shade(base, 1)].into();
    assert_eq!(zenoh, &want, "{svg}");
    assert_eq!(
        colors(svg)["udp"],
        BTreeSet::from([binding_color("udp").to_string()])
    );
}
