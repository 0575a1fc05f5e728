//! The tables and lines a run prints under its progress: the banner, the
//! latency and throughput tables, the notes under them (conditions, loss,
//! foreign samples, deviations), a sweep's summary, an interval's line and
//! the bindings' table.

use crate::axes::{Axes, AxisColumns};
pub use crate::text::us;
use pubsubperf_core::binding::BindingInfo;
use pubsubperf_core::result::{Interval, Run, TestKind};
use pubsubperf_core::size::format_size;
use std::fmt::Write as _;

fn usf(ns: f64) -> String {
    format!("{:.3}", ns / 1000.0)
}

/// The width of a table's axis columns (`Rate`, `Subs`, `Pubs`).
const AXIS_WIDTH: usize = 7;

/// The rate, subscribers and publishers of a run other than the defaults,
/// after a comma (`, at 1k/s, 4 subscribers`), for the lines under a
/// table; empty for a run at the defaults.
pub fn point_note(r: &Run) -> String {
    match Axes::of(r).note() {
        n if n.is_empty() => n,
        n => format!(", {n}"),
    }
}

/// The header line printed before a test's table (of `runs`, the first
/// one's settings; the subscribers of each row where they differ).
pub fn run_banner(runs: &[&Run]) -> String {
    let Some(r) = runs.first() else {
        return String::new();
    };
    let subscribers = if AxisColumns::of(runs.iter().copied()).subscribers {
        "subscribers per row".to_string()
    } else {
        format!(
            "{} subscriber(s)",
            r.config["subscribers"].as_u64().unwrap_or(1)
        )
    };
    let c = &r.config;
    let ep = &c["endpoint"];
    let cpu = |k: &str| c[k].as_u64().map_or("any".to_string(), |v| v.to_string());
    format!(
        "{} over {} ({}), {}, {}, wait {}{}, cpu pub {} sub {}, {}{}{}",
        r.test,
        r.binding,
        r.transport,
        if r.reliable {
            "reliable"
        } else {
            "best effort"
        },
        if r.zero_copy {
            format!("zero copy, {}", r.data_type)
        } else {
            r.data_type.clone()
        },
        ep["wait"].as_str().unwrap_or("?"),
        // Said only when the middleware's thread runs the subscriber.
        match ep["receive"].as_str() {
            Some("listener") => ", receive listener",
            _ => "",
        },
        cpu("pub_cpu"),
        cpu("sub_cpu"),
        subscribers,
        match deviations(r) {
            d if d.is_empty() => String::new(),
            d => format!("; as run: {d}"),
        },
        load_note(c),
    )
}

/// The banner's load, when the run was under one (`--load`).
fn load_note(config: &serde_json::Value) -> String {
    let l = &config["load"];
    match (l["profile"].as_str(), l["cores"].as_str()) {
        (Some(p), Some(cores)) => {
            let cmd: Vec<&str> = l["command"]
                .as_array()
                .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
                .unwrap_or_default();
            format!("; under load: {p} on cores {cores} ({})", cmd.join(" "))
        }
        _ => String::new(),
    }
}

/// What the run set differently from its middleware's own defaults.
pub use crate::text::deviation_list;

/// [`deviation_list`], comma separated.
pub fn deviations(r: &Run) -> String {
    deviation_list(r).join(", ")
}

/// Perftest-style latency table: one row per size.
pub fn latency_table(runs: &[&Run]) -> String {
    let mut s = String::new();
    let method = runs
        .iter()
        .find_map(|r| r.latency_method.clone())
        .unwrap_or_else(|| "one-way = round trip / 2".into());
    let _ = writeln!(s, "One-way latency in µs ({method}):");
    // Runs that differ in rate, subscribers or publishers: a column each.
    let axes = AxisColumns::of(runs.iter().copied());
    let _ = writeln!(
        s,
        "{}{:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>7} {:>7}",
        axes.header_prefix(AXIS_WIDTH),
        "Length(B)",
        "Samples",
        "Ave",
        "Std",
        "Min",
        "Max",
        "50%",
        "90%",
        "99%",
        "99.9%",
        "99.99%",
        "99.9999%",
        "CPUpub",
        "CPUsub"
    );
    for r in runs {
        let Some(l) = &r.latency_ns else { continue };
        let _ = writeln!(
            s,
            "{}{:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>6.1}% {:>6.1}%{}",
            axes.row_prefix(r, AXIS_WIDTH),
            r.size,
            l.count,
            usf(l.mean),
            usf(l.std),
            us(l.min),
            us(l.max),
            us(l.p50),
            us(l.p90),
            us(l.p99),
            us(l.p99_9),
            us(l.p99_99),
            us(l.p99_9999),
            r.resources.publisher.cpu_percent,
            r.resources.subscriber.cpu_percent,
            row_mark(r)
        );
    }
    s.push_str(&condition_lines(runs));
    for r in runs {
        let Some(p) = &r.pings else { continue };
        foreign_line(&mut s, r);
        if p.lost > 0 {
            let _ = writeln!(
                s,
                "{:>10} B{}: {} of {} pings lost (no echo within --echo-timeout), not in the figures",
                r.size,
                point_note(r),
                p.lost,
                p.sent
            );
        }
        if p.rejected > 0 {
            let _ = writeln!(
                s,
                "{:>10} B{}: {} pings rejected (not sent, so in neither sent nor lost): {}",
                r.size,
                point_note(r),
                p.rejected,
                p.rejected_reason.as_deref().unwrap_or("refused")
            );
        }
    }
    s
}

/// Perftest-style throughput table: one row per size, with CPU and peak
/// RSS (MiB) of both sides.
pub fn throughput_table(runs: &[&Run]) -> String {
    let mut s = String::new();
    let axes = AxisColumns::of(runs.iter().copied());
    let _ = writeln!(
        s,
        "{}{:>10} {:>12} {:>12} {:>14} {:>12} {:>10} {:>10} {:>10} {:>6} {:>6} {:>7} {:>7} {:>9} {:>9}",
        axes.header_prefix(AXIS_WIDTH),
        "Length(B)",
        "Sent",
        "Received",
        "Avg Samples/s",
        "Avg Mbps",
        "Lost",
        "Lost(%)",
        "Rejected",
        "Dup",
        "OOO",
        "CPUpub",
        "CPUsub",
        "RSSpub",
        "RSSsub"
    );
    for r in runs {
        let Some(t) = &r.throughput else { continue };
        let _ = writeln!(
            s,
            "{}{:>10} {:>12} {:>12} {:>14.1} {:>12.3} {:>10} {:>10.4} {:>10} {:>6} {:>6} {:>6.1}% {:>6.1}% {:>5.1}MiB {:>5.1}MiB{}",
            axes.row_prefix(r, AXIS_WIDTH),
            r.size,
            t.sent,
            t.received,
            t.samples_per_s,
            t.mbps,
            t.lost,
            t.lost_percent,
            t.rejected,
            t.duplicates,
            t.out_of_order,
            r.resources.publisher.cpu_percent,
            r.resources.subscriber.cpu_percent,
            super::ramp::mib(r.resources.publisher.max_rss_kib),
            super::ramp::mib(r.resources.subscriber.max_rss_kib),
            row_mark(r)
        );
    }
    // Runs with latency under load say it under that table, below.
    let without_lat: Vec<&Run> = runs
        .iter()
        .filter(|r| r.latency_ns.as_ref().is_none_or(|l| l.count == 0))
        .copied()
        .collect();
    s.push_str(&condition_lines(&without_lat));
    s.push_str(&loss_lines(runs));
    let with_lat: Vec<&&Run> = runs
        .iter()
        .filter(|r| r.latency_ns.as_ref().is_some_and(|l| l.count > 0))
        .collect();
    if !with_lat.is_empty() {
        s.push_str("Latency under load (echoed samples):\n");
        let owned: Vec<&Run> = with_lat.into_iter().copied().collect();
        s.push_str(&latency_table(&owned));
    }
    s
}

/// The line of a run that received samples without its key.
fn foreign_line(s: &mut String, r: &Run) {
    if r.foreign_samples > 0 {
        let _ = writeln!(
            s,
            "{}, {} B{}: {} foreign samples (without this run's key: another sender on a data port), not in the figures",
            r.binding,
            r.size,
            point_note(r),
            r.foreign_samples
        );
    }
}

/// The mark a row carries when its run did not run as planned.
pub fn row_mark(r: &Run) -> &'static str {
    match (r.complete, r.conditions.is_empty()) {
        (true, true) => "",
        (false, true) => "  (partial)",
        (true, false) => "  (NOT AS PLANNED)",
        (false, false) => "  (partial, NOT AS PLANNED)",
    }
}

/// One line under a table for each run whose sides did not run where
/// they were planned (`conditions`), naming what the kernel reported.
pub fn condition_lines(runs: &[&Run]) -> String {
    let mut s = String::new();
    for r in runs.iter().filter(|r| !r.conditions.is_empty()) {
        let _ = writeln!(
            s,
            "NOT AS PLANNED: {} {}, {} B{}: {}; its figures were not measured as planned (placement in the results)",
            r.binding,
            r.test,
            r.size,
            point_note(r),
            // Read back from each side, a remote one's included.
            pubsubperf_core::escape::printable_all(&r.conditions.join("; "))
        );
    }
    s
}

/// One line under the throughput table for each best-effort run that was
/// sent unpaced and lost samples: the loss is the sender outrunning the
/// receiver, not the middleware dropping on the way, and says how to
/// measure without it. And one for each run with refused sends: how many,
/// and why the first was refused.
pub fn loss_lines(runs: &[&Run]) -> String {
    let mut s = String::new();
    for r in runs {
        let Some(t) = &r.throughput else { continue };
        foreign_line(&mut s, r);
        if t.rejected > 0 {
            let _ = writeln!(
                s,
                "{}, {} B{}: {} sends rejected (not sent, so in neither Sent nor Lost): {}",
                r.binding,
                r.size,
                point_note(r),
                t.rejected,
                t.rejected_reason.as_deref().unwrap_or("refused")
            );
        }
        let unpaced = r.config.get("rate").and_then(|v| v.as_f64()) == Some(0.0)
            && super::ramp::demand_of(r).is_none();
        if t.lost > 0 && !r.reliable && unpaced {
            let _ = writeln!(
                s,
                "{}, {} B{}: {:.1} % lost: the unpaced best-effort sender outran the receiver (its socket buffer or queue overflowed); use --rate N, --find-max or a larger --socket-buffer to measure without loss",
                r.binding,
                r.size,
                point_note(r),
                t.lost_percent
            );
        }
    }
    s
}

/// One row per run, any mix of bindings, tests and sizes (sweeps).
pub fn summary_table(runs: &[Run]) -> String {
    let mut s = String::new();
    // A fleet sweep's runs say where they ran (publisher -> subscribers).
    let fleet = runs.iter().any(|r| r.hosts.is_some());
    let axes = AxisColumns::of(runs);
    let _ = writeln!(
        s,
        "{:<11} {:<9} {:<11} {:>10} {}{:<9} {:>11} {:>11} {:>14} {:>11} {:>9} {:>9}{}",
        "BINDING",
        "TRANSPORT",
        "TEST",
        "SIZE",
        axes.header_prefix(AXIS_WIDTH).to_uppercase(),
        "QOS",
        "p50 µs",
        "p99 µs",
        "samples/s",
        "Mbps",
        "lost %",
        "rejected",
        if fleet { "  HOSTS (pub -> sub)" } else { "" }
    );
    for r in runs {
        let (p50, p99) = r
            .latency_ns
            .as_ref()
            .filter(|l| l.count > 0)
            .map_or(("-".to_string(), "-".to_string()), |l| {
                (us(l.p50), us(l.p99))
            });
        let t = r.throughput.as_ref();
        let _ = writeln!(
            s,
            "{:<11} {:<9} {:<11} {:>10} {}{:<9} {:>11} {:>11} {:>14} {:>11} {:>9} {:>9}{}{}",
            r.binding,
            r.transport,
            r.test.to_string(),
            r.size,
            axes.row_prefix(r, AXIS_WIDTH),
            format!(
                "{}{}",
                if r.reliable { "rel" } else { "be" },
                if r.zero_copy { ",zc" } else { "" }
            ),
            p50,
            p99,
            t.map_or("-".into(), |t| format!("{:.0}", t.samples_per_s)),
            t.map_or("-".into(), |t| format!("{:.2}", t.mbps)),
            t.map_or("-".into(), |t| format!("{:.3}", t.lost_percent)),
            r.rejected(),
            r.hosts.as_ref().map_or(String::new(), |h| format!(
                "  {} -> {}",
                h.publisher, h.subscriber
            )),
            row_mark(r)
        );
    }
    s.push_str(&condition_lines(&runs.iter().collect::<Vec<_>>()));
    s
}

/// One live line per interval (stderr): the publisher's latency (a
/// latency test's, or a throughput test's echoes), or a subscriber's
/// throughput.
/// `point` follows the size (`, rate 1k/s`: what sets the run apart from
/// the others of its command, if anything).
pub fn interval_line(test: TestKind, size: usize, point: &str, i: &Interval) -> String {
    if test == TestKind::Latency || i.latency_mean_ns.is_some() {
        format!(
            "  [{:>6.1}s] size {}{point}: {} pings, p50 {} µs, p99 {} µs, mean {} µs, max {} µs",
            i.t_s,
            format_size(size),
            i.received,
            i.latency_p50_ns.map_or("-".into(), us),
            i.latency_p99_ns.map_or("-".into(), us),
            i.latency_mean_ns.map_or("-".into(), usf),
            i.latency_max_ns.map_or("-".into(), us)
        )
    } else {
        format!(
            "  [{:>6.1}s] size {}{point} sub {}: {:.0} samples/s, {:.3} Mbps, lost {}, CPU {:.1}%",
            i.t_s,
            format_size(size),
            i.subscriber,
            i.samples_per_s,
            i.mbps,
            i.lost,
            i.cpu_percent
        )
    }
}

/// `pubsubperf bindings` as a table.
pub fn bindings_table(infos: &[BindingInfo]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<12} {:<9} {:<11} {:<9} {:<9} {:<9} {:<6} {:<9} {:<16} {:<16} AVAILABLE",
        "BINDING",
        "RELIABLE",
        "BEST-EFFORT",
        "MULTICAST",
        "MAX SIZE",
        "ZERO-COPY",
        "SUBS",
        "REMOTE",
        "TRANSPORTS",
        "RECEIVE"
    );
    let yn = |b: bool| if b { "yes" } else { "no" };
    for i in infos {
        let c = &i.capabilities;
        let _ = writeln!(
            s,
            "{:<12} {:<9} {:<11} {:<9} {:<9} {:<9} {:<6} {:<9} {:<16} {:<16} {}",
            i.name,
            yn(c.reliable),
            yn(c.best_effort),
            yn(c.multicast),
            format_size(c.max_sample_size),
            yn(c.zero_copy),
            if c.multiple_subscribers {
                "many"
            } else {
                "one"
            },
            yn(c.remote),
            c.transports.join(","),
            c.receive
                .iter()
                .map(|r| r.name())
                .collect::<Vec<_>>()
                .join(","),
            match &i.available {
                Ok(()) => format!("yes ({})", i.version),
                Err(e) => format!("no: {e}"),
            }
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn microseconds_keep_nanoseconds() {
        assert_eq!(us(0), "0.000");
        assert_eq!(us(1), "0.001");
        assert_eq!(us(12_345), "12.345");
        assert_eq!(us(1_000_000), "1000.000");
    }

    /// Conditions read back from a remote side are printed escaped: no
    /// escape sequence or forged line reaches the terminal.
    #[test]
    fn condition_lines_escape_control_characters() {
        let mut r = crate::fixture::run(TestKind::Latency, "udp", 64, serde_json::json!({}));
        r.conditions = vec!["kernel \u{1b}[2J\nNOT AS PLANNED: forged".into()];
        let s = condition_lines(&[&r]);
        assert_eq!(s.lines().count(), 1, "{s}");
        assert!(
            s.contains("kernel \\u{1b}[2J\\nNOT AS PLANNED: forged"),
            "{s}"
        );
    }
}
