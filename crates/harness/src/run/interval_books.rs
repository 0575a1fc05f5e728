//! The publisher's books of one latency report interval: its own recorder
//! (ddsperf prints each second's percentiles and Perftest each pong's
//! running figures; comparing them needs ours per second too), its last
//! round trip, and this process's CPU use since the previous interval.
//! The latency test's loop and a throughput test's echo thread keep them.

use pubsubperf_core::result::Interval;
use pubsubperf_core::stats::LatencyRecorder;
use pubsubperf_core::sys::Usage;

pub(super) struct IntervalBooks {
    pub(super) rec: LatencyRecorder,
    last_ns: u64,
    usage: Usage,
}

impl IntervalBooks {
    pub(super) fn new() -> IntervalBooks {
        IntervalBooks {
            rec: LatencyRecorder::new(),
            last_ns: 0,
            usage: Usage::now(),
        }
    }

    /// One round trip's one-way latency.
    #[inline(always)]
    pub(super) fn record(&mut self, ns: u64) {
        self.rec.record(ns);
        self.last_ns = ns;
    }

    /// The CPU share is counted from now (the measurement's start).
    pub(super) fn restart_cpu(&mut self) {
        self.usage = Usage::now();
    }

    /// Ends the interval at `t_ns` into the measurement: its line, when it
    /// saw a round trip, with its count, mean, standard deviation, minimum,
    /// maximum, percentiles and last round trip, and this process's CPU
    /// share over it; the books are emptied for the next.
    #[cold]
    pub(super) fn close(&mut self, t_ns: u64, interval_ns: u64) -> Option<Interval> {
        let usage = Usage::now();
        let rec = &mut self.rec;
        // Not `rec.summary()`: its deflated histogram, which an interval
        // does not keep, allocated and zeroed ~300 KiB a second (page
        // faults the reference tools do not have, bench/counts.sh).
        let iv = (rec.count() > 0).then(|| {
            let (mean, std) = rec.mean_std();
            Interval {
                t_s: t_ns as f64 / 1e9,
                received: rec.count(),
                samples_per_s: rec.count() as f64 * 1e9 / interval_ns as f64,
                cpu_percent: usage.since(&self.usage).cpu_percent,
                latency_mean_ns: Some(mean),
                latency_max_ns: Some(rec.max()),
                latency_min_ns: Some(rec.min()),
                latency_std_ns: Some(std),
                latency_last_ns: Some(self.last_ns),
                latency_p50_ns: Some(rec.quantile(0.50)),
                latency_p90_ns: Some(rec.quantile(0.90)),
                latency_p99_ns: Some(rec.quantile(0.99)),
                ..Default::default()
            }
        });
        rec.reset();
        self.usage = usage;
        iv
    }
}
