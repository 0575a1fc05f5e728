//! After the loop: the extra publishers' counts, the subscribers' results,
//! the totals, and the [`Run`] as the output contract has it.

use super::*;
use pubsubperf_core::profile::{RunProfile, SideProfile};

/// The samples each publisher sent: this one's `sent` first, then each
/// extra publisher's count (told to stop early if this one was cut short);
/// the extra publishers' refused sends are added to `rejected`.
pub(super) fn collect_publishers(
    s: &mut Session,
    spec: &RunSpec,
    sent: u64,
    rejected: &mut u64,
    fault: &mut Option<Fault>,
    placements: &mut Vec<pubsubperf_core::placement::Placement>,
) -> Vec<u64> {
    let mut sent_by = vec![sent];
    let pub_wait = Duration::from_nanos(spec.duration_ns) + Duration::from_secs(10);
    for p in s.pubs.iter_mut() {
        if fault.is_some() {
            let _ = p.send(&Msg::Stop {
                sent: 0,
                sent_by: Vec::new(),
                rejected: 0,
            });
        }
        let deadline = std::time::Instant::now() + pub_wait;
        let mut got = 0;
        loop {
            match p.recv(deadline.saturating_duration_since(std::time::Instant::now())) {
                Ok(Msg::PubDone {
                    sent,
                    rejected: r,
                    placement,
                    ..
                }) => {
                    placements.extend(placement.map(|p| *p));
                    got = sent;
                    *rejected += r;
                    break;
                }
                Ok(_) => {}
                Err(f) => {
                    fault.get_or_insert(f);
                    break;
                }
            }
        }
        sent_by.push(got);
    }
    sent_by
}

/// What the subscribers reported at the end of a run.
#[derive(Default)]
pub(super) struct PeerResults {
    /// Each subscriber's counts.
    pub(super) subscribers: Vec<Throughput>,
    /// Per publisher, summed over subscribers.
    publishers: Vec<Throughput>,
    /// Each subscriber's resource use.
    resources: Vec<Resources>,
    /// Samples whose content did not check out, over all subscribers.
    bad_samples: u64,
    /// `--profile`: each subscriber's profile.
    profiles: Vec<SideProfile>,
    /// Samples without the run's key, over all subscribers.
    foreign: u64,
    /// Each subscriber's time from its reader's creation to its first
    /// sample, by subscriber index.
    pub(super) first_samples: Vec<(usize, Option<u64>)>,
    /// Fan-out: each subscriber's recorded delays.
    pub(super) arrivals: Vec<Vec<u32>>,
    /// Where each subscriber's measuring thread ran.
    pub(super) placements: Vec<pubsubperf_core::placement::Placement>,
    /// Why counts are not trusted ([`untrusted_counts`]): the run's
    /// conditions, and its throughput figures absent.
    pub(super) untrusted: Vec<String>,
    /// The subscribers whose counts are not trusted.
    pub(super) untrusted_subscribers: Vec<usize>,
}

/// A subscriber's counts are checked against what was sent: with every
/// sample keyed, no count of lost, duplicate or reordered samples, nor the
/// received and lost together, exceeds the samples sent to it; when one
/// does, something else reached it (a corrupt sample, a forged one with
/// the key) and the counts are not trusted. The reason, a condition of the
/// run: `counts untrusted: subscriber 1 counted N lost of M sent`.
fn untrusted_counts(subscriber: usize, t: &Throughput) -> Option<String> {
    let (what, n) = [
        ("lost", t.lost),
        ("duplicates", t.duplicates),
        ("out of order", t.out_of_order),
        ("received or lost", t.received.saturating_add(t.lost)),
    ]
    .into_iter()
    .find(|&(_, n)| n > t.sent)?;
    Some(format!(
        "counts untrusted: subscriber {subscriber} counted {n} {what} of {} sent",
        t.sent
    ))
}

/// The run is marked incomplete for counts not trusted, with the reason.
fn untrusted_fault(why: &str) -> Fault {
    Fault::Peer(format!(
        "{why}: samples the publishers did not send reached it (corrupt or forged); \
         its loss, duplicate and reordering counts are not given"
    ))
}

/// Tells every live subscriber how many samples were sent (and how many
/// sends were `rejected`) and collects its result (it may already be
/// gone); interval reports that arrive meanwhile are kept in throughput
/// runs.
pub(super) fn collect_subscribers(
    s: &mut Session,
    spec: &RunSpec,
    sent_by: &[u64],
    rejected: u64,
    intervals: &mut Vec<Interval>,
    on_interval: &mut dyn FnMut(&Interval),
    fault: &mut Option<Fault>,
) -> PeerResults {
    let mut out = PeerResults::default();
    let stop = Msg::Stop {
        sent: sent_by[0],
        sent_by: if sent_by.len() > 1 {
            sent_by.to_vec()
        } else {
            Vec::new()
        },
        rejected,
    };
    // Reliable subscribers may drain a backlog (they stop after 5 s of quiet).
    let wait = Duration::from_secs(if spec.endpoint.reliability == Reliability::Reliable {
        30
    } else {
        10
    });
    for sub in s.subs.iter_mut() {
        // A subscriber already silent for PEER_SILENCE (a blocked link, a
        // hung host) sends no results: the run ends now, not after `wait`.
        if let Err(f) = sub.check(pubsubperf_core::clock::now_ns()) {
            fault.get_or_insert(f);
            continue;
        }
        if sub.send(&stop).is_err() {
            continue;
        }
        let deadline = std::time::Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match sub.recv_heard(left) {
                Ok(Msg::Result {
                    throughput,
                    by_publisher,
                    bad_samples,
                    foreign,
                    resources,
                    profile,
                    first_sample_ns,
                    arrivals,
                    placement,
                    ..
                }) => {
                    out.placements.extend(placement.map(|p| *p));
                    out.first_samples.push((sub.index, first_sample_ns));
                    out.arrivals.push(arrivals);
                    out.profiles.extend(profile.map(|p| *p));
                    if let Some(t) = throughput {
                        if let Some(why) = untrusted_counts(sub.index, &t) {
                            fault.get_or_insert(untrusted_fault(&why));
                            out.untrusted.push(why);
                            out.untrusted_subscribers.push(sub.index);
                        }
                        out.subscribers.push(t);
                    }
                    out.foreign += foreign;
                    for (i, t) in by_publisher.iter().enumerate() {
                        if out.publishers.len() <= i {
                            out.publishers.push(Throughput::default());
                        }
                        add_counts(&mut out.publishers[i], t);
                    }
                    out.resources.push(resources);
                    out.bad_samples += bad_samples;
                    break;
                }
                Ok(Msg::Interval { interval }) if spec.test == TestKind::Throughput => {
                    on_interval(&interval);
                    intervals.push(interval);
                }
                Ok(_) => {}
                Err(f) => {
                    fault.get_or_insert(f);
                    break;
                }
            }
        }
    }
    out
}

/// Interval reports that came after the subscribers' results.
pub(super) fn keep_late_intervals(s: &Session, spec: &RunSpec, intervals: &mut Vec<Interval>) {
    for sub in &s.subs {
        while let Some(m) = sub.try_recv() {
            if let Msg::Interval { interval } = m
                && spec.test == TestKind::Throughput
            {
                intervals.push(interval);
            }
        }
    }
}

/// Adds `t`'s counts and rates to `into` (rates of different subscribers or
/// publishers add up; loss percent is derived afterwards).
fn add_counts(into: &mut Throughput, t: &Throughput) {
    into.sent = into.sent.saturating_add(t.sent);
    into.received = into.received.saturating_add(t.received);
    into.bytes = into.bytes.saturating_add(t.bytes);
    into.lost = into.lost.saturating_add(t.lost);
    into.rejected = into.rejected.saturating_add(t.rejected);
    into.duplicates = into.duplicates.saturating_add(t.duplicates);
    into.out_of_order = into.out_of_order.saturating_add(t.out_of_order);
    into.samples_per_s += t.samples_per_s;
    into.mbps += t.mbps;
}

fn lost_percent(t: &Throughput) -> f64 {
    if t.sent > 0 {
        t.lost as f64 * 100.0 / t.sent as f64
    } else {
        0.0
    }
}

/// A throughput run's totals over all subscribers; when no subscriber
/// reported (it died), what its interval reports said.
pub(super) fn total_throughput(
    spec: &RunSpec,
    subscribers: &[Throughput],
    intervals: &[Interval],
    sent_by: &[u64],
    duration_ns: u64,
) -> Throughput {
    let mut total = Throughput::default();
    if subscribers.is_empty() {
        total.received = intervals.iter().map(|i| i.received).sum();
        total.lost = intervals.iter().fold(0u64, |n, i| n.saturating_add(i.lost));
        total.bytes = total.received * spec.size as u64;
        total.sent = sent_by[0];
        total.finish(duration_ns as f64 / 1e9);
    } else {
        for t in subscribers {
            add_counts(&mut total, t);
        }
        // `sent` counts each delivery the publisher owed (sent ×
        // subscribers), so loss % stays per delivery.
        total.lost_percent = lost_percent(&total);
    }
    total.sent_per_s = sent_by.iter().sum::<u64>() as f64 / (duration_ns as f64 / 1e9).max(1e-9);
    total
}

/// Adds to a result's `config.deviations` what the subscribers' side set
/// beyond the run's settings ([`Msg::Ready`]'s `deviations`: an agent
/// holds a session's discovery to unicast), marked `sub:` as the
/// subscriber binding's own are. Text from the agent: escaped, bounded.
pub(super) fn add_their_deviations(config: &mut serde_json::Value, theirs: &[String]) {
    let Some(list) = config.get_mut("deviations").and_then(|d| d.as_array_mut()) else {
        return;
    };
    for d in theirs.iter().take(16) {
        let line = format!("sub: {}", pubsubperf_core::escape::printable(d, 200));
        if !list.iter().any(|x| x.as_str() == Some(&line)) {
            list.push(line.into());
        }
    }
}

/// The run's result as the output contract has it.
#[allow(clippy::too_many_arguments)]
pub(super) fn assemble(
    spec: &RunSpec,
    m: Measured,
    peers: PeerResults,
    throughput: Option<Throughput>,
    intervals: Vec<Interval>,
    publisher: Resources,
    clock_name: &str,
    started_at: String,
    fault: &Option<Fault>,
) -> Run {
    let latency_test = spec.test == TestKind::Latency;
    let latency = m.rec.filter(|r| r.count() > 0 || latency_test);
    let mut subscribers = peers.subscribers;
    let mut publishers = peers.publishers;
    // Counts not trusted are no figures: absent, the conditions say why.
    if subscribers.len() < 2 || !peers.untrusted.is_empty() {
        subscribers.clear();
    }
    if !peers.untrusted.is_empty() {
        publishers.clear();
    }
    Run {
        binding: spec.binding.clone(),
        transport: spec.endpoint.transport.clone(),
        test: spec.test,
        size: spec.size,
        zero_copy: spec.endpoint.zero_copy,
        data_type: serde_json::to_value(spec.endpoint.data_type)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default(),
        reliable: spec.endpoint.reliability == Reliability::Reliable,
        config: spec.config_json(),
        latency_method: latency.as_ref().map(|_| latency_method(None)),
        one_way: None,
        latency_by_subscriber: Vec::new(),
        latency_clock: latency_test.then(|| clock_name.to_owned()),
        latency_ns: latency.map(|r| r.summary()),
        pings: latency_test.then(|| Pings {
            sent: m.sent,
            echoed: m.echoed,
            lost: m.sent.saturating_sub(m.echoed),
            rejected: m.rejected,
            rejected_reason: m.first_refusal.as_ref().map(|e| e.to_string()),
        }),
        throughput,
        intervals,
        subscribers,
        publishers: publishers
            .into_iter()
            .map(|mut t| {
                t.lost_percent = lost_percent(&t);
                t
            })
            .collect(),
        resources: RunResources {
            publisher,
            subscriber: peers.resources.first().cloned().unwrap_or_default(),
        },
        profile: spec.profile.then(|| RunProfile {
            publisher: SideProfile::default(),
            subscribers: peers.profiles,
            unprofiled: None,
        }),
        explanation: None,
        bad_samples: peers.bad_samples,
        foreign_samples: peers.foreign + m.foreign,
        complete: fault.is_none(),
        error: fault.as_ref().map(|f| f.to_string()),
        started_at,
        hosts: None,
        limit: None,
        discovery: None,
        fan_out: None,
        by_topic: Vec::new(),
        duration_s: m.duration_ns as f64 / 1e9,
        placement: Vec::new(),
        conditions: peers.untrusted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Known answers: a subscriber fed 100 samples and one forged with a
    /// huge number reads a loss beyond what was sent; the reason names the
    /// count, and honest counts pass.
    #[test]
    fn counts_beyond_what_was_sent_are_not_trusted() {
        let counted = |seqs: &[u64], sent| {
            let mut s = pubsubperf_core::seq::SeqTracker::new();
            seqs.iter().for_each(|&q| s.observe(q));
            s.finish(sent);
            Throughput {
                sent,
                received: s.received,
                lost: s.lost,
                duplicates: s.duplicates,
                out_of_order: s.out_of_order,
                ..Default::default()
            }
        };
        let honest: Vec<u64> = (0..100).filter(|q| q % 10 != 0).collect();
        assert_eq!(untrusted_counts(0, &counted(&honest, 100)), None);
        let mut forged: Vec<u64> = (0..100).collect();
        forged.push(140_737_488_355_204);
        assert_eq!(
            untrusted_counts(2, &counted(&forged, 100)).as_deref(),
            Some("counts untrusted: subscriber 2 counted 140737488355104 lost of 100 sent")
        );
        let duplicates = Throughput {
            sent: 10,
            received: 10,
            duplicates: 11,
            ..Default::default()
        };
        assert_eq!(
            untrusted_counts(1, &duplicates).as_deref(),
            Some("counts untrusted: subscriber 1 counted 11 duplicates of 10 sent")
        );
        let both = Throughput {
            sent: 100,
            received: 90,
            lost: 11,
            ..Default::default()
        };
        assert_eq!(
            untrusted_counts(0, &both).as_deref(),
            Some("counts untrusted: subscriber 0 counted 101 received or lost of 100 sent")
        );
    }
}
