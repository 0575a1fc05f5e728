//! Time series: a line needs two intervals. A run of one interval (the
//! quick comparison's) draws no time series of one point; the report says
//! in one line which were left out and why.

mod common;

use common::{file, latency_run, throughput_run, values};
use pubsubperf_core::result::Run;
use pubsubperf_report::html;

fn one_interval(mut r: Run) -> Run {
    r.intervals.truncate(1);
    r
}

fn report(runs: Vec<Run>) -> html::Report {
    html::build(
        &[html::Source {
            name: "intervals".into(),
            file: file(runs),
        }],
        &html::Options {
            title: "intervals".into(),
            generated_at: "2026-11-21T12:00:00Z".into(),
        },
    )
    .unwrap()
}

fn names(r: &html::Report) -> Vec<&str> {
    r.plots
        .iter()
        .map(|(n, _)| n.as_str())
        .filter(|n| n.starts_with("timeseries-"))
        .collect()
}

#[test]
fn a_time_series_of_one_point_is_not_drawn_and_said_so() {
    let vals = values(8_000, 1_000, 0);
    let at = "2026-11-21T10:00:00Z";
    let r = report(vec![
        // udp: one interval each (latency and throughput).
        one_interval(latency_run("udp", 64, &vals, at)),
        one_interval(throughput_run("udp", 1024, 1000, 1000, at)),
        // tcp: two intervals at 64 B, one at 1 KiB.
        latency_run("tcp", 64, &vals, at),
        one_interval(latency_run("tcp", 1024, &vals, at)),
    ]);
    assert_eq!(names(&r), ["timeseries-latency-tcp.svg"]);
    for (name, svg) in r.plots.iter().filter(|(n, _)| n.starts_with("timeseries-")) {
        assert!(!svg.contains("data-n=\"1\""), "{name}: a line of one point");
    }
    let tcp = common::plot(&r, "timeseries-latency-tcp.svg");
    assert_eq!(tcp.matches("class=\"series\"").count(), 1, "{tcp}");
    assert!(
        r.html
            .contains("Not drawn, one interval each: 1KiB.</figcaption>"),
        "the caption says which line was left out"
    );
    let said = "<p class=\"left-out\">No time series of udp (latency), udp (throughput): each of their runs measured one interval, and a time series needs two";
    assert!(r.html.contains(said), "{}", r.html);
    assert_eq!(r.html.matches("class=\"left-out\"").count(), 1);
}

#[test]
fn two_intervals_draw_a_line_and_say_nothing() {
    let vals = values(8_000, 1_000, 0);
    let r = report(vec![latency_run("udp", 64, &vals, "2026-11-21T10:00:00Z")]);
    assert_eq!(names(&r), ["timeseries-latency-udp.svg"]);
    assert!(!r.html.contains("class=\"left-out\""));
}
