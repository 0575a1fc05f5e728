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
}

/// A reader's books.
pub struct ReaderBooks {
    /// Slot in `hops` of each stream id (`u8::MAX`: not a writer of the topic).
    slot: [u8; 256],
    hops: Vec<Hop>,
    writers: Vec<u8>,
    /// Each path's streams and latency.
    paths: Vec<(Vec<u8>, usize, LatencyRecorder)>,
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
    /// Per path ending here: its index and latency.
    pub paths: Vec<(usize, LatencySummary)>,
    /// Samples of the run from no writer of the topic or on no known path.
    pub strays: u64,
}

impl ReaderBooks {
    /// Empty books for a reader.
    pub fn new(plan: &ReaderPlan) -> ReaderBooks {
        let mut slot = [u8::MAX; 256];
        for (i, &s) in plan.writers.iter().enumerate() {
            slot[s as usize] = i as u8;
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
                })
                .collect(),
            writers: plan.writers.clone(),
            paths: plan
                .paths
                .iter()
                .map(|p| (p.streams.clone(), p.path, LatencyRecorder::new()))
                .collect(),
            deadline_ns: plan.deadline_ns.unwrap_or(u64::MAX),
            too_late_ns: plan.too_late_ns.unwrap_or(u64::MAX),
            strays: 0,
        }
    }

    /// Records a measured sample of `stream` numbered `seq`, `hop_ns` after
    /// its writer stamped it; at a sink, `path_ns` after its origin along
    /// `route`.
    #[inline]
    pub fn record(
        &mut self,
        stream: u8,
        seq: u64,
        hop_ns: u64,
        route: &[u8],
        path_ns: Option<u64>,
    ) {
        let Some(hop) = self.hops.get_mut(self.slot[stream as usize] as usize) else {
            self.strays += 1;
            return;
        };
        hop.seq.observe(seq);
        hop.latency.record(hop_ns);
        if hop_ns > self.too_late_ns {
            hop.too_late += 1;
        } else if hop_ns > self.deadline_ns {
            hop.late += 1;
        }
        if let Some(ns) = path_ns {
            match self
                .paths
                .iter_mut()
                .find(|(s, _, _)| s.as_slice() == route)
            {
                Some((_, _, rec)) => rec.record(ns),
                None => self.strays += 1,
            }
        }
    }

    /// The report, with loss reckoned against each writer's `sent`.
    pub fn report(mut self, topic: usize, sent: impl Fn(u8) -> u64) -> ReaderReport {
        let hops = self
            .hops
            .iter_mut()
            .zip(&self.writers)
            .map(|(h, &stream)| {
                h.seq.finish(sent(stream));
                HopReport {
                    stream,
                    received: h.seq.received,
                    duplicates: h.seq.duplicates,
                    late: h.late,
                    too_late: h.too_late,
                    latency: h.latency.summary(),
                }
            })
            .collect();
        ReaderReport {
            topic,
            hops,
            paths: self
                .paths
                .iter()
                .map(|(_, i, r)| (*i, r.summary()))
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
            reliability: Reliability::Reliable,
            writers: vec![4, 9],
            paths: vec![PathPlan {
                path: 3,
                streams: vec![2, 4],
            }],
            deadline_ns: Some(100),
            too_late_ns: Some(200),
        };
        let mut b = ReaderBooks::new(&plan);
        b.record(4, 0, 50, &[2, 4], Some(500));
        b.record(4, 1, 150, &[2, 4], Some(600));
        b.record(4, 3, 250, &[2, 4], Some(700));
        b.record(9, 0, 10, &[9], None);
        b.record(7, 0, 10, &[7], None);
        b.record(4, 4, 10, &[1, 4], Some(1));
        let r = b.report(1, |s| if s == 4 { 6 } else { 1 });
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
}
