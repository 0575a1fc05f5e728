//! The machine's floors: what no shared-memory transport can beat.
//!
//! [`measure`] runs three micro-measurements (about 2 s in total) whose
//! figures the `shm` binding is compared with:
//!
//! - **clock cost** ([`Calibration::clock_ns`]): `clock_gettime(CLOCK_MONOTONIC)`
//!   called 10 000 times in a row (the vDSO path the harness uses to
//!   timestamp samples), total time divided by the number of calls; the
//!   best (smallest) of 200 such trials.
//! - **cross-core cache-line latency** ([`Calibration::cache_line`]): two
//!   threads pinned to two cores (0 and 1 by default) ping-pong one
//!   `AtomicU64` alone in a 128-byte aligned line: the first stores an odd
//!   number and spins until the second, which spins on the line, answers
//!   with the next even number. Round trips are timed in batches of 100
//!   (one clock read per batch, so the clock cost is negligible); 2 000
//!   batches after 10 000 warm-up round trips. The batch mean is one sample
//!   of the round-trip time (RTT); we report the median and minimum RTT and
//!   **one-way = RTT p50 / 2**, the cost of moving one cache line from one
//!   core to the other, which is the floor of a busy-polling shared-memory
//!   one-way latency (the `shm` binding moves a small zero-copy sample in
//!   one line: slot head and sample header together).
//! - **memcpy bandwidth** ([`Calibration::memcpy`]): `copy_nonoverlapping`
//!   (libc `memcpy`) of a buffer of 64 KiB, 1 MiB and 64 MiB into another
//!   of the same size, both touched beforehand, on one thread pinned to the
//!   first core; a trial copies the buffer as many times as make at least
//!   4 MiB (once for 64 MiB), 50 trials, the best in GB/s (10^9 bytes per
//!   second, bytes copied once, not counting the read). 64 KiB fits in L1/L2, 1 MiB in L2/L3, 64 MiB
//!   goes to DRAM.
//!
//! These are floors, and interference (other processes on the cores) only
//! makes a trial slower: clock cost and memcpy bandwidth therefore report
//! the best of many short trials (short, so that some fit between two
//! preemptions on a busy machine), the cache line the median of many short
//! batches (a preempted batch is an outlier the median ignores).
//!
//! Nothing here allocates or locks inside the timed loops.

use crate::clock::now_ns;
use crate::page_buf::PageBuf;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The sizes [`measure`] copies.
pub const MEMCPY_SIZES: [usize; 3] = [64 << 10, 1 << 20, 64 << 20];

/// The calibration of this machine.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Calibration {
    /// Nanoseconds per `clock_gettime(CLOCK_MONOTONIC)` call.
    pub clock_ns: f64,
    /// Cross-core cache-line ping-pong; `None` when two cores are not
    /// available (with the reason in `cache_line_error`).
    pub cache_line: Option<CacheLine>,
    /// Why `cache_line` is missing.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cache_line_error: Option<String>,
    /// memcpy bandwidth per size.
    pub memcpy: Vec<Memcpy>,
}

impl Calibration {
    /// memcpy bandwidth at `size` bytes, if measured.
    pub fn memcpy_gb_per_s(&self, size: usize) -> Option<f64> {
        self.memcpy
            .iter()
            .find(|m| m.size == size)
            .map(|m| m.gb_per_s)
    }
}

/// Cross-core cache-line round trip.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CacheLine {
    /// The two cores the threads were pinned to.
    pub cores: [usize; 2],
    /// Median round-trip time, ns.
    pub rtt_p50_ns: f64,
    /// Smallest batch-mean round-trip time, ns.
    pub rtt_min_ns: f64,
    /// One-way latency = `rtt_p50_ns / 2`, ns.
    pub one_way_p50_ns: f64,
    /// Round trips timed.
    pub round_trips: u64,
}

/// memcpy bandwidth at one size.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Memcpy {
    /// Bytes per copy.
    pub size: usize,
    /// Best of 50 trials, 10^9 bytes per second.
    pub gb_per_s: f64,
}

/// Measures everything on cores 0 and 1.
pub fn measure() -> Calibration {
    measure_on([0, 1])
}

/// Measures everything, ping-ponging between `cores` and copying on
/// `cores[0]`. The calling thread's affinity is left alone (the work runs
/// on threads of its own).
pub fn measure_on(cores: [usize; 2]) -> Calibration {
    let (clock_ns, memcpy) = std::thread::spawn(move || {
        let _ = crate::sys::pin_to_cpu(cores[0]);
        let clock = clock_cost();
        let m = MEMCPY_SIZES
            .iter()
            .map(|&size| Memcpy {
                size,
                gb_per_s: memcpy_bandwidth(size),
            })
            .collect::<Vec<_>>();
        (clock, m)
    })
    .join()
    .expect("calibration thread");
    let (cache_line, cache_line_error) = match cache_line(cores) {
        Ok(c) => (Some(c), None),
        Err(e) => (None, Some(e)),
    };
    Calibration {
        clock_ns,
        cache_line,
        cache_line_error,
        memcpy,
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// ns per `clock_gettime(CLOCK_MONOTONIC)`.
pub fn clock_cost() -> f64 {
    const CALLS: u64 = 10_000;
    let mut best = f64::INFINITY;
    for _ in 0..200 {
        let start = now_ns();
        let mut sink = 0u64;
        for _ in 0..CALLS {
            sink = sink.wrapping_add(now_ns());
        }
        let end = now_ns();
        std::hint::black_box(sink);
        best = best.min((end - start) as f64 / CALLS as f64);
    }
    best
}

/// memcpy bandwidth in GB/s at `size` bytes.
///
/// Both buffers are page-aligned, so source and destination are a whole
/// number of pages apart. Two heap buffers side by side would be a page
/// multiple plus the allocator's 16-byte header apart: the stores then
/// alias the next loads within a 4 KiB page (the "short distance" case of
/// `rep movsb`), which made the 64 KiB copy run at ~2 GB/s here against
/// ~25 GB/s at 1 MiB (whose buffers are mmapped, page-aligned alike).
pub fn memcpy_bandwidth(size: usize) -> f64 {
    let mut from = PageBuf::new(size);
    from.fill(0x5a);
    let mut to = PageBuf::new(size);
    to.fill(0xa5);
    // Raw pointers, so that the copy is the platform's memcpy alone.
    let (src, dst) = (from.as_ptr(), to.as_mut_ptr());
    let copies = (4usize << 20).div_ceil(size);
    // One untimed pass warms caches and TLBs.
    // SAFETY: two distinct buffers of at least `size` bytes.
    unsafe { std::ptr::copy_nonoverlapping(src, dst, size) };
    let mut best = 0f64;
    for _ in 0..50 {
        let start = now_ns();
        for _ in 0..copies {
            // SAFETY: two distinct buffers of `size` bytes.
            unsafe { std::ptr::copy_nonoverlapping(std::hint::black_box(src), dst, size) };
            std::hint::black_box(dst);
        }
        let el = (now_ns() - start).max(1);
        best = best.max((copies * size) as f64 / el as f64);
    }
    best
}

#[repr(C, align(128))]
struct Line(AtomicU64);

/// Cross-core cache-line round trip between `cores`.
pub fn cache_line(cores: [usize; 2]) -> Result<CacheLine, String> {
    const WARMUP: u64 = 10_000;
    const BATCH: u64 = 100;
    const BATCHES: usize = 2_000;
    if crate::sys::cores() < 2 {
        return Err("needs two cores".into());
    }
    let line = Arc::new(Line(AtomicU64::new(0)));
    let total = WARMUP + BATCH * BATCHES as u64;
    let l2 = line.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    let echo = std::thread::spawn(move || -> Result<(), String> {
        let pinned = crate::sys::pin_to_cpu(cores[1]);
        let _ = tx.send(pinned.clone());
        pinned?;
        for i in 0..total {
            let want = 2 * i + 1;
            while l2.0.load(Ordering::Acquire) != want {
                std::hint::spin_loop();
            }
            l2.0.store(want + 1, Ordering::Release);
        }
        Ok(())
    });
    let pinned = rx.recv().map_err(|_| "echo thread died".to_string())?;
    if let Err(e) = pinned {
        let _ = echo.join();
        return Err(e);
    }
    let line2 = line.clone();
    let samples = std::thread::spawn(move || -> Result<Vec<f64>, String> {
        let pinned = crate::sys::pin_to_cpu(cores[0]);
        let mut samples = vec![0f64; BATCHES];
        let mut i = 0u64;
        let round = |i: &mut u64| {
            let v = 2 * *i + 1;
            line2.0.store(v, Ordering::Release);
            while line2.0.load(Ordering::Acquire) != v + 1 {
                std::hint::spin_loop();
            }
            *i += 1;
        };
        for _ in 0..WARMUP {
            round(&mut i);
        }
        for s in samples.iter_mut() {
            let t0 = now_ns();
            for _ in 0..BATCH {
                round(&mut i);
            }
            *s = (now_ns() - t0) as f64 / BATCH as f64;
        }
        pinned.map(|_| samples)
    })
    .join()
    .map_err(|_| "ping thread panicked".to_string())?;
    echo.join()
        .map_err(|_| "echo thread panicked".to_string())??;
    let mut samples = samples?;
    let p50 = median(&mut samples);
    Ok(CacheLine {
        cores,
        rtt_p50_ns: p50,
        rtt_min_ns: samples[0],
        one_way_p50_ns: p50 / 2.0,
        round_trips: BATCH * BATCHES as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_positive_and_serialize() {
        let c = Calibration {
            clock_ns: clock_cost(),
            cache_line: cache_line([0, 1]).ok(),
            cache_line_error: None,
            memcpy: vec![Memcpy {
                size: 64 << 10,
                gb_per_s: memcpy_bandwidth(64 << 10),
            }],
        };
        assert!(c.clock_ns > 0.0);
        assert!(c.memcpy_gb_per_s(64 << 10).unwrap() > 0.0);
        if let Some(l) = &c.cache_line {
            assert!(l.one_way_p50_ns > 0.0 && l.rtt_min_ns <= l.rtt_p50_ns);
        }
        let j = serde_json::to_string(&c).unwrap();
        let back: Calibration = serde_json::from_str(&j).unwrap();
        assert_eq!(back.memcpy.len(), 1);
    }
}
