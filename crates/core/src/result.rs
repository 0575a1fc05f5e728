//! The result schema: what `--json FILE` writes and every consumer reads.
//! It follows the output contract of the product brief and only ever
//! grows: fields are added, never renamed or removed. Every field is
//! documented here; this file is the schema.

use crate::environment::Environment;
use crate::stats::LatencySummary;
use crate::sys::Resources;
use serde::{Deserialize, Serialize};

/// The version of this schema; bumped when fields are added.
pub const SCHEMA_VERSION: u32 = 1;

/// A whole results file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultsFile {
    /// The tool that wrote it.
    pub tool: ToolInfo,
    /// Where it was measured.
    pub environment: Environment,
    /// One entry per (test, size) measured.
    pub runs: Vec<Run>,
    /// Topology runs (`pubsubperf topology`), each a whole graph.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub graphs: Vec<crate::graph_result::GraphRun>,
}

/// Name and version of the tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolInfo {
    /// Always `pubsubperf`.
    pub name: String,
    /// Tool version.
    pub version: String,
    /// Version of this schema.
    #[serde(default)]
    pub schema: u32,
}

/// The kind of test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TestKind {
    /// Ping-pong latency.
    Latency,
    /// Publisher streams, subscriber counts.
    Throughput,
}

impl std::fmt::Display for TestKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TestKind::Latency => "latency",
            TestKind::Throughput => "throughput",
        })
    }
}

/// The physical limit a run is read against, and where the run stands:
/// across hosts the line rate of the NIC the data went through; on one host
/// `pubsubperf calibrate`'s memcpy bandwidth (throughput through shared
/// memory) or cache-line round trip (latency).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Limit {
    /// What the limit is (`line rate of eth1`, `memcpy of 64 KiB`,
    /// `cache-line one-way`).
    pub what: String,
    /// Its value, in `unit`.
    pub value: f64,
    /// `Mbit/s` or `ns`.
    pub unit: String,
    /// Throughput: the run's payload Mbit/s as a percentage of the limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percent: Option<f64>,
    /// Latency: the run's p50 as a multiple of the limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multiple: Option<f64>,
}

/// One measured run: one binding, one test, one size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// Binding name (`udp`, `cyclonedds`, ...).
    pub binding: String,
    /// Transport within the binding.
    pub transport: String,
    /// `latency` or `throughput`.
    pub test: TestKind,
    /// Payload size in bytes as the user asked for it (header included:
    /// every sample is exactly this many bytes on the binding's API).
    pub size: usize,
    /// Loaned (zero-copy) buffers used.
    pub zero_copy: bool,
    /// `bytes` or `flat`.
    pub data_type: String,
    /// Reliable delivery.
    pub reliable: bool,
    /// Every setting that shaped the run.
    pub config: serde_json::Value,
    /// Latency statistics (latency tests; throughput tests with echoes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ns: Option<LatencySummary>,
    /// What the latency figures mean, e.g. `one-way = round trip / 2`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_method: Option<String>,
    /// The clock that timed latency tests' round trips: `tsc` (the
    /// time-stamp counter, with busy waits), `clock_monotonic`, or `virtual`
    /// (the mock binding).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_clock: Option<String>,
    /// Latency with several subscribers: the round trips / 2 each one
    /// echoed (round robin: subscriber i echoes pings i, i + N, ...), by
    /// subscriber index.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latency_by_subscriber: Vec<LatencySummary>,
    /// `--one-way`: latency in each direction, and how the two clocks were
    /// related.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub one_way: Option<OneWay>,
    /// Ping counts (latency tests): how many pings went out while
    /// measuring and how many came back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pings: Option<Pings>,
    /// Sample counts (throughput tests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput: Option<Throughput>,
    /// Per-interval figures (throughput: one per second per subscriber;
    /// latency: one per second).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<Interval>,
    /// Per-subscriber throughput when there are several subscribers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subscribers: Vec<Throughput>,
    /// Per-publisher throughput (summed over subscribers) when there are
    /// several publishers, by publisher id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub publishers: Vec<Throughput>,
    /// CPU and memory of both sides.
    pub resources: RunResources,
    /// `--profile`: system calls, context switches and CPU time per sample
    /// of each side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<crate::profile::RunProfile>,
    /// `--explain`: the kernel's account of the samples by percentile band
    /// ([`crate::explanation`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<crate::explanation::Explanation>,
    /// Samples whose payload failed the `--check` pattern.
    #[serde(default)]
    pub bad_samples: u64,
    /// Samples that arrived without the run's key (a stray or injected
    /// datagram on a data port, a late sample of an earlier run), on either
    /// side: counted here only, never as received, lost, reordered or as a
    /// round trip. Absent when none came.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub foreign_samples: u64,
    /// False when the run was cut short (peer died, Ctrl-C); its figures
    /// cover what was measured until then.
    #[serde(default = "yes")]
    pub complete: bool,
    /// Why the run is incomplete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Wall-clock start, RFC 3339 UTC.
    #[serde(default)]
    pub started_at: String,
    /// The hosts its sides ran on, by the names of a fleet sweep's
    /// inventory (`local`: the machine that ran the sweep); absent outside
    /// sweeps with a `hosts` or `publisher_hosts` axis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts: Option<RunHosts>,
    /// The physical limit the run is read against, where one is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<Limit>,
    /// How long the endpoints took to find each other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discovery: Option<Discovery>,
    /// Several subscribers on one host: when each sample reached the first
    /// and the last of them, and the spread between.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fan_out: Option<FanOut>,
    /// `--topics N`: each topic's own figures, by topic (the run's
    /// latency and throughput are all topics' together).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_topic: Vec<TopicFigures>,
    /// Measured duration in seconds (warm-up excluded).
    #[serde(default)]
    pub duration_s: f64,
    /// Where each side's measuring thread really ran, read back from the
    /// kernel: the publisher first, then each extra publisher, then each subscriber
    /// ([`crate::placement`]). Absent in results of pubsubperf before 0.2.0.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub placement: Vec<crate::placement::Placement>,
    /// What in `placement` differs from the plan, one reason each (a side
    /// pinned elsewhere, two sides on a core they were planned not to
    /// share): the figures were not measured as planned. Empty when the
    /// run ran as planned.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<String>,
}

/// Fan-out to several subscribers on one host ([`Run::fan_out`]): for
/// every `every`-th measured sample of publisher 0 that every subscriber
/// received (at most 16384), its one-way delay to the first subscriber, to
/// the last, and the difference (the spread), from each subscriber's
/// receive time minus the sample's send time (one clock).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FanOut {
    /// Every how many samples one was recorded (a power of two).
    pub every: u64,
    /// Subscribers.
    pub subscribers: u64,
    /// Samples every subscriber received, of those recorded.
    pub samples: u64,
    /// Send to the first subscriber's receive, ns.
    pub first_ns: LatencySummary,
    /// Send to the last subscriber's receive, ns.
    pub last_ns: LatencySummary,
    /// The last subscriber's receive minus the first's, ns.
    pub spread_ns: LatencySummary,
}

/// One topic's figures in a `--topics N` run ([`Run::by_topic`]): what its
/// own publisher and subscribers measured while the others ran beside it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TopicFigures {
    /// Its latency (latency tests; throughput tests with echoes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ns: Option<LatencySummary>,
    /// Its pings (latency tests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pings: Option<Pings>,
    /// Its counters (throughput tests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput: Option<Throughput>,
    /// False when its run was cut short.
    #[serde(default = "yes")]
    pub complete: bool,
}

/// A `--one-way` latency run's two directions ([`Run::one_way`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OneWay {
    /// Publisher to subscriber: the subscriber's receive time minus the
    /// ping's send time, less the clocks' offset.
    pub forward: LatencySummary,
    /// Subscriber to publisher: the echo's arrival minus the subscriber's
    /// receive time, plus the clocks' offset (the subscriber's turnaround,
    /// receive to echo, is in this direction, as it is in a round trip).
    pub back: LatencySummary,
    /// `one clock` (both sides on one host) or `estimated` (across hosts:
    /// probes over the control channel, see `offsets`).
    pub clocks: String,
    /// Across hosts: each subscriber's clock offset, before and after.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub offsets: Vec<ClockOffset>,
    /// Every one-way value is within this many ns of the truth (0 on one
    /// host): the offset's error over the run.
    pub bound_ns: u64,
    /// Values below zero after the offset's correction, recorded as 0 (an
    /// offset error, within the bound).
    #[serde(default)]
    pub below_zero: u64,
    /// What the run's `latency_ns` is: `forward`, or `round trip / 2` where
    /// the bound is more than a tenth of the forward p50.
    pub headline: String,
    /// Round trip / 2, where `latency_ns` holds `forward` instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_trip_half: Option<LatencySummary>,
}

/// One subscriber's clock offset across hosts ([`OneWay::offsets`]): its
/// `CLOCK_MONOTONIC` minus the publisher's, estimated before and after the
/// run from probes over the control channel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockOffset {
    /// Subscriber index.
    pub subscriber: usize,
    /// The offset before the run, ns (the one the run's values are
    /// corrected with).
    pub before_ns: i64,
    /// Its bound, ns: the true offset is within `before_ns` ± this.
    pub before_bound_ns: u64,
    /// The fastest probe's round trip less the subscriber's turnaround, ns.
    pub before_min_delay_ns: u64,
    /// The offset after the run, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_ns: Option<i64>,
    /// Its bound, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_bound_ns: Option<u64>,
    /// How fast the offset moved over the run, parts per million.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift_ppm: Option<f64>,
    /// Probes per estimate.
    pub probes: u32,
}

/// How long a run's endpoints took to find each other ([`Run::discovery`]):
/// each time from the moment the side began to create the endpoint (its
/// middleware's participant already open) until the endpoint matched its
/// peers, as the binding's `wait_matched` tells (at once for the socket
/// bindings, which discover nothing), in ns.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Discovery {
    /// The publisher's data writer, to its first subscriber matched.
    pub writer_first_match_ns: u64,
    /// The publisher's data writer, to every subscriber matched.
    pub writer_matched_ns: u64,
    /// Latency (and echoes under load): the publisher's echo readers, the
    /// slowest to match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub echo_readers_matched_ns: Option<u64>,
    /// Each subscriber's side, by index.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subscribers: Vec<SubscriberDiscovery>,
}

/// One subscriber's side of [`Discovery`], from the creation of its data
/// reader.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubscriberDiscovery {
    /// Its data reader, to matched with the publisher's writer.
    pub reader_matched_ns: u64,
    /// Its echo writer, from its creation to matched with the publisher's
    /// echo reader.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub echo_writer_matched_ns: Option<u64>,
    /// To the first sample it received (warm-up included), which the
    /// publisher sends once every side has matched and been told to start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_sample_ns: Option<u64>,
}

/// Where a run's sides ran, by inventory name ([`Run::hosts`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunHosts {
    /// The publisher's host.
    pub publisher: String,
    /// The subscribers' host.
    pub subscriber: String,
}

fn yes() -> bool {
    true
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// Ping counts of a latency test (`pings` in results). Warm-up pings are
/// not counted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pings {
    /// Pings sent while measuring.
    pub sent: u64,
    /// Pings whose echo came back within `--echo-timeout`: each one is a
    /// latency value.
    pub echoed: u64,
    /// Pings without an echo within `--echo-timeout` (`sent - echoed`):
    /// lost, and in no latency figure.
    pub lost: u64,
    /// Best effort: pings the kernel or the middleware refused to send (a
    /// firewall's `EPERM`, `ENOBUFS`, a full writer queue). A refused ping
    /// was not sent: it is in neither `sent` nor `lost`, and the run goes on.
    #[serde(default)]
    pub rejected: u64,
    /// Why the first refused ping was refused (the errno and what to check).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejected_reason: Option<String>,
}

impl Run {
    /// Throughput: the publisher process's CPU time per sample it sent, ns:
    /// its CPU share over the measured duration divided by the samples it
    /// sent (every thread of the process, the middleware's own included).
    /// A run's counts are summed over its subscribers, each of which counts
    /// what was sent to it: publisher 0's own are its counts over the
    /// subscribers.
    pub fn publisher_cpu_per_sample(&self) -> Option<f64> {
        let counts = self.publishers.first().or(self.throughput.as_ref())?;
        let subs = self.config["subscribers"].as_u64().unwrap_or(1).max(1);
        let sent = counts.sent / subs;
        if sent == 0 {
            return None;
        }
        let cpu_ns = self.resources.publisher.cpu_percent / 100.0 * self.duration_s * 1e9;
        Some(cpu_ns / sent as f64)
    }

    /// Sends refused under best effort: the throughput counters' or, in a
    /// latency test, the pings'; 0 when the run counted none.
    pub fn rejected(&self) -> u64 {
        self.throughput
            .as_ref()
            .map(|t| t.rejected)
            .or(self.pings.as_ref().map(|p| p.rejected))
            .unwrap_or(0)
    }
}

/// Throughput counters (`throughput` in results).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Throughput {
    /// Samples the publisher sent during the measurement.
    pub sent: u64,
    /// Distinct samples received.
    pub received: u64,
    /// Bytes received (distinct samples × size).
    pub bytes: u64,
    /// Received samples per second of measurement.
    pub samples_per_s: f64,
    /// Received megabits (10^6 bits) per second.
    pub mbps: f64,
    /// Samples sent but never received.
    pub lost: u64,
    /// `lost / sent × 100`.
    pub lost_percent: f64,
    /// Best effort: sends the kernel or the middleware refused (a firewall's
    /// `EPERM`, `ENOBUFS`, a full writer queue). A refused sample was not
    /// sent: it is in neither `sent` nor `lost`.
    #[serde(default)]
    pub rejected: u64,
    /// Why the first refused send was refused (the errno and what to check).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejected_reason: Option<String>,
    /// Samples received more than once.
    pub duplicates: u64,
    /// Samples received after a later one.
    pub out_of_order: u64,
    /// Samples the publisher sent per second.
    #[serde(default)]
    pub sent_per_s: f64,
}

/// One interval of a run, as measured by the subscriber.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Seconds since the start of the measurement, at the end of the interval.
    pub t_s: f64,
    /// Subscriber index.
    #[serde(default)]
    pub subscriber: usize,
    /// Samples received in the interval.
    pub received: u64,
    /// Samples lost in the interval (gaps seen in it).
    pub lost: u64,
    /// Samples per second in the interval.
    pub samples_per_s: f64,
    /// Megabits per second in the interval.
    pub mbps: f64,
    /// CPU % (of one core) in the interval of the process that measured
    /// it: the subscriber's in a throughput test, the publisher's in a
    /// latency test.
    #[serde(default)]
    pub cpu_percent: f64,
    /// Latency test: mean one-way latency in the interval, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_mean_ns: Option<f64>,
    /// Latency test: largest one-way latency in the interval, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_max_ns: Option<u64>,
    /// Latency test: smallest one-way latency in the interval, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_min_ns: Option<u64>,
    /// Latency test: population standard deviation of the interval's
    /// one-way latencies, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_std_ns: Option<f64>,
    /// Latency test: the interval's last round trip's one-way latency, ns
    /// (the pong Perftest's interval line shows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_last_ns: Option<u64>,
    /// Latency test: median one-way latency of the interval's round trips,
    /// ns (from the interval's own histogram, as the run's percentiles are
    /// from the run's: see `stats`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_p50_ns: Option<u64>,
    /// Latency test: the interval's 90th percentile, ns (as above; with
    /// p50 and p99, the points ddsperf prints each second).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_p90_ns: Option<u64>,
    /// Latency test: the interval's 99th percentile, ns (as above).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_p99_ns: Option<u64>,
}

/// What a maximum throughput search (`--find-max`, the quick comparison's
/// best-effort throughput) recorded in its run's `config.find_max`: the run
/// is its best trial, and its `rate` the rate the search settled on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchRecord {
    /// The loss bound, percent.
    pub max_loss_percent: f64,
    /// At most this many trials.
    pub max_trials: usize,
    /// Some trial was within the bound.
    pub found: bool,
    /// Every trial, in the order run.
    pub trials: Vec<Trial>,
}

/// One trial of a maximum throughput search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    /// Rate asked for, samples/s (0: as fast as possible).
    pub target_rate: f64,
    /// Rate the publisher achieved, samples/s.
    pub sent_per_s: f64,
    /// Rate received, samples/s.
    pub received_per_s: f64,
    /// Loss in percent.
    pub lost_percent: f64,
    /// Within the loss bound.
    pub ok: bool,
}

/// Resources of both sides (`resources` in results).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunResources {
    /// Publisher side.
    pub publisher: Resources,
    /// Subscriber side (subscriber 0 when there are several).
    pub subscriber: Resources,
}

impl Throughput {
    /// Derives the rates from the counters over `seconds`.
    pub fn finish(&mut self, seconds: f64) {
        self.finish_window(seconds, self.received);
    }

    /// Derives the rates from the `in_window` received samples that
    /// arrived within a window of `seconds` (a subscriber's window ends at
    /// its last clock reading; samples after it count as received, not in
    /// the rate). The sent rate is `sent` over the same window.
    pub fn finish_window(&mut self, seconds: f64, in_window: u64) {
        if seconds > 0.0 {
            let bytes_per_sample = if self.received > 0 {
                self.bytes as f64 / self.received as f64
            } else {
                0.0
            };
            self.samples_per_s = in_window as f64 / seconds;
            self.mbps = in_window as f64 * bytes_per_sample * 8.0 / seconds / 1e6;
            self.sent_per_s = self.sent as f64 / seconds;
        }
        self.lost_percent = if self.sent > 0 {
            self.lost as f64 * 100.0 / self.sent as f64
        } else {
            0.0
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::LatencyRecorder;

    fn sample_file() -> ResultsFile {
        let mut rec = LatencyRecorder::new();
        for v in [1000, 2000, 3000] {
            rec.record(v);
        }
        let mut tp = Throughput {
            sent: 100,
            received: 90,
            bytes: 90 * 64,
            lost: 10,
            ..Default::default()
        };
        tp.finish(1.0);
        ResultsFile {
            tool: ToolInfo {
                name: "pubsubperf".into(),
                version: "0.1.0".into(),
                schema: SCHEMA_VERSION,
            },
            environment: Environment::detect(),
            runs: vec![Run {
                binding: "udp".into(),
                transport: "udp".into(),
                test: TestKind::Throughput,
                size: 64,
                zero_copy: false,
                data_type: "bytes".into(),
                reliable: false,
                config: serde_json::json!({"rate": 0}),
                latency_ns: Some(rec.summary()),
                latency_method: Some("one-way = round trip / 2".into()),
                latency_clock: Some("clock_monotonic".into()),
                latency_by_subscriber: Vec::new(),
                one_way: None,
                discovery: None,
                fan_out: None,
                by_topic: Vec::new(),
                pings: None,
                throughput: Some(tp),
                intervals: vec![],
                subscribers: vec![],
                publishers: vec![],
                resources: RunResources::default(),
                profile: None,
                explanation: None,
                bad_samples: 0,
                foreign_samples: 0,
                complete: true,
                error: None,
                started_at: String::new(),
                hosts: None,
                limit: None,
                duration_s: 1.0,
                placement: Vec::new(),
                conditions: Vec::new(),
            }],
            graphs: Vec::new(),
        }
    }

    /// The contract of the product brief: these keys must exist with these types.
    #[test]
    fn json_contract() {
        let v = serde_json::to_value(sample_file()).unwrap();
        assert_eq!(v["tool"]["name"], "pubsubperf");
        assert!(v["tool"]["version"].is_string());
        for k in ["cpu_model", "kernel"] {
            assert!(v["environment"][k].is_string(), "{k}");
        }
        assert!(v["environment"]["cores"].is_u64());
        assert!(v["environment"]["bindings"].is_object());
        let run = &v["runs"][0];
        for k in ["binding", "transport", "test", "data_type"] {
            assert!(run[k].is_string(), "{k}");
        }
        assert!(run["size"].is_u64());
        assert!(run["zero_copy"].is_boolean());
        assert!(run["reliable"].is_boolean());
        assert!(run["config"].is_object());
        let l = &run["latency_ns"];
        for k in [
            "count", "min", "max", "p50", "p90", "p99", "p99_9", "p99_99", "p99_9999",
        ] {
            assert!(l[k].is_u64(), "{k}");
        }
        assert!(l["mean"].is_f64() && l["std"].is_f64());
        assert!(l["histogram"].is_string());
        let t = &run["throughput"];
        for k in [
            "sent",
            "received",
            "bytes",
            "lost",
            "rejected",
            "duplicates",
            "out_of_order",
        ] {
            assert!(t[k].is_u64(), "{k}");
        }
        for k in ["samples_per_s", "mbps", "lost_percent"] {
            assert!(t[k].is_f64(), "{k}");
        }
        for side in ["publisher", "subscriber"] {
            let r = &run["resources"][side];
            assert!(r["cpu_percent"].is_f64());
            for k in ["max_rss_kib", "voluntary_cs", "involuntary_cs"] {
                assert!(r[k].is_u64(), "{k}");
            }
        }
        assert_eq!(t["lost_percent"], 10.0);
    }

    #[test]
    fn json_round_trip() {
        let f = sample_file();
        let s = serde_json::to_string(&f).unwrap();
        let back: ResultsFile = serde_json::from_str(&s).unwrap();
        assert_eq!(back, f);
    }

    #[test]
    fn reads_minimal_contract() {
        // A file with only the brief's fields must still load.
        let s = r#"{"tool":{"name":"pubsubperf","version":"0.0.1"},
          "environment":{"cpu_model":"x","cores":2,"kernel":"k","bindings":{}},
          "runs":[{"binding":"udp","transport":"udp","test":"latency","size":64,
            "zero_copy":false,"data_type":"bytes","reliable":true,"config":{},
            "resources":{"publisher":{"cpu_percent":1.0,"max_rss_kib":1,"voluntary_cs":0,"involuntary_cs":0},
                         "subscriber":{"cpu_percent":1.0,"max_rss_kib":1,"voluntary_cs":0,"involuntary_cs":0}}}]}"#;
        let f: ResultsFile = serde_json::from_str(s).unwrap();
        assert!(f.runs[0].complete);
    }
}
