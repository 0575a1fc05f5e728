//! Loss, duplicate and reordering accounting for one publisher's stream.
//!
//! Method: the tracker keeps the next expected sequence number and a window
//! of the last [`WINDOW`] sequence numbers seen.
//! - `seq == expected`: in order.
//! - `seq > expected`: the numbers in between are counted lost (for now).
//! - `seq < expected` and not yet seen within the window: a late sample;
//!   counted out-of-order, and taken back out of `lost`.
//! - seen before: a duplicate.
//! - older than the window: counted out-of-order (too old to tell a
//!   duplicate apart).
//!
//! At the end, [`SeqTracker::finish`] adds the tail loss: samples the
//! publisher reports having sent after the last one that arrived.
//!
//! A sequence number comes off the network: a forged or corrupt one may be
//! anything up to `u64::MAX`. No count wraps or panics on it (they
//! saturate); what exceeds the samples sent is the caller's to distrust.

/// Reordering window in samples.
pub const WINDOW: u64 = 4096;

/// Counters for one publisher.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SeqTracker {
    expected: u64,
    seen: Vec<u64>,
    /// Distinct samples received.
    pub received: u64,
    /// Samples missing so far.
    pub lost: u64,
    /// Samples received more than once.
    pub duplicates: u64,
    /// Samples that arrived after a later one.
    pub out_of_order: u64,
}

impl SeqTracker {
    /// A tracker expecting sequence number 0 first.
    pub fn new() -> Self {
        SeqTracker {
            seen: vec![0; (WINDOW / 64) as usize],
            ..Default::default()
        }
    }

    /// Starts expecting `first` (samples before it are not counted).
    pub fn start_at(&mut self, first: u64) {
        self.expected = first;
    }

    #[inline]
    fn bit(&self, seq: u64) -> bool {
        let i = seq % WINDOW;
        self.seen[(i / 64) as usize] & (1 << (i % 64)) != 0
    }

    #[inline]
    fn set(&mut self, seq: u64, on: bool) {
        let i = seq % WINDOW;
        let w = &mut self.seen[(i / 64) as usize];
        if on {
            *w |= 1 << (i % 64);
        } else {
            *w &= !(1 << (i % 64));
        }
    }

    /// Accounts one received sample. The next number in order, nearly
    /// every sample, is the inlined path; the rest is out of line.
    #[inline(always)]
    pub fn observe(&mut self, seq: u64) {
        if seq == self.expected {
            self.set(seq, true);
            self.expected = self.expected.saturating_add(1);
            self.received = self.received.saturating_add(1);
        } else {
            self.observe_out_of_order(seq);
        }
    }

    /// A number other than the next: a gap (lost until it fills), a late
    /// one (out of order) or a duplicate.
    #[cold]
    #[inline(never)]
    fn observe_out_of_order(&mut self, seq: u64) {
        if seq > self.expected {
            let gap = seq - self.expected;
            // Clear the window bits of the skipped numbers (they were last
            // used by numbers WINDOW earlier).
            for s in self.expected..seq.min(self.expected.saturating_add(WINDOW)) {
                self.set(s, false);
            }
            self.lost = self.lost.saturating_add(gap);
            self.set(seq, true);
            self.expected = seq.saturating_add(1);
            self.received = self.received.saturating_add(1);
        } else if self.expected - seq > WINDOW {
            self.out_of_order = self.out_of_order.saturating_add(1);
        } else if self.bit(seq) {
            self.duplicates = self.duplicates.saturating_add(1);
        } else {
            // Late: taken back out of `lost` (none to take back for a
            // number from before `start_at`).
            self.set(seq, true);
            self.out_of_order = self.out_of_order.saturating_add(1);
            self.lost = self.lost.saturating_sub(1);
            self.received = self.received.saturating_add(1);
        }
    }

    /// Adds the samples sent after the last one received: `sent` is the
    /// number the publisher sent in total, numbered from the start.
    pub fn finish(&mut self, sent_until: u64) {
        if sent_until > self.expected {
            self.lost = self.lost.saturating_add(sent_until - self.expected);
            self.expected = sent_until;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_order() {
        let mut t = SeqTracker::new();
        for s in 0..10_000 {
            t.observe(s);
        }
        t.finish(10_000);
        assert_eq!(
            (t.received, t.lost, t.duplicates, t.out_of_order),
            (10_000, 0, 0, 0)
        );
    }

    #[test]
    fn gaps_and_tail() {
        let mut t = SeqTracker::new();
        for s in (0..100).filter(|s| s % 10 != 3) {
            t.observe(s);
        }
        t.finish(105);
        assert_eq!(t.received, 90);
        assert_eq!(t.lost, 15);
    }

    #[test]
    fn reorder_and_duplicate() {
        let mut t = SeqTracker::new();
        for s in [0, 1, 3, 2, 4, 4, 1, 5] {
            t.observe(s);
        }
        t.finish(6);
        assert_eq!(t.received, 6);
        assert_eq!(t.lost, 0);
        assert_eq!(t.out_of_order, 1);
        assert_eq!(t.duplicates, 2);
    }

    #[test]
    fn window_reuse_after_gap() {
        let mut t = SeqTracker::new();
        t.observe(0);
        t.observe(WINDOW * 3);
        t.observe(WINDOW * 2 + 5);
        assert_eq!(t.duplicates, 0);
        assert_eq!(t.out_of_order, 1);
        assert_eq!(t.received, 3);
        assert_eq!(t.lost, WINDOW * 3 - 1 - 1);
    }

    /// A forged sample with a huge number, the largest one, or one from
    /// before the start: the counts neither wrap nor panic, and the huge
    /// loss they show exceeds what was sent (the caller's cue).
    #[test]
    fn forged_numbers_do_not_wrap_the_counts() {
        let mut t = SeqTracker::new();
        for s in 0..50 {
            t.observe(s);
        }
        t.observe(140_737_488_355_154);
        for s in 50..100 {
            t.observe(s);
        }
        t.finish(100);
        assert_eq!(
            (t.received, t.lost, t.duplicates, t.out_of_order),
            (51, 140_737_488_355_104, 0, 50)
        );
        t.observe(u64::MAX);
        t.observe(u64::MAX);
        t.observe(u64::MAX - 1);
        assert!(t.lost > u64::MAX / 2, "{t:?}");
        assert!(t.duplicates <= 2 && t.received <= 104, "{t:?}");

        let mut late = SeqTracker::new();
        late.start_at(1000);
        late.observe(999);
        assert_eq!((late.lost, late.received, late.out_of_order), (0, 1, 1));
    }
}
