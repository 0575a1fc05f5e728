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

/// The clock that times a round trip inside one process (both readings in
/// the same process, only their difference is used).
pub trait RoundTrip {
    /// True when readings are `CLOCK_MONOTONIC` nanoseconds.
    const MONOTONIC: bool;
    /// Reading taken when the ping is stamped.
    fn start() -> u64;
    /// Reading taken when the echo is seen; not before any earlier load.
    fn stop() -> u64;
    /// Nanoseconds in `ticks` readings.
    fn ns(ticks: u64, ns_per_tick: f64) -> u64;
}

/// The time-stamp counter, for round trips on x86-64 hosts whose kernel
/// keeps time with it.
///
/// Why: `CLOCK_MONOTONIC` through the vDSO costs 30-50 ns per reading on the
/// VMs we measure on, a large part of a sub-microsecond round trip (shared
/// memory with busy waits); `rdtsc` costs about 15 ns and counts at the
/// TSC's frequency (0.4 ns ticks on a 2.4 GHz counter; that VM's guest TSC
/// advances in steps of about 24 ticks, as does its `CLOCK_MONOTONIC`,
/// about 10 ns). The ping is stamped with `rdtsc`, the echo with
/// `rdtscp`, which waits until every earlier instruction, including the load
/// that saw the echo, has executed. Ticks become nanoseconds with a factor
/// measured against `CLOCK_MONOTONIC` ([`Tsc::calibrate`]).
///
/// Used only where the kernel's own clocksource is `tsc`: the kernel then
/// found the counter invariant and synchronized across CPUs (it switches
/// away from it otherwise).
pub struct Tsc;

impl Tsc {
    /// True on x86-64 when the kernel's current clocksource is `tsc`.
    pub fn usable() -> bool {
        cfg!(target_arch = "x86_64")
            && std::fs::read_to_string(
                "/sys/devices/system/clocksource/clocksource0/current_clocksource",
            )
            .is_ok_and(|s| s.trim() == "tsc")
    }

    /// Nanoseconds per tick, measured over `span_ns` of `CLOCK_MONOTONIC`:
    /// at each end, the counter read between two monotonic readings, and of
    /// five tries the one with the closest readings (its monotonic time is
    /// known to within half their distance, ~20 ns here, so over 20 ms the
    /// factor is off by about 1e-6). Spins for `span_ns`.
    pub fn calibrate(span_ns: u64) -> f64 {
        fn pair() -> (u64, u64) {
            let mut best = (0, 0, u64::MAX);
            for _ in 0..5 {
                let m0 = now_ns();
                let t = Tsc::start();
                let m1 = now_ns();
                if m1 - m0 < best.2 {
                    best = (t, m0 + (m1 - m0) / 2, m1 - m0);
                }
            }
            (best.0, best.1)
        }
        let (t0, m0) = pair();
        spin_until(m0 + span_ns);
        let (t1, m1) = pair();
        (m1 - m0) as f64 / t1.saturating_sub(t0).max(1) as f64
    }
}

impl RoundTrip for Tsc {
    const MONOTONIC: bool = false;

    #[inline(always)]
    fn start() -> u64 {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: rdtsc has no preconditions on x86-64.
        unsafe {
            core::arch::x86_64::_rdtsc()
        }
        #[cfg(not(target_arch = "x86_64"))]
        now_ns()
    }

    #[inline(always)]
    fn stop() -> u64 {
        #[cfg(target_arch = "x86_64")]
        {
            let mut aux = 0u32;
            // SAFETY: rdtscp has no preconditions on x86-64 (every x86-64
            // CPU of the last 15 years has it; `usable` gates its use).
            unsafe { core::arch::x86_64::__rdtscp(&mut aux) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        now_ns()
    }

    #[inline(always)]
    fn ns(ticks: u64, ns_per_tick: f64) -> u64 {
        (ticks as f64 * ns_per_tick) as u64
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

    #[test]
    fn tsc_ticks_convert_to_monotonic_nanoseconds() {
        // A prerequisite, not a reason to pass unchecked: on a machine
        // whose kernel keeps time with another clocksource the tool falls
        // back to CLOCK_MONOTONIC and this conversion is never used.
        assert!(
            Tsc::usable(),
            "prerequisite missing: the kernel's clocksource is not tsc \
             (/sys/devices/system/clocksource/clocksource0/current_clocksource); \
             this test checks the TSC path and needs a machine that uses it"
        );
        let f = Tsc::calibrate(20_000_000);
        assert!(f > 0.01 && f < 10.0, "{f} ns per tick");
        // An interval timed by both clocks: 30 ms of sleep. The two clocks
        // differ by the readings' cost and the factor's error (1e-6 over a
        // quiet calibration); a try where the thread lost its core between
        // two readings differs more, so the best of five counts. Across a
        // sleep this VM's two clocks were seen to part by 77-130 ppm at
        // times (2.3-3.9 us over 30 ms, five tests of six in one minute),
        // which moves a latency figure by a hundredth of a percent; the
        // bound, 0.1 % of the interval, is far above that and far below
        // any wrong factor (a factor from the wrong clock, or inverted, is
        // off by tens of percent).
        const INTERVAL_NS: f64 = 30e6;
        let mut diffs = Vec::new();
        for _ in 0..5 {
            let (m0, t0) = (now_ns(), Tsc::start());
            std::thread::sleep(std::time::Duration::from_nanos(INTERVAL_NS as u64));
            let (t1, m1) = (Tsc::stop(), now_ns());
            diffs.push((Tsc::ns(t1 - t0, f) as f64 - (m1 - m0) as f64).abs());
        }
        let best = diffs.iter().copied().fold(f64::MAX, f64::min);
        assert!(
            best < INTERVAL_NS * 1e-3,
            "tsc and monotonic differ by {diffs:?} ns over {INTERVAL_NS} ns"
        );
    }
}
