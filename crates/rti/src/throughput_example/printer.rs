//! The Throughput example's two tables, comma- and tab-separated as the
//! example prints them (seed 003's "Typical output"): the publisher's
//! (`bytes samples Mbit/sec duration demand CPU % memory`), on the
//! publisher's standard output, and each subscriber's (`bytes demand
//! samples lost(A) Nreject lost(N) Mbit/s duration CPU % memory`), on that
//! subscriber process's standard output ([`SubTable`]). The publisher also
//! writes every subscriber's table, as they reported it, to standard
//! error: a publisher that starts its own subscribers has no other place
//! to show them.
//!
//! The example's documentation does not define lost(A), Nreject and
//! lost(N); here they are counts: lost(A) the samples sent and never
//! received, Nreject the sends the publisher's middleware refused (not
//! sent), lost(N) the samples missing by their sequence numbers (the gaps
//! between samples received; a loss after the last one received is in
//! lost(A) only).

use pubsubperf_core::result::{Interval, Run, Throughput};
use pubsubperf_core::sys::Resources;
use pubsubperf_harness::protocol::Msg;
use pubsubperf_harness::spec::RunSpec;
use pubsubperf_report::live::ramp::{demand_of, mib, pub_mbps};
use std::fmt::Write as _;
use std::io::Write as _;

/// The publisher's column names.
const PUBLISHER_HEADER: &str = "bytes\tsamples\tMbit/sec\tduration\tdemand\tCPU %\tmemory";
/// A subscriber's column names.
const SUBSCRIBER_HEADER: &str =
    "bytes\tdemand\tsamples\tlost(A)\tNreject\tlost(N)\tMbit/s\tduration\tCPU %\tmemory";
/// What the subscriber's columns hold, under the tables on standard error.
pub const LEGEND: &str = "lost(A): samples sent and never received; Nreject: writes the publisher's middleware refused (not sent); lost(N): samples missing between those received (gaps in their numbers); memory: peak RSS in MiB";

/// The publisher's table: a blank line, the columns, one row per demand.
pub fn publisher_table(runs: &[&Run]) -> String {
    let mut s = format!("\n{PUBLISHER_HEADER}\n");
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
            partial(r.complete)
        );
    }
    s
}

/// One subscriber's row of one demand: `t` its counts, `rejected` the
/// publisher's refused sends, `gaps` the samples missing between those it
/// received, `res` its CPU and memory.
fn subscriber_row(
    size: usize,
    demand: u64,
    t: &Throughput,
    rejected: u64,
    gaps: u64,
    res: &Resources,
    complete: bool,
) -> String {
    format!(
        "{},\t{},\t{},\t{},\t{},\t{},\t{:.3},\t{:.2},\t{:.2},\t{:.1}{}",
        size,
        demand,
        t.received,
        t.lost,
        rejected,
        gaps,
        t.mbps,
        window_s(t),
        res.cpu_percent,
        mib(res.max_rss_kib),
        partial(complete)
    )
}

/// Samples missing between those received: the gaps of `subscriber`'s
/// intervals.
fn gaps(intervals: &[Interval], subscriber: usize) -> u64 {
    intervals
        .iter()
        .filter(|i| i.subscriber == subscriber)
        .map(|i| i.lost)
        .sum()
}

/// Every subscriber's table as the publisher got them (for standard
/// error), each titled, and the legend; empty without runs.
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
            "\nSubscriber {} (-participantId {}):\n{SUBSCRIBER_HEADER}\n",
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
            let row = subscriber_row(
                r.size,
                d,
                t,
                rejected,
                gaps(&r.intervals, k),
                &r.resources.subscriber,
                r.complete,
            );
            let _ = writeln!(s, "{row}");
        }
    }
    if subs > 0 {
        let _ = writeln!(
            s,
            "\n{LEGEND}; CPU % and memory are the first subscriber's."
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

fn partial(complete: bool) -> &'static str {
    if complete { "" } else { "\t(partial)" }
}

/// A subscriber process's own table, printed on its standard output as it
/// serves the publisher's session: `Starting test...` and the columns as
/// its first demand reports, a row as each demand ends, `Test Completed.`
/// at the end of a session that ended well.
#[derive(Debug, Default)]
pub struct SubTable {
    started: bool,
    /// Gaps in the current demand's intervals.
    gaps: u64,
}

impl SubTable {
    /// One interval or the result of a run this process serves.
    pub fn show(&mut self, spec: &RunSpec, msg: &Msg) {
        let text = self.text(spec, msg);
        if !text.is_empty() {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
        }
    }

    /// What [`SubTable::show`] prints for `msg`.
    fn text(&mut self, spec: &RunSpec, msg: &Msg) -> String {
        let mut s = String::new();
        if !self.started && matches!(msg, Msg::Interval { .. } | Msg::Result { .. }) {
            self.started = true;
            let _ = write!(s, "Starting test...\n\n{SUBSCRIBER_HEADER}\n");
        }
        match msg {
            Msg::Interval { interval } => self.gaps += interval.lost,
            Msg::Result {
                throughput: Some(t),
                resources,
                ..
            } => {
                let row = subscriber_row(
                    spec.size,
                    spec.demand,
                    t,
                    t.rejected,
                    std::mem::take(&mut self.gaps),
                    resources,
                    true,
                );
                let _ = writeln!(s, "{row}");
            }
            _ => {}
        }
        s
    }

    /// The end of the session: `ok` when it ended well.
    pub fn finish(self, ok: bool) {
        if self.started && ok {
            println!("\nTest Completed.");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(demand: u64) -> RunSpec {
        let mut s = RunSpec::for_test("example", pubsubperf_core::result::TestKind::Throughput);
        s.size = 1024;
        s.demand = demand;
        s
    }

    fn result(received: u64, lost: u64, rejected: u64) -> Msg {
        Msg::Result {
            throughput: Some(Throughput {
                sent: received + lost,
                received,
                lost,
                rejected,
                samples_per_s: received as f64 / 2.0,
                mbps: 44.502,
                ..Throughput::default()
            }),
            by_publisher: Vec::new(),
            echoed: 0,
            bad_samples: 0,
            foreign: 0,
            resources: Resources {
                cpu_percent: 6.77,
                max_rss_kib: 64000,
                ..Resources::default()
            },
            profile: None,
            first_sample_ns: None,
            arrivals: Vec::new(),
            placement: None,
        }
    }

    fn interval(lost: u64) -> Msg {
        Msg::Interval {
            interval: Interval {
                lost,
                ..Interval::default()
            },
        }
    }

    /// A subscriber's lines are the seed's layout: its columns once, one
    /// row per demand, every count a whole number.
    #[test]
    fn a_subscriber_prints_its_own_table_as_the_seed_shows_it() {
        let mut t = SubTable::default();
        let mut out = t.text(&spec(100), &interval(0));
        out += &t.text(&spec(100), &result(162988, 0, 0));
        out += &t.text(&spec(200), &interval(3));
        out += &t.text(&spec(200), &interval(2));
        out += &t.text(&spec(200), &result(208667, 7, 1));
        assert_eq!(
            out,
            "Starting test...\n\n\
             bytes\tdemand\tsamples\tlost(A)\tNreject\tlost(N)\tMbit/s\tduration\tCPU %\tmemory\n\
             1024,\t100,\t162988,\t0,\t0,\t0,\t44.502,\t2.00,\t6.77,\t62.5\n\
             1024,\t200,\t208667,\t7,\t1,\t5,\t44.502,\t2.00,\t6.77,\t62.5\n"
        );
    }
}
