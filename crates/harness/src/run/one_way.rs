//! `--one-way`: latency in each direction.
//!
//! The subscriber writes its receive time into each echo (on its own
//! clock). With `θ` the subscriber's clock minus the publisher's (0 on one
//! host; across hosts estimated before the run, [`crate::clock_offset`]):
//!
//! ```text
//! forward = subscriber receive time - ping's send time - θ
//! back    = round trip - forward
//! ```
//!
//! so the two directions add up to the round trip, and the subscriber's
//! turnaround (receive to echo) is in `back`, as it is in a round trip. A
//! value below zero (possible only through the offset's error, within its
//! bound) is recorded as 0 and counted. The run's headline `latency_ns`
//! is `forward` where the bound is at most a tenth of forward's p50, else
//! round trip / 2 ([`finish`]).

use crate::clock_offset::{self, Estimate};
use pubsubperf_core::result::OneWay;
use pubsubperf_core::stats::{LatencyRecorder, LatencySummary};

/// The two directions' recorders.
pub(super) struct Directions {
    forward: LatencyRecorder,
    back: LatencyRecorder,
    below_zero: u64,
}

impl Directions {
    pub(super) fn new() -> Directions {
        Directions {
            forward: LatencyRecorder::new(),
            back: LatencyRecorder::new(),
            below_zero: 0,
        }
    }

    /// Records one round trip of `rtt` ns whose forward time, corrected,
    /// is `forward` ns; `correct_ns` is the coordinated-omission interval
    /// (0: none). Returns the forward value recorded.
    #[inline]
    pub(super) fn record(&mut self, rtt: u64, forward: i64, correct_ns: u64) -> u64 {
        let f = self.not_below_zero(forward);
        let b = self.not_below_zero((rtt as i64).saturating_sub(forward));
        if correct_ns > 0 {
            self.forward.record_corrected(f, correct_ns);
            self.back.record_corrected(b, correct_ns);
        } else {
            self.forward.record(f);
            self.back.record(b);
        }
        f
    }

    #[inline]
    fn not_below_zero(&mut self, v: i64) -> u64 {
        if v < 0 {
            self.below_zero += 1;
            0
        } else {
            v as u64
        }
    }
}

/// The clocks a run's one-way values were read with: `None` per
/// subscriber on this host's clock, else the estimate before the run (its
/// offset corrects the values) and after.
#[derive(Debug, Clone, Default)]
pub struct Clocks {
    /// Per subscriber: the estimate before the run, if on another host.
    pub before: Vec<Option<Estimate>>,
    /// Per subscriber: the estimate after the run.
    pub after: Vec<Option<Estimate>>,
}

impl Clocks {
    /// The offset each subscriber's values are corrected with, by index.
    pub(super) fn offsets(&self) -> Vec<i64> {
        self.before
            .iter()
            .map(|e| e.map_or(0, |e| e.offset_ns))
            .collect()
    }
}

/// The run's one-way record, and its headline latency: forward where the
/// bound allows, else `rtt_half` (round trip / 2).
pub(super) fn finish(
    d: Directions,
    clocks: &Clocks,
    rtt_half: Option<LatencySummary>,
) -> (OneWay, Option<LatencySummary>) {
    let across: Vec<_> = clocks
        .before
        .iter()
        .enumerate()
        .filter_map(|(i, b)| b.map(|b| (i, b, clocks.after.get(i).copied().flatten())))
        .collect();
    let bound_ns = across
        .iter()
        .map(|(_, b, a)| clock_offset::run_bound(b, a.as_ref()))
        .max()
        .unwrap_or(0);
    let forward = d.forward.summary();
    let forward_is_headline = bound_ns.saturating_mul(10) <= forward.p50;
    let one_way = OneWay {
        back: d.back.summary(),
        clocks: if across.is_empty() {
            "one clock".into()
        } else {
            "estimated".into()
        },
        offsets: across
            .iter()
            .map(|(i, b, a)| clock_offset::record(*i, b, a.as_ref()))
            .collect(),
        bound_ns,
        below_zero: d.below_zero,
        headline: if forward_is_headline {
            "forward".into()
        } else {
            "round trip / 2".into()
        },
        forward: forward.clone(),
        round_trip_half: None,
    };
    if forward_is_headline {
        let one_way = OneWay {
            round_trip_half: rtt_half,
            ..one_way
        };
        (one_way, Some(forward))
    } else {
        (one_way, rtt_half)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(offset_ns: i64, bound_ns: u64, at_ns: u64) -> Estimate {
        Estimate {
            offset_ns,
            bound_ns,
            min_delay_ns: 2 * bound_ns,
            probes: 64,
            at_ns,
        }
    }

    #[test]
    fn the_two_directions_add_up_to_the_round_trip() {
        let mut d = Directions::new();
        assert_eq!(d.record(3_000, 2_000, 0), 2_000);
        assert_eq!(d.record(3_000, -100, 0), 0);
        assert_eq!(d.record(3_000, 3_100, 0), 3_100);
        assert_eq!(d.below_zero, 2);
        assert_eq!(d.forward.count(), 3);
        assert_eq!(d.back.quantile(1.0), 3_100);
    }

    #[test]
    fn forward_is_the_headline_only_where_the_bound_allows() {
        let half = || {
            let mut r = LatencyRecorder::new();
            r.record(777);
            Some(r.summary())
        };
        let run = |fwd: u64| {
            let mut d = Directions::new();
            d.record(fwd + 1_000, fwd as i64, 0);
            d
        };
        // One host: bound 0, forward always.
        let (ow, h) = finish(run(50), &Clocks::default(), half());
        assert_eq!(
            (ow.headline.as_str(), ow.clocks.as_str()),
            ("forward", "one clock")
        );
        assert_eq!(h.unwrap().p50, ow.forward.p50);
        assert_eq!(ow.round_trip_half.unwrap().p50, 777);
        // Across hosts: bound 2 * 10 + 10 + 0 = 30 µs against 1 ms: forward.
        let clocks = Clocks {
            before: vec![Some(est(5, 10_000, 0))],
            after: vec![Some(est(5, 10_000, 1_000))],
        };
        let (ow, h) = finish(run(1_000_000), &clocks, half());
        assert_eq!((ow.headline.as_str(), ow.bound_ns), ("forward", 30_000));
        assert_eq!(ow.offsets.len(), 1);
        assert!(h.unwrap().p50 > 900_000);
        // 30 µs against 100 µs: round trip / 2.
        let (ow, h) = finish(run(100_000), &clocks, half());
        assert_eq!(ow.headline, "round trip / 2");
        assert_eq!(h.unwrap().p50, 777);
        assert!(ow.round_trip_half.is_none());
        assert_eq!(clocks.offsets(), vec![5]);
    }
}
