//! Latency statistics.
//!
//! Method (what every printed latency figure is):
//! - Each latency value is recorded in nanoseconds into an HDR histogram with
//!   a range of 1 ns .. 1 hour and 3 significant digits: values up to 2048 ns
//!   are exact, larger ones are kept within 0.1 %.
//! - Percentiles (p50 ... p99.9999) come from that histogram: the highest
//!   value equivalent to the requested quantile's bucket (HdrHistogram's
//!   `value_at_quantile`), so they are within 0.1 % of the exact order
//!   statistic and never below it.
//! - Count, min, max, mean and standard deviation are computed exactly from
//!   the recorded values (running sums in 128-bit integers), not from the
//!   histogram.
//! - Percentiles are never averaged: runs are combined by merging
//!   histograms ([`LatencyRecorder::merge`]), which equals recording the
//!   pooled samples.

use base64::Engine;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use serde::{Deserialize, Serialize};

/// Highest trackable value: one hour in nanoseconds.
pub const MAX_NS: u64 = 3_600_000_000_000;
/// Significant digits kept by the histogram.
pub const SIGFIGS: u8 = 3;

/// Records latency values (ns). Recording does not allocate.
#[derive(Clone)]
pub struct LatencyRecorder {
    hist: Histogram<u64>,
    count: u64,
    sum: u128,
    sum_sq: u128,
    min: u64,
    max: u64,
}

impl Default for LatencyRecorder {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for LatencyRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LatencyRecorder")
            .field("count", &self.count)
            .finish()
    }
}

impl LatencyRecorder {
    /// An empty recorder.
    pub fn new() -> Self {
        LatencyRecorder {
            hist: Histogram::new_with_bounds(1, MAX_NS, SIGFIGS).expect("valid histogram bounds"),
            count: 0,
            sum: 0,
            sum_sq: 0,
            min: u64::MAX,
            max: 0,
        }
    }

    /// Records one value in nanoseconds (clamped to 1 ns .. 1 hour).
    #[inline]
    pub fn record(&mut self, ns: u64) {
        let v = ns.clamp(1, MAX_NS);
        // Cannot fail: v is within the histogram's bounds.
        let _ = self.hist.record(v);
        self.count += 1;
        self.sum += u128::from(v);
        self.sum_sq += u128::from(v) * u128::from(v);
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    /// Records a value measured at a fixed sending interval with
    /// coordinated-omission correction: when `ns` exceeds `interval_ns`, the
    /// samples that a stalled sender failed to send are added as
    /// `ns - interval_ns`, `ns - 2 * interval_ns`, ... (HdrHistogram's
    /// `record_correct`). The exact sums include the synthetic values too.
    #[inline]
    pub fn record_corrected(&mut self, ns: u64, interval_ns: u64) {
        self.record(ns);
        if interval_ns == 0 {
            return;
        }
        let mut missing = ns.saturating_sub(interval_ns);
        while missing >= interval_ns {
            self.record(missing);
            missing -= interval_ns;
        }
    }

    /// Forgets every value recorded (keeps the histogram's memory).
    pub fn reset(&mut self) {
        self.hist.reset();
        self.count = 0;
        self.sum = 0;
        self.sum_sq = 0;
        self.min = u64::MAX;
        self.max = 0;
    }

    /// Number of values recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Adds every value of `other` (exact: equals recording the pooled values).
    pub fn merge(&mut self, other: &LatencyRecorder) {
        // Cannot fail: both histograms have the same bounds.
        let _ = self.hist.add(&other.hist);
        self.count += other.count;
        self.sum += other.sum;
        self.sum_sq += other.sum_sq;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// The value at quantile `q` (0..=1), see the module documentation.
    /// Never above the exact maximum (a bucket's highest equivalent value
    /// can be).
    pub fn quantile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        self.hist.value_at_quantile(q).min(self.max)
    }

    /// The exact mean and population standard deviation (0 and 0 with no
    /// values), from the integer sums; nothing is encoded or allocated, so
    /// that a report interval's figures cost no deflate of the histogram.
    pub fn mean_std(&self) -> (f64, f64) {
        let n = self.count;
        if n == 0 {
            return (0.0, 0.0);
        }
        let mean = self.sum as f64 / n as f64;
        // Population variance from exact integer sums: n*sum_sq - sum^2 >= 0.
        let num = (self.sum_sq * u128::from(n)).saturating_sub(self.sum * self.sum);
        let var = num as f64 / (n as f64 * n as f64);
        (mean, var.sqrt())
    }

    /// The smallest value recorded (0 with none).
    pub fn min(&self) -> u64 {
        if self.count == 0 { 0 } else { self.min }
    }

    /// The largest value recorded (0 with none).
    pub fn max(&self) -> u64 {
        self.max
    }

    /// The summary that goes into results.
    pub fn summary(&self) -> LatencySummary {
        let n = self.count;
        let (mean, std) = self.mean_std();
        LatencySummary {
            count: n,
            mean,
            std,
            min: self.min(),
            max: self.max,
            p50: self.quantile(0.50),
            p90: self.quantile(0.90),
            p99: self.quantile(0.99),
            p99_9: self.quantile(0.999),
            p99_99: self.quantile(0.9999),
            p99_9999: self.quantile(0.999999),
            histogram: self.encode_histogram(),
            sum: self.sum.to_string(),
            sum_sq: self.sum_sq.to_string(),
        }
    }

    /// The histogram in HdrHistogram's V2 compressed format, base64.
    pub fn encode_histogram(&self) -> String {
        let mut bytes = Vec::new();
        // Serializing into a Vec cannot fail for a valid histogram.
        let _ = V2DeflateSerializer::new().serialize(&self.hist, &mut bytes);
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    /// Rebuilds a recorder from a summary (histogram plus exact sums), so
    /// that stored runs can be merged exactly.
    pub fn from_summary(s: &LatencySummary) -> Result<LatencyRecorder, String> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&s.histogram)
            .map_err(|e| format!("histogram is not base64: {e}"))?;
        let decoded: Histogram<u64> = Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .map_err(|e| format!("histogram is not HdrHistogram V2: {e:?}"))?;
        let mut hist = Histogram::new_with_bounds(1, MAX_NS, SIGFIGS).expect("valid bounds");
        hist.add(&decoded)
            .map_err(|e| format!("histogram out of range: {e:?}"))?;
        let sum = s.sum.parse::<u128>().ok();
        let sum_sq = s.sum_sq.parse::<u128>().ok();
        let (sum, sum_sq) = match (sum, sum_sq) {
            (Some(a), Some(b)) => (a, b),
            // Older or foreign results without exact sums: rebuild them from
            // mean and std (exact up to float rounding).
            _ => {
                let n = s.count as f64;
                let sum = s.mean * n;
                let sum_sq = (s.std * s.std + s.mean * s.mean) * n;
                (sum.round() as u128, sum_sq.round() as u128)
            }
        };
        Ok(LatencyRecorder {
            count: hist.len(),
            hist,
            sum,
            sum_sq,
            min: if s.count == 0 { u64::MAX } else { s.min },
            max: s.max,
        })
    }
}

/// Latency statistics of one run, in nanoseconds (`latency_ns` in results).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Number of values.
    pub count: u64,
    /// Exact mean.
    pub mean: f64,
    /// Exact population standard deviation.
    pub std: f64,
    /// Exact minimum.
    pub min: u64,
    /// Exact maximum.
    pub max: u64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p99_9: u64,
    /// 99.99th percentile.
    pub p99_99: u64,
    /// 99.9999th percentile.
    pub p99_9999: u64,
    /// HdrHistogram V2 compressed (deflate) encoding, base64.
    pub histogram: String,
    /// Exact sum of the values (decimal string: can exceed 2^64).
    #[serde(default)]
    pub sum: String,
    /// Exact sum of the squared values (decimal string).
    #[serde(default)]
    pub sum_sq: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(a: u64, b: u64) -> f64 {
        (a as f64 - b as f64).abs() / b as f64
    }

    #[test]
    fn uniform_distribution() {
        let mut r = LatencyRecorder::new();
        let n = 1_000_000u64;
        for v in 1..=n {
            r.record(v);
        }
        let s = r.summary();
        assert_eq!(s.count, n);
        assert_eq!(s.min, 1);
        assert_eq!(s.max, n);
        assert!((s.mean - 500_000.5).abs() < 1e-6);
        let std = (((n * n - 1) as f64) / 12.0).sqrt();
        assert!((s.std - std).abs() / std < 1e-9, "{} vs {}", s.std, std);
        assert!(rel(s.p50, 500_000) <= 0.001, "{}", s.p50);
        assert!(rel(s.p90, 900_000) <= 0.001);
        assert!(rel(s.p99, 990_000) <= 0.001);
        assert!(rel(s.p99_9, 999_000) <= 0.001);
        assert!(rel(s.p99_99, 999_900) <= 0.001);
        assert!(rel(s.p99_9999, 999_999) <= 0.001);
    }

    #[test]
    fn the_unencoded_figures_are_the_summarys() {
        let mut r = LatencyRecorder::new();
        assert_eq!((r.mean_std(), r.min(), r.max()), ((0.0, 0.0), 0, 0));
        for v in [7u64, 3, 1000, 42] {
            r.record(v);
        }
        let s = r.summary();
        assert_eq!(
            (r.mean_std(), r.min(), r.max()),
            ((s.mean, s.std), s.min, s.max)
        );
        assert_eq!((s.min, s.max), (3, 1000));
    }

    #[test]
    fn small_values_are_exact() {
        let mut r = LatencyRecorder::new();
        for v in 1..=100 {
            r.record(v);
        }
        let s = r.summary();
        assert_eq!(s.p50, 50);
        assert_eq!(s.p90, 90);
        assert_eq!(s.p99, 99);
        assert_eq!(s.p99_9999, 100);
        assert_eq!(s.mean, 50.5);
    }

    #[test]
    fn constant_has_zero_std() {
        let mut r = LatencyRecorder::new();
        for _ in 0..1000 {
            r.record(1234);
        }
        let s = r.summary();
        assert_eq!(s.std, 0.0);
        assert_eq!(s.mean, 1234.0);
        assert_eq!((s.min, s.max, s.p50), (1234, 1234, 1234));
    }

    #[test]
    fn empty_summary() {
        let s = LatencyRecorder::new().summary();
        assert_eq!((s.count, s.min, s.max, s.p50), (0, 0, 0, 0));
    }

    #[test]
    fn exponential_tail() {
        // Deterministic exponential sample via inverse CDF on a uniform grid:
        // the p99 of Exp(mean 1000) is 1000 * ln(100).
        let mut r = LatencyRecorder::new();
        let n = 200_000;
        for i in 0..n {
            let u = (i as f64 + 0.5) / n as f64;
            r.record((-1000.0 * (1.0 - u).ln()).round() as u64);
        }
        let s = r.summary();
        assert!(
            rel(s.p99, (1000.0 * 100f64.ln()) as u64) < 0.002,
            "{}",
            s.p99
        );
        assert!((s.mean - 1000.0).abs() < 5.0, "{}", s.mean);
    }

    #[test]
    fn merge_equals_pooled() {
        let mut a = LatencyRecorder::new();
        let mut b = LatencyRecorder::new();
        let mut pooled = LatencyRecorder::new();
        for v in 0..10_000u64 {
            let x = 100 + (v * 7919) % 50_000;
            if v % 3 == 0 {
                a.record(x)
            } else {
                b.record(x)
            }
            pooled.record(x);
        }
        a.merge(&b);
        assert_eq!(a.summary(), pooled.summary());
    }

    #[test]
    fn histogram_round_trip() {
        let mut r = LatencyRecorder::new();
        for v in [5u64, 10, 1_000, 123_456, 9_999_999] {
            r.record(v);
        }
        let s = r.summary();
        let back = LatencyRecorder::from_summary(&s).unwrap();
        assert_eq!(back.summary(), s);
    }

    #[test]
    fn coordinated_omission_correction() {
        let mut r = LatencyRecorder::new();
        r.record_corrected(1000, 300);
        // 1000, 700, 400 (100 < 300 stops)
        assert_eq!(r.count(), 3);
        assert_eq!(r.summary().min, 400);
    }
}
