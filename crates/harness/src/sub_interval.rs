//! A subscriber's report interval from its running totals. Its count and
//! its rates are of one counter: the samples it received in a throughput
//! test, the pings it echoed in a latency test (where it counts no
//! received sample, and a Perftest subscriber prints the pings it echoes).

use pubsubperf_core::result::{Interval, TestKind};

/// A subscriber's running totals at one report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Totals {
    /// When, on the binding's clock, ns.
    pub at_ns: u64,
    /// Samples received (a throughput test) or pings echoed (a latency
    /// test) so far.
    pub counted: u64,
    /// Samples lost so far.
    pub lost: u64,
}

impl Totals {
    /// The totals of a `test` at `at_ns`: its counter is `echoed` in a
    /// latency test, `received` otherwise.
    pub(crate) fn new(test: TestKind, at_ns: u64, received: u64, echoed: u64, lost: u64) -> Totals {
        let counted = if test == TestKind::Latency {
            echoed
        } else {
            received
        };
        Totals {
            at_ns,
            counted,
            lost,
        }
    }
}

/// The interval from `last` to `now` of subscriber `subscriber`, whose
/// measurement started at `t0_ns`, with samples of `size` bytes (its CPU is
/// the caller's).
pub(crate) fn interval(
    last: &Totals,
    now: &Totals,
    t0_ns: u64,
    size: u64,
    subscriber: usize,
) -> Interval {
    let dt = now.at_ns.saturating_sub(last.at_ns) as f64 / 1e9;
    let d = now.counted.saturating_sub(last.counted);
    let (samples_per_s, mbps) = if dt > 0.0 {
        (d as f64 / dt, d as f64 * size as f64 * 8.0 / dt / 1e6)
    } else {
        (0.0, 0.0)
    };
    Interval {
        t_s: now.at_ns.saturating_sub(t0_ns) as f64 / 1e9,
        subscriber,
        received: d,
        lost: now.lost.saturating_sub(last.lost),
        samples_per_s,
        mbps,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    /// A latency test's subscriber receives no counted sample (its
    /// received total stays 0) and echoes pings: its rate is its echoes',
    /// not 0 minus the echoes so far (which wrapped to 1.8e19 samples/s).
    #[test]
    fn a_latency_tests_rate_is_its_echoes_per_second() {
        let last = Totals::new(TestKind::Latency, S, 0, 4_000, 0);
        let now = Totals::new(TestKind::Latency, 2 * S, 0, 6_000, 0);
        let i = interval(&last, &now, 0, 1024, 1);
        assert_eq!(i.received, 2_000);
        assert_eq!(i.samples_per_s, 2_000.0);
        assert_eq!(i.mbps, 2_000.0 * 1024.0 * 8.0 / 1e6);
        assert_eq!(i.t_s, 2.0);
        assert_eq!(i.subscriber, 1);
    }

    #[test]
    fn a_throughput_tests_rate_is_its_received_samples_per_second() {
        let last = Totals::new(TestKind::Throughput, S, 1_000, 99, 3);
        let now = Totals::new(TestKind::Throughput, 3 * S, 5_000, 99, 7);
        let i = interval(&last, &now, S, 100, 0);
        assert_eq!(i.received, 4_000);
        assert_eq!(i.lost, 4);
        assert_eq!(i.samples_per_s, 2_000.0);
        assert_eq!(i.mbps, 2_000.0 * 100.0 * 8.0 / 1e6);
        assert_eq!(i.t_s, 2.0);
    }

    #[test]
    fn an_empty_interval_has_no_rate() {
        let t = Totals::new(TestKind::Throughput, S, 10, 0, 0);
        let i = interval(&t, &t, 0, 64, 0);
        assert_eq!((i.received, i.samples_per_s, i.mbps), (0, 0.0, 0.0));
    }
}
