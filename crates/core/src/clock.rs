//! The clock every timestamp in pubsubperf comes from.
//!
//! `CLOCK_MONOTONIC` is read through the vDSO (no system call). Both sides of
//! a run on one host read the same clock, so a timestamp written by one
//! process can be compared with one read in another process of the same host
//! (the basis of true one-way latency). Across hosts only round trips are
//! meaningful, which is why the latency test reports round trip / 2.

/// Nanoseconds of `CLOCK_MONOTONIC`.
#[inline(always)]
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Busy-waits until `deadline_ns` (a [`now_ns`] value). Used for pacing
/// (`--rate`), where sleeping would add the scheduler's wake-up latency.
#[inline]
pub fn spin_until(deadline_ns: u64) {
    while now_ns() < deadline_ns {
        std::hint::spin_loop();
    }
}

/// Waits until `deadline_ns`, sleeping while the deadline is more than 200 µs
/// away and spinning for the rest.
pub fn wait_until(deadline_ns: u64) {
    loop {
        let now = now_ns();
        if now >= deadline_ns {
            return;
        }
        let left = deadline_ns - now;
        if left > 200_000 {
            std::thread::sleep(std::time::Duration::from_nanos(left - 100_000));
        } else {
            spin_until(deadline_ns);
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic() {
        let a = now_ns();
        let b = now_ns();
        assert!(b >= a);
        let t = now_ns() + 1_000_000;
        wait_until(t);
        assert!(now_ns() >= t);
    }
}
