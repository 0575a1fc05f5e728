//! `--topics N`: one point of the axes run as N whole runs at once, each
//! on topics of its own (its own run id, so every middleware names its
//! topics, segments and ports apart), with its own subscriber (and extra
//! publisher) processes and its own publisher thread in this process. The
//! runs pass a start gate between their set-up and their start
//! ([`StartGate`]), so they measure side by side, and their results merge
//! into one run: latency from every topic's histogram (exactly), pings and
//! throughput counters and rates summed, each topic's own figures in
//! `by_topic`. Topic 0's run is the one whose intervals are printed and
//! kept; the publishers' resources are this process's (every topic's
//! publisher), the subscribers' the sum of every topic's processes.

use pubsubperf_core::result::{Pings, Run, Throughput, TopicFigures};
use pubsubperf_core::stats::LatencyRecorder;
use pubsubperf_core::{CancelToken, result::Interval};
use pubsubperf_harness::run::RunOutcome;
use pubsubperf_harness::session::Session;
use pubsubperf_harness::spec::RunSpec;
use pubsubperf_harness::start_gate::StartGate;
use std::sync::Arc;

/// Runs `spec` once per session (one session per topic) at once and
/// merges the outcomes; topic 0's intervals go to `on_interval`.
pub fn run_side_by_side(
    sessions: &mut [Session],
    spec: &RunSpec,
    on_interval: &mut dyn FnMut(&Interval),
) -> RunOutcome {
    let gate = Arc::new(StartGate::new(sessions.len()));
    let specs: Vec<RunSpec> = (0..sessions.len())
        .map(|i| {
            let mut s = spec.clone();
            s.endpoint.run_id = format!("{}t{i}", spec.endpoint.run_id);
            s.endpoint.cancel = CancelToken::new();
            s
        })
        .collect();
    for s in sessions.iter_mut() {
        s.gate = Some(gate.clone());
    }
    let Some((first, rest)) = sessions.split_first_mut() else {
        return RunOutcome::failed(pubsubperf_harness::Fault::Config(
            "--topics: no topic".into(),
        ));
    };
    let outcomes = std::thread::scope(|scope| {
        let others: Vec<_> = rest
            .iter_mut()
            .zip(&specs[1..])
            .map(|(s, sp)| scope.spawn(move || pubsubperf_harness::run::run(s, sp, &mut |_| {})))
            .collect();
        let mut all = vec![pubsubperf_harness::run::run(first, &specs[0], on_interval)];
        all.extend(
            others
                .into_iter()
                .map(|t| t.join().expect("a topic's run panicked")),
        );
        all
    });
    merge(outcomes)
}

/// One run from the topics' outcomes: the first fault; figures from the
/// runs that measured.
pub fn merge(outcomes: Vec<RunOutcome>) -> RunOutcome {
    let n = outcomes.len();
    let mut fault = None;
    let mut runs = Vec::new();
    for o in outcomes {
        if fault.is_none() {
            fault = o.fault;
        }
        runs.extend(o.run);
    }
    let Some(mut out) = runs.first().cloned() else {
        return RunOutcome { run: None, fault };
    };
    out.by_topic = runs
        .iter()
        .map(|r| TopicFigures {
            latency_ns: r.latency_ns.clone(),
            pings: r.pings.clone(),
            throughput: r.throughput.clone(),
            complete: r.complete,
        })
        .collect();
    out.latency_ns = merged_latency(&runs);
    out.latency_by_subscriber.clear();
    out.pings = summed_pings(&runs);
    out.throughput = summed_throughput(&runs);
    out.subscribers.clear();
    out.publishers.clear();
    out.bad_samples = runs.iter().map(|r| r.bad_samples).sum();
    out.foreign_samples = runs.iter().map(|r| r.foreign_samples).sum();
    out.complete = runs.len() == n && runs.iter().all(|r| r.complete);
    // Every topic's conditions (counts not trusted, a side not where
    // planned), each once.
    out.conditions = Vec::new();
    for c in runs.iter().flat_map(|r| &r.conditions) {
        if !out.conditions.contains(c) {
            out.conditions.push(c.clone());
        }
    }
    if out.error.is_none() {
        out.error = runs.iter().find_map(|r| r.error.clone());
    }
    let subs = &mut out.resources.subscriber;
    for r in &runs[1..] {
        let o = &r.resources.subscriber;
        subs.cpu_percent += o.cpu_percent;
        subs.cpu_user_percent += o.cpu_user_percent;
        subs.cpu_system_percent += o.cpu_system_percent;
        subs.max_rss_kib = subs.max_rss_kib.max(o.max_rss_kib);
        subs.voluntary_cs += o.voluntary_cs;
        subs.involuntary_cs += o.involuntary_cs;
    }
    RunOutcome {
        run: Some(out),
        fault,
    }
}

/// Every topic's latency histogram merged (None unless every run has one).
fn merged_latency(runs: &[Run]) -> Option<pubsubperf_core::stats::LatencySummary> {
    let mut all = LatencyRecorder::new();
    for r in runs {
        all.merge(&LatencyRecorder::from_summary(r.latency_ns.as_ref()?).ok()?);
    }
    Some(all.summary())
}

/// The topics' pings summed (None unless every run has pings).
fn summed_pings(runs: &[Run]) -> Option<Pings> {
    let mut out = Pings::default();
    for r in runs {
        let p = r.pings.as_ref()?;
        out.sent += p.sent;
        out.echoed += p.echoed;
        out.lost += p.lost;
        out.rejected += p.rejected;
        if out.rejected_reason.is_none() {
            out.rejected_reason = p.rejected_reason.clone();
        }
    }
    Some(out)
}

/// The topics' counters and rates summed (they ran over the same
/// window), loss recomputed (None unless every run has counters).
fn summed_throughput(runs: &[Run]) -> Option<Throughput> {
    let mut out = Throughput::default();
    for r in runs {
        let t = r.throughput.as_ref()?;
        out.sent += t.sent;
        out.received += t.received;
        out.bytes += t.bytes;
        out.samples_per_s += t.samples_per_s;
        out.mbps += t.mbps;
        out.lost += t.lost;
        out.rejected += t.rejected;
        out.duplicates += t.duplicates;
        out.out_of_order += t.out_of_order;
        out.sent_per_s += t.sent_per_s;
        if out.rejected_reason.is_none() {
            out.rejected_reason = t.rejected_reason.clone();
        }
    }
    out.lost_percent = if out.sent > 0 {
        out.lost as f64 * 100.0 / out.sent as f64
    } else {
        0.0
    };
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bare() -> Run {
        pubsubperf_report::fixture::run(
            pubsubperf_core::result::TestKind::Latency,
            "udp",
            64,
            serde_json::json!({}),
        )
    }

    fn latency_run(values: &[u64], sent: u64) -> Run {
        let mut rec = LatencyRecorder::new();
        for &v in values {
            rec.record(v);
        }
        let mut r = bare();
        r.latency_ns = Some(rec.summary());
        r.pings = Some(Pings {
            sent,
            echoed: values.len() as u64,
            lost: sent - values.len() as u64,
            ..Default::default()
        });
        r
    }

    fn ok(run: Run) -> RunOutcome {
        RunOutcome {
            run: Some(run),
            fault: None,
        }
    }

    #[test]
    fn latency_merges_every_topic_s_histogram_and_keeps_each() {
        let o = merge(vec![
            ok(latency_run(&[1000, 2000], 3)),
            ok(latency_run(&[3000, 4000, 5000], 3)),
        ]);
        let r = o.run.unwrap();
        let l = r.latency_ns.unwrap();
        assert_eq!((l.count, l.min, l.max, l.mean), (5, 1000, 5000, 3000.0));
        let p = r.pings.unwrap();
        assert_eq!((p.sent, p.echoed, p.lost), (6, 5, 1));
        assert_eq!(r.by_topic.len(), 2);
        assert_eq!(r.by_topic[1].latency_ns.as_ref().unwrap().count, 3);
        assert!(r.complete);
    }

    #[test]
    fn throughput_sums_counters_and_rates() {
        let t = |sent, received, rate| {
            let mut r = bare();
            r.throughput = Some(Throughput {
                sent,
                received,
                lost: sent - received,
                samples_per_s: rate,
                ..Default::default()
            });
            r
        };
        let o = merge(vec![ok(t(100, 90, 1000.0)), ok(t(100, 100, 1500.0))]);
        let r = o.run.unwrap();
        let tp = r.throughput.unwrap();
        assert_eq!((tp.sent, tp.received, tp.lost), (200, 190, 10));
        assert_eq!((tp.samples_per_s, tp.lost_percent), (2500.0, 5.0));
    }

    /// A topic whose counts were not trusted has no counters: the sum has
    /// none either, and the merged run keeps that topic's condition.
    #[test]
    fn an_untrusted_topic_leaves_no_sum_and_its_condition() {
        let mut good = bare();
        good.throughput = Some(Throughput {
            sent: 100,
            received: 100,
            ..Default::default()
        });
        let mut forged = bare();
        forged.conditions = vec!["counts untrusted: subscriber 0 counted 9 lost of 1 sent".into()];
        let r = merge(vec![ok(good), ok(forged)]).run.unwrap();
        assert_eq!(r.throughput, None);
        assert_eq!(
            r.conditions,
            ["counts untrusted: subscriber 0 counted 9 lost of 1 sent"]
        );
    }

    #[test]
    fn a_topic_that_measured_nothing_leaves_the_run_incomplete_with_its_fault() {
        let o = merge(vec![
            ok(latency_run(&[1000], 1)),
            RunOutcome::failed(pubsubperf_harness::Fault::Peer("gone".into())),
        ]);
        assert!(o.fault.is_some());
        let r = o.run.unwrap();
        assert!(!r.complete);
        assert_eq!(r.by_topic.len(), 1);
    }
}
