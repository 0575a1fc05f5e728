//! Curves along the axes a command or sweep lists (issue 47): latency
//! against the rate and the subscribers, drawn only where a curve has two
//! points.

mod common;

use common::{legend, plot};
use pubsubperf_report::html;

/// Runs that differ only in their rate or their subscribers are drawn as
/// curves along that axis (issue 47): latency p50 and p99 against the
/// offered rate (a `max` run at the rate its pings achieved) and against
/// subscribers; a single point draws no curve.
#[test]
fn latency_is_drawn_against_the_rate_and_the_subscribers() {
    let run = |rate: f64, subs: u64, base: u64| {
        let mut r = common::latency_run(
            "udp",
            64,
            &common::values(base, 200, base),
            "2026-11-21T10:00:00Z",
        );
        r.config["rate"] = rate.into();
        r.config["subscribers"] = subs.into();
        r.config["endpoint"]["subscribers"] = subs.into();
        r.pings = Some(pubsubperf_core::result::Pings {
            sent: 200,
            echoed: 200,
            ..Default::default()
        });
        r
    };
    let mut file = common::file(vec![
        run(10.0, 1, 30_000),
        run(1000.0, 1, 20_000),
        run(0.0, 1, 15_000),
        run(0.0, 2, 18_000),
        run(0.0, 4, 25_000),
    ]);
    file.runs.push({
        let mut r = run(0.0, 1, 40_000);
        r.size = 1024;
        r
    });
    let r = html::build(
        &[html::Source {
            name: "axes".into(),
            file,
        }],
        &html::Options {
            title: "axes".into(),
            generated_at: "2026-11-21T12:00:00Z".into(),
        },
    )
    .unwrap();
    let names: Vec<&str> = r.plots.iter().map(|(n, _)| n.as_str()).collect();
    assert!(names.contains(&"latency-vs-rate.svg"), "{names:?}");
    assert!(names.contains(&"latency-vs-subscribers.svg"), "{names:?}");
    assert!(!names.contains(&"latency-vs-publishers.svg"), "{names:?}");
    let rate = plot(&r, "latency-vs-rate.svg");
    // Three points on each of p50 and p99: 10/s, 1k/s and max (200 pings
    // in 2 s: 100/s achieved), one curve (1 KiB has one point only).
    assert_eq!(legend(rate), vec!["udp/udp 64", "p50", "p99"], "{rate}");
    assert!(rate.contains("rate 100: p50"), "{rate}");
    assert!(rate.contains("rate 1000: p99"), "{rate}");
    let subs = plot(&r, "latency-vs-subscribers.svg");
    assert!(subs.contains("subscribers 4: p50"), "{subs}");
    assert!(r.html.contains("One-way latency vs subscribers"));
}
