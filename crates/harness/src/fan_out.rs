//! Fan-out: when each sample reached the first and the last of several
//! subscribers, and the spread between them.
//!
//! With two or more subscribers on the publisher's host (one clock), each
//! subscriber records, for every `every`-th measured sample of publisher 0
//! (`every` a power of two: every ping of a latency test; in a throughput
//! test so that [`SLOTS`] samples span the run at its `--rate`, else every
//! [`EVERY_AT_MAX`]th), its one-way delay: its receive time minus the
//! header's send time. The first [`SLOTS`] such samples are kept and sent
//! with its result. The publisher then takes, per sample that every
//! subscriber received, the smallest delay (the first delivery), the
//! largest (the last) and their difference (the spread), each into a
//! histogram ([`pubsubperf_core::result::FanOut`]).
//!
//! The clock is read once more per recorded sample only, on the
//! subscriber's receive path.

use pubsubperf_core::result::{FanOut, TestKind};
use pubsubperf_core::stats::LatencyRecorder;

/// Samples recorded per subscriber at most.
pub const SLOTS: usize = 16_384;
/// A throughput test at `max` records every this many samples.
pub const EVERY_AT_MAX: u64 = 256;
/// A slot no sample filled.
pub const MISSING: u32 = u32::MAX;

/// How often the subscribers record, for a run of `test` that sends
/// `expected` samples (None: as many as it can) to `subs` subscribers, all
/// on this host when `one_clock`; 0: not at all.
pub fn every(test: TestKind, expected: Option<f64>, subs: usize, one_clock: bool) -> u64 {
    if subs < 2 || !one_clock {
        return 0;
    }
    match (test, expected) {
        (TestKind::Latency, _) => 1,
        (TestKind::Throughput, Some(n)) => {
            ((n / SLOTS as f64).ceil().max(1.0) as u64).next_power_of_two()
        }
        (TestKind::Throughput, None) => EVERY_AT_MAX,
    }
}

/// [`every`] for a run of `spec` to subscribers `subs` (those with a clock
/// of their own are on other hosts).
pub fn every_of(spec: &crate::spec::RunSpec, subs: &[crate::session::SubConn]) -> u64 {
    let expected = if spec.count > 0 {
        Some(spec.count as f64)
    } else if spec.rate > 0.0 {
        Some(spec.rate * spec.duration_ns as f64 / 1e9)
    } else {
        None
    };
    let one_clock = subs.iter().all(|s| !s.own_clock);
    every(spec.test, expected, subs.len(), one_clock)
}

/// A subscriber's record: the delay of each recorded sample, by slot.
#[derive(Debug, Default)]
pub struct Arrivals {
    shift: u32,
    mask: u64,
    delays: Vec<u32>,
}

impl Arrivals {
    /// Records every `every`-th sample (0: nothing).
    pub fn new(every: u64) -> Arrivals {
        if every == 0 || !every.is_power_of_two() {
            return Arrivals::default();
        }
        Arrivals {
            shift: every.trailing_zeros(),
            mask: every - 1,
            delays: vec![MISSING; SLOTS],
        }
    }

    /// Whether sample `seq` is one to record.
    #[inline(always)]
    pub fn wants(&self, seq: u64) -> bool {
        seq & self.mask == 0 && ((seq >> self.shift) as usize) < self.delays.len()
    }

    /// Records sample `seq` received `delay_ns` after it was sent.
    #[inline(always)]
    pub fn record(&mut self, seq: u64, delay_ns: u64) {
        if let Some(d) = self.delays.get_mut((seq >> self.shift) as usize) {
            *d = delay_ns.min(u64::from(MISSING - 1)) as u32;
        }
    }

    /// The record, trailing empty slots dropped.
    pub fn into_delays(mut self) -> Vec<u32> {
        while self.delays.last() == Some(&MISSING) {
            self.delays.pop();
        }
        self.delays
    }
}

/// The fan-out of the subscribers' records (None unless two or more have
/// one): per slot every subscriber filled, its first and last delivery and
/// their spread.
pub fn combine(every: u64, records: &[Vec<u32>]) -> Option<FanOut> {
    if records.len() < 2 || every == 0 {
        return None;
    }
    let (mut first, mut last, mut spread) = (
        LatencyRecorder::new(),
        LatencyRecorder::new(),
        LatencyRecorder::new(),
    );
    let slots = records.iter().map(Vec::len).min().unwrap_or(0).min(SLOTS);
    for j in 0..slots {
        let mut lo = u32::MAX;
        let mut hi = 0;
        for r in records {
            let d = r[j];
            if d == MISSING {
                lo = MISSING;
                break;
            }
            lo = lo.min(d);
            hi = hi.max(d);
        }
        if lo == MISSING {
            continue;
        }
        first.record(u64::from(lo));
        last.record(u64::from(hi));
        spread.record(u64::from(hi - lo));
    }
    Some(FanOut {
        every,
        subscribers: records.len() as u64,
        samples: first.count(),
        first_ns: first.summary(),
        last_ns: last.summary(),
        spread_ns: spread.summary(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_is_a_power_of_two_that_fits_the_run() {
        assert_eq!(every(TestKind::Latency, None, 4, true), 1);
        assert_eq!(every(TestKind::Latency, None, 1, true), 0);
        assert_eq!(every(TestKind::Latency, None, 4, false), 0);
        assert_eq!(every(TestKind::Throughput, None, 2, true), EVERY_AT_MAX);
        // 10000 samples fit.
        assert_eq!(every(TestKind::Throughput, Some(1e4), 2, true), 1);
        // 1M samples: every 64th.
        assert_eq!(every(TestKind::Throughput, Some(1e6), 2, true), 64);
    }

    #[test]
    fn a_record_keeps_every_nth_sample_in_its_slot() {
        let mut a = Arrivals::new(4);
        for seq in 0..20u64 {
            if a.wants(seq) {
                a.record(seq, 100 + seq);
            }
        }
        let d = a.into_delays();
        assert_eq!(d, [100, 104, 108, 112, 116]);
        assert!(!Arrivals::new(0).wants(0));
    }

    #[test]
    fn the_spread_is_last_minus_first_over_samples_every_subscriber_got() {
        let a = vec![100, 200, MISSING, 400];
        let b = vec![150, 180, 300, 400];
        let c = vec![120, 260, 310];
        let f = combine(2, &[a, b, c]).unwrap();
        assert_eq!((f.samples, f.subscribers, f.every), (2, 3, 2));
        assert_eq!((f.first_ns.min, f.first_ns.max), (100, 180));
        assert_eq!((f.last_ns.min, f.last_ns.max), (150, 260));
        assert_eq!((f.spread_ns.min, f.spread_ns.max), (50, 80));
        assert!(combine(1, &[vec![1]]).is_none());
    }
}
