//! The Throughput example's two tables, from a ramp's runs: the
//! publisher's (`bytes samples Mbit/sec duration demand CPU % memory`) and
//! one per subscriber (`bytes demand samples lost(A) Nreject lost(N) Mbit/s
//! duration CPU % memory`), comma- and tab-separated as the example prints
//! them. The publisher prints both: a subscriber process here serves the
//! session and reports its counts to the publisher.

use crate::ramp::{demand_of, mib, pub_mbps};
use pubsubperf_core::result::{Run, Throughput};
use std::fmt::Write as _;

/// The publisher's table: one row per demand.
pub fn publisher_table(runs: &[&Run]) -> String {
    let mut s =
        String::from("\nPublisher:\nbytes\tsamples\tMbit/sec\tduration\tdemand\tCPU %\tmemory\n");
    for r in runs {
        let (Some(d), Some(t)) = (demand_of(r), &r.throughput) else {
            continue;
        };
        let _ = writeln!(
            s,
            "{},\t{},\t{:.3},\t{:.2},\t{},\t{:.2},\t{:.1}{}",
            r.size,
            t.sent,
            pub_mbps(t.sent_per_s, r.size),
            r.duration_s,
            d,
            r.resources.publisher.cpu_percent,
            mib(r.resources.publisher.max_rss_kib),
            partial(r)
        );
    }
    s
}

/// One table per subscriber: one row per demand.
pub fn subscriber_tables(runs: &[&Run]) -> String {
    let subs = runs
        .iter()
        .map(|r| r.subscribers.len().max(1))
        .max()
        .unwrap_or(0);
    let mut s = String::new();
    for k in 0..subs {
        let _ = write!(
            s,
            "\nSubscriber {} (-participantId {}):\nbytes\tdemand\tsamples\tlost(A)\tNreject\tlost(N)\tMbit/s\tduration\tCPU %\tmemory\n",
            k + 1,
            k + 1
        );
        for r in runs {
            let Some(d) = demand_of(r) else { continue };
            let Some(t) = r
                .subscribers
                .get(k)
                .or(r.throughput.as_ref().filter(|_| k == 0))
            else {
                continue;
            };
            let rejected = r.throughput.as_ref().map_or(0, |t| t.rejected);
            let _ = writeln!(
                s,
                "{},\t{},\t{},\t{},\t{},\t{:.3},\t{:.3},\t{:.2},\t{:.2},\t{:.1}{}",
                r.size,
                d,
                t.received,
                t.lost,
                rejected,
                t.lost_percent,
                t.mbps,
                window_s(t),
                r.resources.subscriber.cpu_percent,
                mib(r.resources.subscriber.max_rss_kib),
                partial(r)
            );
        }
    }
    if subs > 0 {
        s.push_str(
            "\nlost(A): samples sent and never received (gaps in their numbers); Nreject: writes the publisher's middleware refused (not sent); lost(N): lost(A) in % of samples sent; memory: peak RSS in MiB; CPU % and memory are the first subscriber's.\n",
        );
    }
    s
}

/// The subscriber's measuring window, s: its rates are over it.
fn window_s(t: &Throughput) -> f64 {
    if t.samples_per_s > 0.0 {
        t.received as f64 / t.samples_per_s
    } else {
        0.0
    }
}

fn partial(r: &Run) -> &'static str {
    if r.complete { "" } else { "\t(partial)" }
}
