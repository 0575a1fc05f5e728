//! The offset between the publisher's and a subscriber's `CLOCK_MONOTONIC`,
//! for one-way latency across hosts (`--one-way` with `--connect` or
//! `ssh://` subscribers).
//!
//! ## Method
//! Between runs the publisher sends probes over the control channel, one
//! after another, as NTP does: it stamps `t1` when it sends one, the
//! subscriber stamps `t2` when the probe arrives and `t3` when it answers,
//! and the publisher's reader thread stamps `t4` when the answer arrives.
//! With `θ` the subscriber's clock minus the publisher's and delays that
//! are never negative, each exchange confines the offset:
//!
//! ```text
//! t2 = t1 + forward delay + θ   =>  θ <= t2 - t1
//! t4 = t3 + back delay - θ      =>  θ >= t3 - t4
//! ```
//!
//! an interval whose width is the exchange's round trip minus the
//! subscriber's turnaround, `δ = (t4 - t1) - (t3 - t2)`. Of [`PROBES`]
//! exchanges the quarter with the smallest `δ` is kept (queueing only ever
//! adds delay) and their intervals are intersected; the estimate is the
//! middle of the intersection and its **bound** half its width: the true
//! offset lies within `estimate ± bound` whatever the two directions'
//! delays were, as long as the clocks did not drift during the probes (a
//! few milliseconds). Should drift make the intervals disagree (an empty
//! intersection), the single fastest exchange's interval is used.
//!
//! The probes run before and after each run ([`crate::run`]); how far the
//! estimate moved between the two is the drift over the run, which widens
//! the bound of the run's one-way figures (see [`run_bound`]).

use crate::Fault;
use crate::protocol::Msg;
use crate::session::SubConn;
use pubsubperf_core::clock;
use pubsubperf_core::result::ClockOffset;
use std::time::{Duration, Instant};

/// Probes per estimate.
pub const PROBES: usize = 64;

/// How long one probe's answer may take.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(2);

/// One probe's four timestamps (ns; `t1`, `t4` on the publisher's clock,
/// `t2`, `t3` on the subscriber's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exchange {
    /// Probe sent.
    pub t1: u64,
    /// Probe received.
    pub t2: u64,
    /// Answer sent.
    pub t3: u64,
    /// Answer received.
    pub t4: u64,
}

impl Exchange {
    /// Round trip less the subscriber's turnaround.
    fn delay(&self) -> i128 {
        (i128::from(self.t4) - i128::from(self.t1)) - (i128::from(self.t3) - i128::from(self.t2))
    }

    /// The offsets this exchange allows: `[t3 - t4, t2 - t1]`.
    fn interval(&self) -> (i128, i128) {
        (
            i128::from(self.t3) - i128::from(self.t4),
            i128::from(self.t2) - i128::from(self.t1),
        )
    }
}

/// The offset one set of probes gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Estimate {
    /// Subscriber's clock minus the publisher's, ns.
    pub offset_ns: i64,
    /// The true offset lies within `offset_ns ± bound_ns`.
    pub bound_ns: u64,
    /// The smallest exchange delay `δ`, ns.
    pub min_delay_ns: u64,
    /// Exchanges the estimate was made from.
    pub probes: u32,
    /// The publisher's clock in the middle of the probes, ns.
    pub at_ns: u64,
}

/// The estimate from a set of exchanges ([module docs](self)); `None`
/// without any.
pub fn estimate(exchanges: &[Exchange]) -> Option<Estimate> {
    let mut by_delay: Vec<&Exchange> = exchanges.iter().collect();
    by_delay.sort_by_key(|e| e.delay());
    let fastest = *by_delay.first()?;
    let kept = &by_delay[..by_delay.len().div_ceil(4)];
    let (lo, hi) = kept.iter().fold((i128::MIN, i128::MAX), |(lo, hi), e| {
        let (l, h) = e.interval();
        (lo.max(l), hi.min(h))
    });
    let (lo, hi) = if lo <= hi {
        (lo, hi)
    } else {
        fastest.interval()
    };
    let first = exchanges.iter().map(|e| e.t1).min().unwrap_or(0);
    let last = exchanges.iter().map(|e| e.t4).max().unwrap_or(0);
    Some(Estimate {
        offset_ns: ((lo + hi).div_euclid(2)).clamp(i64::MIN.into(), i64::MAX.into()) as i64,
        bound_ns: u64::try_from((hi - lo + 1) / 2).unwrap_or(u64::MAX),
        min_delay_ns: u64::try_from(fastest.delay().max(0)).unwrap_or(u64::MAX),
        probes: exchanges.len() as u32,
        at_ns: first + last.saturating_sub(first) / 2,
    })
}

/// Probes subscriber `sub`'s clock [`PROBES`] times (between runs: the
/// subscriber answers from its session loop) and estimates its offset.
pub fn probe(sub: &mut SubConn) -> Result<Estimate, Fault> {
    let mut exchanges = Vec::with_capacity(PROBES);
    for _ in 0..PROBES {
        let t1 = clock::now_ns();
        sub.send(&Msg::ClockProbe { t1 })?;
        let deadline = Instant::now() + ANSWER_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match sub.recv(left)? {
                Msg::ClockEcho { t1: t, t2, t3, t4 } if t == t1 => {
                    exchanges.push(Exchange { t1, t2, t3, t4 });
                    break;
                }
                // A late report of the run before, a heartbeat.
                _ => continue,
            }
        }
    }
    estimate(&exchanges).ok_or_else(|| Fault::Peer("no clock probe answered".into()))
}

/// The estimates of one subscriber before and after a run, as recorded.
pub fn record(subscriber: usize, before: &Estimate, after: Option<&Estimate>) -> ClockOffset {
    let drift_ppm = after.and_then(|a| {
        let span = a.at_ns.checked_sub(before.at_ns).filter(|s| *s > 0)?;
        Some((a.offset_ns as f64 - before.offset_ns as f64) / span as f64 * 1e6)
    });
    ClockOffset {
        subscriber,
        before_ns: before.offset_ns,
        before_bound_ns: before.bound_ns,
        before_min_delay_ns: before.min_delay_ns,
        after_ns: after.map(|a| a.offset_ns),
        after_bound_ns: after.map(|a| a.bound_ns),
        drift_ppm,
        probes: before.probes,
    }
}

/// The bound on every one-way value of a run whose values were corrected
/// with the estimate `before`: the true offset at any moment of the run is
/// within `before`'s bound of the estimate at its start, plus how far the
/// true offset moved during the run, which is at most how far the two
/// estimates moved plus both their bounds (the clocks drift steadily over
/// seconds). Without an estimate after the run (it failed), `before`'s
/// bound alone.
pub fn run_bound(before: &Estimate, after: Option<&Estimate>) -> u64 {
    match after {
        Some(a) => {
            let moved = (i128::from(a.offset_ns) - i128::from(before.offset_ns)).unsigned_abs();
            let moved = u64::try_from(moved).unwrap_or(u64::MAX);
            before
                .bound_ns
                .saturating_mul(2)
                .saturating_add(a.bound_ns)
                .saturating_add(moved)
        }
        None => before.bound_ns,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An exchange over a link with the given delays each way, the
    /// subscriber `offset` ahead and answering after `turn`.
    fn exchange(t1: u64, offset: i64, forward: u64, back: u64, turn: u64) -> Exchange {
        // Both clocks far from zero, as a booted host's are.
        let t1 = t1 + 1_000_000_000_000;
        let t2 = (t1 + forward) as i64 + offset;
        let t3 = t2 + turn as i64;
        let t4 = (t3 - offset) as u64 + back;
        Exchange {
            t1,
            t2: t2 as u64,
            t3: t3 as u64,
            t4,
        }
    }

    #[test]
    fn symmetric_delays_give_the_offset_exactly() {
        let off = 1_000_000_000_000i64;
        let ex: Vec<_> = (0..8)
            .map(|i| exchange(5_000_000 + i * 100_000, off, 20_000, 20_000, 3_000))
            .collect();
        let e = estimate(&ex).unwrap();
        assert_eq!(e.offset_ns, off);
        assert_eq!(e.min_delay_ns, 40_000);
        // The bound is half the round trip: the split of 40 µs is unknown.
        assert_eq!(e.bound_ns, 20_000);
        assert_eq!(e.probes, 8);
    }

    #[test]
    fn the_truth_is_always_within_the_bound_and_intersection_narrows_it() {
        // Asymmetric and varying delays: the estimate is off, but never by
        // more than its bound; intersecting several exchanges whose
        // asymmetries differ narrows the bound below any single one's.
        let off = -123_456_789i64;
        let ex = [
            exchange(1_000, off, 10_000, 30_000, 500),
            exchange(100_000, off, 30_000, 10_000, 500),
            exchange(200_000, off, 25_000, 25_000, 500),
            exchange(300_000, off, 100_000, 100_000, 500),
        ];
        let e = estimate(&ex).unwrap();
        assert!(
            (i128::from(e.offset_ns) - i128::from(off)).unsigned_abs() <= u128::from(e.bound_ns),
            "{e:?}"
        );
        // Kept: the one fastest (a quarter of 4); its 40 µs round trip
        // gives ± 20 µs.
        assert_eq!(e.bound_ns, 20_000);
        let many: Vec<_> = (0..40)
            .map(|i| {
                exchange(
                    i * 1_000_000,
                    off,
                    10_000 + i % 3 * 5_000,
                    20_000 - i % 3 * 5_000,
                    0,
                )
            })
            .collect();
        let e = estimate(&many).unwrap();
        assert!(
            (i128::from(e.offset_ns) - i128::from(off)).unsigned_abs() <= u128::from(e.bound_ns),
            "{e:?}"
        );
        assert!(e.bound_ns < 15_000, "{e:?}");
    }

    #[test]
    fn a_one_way_delay_shifts_the_estimate_by_half_and_the_bound_covers_it() {
        // 1 ms added one way only (the relay of the namespace tests): the
        // two-way exchange cannot tell, the bound says so.
        let ex: Vec<_> = (0..16)
            .map(|i| exchange(i * 2_000_000, 0, 1_000_000 + 20_000, 20_000, 1_000))
            .collect();
        let e = estimate(&ex).unwrap();
        assert_eq!(e.offset_ns, 500_000);
        assert_eq!(e.bound_ns, 520_000);
    }

    #[test]
    fn drift_disagreeing_intervals_fall_back_to_the_fastest() {
        let ex = [
            exchange(0, 0, 1_000, 1_000, 0),
            exchange(10_000_000, 50_000, 1_000, 1_000, 0),
        ];
        let e = estimate(&ex).unwrap();
        // Kept: one of two; no intersection needed.
        assert_eq!(e.bound_ns, 1_000);
        let ex = [
            exchange(0, 0, 1_000, 1_000, 0),
            exchange(10_000_000, 50_000, 1_000, 1_000, 0),
            exchange(20_000_000, 0, 1_500, 1_500, 0),
            exchange(30_000_000, 0, 1_600, 1_600, 0),
            exchange(40_000_000, 0, 1_700, 1_700, 0),
        ];
        // Two kept (2 000 and 2 000 ns), disagreeing by 50 µs: the fastest's.
        let e = estimate(&ex).unwrap();
        assert!(e.offset_ns == 0 || e.offset_ns == 50_000, "{e:?}");
        assert_eq!(e.bound_ns, 1_000);
        assert!(estimate(&[]).is_none());
    }

    #[test]
    fn records_drift_and_the_run_bound() {
        let b = Estimate {
            offset_ns: 1_000,
            bound_ns: 10,
            min_delay_ns: 20,
            probes: 64,
            at_ns: 1_000_000_000,
        };
        let a = Estimate {
            offset_ns: 1_500,
            bound_ns: 12,
            at_ns: 11_000_000_000,
            ..b
        };
        let r = record(0, &b, Some(&a));
        assert!((r.drift_ppm.unwrap() - 0.05).abs() < 1e-9, "{r:?}");
        assert_eq!(r.after_ns, Some(1_500));
        assert_eq!(run_bound(&b, Some(&a)), 10 * 2 + 12 + 500);
        assert_eq!(run_bound(&b, None), 10);
    }
}
