//! A node's books of one reader: per writer of the topic (a hop) its
//! latency, sequence numbers and deadline classes; per path ending here its
//! end-to-end latency. Everything is allocated before the run: recording a
//! sample takes no allocation and no lock.

use super::plan::ReaderPlan;
use pubsubperf_core::seq::SeqTracker;
use pubsubperf_core::stats::{LatencyRecorder, LatencySummary};
use serde::{Deserialize, Serialize};

/// One hop's books.
struct Hop {
    latency: LatencyRecorder,
    seq: SeqTracker,
    late: u64,
    too_late: u64,
    below_zero: u64,
}

/// `rx - stamp + delta` (a reading of another node's clock corrected to
/// ours), and whether it came out below zero (recorded as 0: the clocks'
/// estimate was off by more than the time).
#[inline]
fn corrected(rx: u64, stamp: u64, delta: i64) -> (u64, bool) {
    let v = i128::from(rx) - i128::from(stamp) + i128::from(delta);
    (u64::try_from(v.max(0)).unwrap_or(u64::MAX), v < 0)
}

/// A reader's books.
pub struct ReaderBooks {
    /// Slot in `hops` of each stream id (`u8::MAX`: not a writer of the topic).
    slot: [u8; 256],
    hops: Vec<Hop>,
    writers: Vec<u8>,
    /// Each path's streams, index, latency and readings below zero.
    paths: Vec<(Vec<u8>, usize, LatencyRecorder, u64)>,
    /// Per stream id, its node's clock minus ours, ns.
    deltas: [i64; 256],
    deadline_ns: u64,
    too_late_ns: u64,
    /// Samples of the run from no writer or with no known path.
    pub strays: u64,
}

/// What a reader reports of one hop.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HopReport {
    /// The writing stream.
    pub stream: u8,
    /// Distinct measured samples received.
    pub received: u64,
    /// Samples received more than once.
    pub duplicates: u64,
    /// Late samples.
    pub late: u64,
    /// Too-late samples.
    pub too_late: u64,
    /// Corrected readings that came out below zero (across hosts).
    #[serde(default)]
    pub below_zero: u64,
    /// Hop latency.
    pub latency: LatencySummary,
}

/// What a reader reports.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReaderReport {
    /// The topic.
    pub topic: usize,
    /// One per writer of the topic.
    pub hops: Vec<HopReport>,
    /// Per path ending here: its index, latency and corrected readings
    /// below zero.
    pub paths: Vec<(usize, LatencySummary, u64)>,
    /// Samples of the run from no writer of the topic or on no known path.
    pub strays: u64,
}

impl ReaderBooks {
    /// Empty books for a reader; `deltas` per stream id its node's clock
    /// minus ours (empty: one clock).
    pub fn new(plan: &ReaderPlan, deltas: &[i64]) -> ReaderBooks {
        let mut slot = [u8::MAX; 256];
        for (i, &s) in plan.writers.iter().enumerate() {
            slot[s as usize] = i as u8;
        }
        let mut by_stream = [0i64; 256];
        for (d, &x) in by_stream.iter_mut().zip(deltas) {
            *d = x;
        }
        ReaderBooks {
            slot,
            hops: plan
                .writers
                .iter()
                .map(|_| Hop {
                    latency: LatencyRecorder::new(),
                    seq: SeqTracker::new(),
                    late: 0,
                    too_late: 0,
                    below_zero: 0,
                })
                .collect(),
            writers: plan.writers.clone(),
            paths: plan
                .paths
                .iter()
                .map(|p| (p.streams.clone(), p.path, LatencyRecorder::new(), 0))
                .collect(),
            deltas: by_stream,
            deadline_ns: plan.deadline_ns.unwrap_or(u64::MAX),
            too_late_ns: plan.too_late_ns.unwrap_or(u64::MAX),
            strays: 0,
        }
    }

    /// Records a measured sample of `stream` numbered `seq`, received at
    /// `rx_ns`, stamped by its writer at `stamp_ns`; at a sink, along
    /// `route` from its origin at `origin_ns`. Readings of other nodes'
    /// clocks are corrected to this one's.
    #[inline]
    pub fn record(
        &mut self,
        stream: u8,
        seq: u64,
        rx_ns: u64,
        stamp_ns: u64,
        route: &[u8],
        origin_ns: Option<u64>,
    ) {
        let Some(hop) = self.hops.get_mut(self.slot[stream as usize] as usize) else {
            self.strays += 1;
            return;
        };
        let (hop_ns, below) = corrected(rx_ns, stamp_ns, self.deltas[stream as usize]);
        hop.seq.observe(seq);
        hop.latency.record(hop_ns);
        hop.below_zero += u64::from(below);
        if hop_ns > self.too_late_ns {
            hop.too_late += 1;
        } else if hop_ns > self.deadline_ns {
            hop.late += 1;
        }
        let Some(origin) = origin_ns else {
            return;
        };
        let first = route.first().copied().unwrap_or(stream);
        match self.paths.iter_mut().find(|(s, ..)| s.as_slice() == route) {
            Some((_, _, rec, below_zero)) => {
                let (ns, below) = corrected(rx_ns, origin, self.deltas[first as usize]);
                rec.record(ns);
                *below_zero += u64::from(below);
            }
            None => self.strays += 1,
        }
    }

    /// The report: each hop's distinct samples received (loss is reckoned
    /// by the orchestrator, which knows every writer's count).
    pub fn report(self, topic: usize) -> ReaderReport {
        let hops = self
            .hops
            .iter()
            .zip(&self.writers)
            .map(|(h, &stream)| HopReport {
                stream,
                received: h.seq.received,
                duplicates: h.seq.duplicates,
                late: h.late,
                too_late: h.too_late,
                below_zero: h.below_zero,
                latency: h.latency.summary(),
            })
            .collect();
        ReaderReport {
            topic,
            hops,
            paths: self
                .paths
                .iter()
                .map(|(_, i, r, below)| (*i, r.summary(), *below))
                .collect(),
            strays: self.strays,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::plan::PathPlan;
    use pubsubperf_core::Reliability;

    #[test]
    fn hops_paths_and_classes_are_counted_where_they_belong() {
        let plan = ReaderPlan {
            topic: 1,
            index: 0,
            qos: crate::graph::plan::TopicQos {
                reliability: Reliability::Reliable,
                history: None,
                durability: None,
            },
            writers: vec![4, 9],
            paths: vec![PathPlan {
                path: 3,
                streams: vec![2, 4],
            }],
            deadline_ns: Some(100),
            too_late_ns: Some(200),
        };
        let mut b = ReaderBooks::new(&plan, &[]);
        // Received at 1000 + hop, from origins 500..700 ns before.
        b.record(4, 0, 1050, 1000, &[2, 4], Some(550));
        b.record(4, 1, 1150, 1000, &[2, 4], Some(550));
        b.record(4, 3, 1250, 1000, &[2, 4], Some(550));
        b.record(9, 0, 1010, 1000, &[9], None);
        b.record(7, 0, 1010, 1000, &[7], None);
        b.record(4, 4, 1010, 1000, &[1, 4], Some(1009));
        let r = b.report(1);
        assert_eq!(r.strays, 2);
        assert_eq!(
            (r.hops[0].received, r.hops[0].late, r.hops[0].too_late),
            (4, 1, 1)
        );
        assert_eq!(r.hops[0].latency.count, 4);
        assert_eq!(r.hops[1].received, 1);
        assert_eq!(r.paths.len(), 1);
        assert_eq!(
            (r.paths[0].0, r.paths[0].1.count, r.paths[0].1.max),
            (3, 3, 700)
        );
    }

    #[test]
    fn readings_of_another_clock_are_corrected_and_below_zero_counted() {
        let plan = ReaderPlan {
            topic: 0,
            index: 0,
            qos: crate::graph::plan::TopicQos {
                reliability: Reliability::Reliable,
                history: None,
                durability: None,
            },
            writers: vec![1],
            paths: vec![PathPlan {
                path: 0,
                streams: vec![0, 1],
            }],
            deadline_ns: None,
            too_late_ns: None,
        };
        // Stream 0's node runs 1000 s ahead of ours, stream 1's 5 us behind.
        let mut b = ReaderBooks::new(&plan, &[1_000_000_000_000, -5_000]);
        b.record(1, 0, 10_000, 2_000, &[0, 1], Some(1_000_000_001_000));
        b.record(1, 1, 10_000, 9_000, &[0, 1], Some(1_000_000_011_000));
        let r = b.report(0);
        let hop = &r.hops[0];
        assert_eq!(
            (hop.latency.min, hop.latency.max, hop.below_zero),
            (1, 3_000, 1)
        );
        let (_, path, below) = &r.paths[0];
        assert_eq!((path.min, path.max, *below), (1, 9_000, 1));
    }
}
