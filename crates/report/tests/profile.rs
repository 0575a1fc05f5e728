//! A `--profile` run's part of the outputs: the printed table (snapshot),
//! the HTML report's section, and the database (stored whole, its method
//! in the `profile_method` column).

mod common;

use common::*;
use pubsubperf_core::result::Run;
use pubsubperf_report::db::{Database, Filter, SaveMeta, to_results_file};
use pubsubperf_report::{html, profile};
use serde_json::json;

/// A udp latency run of 64 B whose publisher was traced by perf and whose
/// subscriber had no tracer.
fn profiled_run() -> Run {
    let mut r = latency_run("udp", 64, &[20_000, 30_000], "2026-11-25T10:00:00Z");
    r.profile = Some(
        serde_json::from_value(json!({
            "publisher": {
                "method": "perf trace -s", "samples": 1000,
                "samples_are": "pings sent, warm-up included", "window_s": 1.25,
                "syscalls": [
                    {"name": "recvfrom", "calls": 1010, "errors": 10, "time_us": 50500.0},
                    {"name": "sendto", "calls": 1000, "errors": 0, "time_us": 14000.0},
                    {"name": "futex", "calls": 20, "errors": 2, "time_us": 400.0}
                ],
                "tracer_cost_ns": 22400.0, "voluntary_cs": 1005, "involuntary_cs": 12,
                "user_ms": 2.5, "system_ms": 30.0,
                "threads": [
                    {"name": "pubsubperf", "tid": 4100, "user_ms": 2.0, "system_ms": 28.0,
                     "voluntary_cs": 1000, "involuntary_cs": 10},
                    {"name": "recvUC", "tid": 4107, "user_ms": 0.5, "system_ms": 2.0,
                     "voluntary_cs": 5, "involuntary_cs": 2}
                ]
            },
            "subscribers": [{
                "method": "none", "note": "no tracer: perf not found in PATH; strace not found in PATH (install Debian linux-perf or strace)",
                "samples": 1000, "samples_are": "samples received, warm-up included",
                "window_s": 1.5, "syscalls": [], "voluntary_cs": 1001, "involuntary_cs": 3,
                "user_ms": 2.0, "system_ms": 25.0
            }],
            "unprofiled": {"p50_ns": 12_500}
        }))
        .expect("valid profile"),
    );
    r
}

#[test]
fn profile_table_snapshot() {
    insta::assert_snapshot!("profile_table", profile::text(&profiled_run()));
}

#[test]
fn a_run_without_profile_prints_nothing() {
    let r = latency_run("udp", 64, &[20_000, 30_000], "2026-11-25T10:00:00Z");
    assert_eq!(profile::text(&r), "");
}

#[test]
fn the_report_has_a_profile_section() {
    let page = html::build(
        &[html::Source {
            name: "p.json".into(),
            file: file(vec![profiled_run()]),
        }],
        &html::Options {
            title: "t".into(),
            generated_at: "2026-11-25T10:00:00Z".into(),
        },
    )
    .expect("report")
    .html;
    assert!(
        page.contains("<a href=\"#profile\">Profile</a>"),
        "no nav entry"
    );
    assert!(page.contains("<caption>udp latency, size 64: per sample each side handled</caption>"));
    assert!(
        page.contains("<tr><td>publisher</td><td>perf trace -s</td><td>1000</td><td>2.03</td>")
    );
    assert!(page.contains("<td>subscriber 0</td><td>none</td><td>1000</td><td>n/a</td>"));
    assert!(page.contains(
        "<tr><td>publisher</td><td>recvfrom</td><td>1.01</td><td>50.000</td><td>10</td></tr>"
    ));
    assert!(page.contains("<caption>udp latency, size 64: busiest threads, per sample</caption>"));
    assert!(page.contains(
        "<tr><td>publisher</td><td>recvUC</td><td>4107</td><td>0.500</td><td>2.000</td><td>0.01</td><td>0.00</td></tr>"
    ));
}

#[test]
fn the_database_keeps_the_profile_and_its_method() {
    let dir = tempfile::tempdir().unwrap();
    let mut db = Database::open(&dir.path().join("r.sqlite")).unwrap();
    let plain = latency_run("udp", 128, &[20_000, 30_000], "2026-11-25T10:01:00Z");
    db.save(
        &file(vec![profiled_run(), plain]),
        &SaveMeta {
            group: Some("g".into()),
            ..Default::default()
        },
    )
    .unwrap();
    let back = db.query(&Filter::default()).unwrap();
    let (f, _) = to_results_file(&back, &[]).unwrap();
    let p = f.runs.iter().find(|r| r.size == 64).unwrap();
    assert_eq!(p.profile, profiled_run().profile);
    assert!(
        f.runs
            .iter()
            .find(|r| r.size == 128)
            .unwrap()
            .profile
            .is_none()
    );
    drop(db);
    let c = rusqlite::Connection::open(dir.path().join("r.sqlite")).unwrap();
    let methods: Vec<(i64, Option<String>)> = c
        .prepare("SELECT size, profile_method FROM runs ORDER BY size")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(
        methods,
        [(64, Some("perf trace -s".to_string())), (128, None)]
    );
}
