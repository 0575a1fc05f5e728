//! The report of the quick comparison (the first one a newcomer opens):
//! series named by binding, transport, mode and batching, never by a
//! search's outputs or raw JSON; one sample size drawn as bars; the
//! search's trials in a table of their own.

mod common;

use common::{legend, plot, quick};
use pubsubperf_report::html;

fn report() -> html::Report {
    html::build(
        &[html::Source {
            name: "quick comparison".into(),
            file: quick(),
        }],
        &html::Options {
            title: "pubsubperf quick comparison".into(),
            generated_at: "2026-11-21T12:00:00Z".into(),
        },
    )
    .unwrap()
}

#[test]
fn series_are_named_by_binding_transport_mode_and_batching() {
    let r = report();
    assert_eq!(
        legend(plot(&r, "latency-vs-size.svg")),
        ["cyclonedds/udp listener", "tcp", "udp", "p50", "p99", "max"]
    );
    assert_eq!(
        legend(plot(&r, "throughput-samples.svg")),
        ["cyclonedds/udp listener batched 14720 B", "tcp", "udp"]
    );
    // The latency table names udp as the plot does.
    assert!(r.html.contains("</span>udp</td><td>64</td>"), "{}", r.html);
    for bad in ["found=", "max_trials=", "rate=", "lost_percent", "=-"] {
        assert!(!r.html.contains(bad), "{bad} in the report");
    }
}

#[test]
fn one_size_is_a_bar_chart_and_two_are_lines() {
    let r = report();
    let tp = plot(&r, "throughput-samples.svg");
    assert_eq!(tp.matches("class=\"bar\"").count(), 3, "{tp}");
    assert!(!tp.contains("class=\"series\""), "{tp}");
    assert!(
        tp.contains("<title>Throughput at 1KiB: samples/s</title>"),
        "{tp}"
    );
    let cpu = plot(&r, "cpu-throughput.svg");
    assert!(legend(cpu).contains(&"udp subscriber".to_string()), "{cpu}");
    let lat = plot(&r, "latency-vs-size.svg");
    assert!(lat.contains("class=\"series\"") && !lat.contains("class=\"bar\""));
    assert!(lat.contains("<title>One-way latency vs sample size</title>"));
    insta::assert_snapshot!("quick_throughput_bars_svg", tp);
}

#[test]
fn the_search_has_a_table_of_its_trials() {
    let r = report();
    let h = &r.html;
    let at = h
        .find("Throughput search: udp (the highest rate with loss ≤ 0.1 %, at most 6 trials)")
        .expect("the search's table");
    let table = &h[at..at + h[at..].find("</table>").unwrap()];
    assert_eq!(
        table.matches("<tr><td>1KiB</td><td>1</td>").count(),
        3,
        "{table}"
    );
    assert!(
        table.contains(
            "<td>as fast as accepted</td><td>200000</td><td>110000</td><td>45.0800</td><td>no</td>"
        ),
        "{table}"
    );
    assert!(
        table.contains("<td>100000</td><td>100000</td><td>100000</td><td>0.0000</td><td>yes</td>"),
        "{table}"
    );
    // Only the search has one; its raw record is not in the settings.
    assert_eq!(h.matches("Throughput search: ").count(), 1);
    assert!(!h.contains("find_max.trials"));
}
