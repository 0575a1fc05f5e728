//! The samples `--explain` accounts for, kept while a run measures: the
//! slowest ones (a fixed number, the run's tail) and a uniform reservoir of
//! all of them (the bands below the tail, and the median's own account,
//! which the tail's is measured against).
//!
//! Both are allocated before the measurement and never grow: recording a
//! sample is a comparison, and for a slow one a sift in a binary heap; for
//! the reservoir a step of a xorshift generator (Vitter's algorithm R).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// One sample: its latency as reported (one-way, ns) and the window it
/// took on `CLOCK_MONOTONIC`, from its send to its echo's receipt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Kept {
    pub latency_ns: u64,
    pub start_ns: u64,
    pub end_ns: u64,
}

/// The slowest samples and a uniform reservoir of all.
pub struct TailKeeper {
    slowest: BinaryHeap<Reverse<Kept>>,
    slowest_cap: usize,
    reservoir: Vec<Kept>,
    reservoir_cap: usize,
    seen: u64,
    rng: u64,
}

/// What [`TailKeeper::finish`] hands over.
#[derive(Debug, Clone, Default)]
pub struct TailSamples {
    /// The slowest samples, slowest first.
    pub slowest: Vec<Kept>,
    /// A uniform sample of all, in no order.
    pub reservoir: Vec<Kept>,
    /// Samples recorded.
    pub seen: u64,
}

impl TailKeeper {
    /// `--explain`'s: the slowest 10 000 (the p99 of a million samples)
    /// and 10 000 of all, 480 kB.
    pub fn for_explain() -> TailKeeper {
        TailKeeper::new(10_000, 10_000)
    }

    /// Room for the `slowest` slowest samples and a reservoir of `uniform`.
    pub fn new(slowest: usize, uniform: usize) -> TailKeeper {
        TailKeeper {
            slowest: BinaryHeap::with_capacity(slowest.max(1)),
            slowest_cap: slowest.max(1),
            reservoir: Vec::with_capacity(uniform.max(1)),
            reservoir_cap: uniform.max(1),
            seen: 0,
            rng: 0x9E37_79B9_7F4A_7C15,
        }
    }

    /// Records one sample; allocation-free.
    #[inline(always)]
    pub fn record(&mut self, k: Kept) {
        self.seen += 1;
        if self.slowest.len() < self.slowest_cap {
            self.slowest.push(Reverse(k));
        } else if let Some(mut least) = self.slowest.peek_mut()
            && least.0.latency_ns < k.latency_ns
        {
            *least = Reverse(k);
        }
        if self.reservoir.len() < self.reservoir_cap {
            self.reservoir.push(k);
        } else {
            self.rng ^= self.rng << 13;
            self.rng ^= self.rng >> 7;
            self.rng ^= self.rng << 17;
            let j = self.rng % self.seen;
            if (j as usize) < self.reservoir_cap {
                self.reservoir[j as usize] = k;
            }
        }
    }

    /// The kept samples.
    pub fn finish(self) -> TailSamples {
        let mut slowest: Vec<Kept> = self.slowest.into_iter().map(|r| r.0).collect();
        slowest.sort_by(|a, b| b.cmp(a));
        TailSamples {
            slowest,
            reservoir: self.reservoir,
            seen: self.seen,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(latency_ns: u64) -> Kept {
        Kept {
            latency_ns,
            start_ns: latency_ns * 10,
            end_ns: latency_ns * 10 + 2 * latency_ns,
        }
    }

    #[test]
    fn the_slowest_are_kept_slowest_first_whatever_their_order() {
        let mut t = TailKeeper::new(3, 8);
        for l in [5, 1, 9, 3, 7, 2, 8] {
            t.record(k(l));
        }
        let kept = t.finish();
        assert_eq!(
            kept.slowest
                .iter()
                .map(|k| k.latency_ns)
                .collect::<Vec<_>>(),
            vec![9, 8, 7]
        );
        assert_eq!(kept.seen, 7);
        assert_eq!(kept.reservoir.len(), 7);
    }

    #[test]
    fn the_reservoir_is_uniform_over_the_run() {
        // 100 000 samples 0..100 000 into 1 000 places: each tenth of the
        // run holds about a tenth of the reservoir (binomial, sd ~9.5).
        let mut t = TailKeeper::new(1, 1000);
        for l in 0..100_000 {
            t.record(k(l));
        }
        let kept = t.finish();
        assert_eq!(kept.reservoir.len(), 1000);
        let mut tenths = [0u32; 10];
        for s in &kept.reservoir {
            tenths[(s.latency_ns / 10_000) as usize] += 1;
        }
        for (i, n) in tenths.iter().enumerate() {
            assert!(
                (55..=145).contains(n),
                "tenth {i} holds {n} of 1000: {tenths:?}"
            );
        }
    }

    #[test]
    fn recording_does_not_grow_what_was_allocated() {
        let mut t = TailKeeper::new(4, 4);
        let (a, b) = (t.slowest.capacity(), t.reservoir.capacity());
        for l in 0..10_000 {
            t.record(k(l));
        }
        assert_eq!((t.slowest.capacity(), t.reservoir.capacity()), (a, b));
    }
}
