//! [`RateWindow`]: the span a subscriber's throughput is computed over.
//!
//! The window opens at the first measured sample's arrival and closes at
//! the last *timed* one: a fast subscriber reads the clock only every so
//! many samples or receive calls ([`CheckEvery`](crate::check_every)), and
//! at each reading the window records how many measured samples of each
//! publisher had arrived by then. The rate is that count over that time,
//! both taken at the same reading: the samples that came after the last
//! reading (those of at most 63 samples or calls, about a millisecond of a
//! fast stream; none of a slow one) count as received but not in the rate,
//! so the rate is measured, not extrapolated.

use pubsubperf_core::seq::SeqTracker;

/// The first measured sample's arrival, the last timed arrival and the
/// per-publisher counts at it; times on the binding's clock.
#[derive(Default)]
pub(crate) struct RateWindow {
    first_ns: u64,
    last_ns: u64,
    /// Measured samples of each publisher received by `last_ns`.
    counts: Vec<u64>,
}

impl RateWindow {
    /// True once the first measured sample arrived.
    #[inline(always)]
    pub(crate) fn started(&self) -> bool {
        self.first_ns != 0
    }

    /// Opens the window at `now`, the first measured sample's arrival.
    pub(crate) fn start(&mut self, now: u64, trackers: &[SeqTracker]) {
        self.first_ns = now;
        self.mark(now, trackers);
    }

    /// Moves the window's end to `now`, read after the samples the
    /// trackers counted so far arrived. No allocation once every
    /// publisher was seen.
    #[inline(always)]
    pub(crate) fn mark(&mut self, now: u64, trackers: &[SeqTracker]) {
        self.last_ns = now;
        self.counts.clear();
        self.counts.extend(trackers.iter().map(|t| t.received));
    }

    /// The window's length in seconds.
    pub(crate) fn seconds(&self) -> f64 {
        self.last_ns.saturating_sub(self.first_ns) as f64 / 1e9
    }

    /// Measured samples of `publisher` received within the window.
    pub(crate) fn count(&self, publisher: usize) -> u64 {
        self.counts.get(publisher).copied().unwrap_or(0)
    }

    /// Measured samples of all publishers received within the window.
    pub(crate) fn total(&self) -> u64 {
        self.counts.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn received(n: &[u64]) -> Vec<SeqTracker> {
        n.iter()
            .map(|&k| {
                let mut t = SeqTracker::new();
                (0..k).for_each(|s| t.observe(s));
                t
            })
            .collect()
    }

    #[test]
    fn counts_and_time_come_from_the_same_reading() {
        let mut w = RateWindow::default();
        assert!(!w.started());
        w.start(1_000, &received(&[1]));
        assert!(w.started());
        w.mark(2_000_001_000, &received(&[100, 50]));
        assert_eq!(w.seconds(), 2.0);
        assert_eq!((w.count(0), w.count(1), w.count(7)), (100, 50, 0));
        assert_eq!(w.total(), 150);
    }
}
