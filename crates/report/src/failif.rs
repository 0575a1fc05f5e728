//! `--fail-if` conditions: `METRIC OP THRESHOLD`, checked on every matched
//! cell of a comparison (on the merged repetitions of each side).
//!
//! - METRIC: `p50`, `p90`, `p99`, `p99_9` (or `p99.9`), `mean`, `max`
//!   (latency), `samples_per_s`, `mbps`, `lost_percent` (throughput),
//!   `rejected` (sends or pings the kernel or middleware refused under best
//!   effort; latency and throughput); for topology runs, on every matched
//!   path `path_p50`, `path_p90`, `path_p99`, `path_max` (end to end) and
//!   on every matched topic `late`, `too_late` (counts of samples) and
//!   `topic_lost_percent`.
//! - OP: `>` or `<`.
//! - THRESHOLD, one of:
//!   - a signed percentage, a relative change from BASE to NEW:
//!     `p99>+10%` fails when p99 grew by more than 10 %,
//!     `samples_per_s<-5%` when throughput fell by more than 5 %;
//!   - a signed amount with a unit, an absolute change:
//!     `p50>+2us`, `mbps<-100`, `lost_percent>+0.5pp` (percentage points);
//!   - an unsigned amount, a limit on NEW itself: `p99>1ms`,
//!     `samples_per_s<100k`, `lost_percent>1` (or `1%`), `rejected>0`.
//!
//! Latency amounts need a unit (`ns`, `us`/`µs`, `ms`, `s`); samples/s
//! take an optional `k`/`M`; Mbit/s an optional `Mbps`/`Gbps`.

use crate::error::{ReportError, Result};
use pubsubperf_core::graph_result::GraphTopic;
use pubsubperf_core::result::Run;
use pubsubperf_core::stats::LatencySummary;

/// A metric a condition is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// Median latency, ns.
    P50,
    /// 90th percentile latency, ns.
    P90,
    /// 99th percentile latency, ns.
    P99,
    /// 99.9th percentile latency, ns.
    P99_9,
    /// Mean latency, ns.
    Mean,
    /// Maximum latency, ns.
    Max,
    /// Received samples per second.
    SamplesPerS,
    /// Received megabits per second.
    Mbps,
    /// Lost samples, % of sent.
    LostPercent,
    /// Sends (throughput) or pings (latency) refused under best effort.
    Rejected,
    /// `--one-way`: the forward direction's median, ns.
    ForwardP50,
    /// `--one-way`: the back direction's median, ns.
    BackP50,
    /// Several subscribers: the slowest subscriber's p50 minus the
    /// fastest's, ns.
    SpreadP50,
    /// Discovery: the slowest endpoint's time to match, ns.
    Discovery,
    /// Fan-out: median of each sample's last delivery minus its first, ns.
    FanoutSpreadP50,
    /// Fan-out: 99th percentile of that spread, ns.
    FanoutSpreadP99,
    /// Fan-out: 99th percentile of each sample's last delivery, ns.
    FanoutLastP99,
    /// Throughput: the publisher's CPU per sample sent, ns.
    SendCost,
    /// A topology's path: median end-to-end latency, ns.
    PathP50,
    /// A topology's path: 90th percentile, ns.
    PathP90,
    /// A topology's path: 99th percentile, ns.
    PathP99,
    /// A topology's path: maximum, ns.
    PathMax,
    /// A topology's topic: received samples later than its deadline.
    Late,
    /// A topology's topic: received samples later than its `too_late`.
    TooLate,
    /// A topology's topic: lost samples, % of what its readers should
    /// have received.
    TopicLostPercent,
}

/// Every metric with its names, for messages.
pub const METRIC_NAMES: &str = "p50, p90, p99, p99_9, mean, max, samples_per_s, mbps, lost_percent, rejected, forward_p50, back_p50, spread_p50, discovery, fanout_spread_p50, fanout_spread_p99, fanout_last_p99, send_cost, path_p50, path_p90, path_p99, path_max, late, too_late, topic_lost_percent";

impl Metric {
    /// Parses a metric name.
    pub fn parse(s: &str) -> Option<Metric> {
        Some(match s {
            "p50" => Metric::P50,
            "p90" => Metric::P90,
            "p99" => Metric::P99,
            "p99_9" | "p99.9" => Metric::P99_9,
            "mean" => Metric::Mean,
            "max" => Metric::Max,
            "samples_per_s" => Metric::SamplesPerS,
            "mbps" => Metric::Mbps,
            "lost_percent" => Metric::LostPercent,
            "rejected" => Metric::Rejected,
            "forward_p50" => Metric::ForwardP50,
            "back_p50" => Metric::BackP50,
            "spread_p50" => Metric::SpreadP50,
            "discovery" => Metric::Discovery,
            "fanout_spread_p50" => Metric::FanoutSpreadP50,
            "fanout_spread_p99" => Metric::FanoutSpreadP99,
            "fanout_last_p99" => Metric::FanoutLastP99,
            "send_cost" => Metric::SendCost,
            "path_p50" => Metric::PathP50,
            "path_p90" => Metric::PathP90,
            "path_p99" => Metric::PathP99,
            "path_max" => Metric::PathMax,
            "late" => Metric::Late,
            "too_late" => Metric::TooLate,
            "topic_lost_percent" => Metric::TopicLostPercent,
            _ => return None,
        })
    }

    /// The canonical name.
    pub fn name(self) -> &'static str {
        match self {
            Metric::P50 => "p50",
            Metric::P90 => "p90",
            Metric::P99 => "p99",
            Metric::P99_9 => "p99_9",
            Metric::Mean => "mean",
            Metric::Max => "max",
            Metric::SamplesPerS => "samples_per_s",
            Metric::Mbps => "mbps",
            Metric::LostPercent => "lost_percent",
            Metric::Rejected => "rejected",
            Metric::ForwardP50 => "forward_p50",
            Metric::BackP50 => "back_p50",
            Metric::SpreadP50 => "spread_p50",
            Metric::Discovery => "discovery",
            Metric::FanoutSpreadP50 => "fanout_spread_p50",
            Metric::FanoutSpreadP99 => "fanout_spread_p99",
            Metric::FanoutLastP99 => "fanout_last_p99",
            Metric::SendCost => "send_cost",
            Metric::PathP50 => "path_p50",
            Metric::PathP90 => "path_p90",
            Metric::PathP99 => "path_p99",
            Metric::PathMax => "path_max",
            Metric::Late => "late",
            Metric::TooLate => "too_late",
            Metric::TopicLostPercent => "topic_lost_percent",
        }
    }

    /// True for latency metrics (values in ns).
    pub fn is_latency(self) -> bool {
        matches!(
            self,
            Metric::P50 | Metric::P90 | Metric::P99 | Metric::P99_9 | Metric::Mean | Metric::Max
        )
    }

    /// True for metrics in ns (latencies, their directions and spread,
    /// discovery): thresholds in time units, values printed as times.
    pub fn in_ns(self) -> bool {
        self.is_latency()
            || matches!(
                self,
                Metric::ForwardP50
                    | Metric::BackP50
                    | Metric::SpreadP50
                    | Metric::Discovery
                    | Metric::FanoutSpreadP50
                    | Metric::FanoutSpreadP99
                    | Metric::FanoutLastP99
                    | Metric::SendCost
                    | Metric::PathP50
                    | Metric::PathP90
                    | Metric::PathP99
                    | Metric::PathMax
            )
    }

    /// True for counts of samples or sends (no unit).
    fn is_count(self) -> bool {
        matches!(self, Metric::Rejected | Metric::Late | Metric::TooLate)
    }

    /// True for percentages of lost samples.
    fn is_lost_percent(self) -> bool {
        matches!(self, Metric::LostPercent | Metric::TopicLostPercent)
    }

    /// The metric's value on a topology's path (its end-to-end latency),
    /// if it is a path metric and the path has samples.
    pub fn path_value(self, latency: &LatencySummary) -> Option<f64> {
        let l = Some(latency).filter(|l| l.count > 0)?;
        Some(match self {
            Metric::PathP50 => l.p50,
            Metric::PathP90 => l.p90,
            Metric::PathP99 => l.p99,
            Metric::PathMax => l.max,
            _ => return None,
        } as f64)
    }

    /// The metric's value on a topology's topic, if it is a topic metric
    /// (`late` and `too_late` only where the topic has that deadline: one
    /// without counts neither).
    pub fn topic_value(self, t: &GraphTopic) -> Option<f64> {
        match self {
            Metric::Late => t.deadline_ns.map(|_| t.late as f64),
            Metric::TooLate => t.too_late_ns.map(|_| t.too_late as f64),
            Metric::TopicLostPercent => Some(t.lost_percent),
            _ => None,
        }
    }

    /// The metric's value in a run, if the run measured it.
    pub fn value(self, r: &Run) -> Option<f64> {
        match self {
            Metric::ForwardP50 => return r.one_way.as_ref().map(|o| o.forward.p50 as f64),
            Metric::BackP50 => return r.one_way.as_ref().map(|o| o.back.p50 as f64),
            Metric::SpreadP50 => {
                let p50s = r
                    .latency_by_subscriber
                    .iter()
                    .filter(|l| l.count > 0)
                    .map(|l| l.p50);
                let (lo, hi) = (p50s.clone().min()?, p50s.max()?);
                return Some((hi - lo) as f64);
            }
            Metric::FanoutSpreadP50 => return r.fan_out.as_ref().map(|f| f.spread_ns.p50 as f64),
            Metric::FanoutSpreadP99 => return r.fan_out.as_ref().map(|f| f.spread_ns.p99 as f64),
            Metric::FanoutLastP99 => return r.fan_out.as_ref().map(|f| f.last_ns.p99 as f64),
            Metric::SendCost => return r.publisher_cpu_per_sample(),
            Metric::PathP50
            | Metric::PathP90
            | Metric::PathP99
            | Metric::PathMax
            | Metric::Late
            | Metric::TooLate
            | Metric::TopicLostPercent => return None,
            Metric::Discovery => {
                let d = r.discovery.as_ref()?;
                let slowest = d
                    .subscribers
                    .iter()
                    .flat_map(|s| [Some(s.reader_matched_ns), s.echo_writer_matched_ns])
                    .chain([Some(d.writer_matched_ns), d.echo_readers_matched_ns])
                    .flatten()
                    .max()?;
                return Some(slowest as f64);
            }
            _ => {}
        }
        if self.is_latency() {
            let l = r.latency_ns.as_ref().filter(|l| l.count > 0)?;
            return Some(match self {
                Metric::P50 => l.p50 as f64,
                Metric::P90 => l.p90 as f64,
                Metric::P99 => l.p99 as f64,
                Metric::P99_9 => l.p99_9 as f64,
                Metric::Mean => l.mean,
                _ => l.max as f64,
            });
        }
        if self == Metric::Rejected {
            // Runs from before the count have none: 0, as serde reads them.
            return (r.throughput.is_some() || r.pings.is_some()).then(|| r.rejected() as f64);
        }
        let t = r.throughput.as_ref()?;
        Some(match self {
            Metric::SamplesPerS => t.samples_per_s,
            Metric::Mbps => t.mbps,
            _ => t.lost_percent,
        })
    }

    /// Formats a value of this metric with its unit.
    pub fn format(self, v: f64) -> String {
        if self.in_ns() {
            crate::text::format_ns(v)
        } else {
            match self {
                Metric::SamplesPerS => format!("{v:.0}/s"),
                Metric::Mbps => format!("{v:.1} Mbit/s"),
                _ if self.is_count() => format!("{v:.0}"),
                _ => format!("{v:.3}%"),
            }
        }
    }
}

/// Direction of a condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Fails when the quantity is above the threshold.
    Above,
    /// Fails when the quantity is below the threshold.
    Below,
}

/// What is compared with the threshold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Threshold {
    /// Relative change NEW vs BASE, percent (signed).
    Relative(f64),
    /// Absolute change NEW − BASE, in the metric's unit (signed).
    Change(f64),
    /// NEW itself, in the metric's unit.
    Limit(f64),
}

/// One parsed `--fail-if` condition.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    /// The expression as given.
    pub text: String,
    /// Metric.
    pub metric: Metric,
    /// Direction.
    pub op: Op,
    /// Threshold.
    pub threshold: Threshold,
}

impl std::fmt::Display for Condition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl Condition {
    /// Parses one expression; the error is one line naming it.
    pub fn parse(expr: &str) -> Result<Condition> {
        let bad = |m: String| ReportError::FailIf {
            expr: expr.to_string(),
            message: m,
        };
        let s: String = expr.chars().filter(|c| !c.is_whitespace()).collect();
        let pos = s.find(['>', '<']).ok_or_else(|| {
            bad(
                "expected METRIC>THRESHOLD or METRIC<THRESHOLD, e.g. p99>+10% or samples_per_s<-5%"
                    .into(),
            )
        })?;
        let (m, rest) = s.split_at(pos);
        let op = if rest.starts_with('>') {
            Op::Above
        } else {
            Op::Below
        };
        let t = &rest[1..];
        if t.starts_with(['=', '>', '<']) {
            return Err(bad("use a single > or < (strict comparison)".into()));
        }
        if m.is_empty() {
            return Err(bad(format!(
                "no metric before the comparison (use {METRIC_NAMES})"
            )));
        }
        let metric = Metric::parse(&m.to_ascii_lowercase())
            .ok_or_else(|| bad(format!("unknown metric '{m}' (use {METRIC_NAMES})")))?;
        if t.is_empty() {
            return Err(bad(
                "no threshold after the comparison (e.g. +10%, -5%, 2ms)".into(),
            ));
        }
        let signed = t.starts_with(['+', '-']);
        let num_end = t
            .char_indices()
            .skip(usize::from(signed))
            .find(|(_, c)| !(c.is_ascii_digit() || *c == '.'))
            .map_or(t.len(), |(i, _)| i);
        let num: f64 = t[..num_end]
            .parse()
            .map_err(|_| bad(format!("'{t}' does not start with a number")))?;
        if !num.is_finite() {
            return Err(bad(format!("'{t}' is not a finite number")));
        }
        let unit = &t[num_end..];
        let threshold = if unit == "%" && (signed || !metric.is_lost_percent()) {
            if !signed {
                return Err(bad(format!(
                    "a relative change needs a sign: {}>+{num}% (grew by more than) or {}<-{num}% (fell by more than)",
                    metric.name(),
                    metric.name()
                )));
            }
            Threshold::Relative(num)
        } else {
            let scale = unit_scale(metric, unit).map_err(bad)?;
            if signed {
                Threshold::Change(num * scale)
            } else {
                Threshold::Limit(num * scale)
            }
        };
        Ok(Condition {
            text: expr.trim().to_string(),
            metric,
            op,
            threshold,
        })
    }

    /// Checks the condition on one cell; `None` when either side lacks the
    /// metric. `Some((quantity, violated))`: the quantity compared (percent
    /// change, absolute change, or NEW's value).
    pub fn check(&self, base: &Run, new: &Run) -> Option<(f64, bool)> {
        Some(self.check_values(self.metric.value(base)?, self.metric.value(new)?))
    }

    /// Checks the condition on the metric's values in BASE and NEW (a
    /// topology's path or topic): `(quantity, violated)` as [`Self::check`].
    pub fn check_values(&self, b: f64, n: f64) -> (f64, bool) {
        let (q, limit) = match self.threshold {
            Threshold::Relative(p) => (relative_change(b, n), p),
            Threshold::Change(d) => (n - b, d),
            Threshold::Limit(l) => (n, l),
        };
        let violated = match self.op {
            Op::Above => q > limit,
            Op::Below => q < limit,
        };
        (q, violated)
    }

    /// Describes a checked quantity for a message.
    pub fn describe(&self, q: f64) -> String {
        match self.threshold {
            Threshold::Relative(_) => format!("{} changed by {}", self.metric.name(), pct(q)),
            Threshold::Change(_) => format!(
                "{} changed by {}{}",
                self.metric.name(),
                if q >= 0.0 { "+" } else { "-" },
                self.metric.format(q.abs())
            ),
            Threshold::Limit(_) => format!("{} is {}", self.metric.name(), self.metric.format(q)),
        }
    }
}

/// (new − base) / base in percent; 0 when both are 0, ±∞ when only base is 0.
pub fn relative_change(base: f64, new: f64) -> f64 {
    if base == 0.0 {
        if new == 0.0 {
            0.0
        } else {
            f64::INFINITY.copysign(new)
        }
    } else {
        (new - base) / base.abs() * 100.0
    }
}

/// A signed percentage for tables: `+3.2%`, `-10.0%`, `+inf%`.
pub fn pct(p: f64) -> String {
    if p.is_infinite() {
        return if p > 0.0 {
            "+inf%".into()
        } else {
            "-inf%".into()
        };
    }
    format!("{p:+.1}%")
}

fn unit_scale(metric: Metric, unit: &str) -> std::result::Result<f64, String> {
    let u = unit.to_ascii_lowercase();
    if metric.in_ns() {
        return match u.as_str() {
            "ns" => Ok(1.0),
            "us" | "µs" => Ok(1e3),
            "ms" => Ok(1e6),
            "s" => Ok(1e9),
            "" => Err(format!(
                "give a unit for a latency amount: ns, us, ms or s (e.g. {}>+5us or {}>1ms)",
                metric.name(),
                metric.name()
            )),
            _ => Err(format!(
                "unknown unit '{unit}' for {} (use ns, us, ms or s)",
                metric.name()
            )),
        };
    }
    match metric {
        Metric::SamplesPerS => match u.as_str() {
            "" | "/s" => Ok(1.0),
            "k" | "k/s" => Ok(1e3),
            "m" | "m/s" => Ok(1e6),
            _ => Err(format!(
                "unknown unit '{unit}' for samples_per_s (use none, k or M)"
            )),
        },
        Metric::Mbps => match u.as_str() {
            "" | "mbps" | "mbit/s" => Ok(1.0),
            "gbps" | "gbit/s" => Ok(1e3),
            "kbps" | "kbit/s" => Ok(1e-3),
            _ => Err(format!(
                "unknown unit '{unit}' for mbps (use none, Mbps or Gbps)"
            )),
        },
        _ if metric.is_count() => match u.as_str() {
            "" => Ok(1.0),
            _ => Err(format!(
                "unknown unit '{unit}' for {0} (a count: none, e.g. {0}>0)",
                metric.name()
            )),
        },
        _ => match u.as_str() {
            "" | "%" | "pp" => Ok(1.0),
            _ => Err(format!(
                "unknown unit '{unit}' for {} (use %, or pp for a change)",
                metric.name()
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The summary of one recorded value.
    fn summary(v: u64) -> pubsubperf_core::stats::LatencySummary {
        let mut r = pubsubperf_core::stats::LatencyRecorder::new();
        r.record(v);
        r.summary()
    }

    fn c(s: &str) -> Condition {
        Condition::parse(s).unwrap()
    }

    fn err(s: &str) -> String {
        Condition::parse(s).unwrap_err().to_string()
    }

    #[test]
    fn parses_forms() {
        assert_eq!(c("p99>+10%").threshold, Threshold::Relative(10.0));
        assert_eq!(c("p99 > +10%").op, Op::Above);
        assert_eq!(c("samples_per_s<-5%").threshold, Threshold::Relative(-5.0));
        assert_eq!(c("p50>+2us").threshold, Threshold::Change(2000.0));
        assert_eq!(c("p99>1.5ms").threshold, Threshold::Limit(1_500_000.0));
        assert_eq!(c("p99.9>1s").metric, Metric::P99_9);
        assert_eq!(
            c("samples_per_s<100k").threshold,
            Threshold::Limit(100_000.0)
        );
        assert_eq!(c("mbps<-1Gbps").threshold, Threshold::Change(-1000.0));
        assert_eq!(c("lost_percent>1%").threshold, Threshold::Limit(1.0));
        assert_eq!(c("lost_percent>+0.5pp").threshold, Threshold::Change(0.5));
        assert_eq!(c("lost_percent>+50%").threshold, Threshold::Relative(50.0));
        assert_eq!(c("rejected>0").metric, Metric::Rejected);
        assert_eq!(c("rejected>0").threshold, Threshold::Limit(0.0));
        assert_eq!(c("rejected>+10").threshold, Threshold::Change(10.0));
        assert_eq!(c("rejected>+10%").threshold, Threshold::Relative(10.0));
    }

    /// The figures of one-way, fan-out and discovery can be conditions:
    /// `discovery>+50%`, `spread_p50>20us`, `forward_p50>+10%`.
    #[test]
    fn one_way_spread_and_discovery_are_metrics() {
        use pubsubperf_core::result::{Discovery, OneWay, SubscriberDiscovery};
        let run = |scale: u64| -> Run {
            let mut r: Run = serde_json::from_value(serde_json::json!({
                "binding": "udp", "transport": "udp", "test": "latency", "size": 64,
                "zero_copy": false, "data_type": "bytes", "reliable": false,
                "config": {}, "resources": {
                    "publisher": {"cpu_percent": 0.0, "max_rss_kib": 0, "voluntary_cs": 0, "involuntary_cs": 0},
                    "subscriber": {"cpu_percent": 0.0, "max_rss_kib": 0, "voluntary_cs": 0, "involuntary_cs": 0}
                }
            }))
            .expect("a run");
            r.one_way = Some(OneWay {
                forward: summary(30_000 * scale),
                back: summary(10_000),
                clocks: "one clock".into(),
                offsets: Vec::new(),
                bound_ns: 0,
                below_zero: 0,
                headline: "forward".into(),
                round_trip_half: None,
            });
            r.latency_by_subscriber = vec![summary(20_000), summary(20_000 + 5_000 * scale)];
            r.discovery = Some(Discovery {
                writer_first_match_ns: 1_000_000,
                writer_matched_ns: 1_000_000,
                echo_readers_matched_ns: Some(2_000_000),
                subscribers: vec![SubscriberDiscovery {
                    reader_matched_ns: 3_000_000 * scale,
                    echo_writer_matched_ns: None,
                    first_sample_ns: Some(9_000_000),
                }],
            });
            r
        };
        let (base, new) = (run(1), run(2));
        assert_eq!(Metric::Discovery.value(&base), Some(3_000_000.0));
        assert_eq!(Metric::SpreadP50.value(&base), Some(5_000.0));
        assert_eq!(c("discovery>+50%").check(&base, &new), Some((100.0, true)));
        assert_eq!(
            c("spread_p50>20us").check(&base, &new),
            Some((10_000.0, false))
        );
        assert_eq!(
            c("forward_p50>+10%").check(&base, &new).map(|(_, v)| v),
            Some(true)
        );
        assert_eq!(c("back_p50>+10%").check(&base, &new), Some((0.0, false)));
        assert_eq!(
            Metric::Discovery.format(3_000_000.0),
            crate::text::format_ns(3_000_000.0)
        );
    }

    /// Fan-out: the spread's and last delivery's percentiles; the
    /// publisher's CPU per sample sent (throughput).
    #[test]
    fn fan_out_and_send_cost() {
        use pubsubperf_core::result::FanOut;
        let run = |scale: u64| -> Run {
            let mut r: Run = serde_json::from_value(serde_json::json!({
                "binding": "udp", "transport": "udp", "test": "throughput", "size": 64,
                "zero_copy": false, "data_type": "bytes", "reliable": false,
                "config": {"subscribers": 2}, "duration_s": 1.0,
                "throughput": {"sent": 2_000_000, "received": 0, "bytes": 0, "samples_per_s": 0.0,
                    "mbps": 0.0, "lost": 0, "lost_percent": 0.0, "duplicates": 0, "out_of_order": 0},
                "resources": {
                    "publisher": {"cpu_percent": 50.0 * scale as f64, "max_rss_kib": 0, "voluntary_cs": 0, "involuntary_cs": 0},
                    "subscriber": {"cpu_percent": 0.0, "max_rss_kib": 0, "voluntary_cs": 0, "involuntary_cs": 0}
                }
            }))
            .expect("a run");
            r.fan_out = Some(FanOut {
                every: 1,
                subscribers: 2,
                samples: 1,
                first_ns: summary(1_000),
                last_ns: summary(3_000 * scale),
                spread_ns: summary(2_000 * scale),
            });
            r
        };
        let (base, new) = (run(1), run(2));
        assert_eq!(Metric::FanoutSpreadP50.value(&base), Some(2_000.0));
        assert_eq!(Metric::FanoutLastP99.value(&base), Some(3_000.0));
        // 0.5 s of CPU over the 1M samples publisher 0 sent.
        assert_eq!(Metric::SendCost.value(&base), Some(500.0));
        assert_eq!(c("send_cost>+50%").check(&base, &new), Some((100.0, true)));
        assert_eq!(
            c("fanout_spread_p99>3us").check(&base, &new),
            Some((4_000.0, true))
        );
    }

    /// `rejected` reads a latency run's refused pings and a throughput
    /// run's refused sends; `rejected>0` fails on either.
    #[test]
    fn rejected_counts_refused_pings_and_sends() {
        let run = |test: &str, counts: serde_json::Value| -> Run {
            let mut v = serde_json::json!({
                "binding": "udp", "transport": "udp", "test": test, "size": 64,
                "zero_copy": false, "data_type": "bytes", "reliable": false,
                "config": {}, "resources": {
                    "publisher": {"cpu_percent": 0.0, "max_rss_kib": 0, "voluntary_cs": 0, "involuntary_cs": 0},
                    "subscriber": {"cpu_percent": 0.0, "max_rss_kib": 0, "voluntary_cs": 0, "involuntary_cs": 0}
                }
            });
            let key = if test == "latency" {
                "pings"
            } else {
                "throughput"
            };
            v[key] = counts;
            serde_json::from_value(v).expect("a run")
        };
        let cond = c("rejected>0");
        let base = run(
            "latency",
            serde_json::json!({"sent": 100, "echoed": 100, "lost": 0}),
        );
        let lat = run(
            "latency",
            serde_json::json!({"sent": 90, "echoed": 90, "lost": 0, "rejected": 10}),
        );
        assert_eq!(cond.check(&base, &lat), Some((10.0, true)));
        assert_eq!(cond.check(&base, &base), Some((0.0, false)));
        let tp = run(
            "throughput",
            serde_json::json!({"sent": 10, "received": 10, "bytes": 640, "samples_per_s": 10.0,
                "mbps": 0.0, "lost": 0, "lost_percent": 0.0, "rejected": 3,
                "duplicates": 0, "out_of_order": 0}),
        );
        assert_eq!(cond.check(&tp, &tp), Some((3.0, true)));
        assert_eq!(cond.describe(3.0), "rejected is 3");
        assert!(err("rejected>1k").contains("unknown unit 'k' for rejected"));
    }

    #[test]
    fn errors_are_one_line_and_name_the_expression() {
        for (e, want) in [
            ("p99", "expected METRIC>THRESHOLD"),
            ("p95>+10%", "unknown metric 'p95'"),
            ("p99>10%", "needs a sign"),
            ("p99>100", "give a unit"),
            ("p99>=+10%", "single > or <"),
            ("p99>", "no threshold"),
            (">+1%", "no metric"),
            ("p99>+x%", "does not start with a number"),
            ("mbps<3furlongs", "unknown unit"),
        ] {
            let m = err(e);
            assert!(m.starts_with(&format!("--fail-if '{e}': ")), "{m}");
            assert!(m.contains(want), "{e}: {m}");
            assert!(!m.contains('\n'));
        }
    }

    /// The topology metrics read a path's latency or a topic's counts,
    /// never a plain run, and take the units of their kind.
    #[test]
    fn path_and_topic_metrics() {
        use pubsubperf_core::stats::LatencyRecorder;
        let mut rec = LatencyRecorder::new();
        for v in [1_000, 1_500, 2_000] {
            rec.record(v);
        }
        let path = rec.summary();
        let topic: GraphTopic = serde_json::from_value(serde_json::json!({
            "name": "t", "size": 64, "reliability": "reliable", "sent": 100,
            "received": 98, "lost": 2, "lost_percent": 2.0, "late": 5, "too_late": 1,
            "deadline_ns": 1000, "too_late_ns": 5000
        }))
        .unwrap();
        let mut no_deadline = topic.clone();
        (no_deadline.deadline_ns, no_deadline.too_late_ns) = (None, None);
        assert_eq!(Metric::Late.topic_value(&no_deadline), None);
        assert_eq!(Metric::TooLate.topic_value(&no_deadline), None);
        assert_eq!(
            Metric::TopicLostPercent.topic_value(&no_deadline),
            Some(2.0)
        );
        assert_eq!(Metric::PathP50.path_value(&path), Some(1_500.0));
        assert_eq!(Metric::PathMax.path_value(&path), Some(2_000.0));
        assert_eq!(Metric::PathP50.topic_value(&topic), None);
        assert_eq!(Metric::Late.topic_value(&topic), Some(5.0));
        assert_eq!(Metric::TooLate.topic_value(&topic), Some(1.0));
        assert_eq!(Metric::TopicLostPercent.topic_value(&topic), Some(2.0));
        assert_eq!(Metric::P50.path_value(&path), None);
        assert_eq!(c("path_p99>2ms").threshold, Threshold::Limit(2_000_000.0));
        assert_eq!(c("path_p50>+10%").threshold, Threshold::Relative(10.0));
        assert_eq!(c("late>+3").threshold, Threshold::Change(3.0));
        assert_eq!(c("too_late>0").threshold, Threshold::Limit(0.0));
        assert_eq!(c("topic_lost_percent>1%").threshold, Threshold::Limit(1.0));
        assert_eq!(
            c("topic_lost_percent>+0.5pp").threshold,
            Threshold::Change(0.5)
        );
        assert!(err("path_p99>100").contains("give a unit"));
        assert!(err("late>1ms").contains("unknown unit 'ms' for late"));
        assert_eq!(c("late>+50%").check_values(4.0, 5.0), (25.0, false));
        assert_eq!(c("late>+20%").check_values(4.0, 5.0), (25.0, true));
        assert_eq!(c("late>+20%").describe(25.0), "late changed by +25.0%");
        assert_eq!(c("too_late>0").describe(3.0), "too_late is 3");
        // A plain run has none of them.
        let run: Run = serde_json::from_value(serde_json::json!({
            "binding": "udp", "transport": "udp", "test": "latency", "size": 64,
            "zero_copy": false, "data_type": "bytes", "reliable": false,
            "config": {}, "resources": {
                "publisher": {"cpu_percent": 0.0, "max_rss_kib": 0, "voluntary_cs": 0, "involuntary_cs": 0},
                "subscriber": {"cpu_percent": 0.0, "max_rss_kib": 0, "voluntary_cs": 0, "involuntary_cs": 0}
            }
        }))
        .unwrap();
        assert_eq!(c("path_p99>1ns").check(&run, &run), None);
        assert_eq!(c("late>0").check(&run, &run), None);
    }

    #[test]
    fn relative_changes() {
        assert_eq!(relative_change(100.0, 110.0), 10.0);
        assert_eq!(relative_change(0.0, 0.0), 0.0);
        assert_eq!(relative_change(0.0, 1.0), f64::INFINITY);
        assert_eq!(pct(12.345), "+12.3%");
        assert_eq!(pct(-5.0), "-5.0%");
    }
}
