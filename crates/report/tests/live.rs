//! What a run prints under its progress, as snapshots: the banner, the
//! latency and throughput tables and the lines under them, a sweep's
//! summary and an interval's line, for deterministic runs. A change of a
//! column or a line shows here as a diff to review (`cargo insta review`).

mod common;

use common::*;
use pubsubperf_report::live;

fn runs() -> (
    Vec<pubsubperf_core::result::Run>,
    Vec<pubsubperf_core::result::Run>,
) {
    let lat: Vec<_> = [64, 1024]
        .iter()
        .enumerate()
        .map(|(i, &size)| {
            latency_run(
                "udp",
                size,
                &values(20_000 + i as u64 * 5_000, 2_000, i as u64),
                "2026-11-21T10:00:00Z",
            )
        })
        .collect();
    let tp: Vec<_> = [64, 1024]
        .iter()
        .map(|&size| throughput_run("udp", size, 1_000_000, 999_000, "2026-11-21T10:00:00Z"))
        .collect();
    (lat, tp)
}

#[test]
fn a_latency_runs_banner_table_and_lines() {
    let (lat, _) = runs();
    let refs: Vec<_> = lat.iter().collect();
    let mut out = live::run_banner(&refs);
    out.push('\n');
    out.push_str(&live::latency_table(&refs));
    out.push_str(&live::condition_lines(&refs));
    insta::assert_snapshot!("latency_table", out);
}

#[test]
fn a_throughput_runs_table_and_the_loss_under_it() {
    let (_, tp) = runs();
    let refs: Vec<_> = tp.iter().collect();
    insta::assert_snapshot!("throughput_table", live::throughput_table(&refs));
}

#[test]
fn a_sweeps_summary_and_an_intervals_line() {
    let (lat, tp) = runs();
    let all: Vec<_> = lat.into_iter().chain(tp).collect();
    let mut out = live::summary_table(&all);
    if let Some(i) = all[0].intervals.first() {
        out.push_str(&live::interval_line(all[0].test, all[0].size, "", i));
    }
    insta::assert_snapshot!("summary_table", out);
}
