//! [`CheckEvery`]: how often a fast loop reads the clock.
//!
//! A clock read costs 25-50 ns on the VMs we measure on, a large part of a
//! sample's time in a fast loop (at 3 million zero-copy samples a second,
//! one read per sample was 8 % of the writer's time; two more reads per
//! sample in the subscriber's callback cut zenoh's 64-byte throughput by
//! 14 %). The publisher's send loop and the subscriber's receive loop
//! read it only as often as they need to.

/// When a loop reads the clock: after event number n (a send, a received
/// sample, a receive call) when `n & mask == 0`. The mask starts at 0
/// (every event) and doubles while two checks come less than
/// [`CHECK_NS`]` / 2` apart, up to 63 (every 64 events), and drops back to
/// 0 when they come more than 2 x [`CHECK_NS`] apart (events that turn
/// slow overshoot by one window at most): a fast loop pays a clock read
/// per 64 events, a slow one (64 samples of 16 MiB took 47 s through
/// cyclonedds) still reads it at each. A mask, not a division, in the hot
/// loop.
pub(crate) struct CheckEvery {
    mask: u64,
    last: u64,
}

/// The gap between two clock checks of a fast loop that [`CheckEvery`]
/// aims at.
const CHECK_NS: u64 = 1_000_000;

/// Largest [`CheckEvery`] mask: a check every 64 events.
const MAX_CHECK_MASK: u64 = 63;

impl CheckEvery {
    /// Every event is checked until the checks show they come fast.
    pub(crate) fn new(now: u64) -> CheckEvery {
        CheckEvery { mask: 0, last: now }
    }

    /// True when the loop reads the clock after event number `n`: by the
    /// mask, or always when `every` (a paced, sleeping or pausing stream).
    #[inline(always)]
    pub(crate) fn due(&self, n: u64, every: bool) -> bool {
        every || n & self.mask == 0
    }

    /// After a check at `now`: widens or narrows the mask from the time
    /// since the last check.
    #[inline(always)]
    pub(crate) fn checked(&mut self, now: u64) {
        let gap = now.saturating_sub(self.last);
        self.last = now;
        if gap < CHECK_NS / 2 {
            self.mask = (self.mask << 1 | 1).min(MAX_CHECK_MASK);
        } else if gap > 2 * CHECK_NS {
            self.mask = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_widen_to_every_64_events_when_fast_and_narrow_when_slow() {
        let mut c = CheckEvery::new(0);
        let mut now = 0;
        for _ in 0..10 {
            now += 10_000;
            c.checked(now);
        }
        assert_eq!(c.mask, MAX_CHECK_MASK);
        assert!(c.due(128, false) && !c.due(129, false) && c.due(129, true));
        // Events that turn slow: every one is checked from the next check on.
        now += 100 * CHECK_NS;
        c.checked(now);
        assert_eq!(c.mask, 0);
        assert!(c.due(129, false));
        // Between half and twice the aim: unchanged.
        c.mask = 7;
        c.checked(now + CHECK_NS);
        assert_eq!(c.mask, 7);
    }
}
