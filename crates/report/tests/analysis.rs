//! Integration tests of the analysis crate on deterministic results.

mod common;

use common::*;
use pubsubperf_core::result::ResultsFile;
use pubsubperf_report::compare::compare;
use pubsubperf_report::db::{Database, Filter, SaveMeta, to_results_file};
use pubsubperf_report::failif::Condition;
use pubsubperf_report::merge::{merge_files, merge_runs};
use pubsubperf_report::{html, text};

/// Through JSON and back, as files on disk would be.
fn round_trip(f: &ResultsFile) -> ResultsFile {
    serde_json::from_str(&serde_json::to_string(f).unwrap()).unwrap()
}

#[test]
fn merged_percentiles_equal_pooled_samples() {
    let parts: Vec<Vec<u64>> = (0..4)
        .map(|s| values(10_000 + s * 3_000, 20_000 + s * 1_000, s))
        .collect();
    let runs: Vec<_> = parts
        .iter()
        .map(|v| latency_run("udp", 64, v, "2026-11-21T10:00:00Z"))
        .collect();
    // Each run goes through JSON (histogram serialized), as stored results do.
    let files: Vec<ResultsFile> = runs
        .iter()
        .map(|r| round_trip(&file(vec![r.clone()])))
        .collect();
    let (merged, notes) = merge_files(&files).unwrap();
    assert!(notes.is_empty());
    assert_eq!(merged.runs.len(), 1);
    let pooled: Vec<u64> = parts.concat();
    let want = recorder(&pooled).summary();
    let got = merged.runs[0].latency_ns.clone().unwrap();
    assert_eq!(got, want, "merged summary differs from pooled recording");
    assert_eq!(got.count, pooled.len() as u64);
    // Exact order statistics agree within the histogram's resolution (0.1 %).
    let mut sorted = pooled.clone();
    sorted.sort_unstable();
    let exact_p99 = sorted[(sorted.len() as f64 * 0.99).ceil() as usize - 1];
    assert!((got.p99 as f64 - exact_p99 as f64).abs() / exact_p99 as f64 <= 0.001);
    assert_eq!(merged.runs[0].config["merged"]["runs"], 4);
    assert_eq!(merged.runs[0].intervals.len(), 8);
    assert_eq!(merged.runs[0].intervals[7].t_s, 8.0);
}

/// `--one-way` repetitions: each direction merged exactly; forward is the
/// merged headline only where every repetition's was, else round trip / 2
/// (kept in `one_way.round_trip_half` by the runs whose headline was
/// forward).
#[test]
fn merged_one_way_runs_keep_each_direction_and_an_honest_headline() {
    use pubsubperf_core::result::OneWay;
    let one_way = |fwd: &[u64], back: &[u64], half: &[u64], forward_headline: bool| {
        let mut r = latency_run(
            "udp",
            64,
            if forward_headline { fwd } else { half },
            "2026-11-21T10:00:00Z",
        );
        r.one_way = Some(OneWay {
            forward: recorder(fwd).summary(),
            back: recorder(back).summary(),
            clocks: "estimated".into(),
            offsets: Vec::new(),
            bound_ns: if forward_headline { 1_000 } else { 9_000 },
            below_zero: 1,
            headline: if forward_headline {
                "forward"
            } else {
                "round trip / 2"
            }
            .into(),
            round_trip_half: forward_headline.then(|| recorder(half).summary()),
        });
        r
    };
    let (f1, b1, h1) = (
        values(50_000, 60_000, 1),
        values(10_000, 12_000, 2),
        values(30_000, 36_000, 3),
    );
    let (f2, b2, h2) = (
        values(51_000, 61_000, 4),
        values(11_000, 13_000, 5),
        values(31_000, 37_000, 6),
    );
    let both_forward =
        merge_runs(&[&one_way(&f1, &b1, &h1, true), &one_way(&f2, &b2, &h2, true)]).unwrap();
    let o = both_forward.one_way.as_ref().unwrap();
    assert_eq!(o.headline, "forward");
    assert_eq!(
        o.forward,
        recorder(&[f1.clone(), f2.clone()].concat()).summary()
    );
    assert_eq!(
        o.back,
        recorder(&[b1.clone(), b2.clone()].concat()).summary()
    );
    assert_eq!(both_forward.latency_ns.as_ref(), Some(&o.forward));
    assert_eq!(
        o.round_trip_half,
        Some(recorder(&[h1.clone(), h2.clone()].concat()).summary())
    );
    assert_eq!((o.bound_ns, o.below_zero), (1_000, 2));
    let mixed = merge_runs(&[
        &one_way(&f1, &b1, &h1, true),
        &one_way(&f2, &b2, &h2, false),
    ])
    .unwrap();
    let o = mixed.one_way.as_ref().unwrap();
    assert_eq!(o.headline, "round trip / 2");
    assert_eq!(o.bound_ns, 9_000);
    assert!(o.round_trip_half.is_none());
    assert_eq!(
        mixed.latency_ns,
        Some(recorder(&[h1, h2].concat()).summary())
    );
}

#[test]
fn merged_throughput_sums_counters() {
    let a = throughput_run("udp", 1024, 1000, 900, "2026-11-21T10:00:00Z");
    let b = throughput_run("udp", 1024, 3000, 2970, "2026-11-21T10:01:00Z");
    let m = merge_runs(&[&a, &b]).unwrap();
    let t = m.throughput.unwrap();
    assert_eq!((t.sent, t.received, t.lost), (4000, 3870, 130));
    assert_eq!(t.bytes, 3870 * 1024);
    assert_eq!(m.duration_s, 4.0);
    assert!((t.samples_per_s - 3870.0 / 4.0).abs() < 1e-9);
    assert!((t.lost_percent - 130.0 * 100.0 / 4000.0).abs() < 1e-12);
    assert_eq!(m.resources.subscriber.voluntary_cs, 10_000);
}

#[test]
fn merging_different_cells_is_refused() {
    let a = latency_run("udp", 64, &values(1000, 10, 0), "");
    let b = latency_run("udp", 128, &values(1000, 10, 0), "");
    let e = merge_runs(&[&a, &b]).unwrap_err().to_string();
    assert!(e.starts_with("cannot merge:"), "{e}");
}

#[test]
fn database_round_trip_and_filters() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub").join("results.sqlite");
    let mut db = Database::open(&path).unwrap();
    let base = sample(1, 1.0, 1.0);
    let g1 = db
        .save(
            &base,
            &SaveMeta {
                group: Some("g-base".into()),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(g1, "g-base");
    let new = sample(1, 1.1, 0.9);
    db.save(
        &new,
        &SaveMeta {
            group: Some("g-new".into()),
            sweep: Some("nightly".into()),
            cell: Some("c".into()),
            repetition: 2,
            command: Some("pubsubperf sweep".into()),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(db.count().unwrap(), 20);
    let all = db.query(&Filter::default()).unwrap();
    assert_eq!(all.len(), 20);
    // Runs come back exactly as saved.
    let back = db
        .query(&Filter {
            group: Some("g-base".into()),
            ..Default::default()
        })
        .unwrap();
    let (f, notes) = to_results_file(&back, &[]).unwrap();
    assert!(notes.is_empty());
    assert_eq!(f.environment, base.environment);
    let mut want = base.runs.clone();
    let mut got = f.runs.clone();
    let k = |r: &pubsubperf_core::result::Run| (r.started_at.clone(), r.binding.clone(), r.size);
    want.sort_by_key(k);
    got.sort_by_key(k);
    assert_eq!(got, want);
    let q = |f: Filter| db.query(&f).unwrap().len();
    assert_eq!(
        q(Filter {
            binding: Some("udp".into()),
            ..Default::default()
        }),
        10
    );
    assert_eq!(
        q(Filter {
            test: Some("throughput".into()),
            ..Default::default()
        }),
        8
    );
    assert_eq!(
        q(Filter {
            size: Some(1024),
            ..Default::default()
        }),
        8
    );
    assert_eq!(
        q(Filter {
            sweep: Some("nightly".into()),
            ..Default::default()
        }),
        10
    );
    assert_eq!(
        q(Filter {
            since: Some("2026-11-21T11:00:00Z".into()),
            ..Default::default()
        }),
        8
    );
    assert_eq!(
        q(Filter {
            group: Some("g-n".into()),
            ..Default::default()
        }),
        10
    );
    let last3 = db
        .query(&Filter {
            limit: Some(3),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(last3.len(), 3);
    assert!(
        last3
            .windows(2)
            .all(|w| (w[0].time.as_str(), w[0].id) <= (w[1].time.as_str(), w[1].id))
    );
    let sw = db
        .query(&Filter {
            sweep: Some("nightly".into()),
            limit: Some(1),
            ..Default::default()
        })
        .unwrap();
    assert_eq!((sw[0].repetition, sw[0].cell.as_deref()), (2, Some("c")));
    // Reopening keeps everything.
    drop(db);
    assert_eq!(Database::open(&path).unwrap().count().unwrap(), 20);
}

#[test]
fn history_table_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let mut db = Database::open(&dir.path().join("r.sqlite")).unwrap();
    db.save(
        &sample(1, 1.0, 1.0),
        &SaveMeta {
            group: Some("g1".into()),
            ..Default::default()
        },
    )
    .unwrap();
    let runs = db
        .query(&Filter {
            binding: Some("tcp".into()),
            ..Default::default()
        })
        .unwrap();
    insta::assert_snapshot!("history", text::history(&runs));
}

#[test]
fn csv_export_snapshot() {
    let f = sample(1, 1.0, 1.0);
    insta::assert_snapshot!("export_csv", pubsubperf_report::csv::csv(&f.runs[..5]));
}

#[test]
fn compare_snapshot_with_repetitions_and_fail_if() {
    let base = round_trip(&sample(3, 1.0, 1.0));
    let mut new = round_trip(&sample(3, 1.2, 0.9));
    // NEW also ran on a newer kernel, longer, and lacks one cell.
    new.environment.kernel = "Linux 6.2.0-fixture".into();
    for r in &mut new.runs {
        r.config["duration_ns"] = serde_json::json!(2_000_000_000u64);
    }
    new.runs
        .retain(|r| !(r.binding == "tcp" && r.size == 16384));
    let conds: Vec<Condition> = [
        "p99>+10%",
        "samples_per_s<-5%",
        "lost_percent>50",
        "mean>1s",
    ]
    .iter()
    .map(|c| Condition::parse(c).unwrap())
    .collect();
    let c = compare("base.json", &base, "new.json", &new, &conds).unwrap();
    assert_eq!(c.cells.len(), 9);
    assert_eq!(c.only_base.len(), 1);
    assert!(c.violations.iter().any(|v| v.condition == "p99>+10%"));
    assert!(
        c.violations
            .iter()
            .any(|v| v.condition == "samples_per_s<-5%")
    );
    assert!(
        !c.violations
            .iter()
            .any(|v| v.condition == "lost_percent>50" || v.condition == "mean>1s")
    );
    insta::assert_snapshot!("compare", text::comparison(&c));
}

#[test]
fn compare_single_repetition_says_na() {
    let base = sample(1, 1.0, 1.0);
    let c = compare("a", &base, "b", &base, &[]).unwrap();
    let t = text::comparison(&c);
    assert!(t.contains("n/a"), "{t}");
    assert!(c.violations.is_empty());
    assert!(t.contains("+0.0%"));
}

#[test]
fn report_has_every_plot_with_points() {
    let f = sample(2, 1.0, 1.0);
    let r = html::build(
        &[html::Source {
            name: "fixture.json".into(),
            file: f,
        }],
        &html::Options {
            title: "Fixture report".into(),
            generated_at: "2026-11-21T12:00:00Z".into(),
        },
    )
    .unwrap();
    let names: Vec<&str> = r.plots.iter().map(|(n, _)| n.as_str()).collect();
    insta::assert_snapshot!("report_plots", names.join("\n"));
    for (name, svg) in &r.plots {
        assert!(
            svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""),
            "{name}"
        );
        assert!(svg.contains("class=\"pt\""), "{name} has no data points");
        assert!(
            r.html.contains(&svg[..200]),
            "{name} is not inline in the HTML"
        );
    }
    // Self-contained: no scripts, no external references.
    for bad in ["<script", "http://", "https://", "src="] {
        let n = r.html.matches(bad).count();
        let allowed = if bad == "http://" { r.plots.len() } else { 0 }; // the SVG namespace
        assert_eq!(n, allowed, "{bad}");
    }
    // Deterministic.
    let again = html::build(
        &[html::Source {
            name: "fixture.json".into(),
            file: sample(2, 1.0, 1.0),
        }],
        &html::Options {
            title: "Fixture report".into(),
            generated_at: "2026-11-21T12:00:00Z".into(),
        },
    )
    .unwrap();
    assert_eq!(again.html, r.html);
    insta::assert_snapshot!("latency_vs_size_svg", &r.plots[0].1);
}

/// Issue 47: the runs of one command that differ only in rate or
/// subscribers are different cells (merged, compared and plotted apart),
/// and `history` says which is which.
#[test]
fn runs_differing_only_in_rate_or_subscribers_stay_apart() {
    use pubsubperf_report::key::CellKey;
    let base = latency_run("udp", 64, &values(8_000, 1_000, 1), "2026-11-21T10:00:00Z");
    let runs: Vec<_> = [(100.0, 1), (0.0, 1), (0.0, 4)]
        .into_iter()
        .map(|(rate, subs)| {
            with_config(base.clone(), |c| {
                c["rate"] = serde_json::json!(rate);
                c["subscribers"] = serde_json::json!(subs);
                c["endpoint"]["subscribers"] = serde_json::json!(subs);
            })
        })
        .collect();
    let keys: std::collections::HashSet<CellKey> = runs.iter().map(CellKey::of).collect();
    assert_eq!(keys.len(), 3);
    let (merged, _) = merge_files(&[file(runs.clone())]).unwrap();
    assert_eq!(merged.runs.len(), 3, "merged apart");
    let dir = tempfile::tempdir().unwrap();
    let mut db = Database::open(&dir.path().join("r.sqlite")).unwrap();
    db.save(&file(runs), &SaveMeta::default()).unwrap();
    let h = text::history(&db.query(&Filter::default()).unwrap());
    let lines: Vec<&str> = h.lines().collect();
    assert!(
        lines[0].contains(" SIZE   RATE  SUBS  QOS "),
        "a column per axis that differs: {h}"
    );
    for (line, want) in
        lines[1..]
            .iter()
            .zip(["  100/s     1  ", "    max     1  ", "    max     4  "])
    {
        assert!(line.contains(want), "{want:?} in {line:?}:\n{h}");
    }
    // Runs that do not differ in them get no such columns.
    assert!(
        !text::history(
            &db.query(&Filter {
                limit: Some(1),
                ..Default::default()
            })
            .unwrap()
        )
        .contains("RATE")
    );
}
