//! The specification of one run, as the publisher sends it to every
//! subscriber. Built by the CLI from the user's options; it is also what a
//! result's `config` records.

use crate::Fault;
use pubsubperf_core::EndpointConfig;
use pubsubperf_core::result::TestKind;
use serde::{Deserialize, Serialize};

/// Everything that shapes one run (one test at one size).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunSpec {
    /// Binding of the publisher.
    pub binding: String,
    /// Binding of the subscribers (differs for cross-vendor runs).
    pub peer_binding: String,
    /// Latency or throughput.
    pub test: TestKind,
    /// Sample size in bytes.
    pub size: usize,
    /// The endpoints' configuration (identical on both sides but for
    /// `bind_ip`).
    pub endpoint: EndpointConfig,
    /// Warm-up before measuring, ns (samples flagged, never recorded).
    pub warmup_ns: u64,
    /// Measurement length, ns (0: bounded by `count` only).
    pub duration_ns: u64,
    /// Measured samples to send (0: bounded by `duration_ns` only).
    pub count: u64,
    /// Sending rate, samples/s (0: as fast as possible).
    pub rate: f64,
    /// Throughput test: the publisher sleeps this long after each write
    /// (`--sleep`, Perftest's -sleep; 0: none). Batched writes are flushed
    /// before each sleep.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sleep_ns: u64,
    /// Throughput with a rate, `--pace sleep`: the publisher sleeps until
    /// each sample's slot instead of spinning; a late wake-up sends the
    /// overdue samples back to back, so the rate holds on average. Recorded
    /// only when set.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pace_sleep: bool,
    /// Throughput, `--demand`: the publisher writes this many samples back
    /// to back, then pauses 10 ms, and again (0: no pauses). One run is one
    /// demand of the ramp; recorded only when set, so that results of
    /// earlier versions compare with runs without it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub demand: u64,
    /// Throughput, `--recovery-time`: ms the publisher waits after this run
    /// before the next one (the ramp's pause between demands).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub recovery_ms: u64,
    /// Throughput test: echo every Nth sample for latency under load (0: none).
    pub latency_every: u64,
    /// Fill and verify the integrity pattern.
    pub check: bool,
    /// Core of the publisher's measuring thread.
    pub pub_cpu: Option<usize>,
    /// Core of the subscribers' measuring threads.
    pub sub_cpu: Option<usize>,
    /// SCHED_FIFO priority of both sides.
    pub rt_priority: Option<i32>,
    /// Lock memory on both sides.
    pub mlock: bool,
    /// Number of subscribers.
    pub subscribers: usize,
    /// Number of publishers (throughput; publisher 0 is this process).
    #[serde(default = "one")]
    pub publishers: usize,
    /// This subscriber's index (set per subscriber).
    pub subscriber_index: usize,
    /// Fan-out: each subscriber records every this many samples' delays
    /// ([`crate::fan_out`]; 0: none). Set by the publisher per run; not in
    /// a result's config.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub fan_out_every: u64,
    /// `--topics N`: this run is one of N run side by side, each on its
    /// own topics with its own publisher and subscribers; recorded only
    /// when more than one.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub topics: usize,
    /// Latency test: a ping without echo after this long counts as lost, ms.
    pub echo_timeout_ms: u64,
    /// Seconds per reported interval, ms.
    pub interval_ms: u64,
    /// Latency test: record true one-way latency from the sender's
    /// timestamp (same host only) instead of round trip / 2.
    pub one_way: bool,
    /// Latency test: the clock that times round trips
    /// ([`crate::run::round_trip_clock`]); recorded in the config only
    /// when not `auto`, so that results of earlier versions compare with it.
    #[serde(default, skip_serializing_if = "RoundTripClock::is_auto")]
    pub clock: RoundTripClock,
    /// `--profile`: each side traces its own system calls over the run
    /// (see [`crate::profiler`]); recorded only when set.
    #[serde(default, skip_serializing_if = "is_false")]
    pub profile: bool,
    /// `--explain`: the kernel's account of the samples (see
    /// [`crate::explaining`]); recorded only when set.
    #[serde(default, skip_serializing_if = "is_false")]
    pub explain: bool,
    /// The publisher's data address (`--data-address`; None: its address
    /// towards the first subscriber). Each subscriber's host chooses its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_address: Option<String>,
    /// The key every sample of the run carries ([`pubsubperf_core::sample`]),
    /// drawn at random by the publisher as each run starts
    /// ([`RunSpec::keyed`]); 0 until then. Not in a result's config.
    #[serde(default)]
    pub run_key: u64,
}

/// The user's choice of round-trip clock (`--clock`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RoundTripClock {
    /// The TSC with busy waits where the kernel keeps time with it, else
    /// `CLOCK_MONOTONIC`.
    #[default]
    Auto,
    /// Always `CLOCK_MONOTONIC`.
    Monotonic,
    /// The TSC (checked usable when the run is planned).
    Tsc,
}

impl RoundTripClock {
    fn is_auto(&self) -> bool {
        *self == RoundTripClock::Auto
    }
}

fn one() -> usize {
    1
}

fn is_one(v: &usize) -> bool {
    *v == 1
}

fn is_false(v: &bool) -> bool {
    !*v
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// How long a run's measured part lasts, as far as is known before it
/// starts: its `--duration` (`duration_ns`), else `count / rate` at a given
/// `--rate`; None for a run bounded by an unpaced `--count` alone. The float
/// conversion saturates: a huge count at a tiny rate gives `u64::MAX`.
pub fn measured_span_ns(duration_ns: u64, count: u64, rate: f64) -> Option<u64> {
    if duration_ns > 0 {
        Some(duration_ns)
    } else if rate > 0.0 {
        Some((count as f64 / rate * 1e9) as u64)
    } else {
        None
    }
}

impl RunSpec {
    /// A one-second udp run of `test` with the defaults used by tests
    /// (64-byte samples, no warm-up, one subscriber).
    pub fn for_test(run_id: &str, test: TestKind) -> RunSpec {
        let mut endpoint = EndpointConfig::for_test(run_id);
        endpoint.transport = "udp".into();
        endpoint.max_sample_size = 64;
        RunSpec {
            binding: "udp".into(),
            peer_binding: "udp".into(),
            test,
            size: 64,
            endpoint,
            warmup_ns: 0,
            duration_ns: 1_000_000_000,
            count: 0,
            rate: 0.0,
            sleep_ns: 0,
            pace_sleep: false,
            demand: 0,
            recovery_ms: 0,
            latency_every: 0,
            check: false,
            pub_cpu: None,
            sub_cpu: None,
            rt_priority: None,
            mlock: false,
            subscribers: 1,
            publishers: 1,
            subscriber_index: 0,
            fan_out_every: 0,
            topics: 1,
            echo_timeout_ms: 1000,
            interval_ms: 1000,
            one_way: false,
            clock: RoundTripClock::Auto,
            profile: false,
            explain: false,
            data_address: None,
            run_key: 0,
        }
    }

    /// This spec with a fresh random [`RunSpec::run_key`], for one run.
    pub fn keyed(&self) -> Result<RunSpec, Fault> {
        let mut key = [0u8; 8];
        getrandom::fill(&mut key).map_err(|e| Fault::Peer(format!("random run key: {e}")))?;
        let mut spec = self.clone();
        spec.run_key = u64::from_le_bytes(key);
        Ok(spec)
    }

    /// The endpoints' configuration for this run: [`RunSpec::endpoint`]
    /// with the run's key, so that a binding can accept the peer that
    /// sends it ([`EndpointConfig::sample_key`]).
    pub fn keyed_endpoint(&self) -> EndpointConfig {
        let mut cfg = self.endpoint.clone();
        cfg.sample_key = (self.run_key != 0).then_some(self.run_key);
        cfg
    }

    /// [`measured_span_ns`] of this run.
    pub fn measured_ns(&self) -> Option<u64> {
        measured_span_ns(self.duration_ns, self.count, self.rate)
    }

    /// The `config` object of a result: the spec minus per-side details.
    pub fn config_json(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).unwrap_or_default();
        if let Some(o) = v.as_object_mut() {
            o.remove("subscriber_index");
            o.remove("fan_out_every");
            o.remove("run_key");
            if let Some(ep) = o.get_mut("endpoint").and_then(|e| e.as_object_mut()) {
                ep.remove("bind_ip");
            }
            let d = crate::registry::deviations(
                &self.binding,
                &self.peer_binding,
                self.test,
                &self.endpoint,
            );
            o.insert("deviations".into(), d.into());
        }
        v
    }
}
