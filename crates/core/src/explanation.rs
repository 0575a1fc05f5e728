//! `--explain`: the kernel's account of a latency run's samples, by
//! percentile band (`explanation` in results). Computed by
//! `pubsubperf-explain` (its `account` module holds the method); this is
//! what a result carries.

use serde::{Deserialize, Serialize};

/// A run's explanation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Explanation {
    /// How the account was made, in one line.
    pub method: String,
    /// Kernel events recorded over the measurement.
    pub events: u64,
    /// Events per measured sample (the cost of looking, see docs/explain.md).
    pub events_per_sample: f64,
    /// Events the ring buffer had no room for: samples after the first
    /// loss are not accounted (`uncovered`).
    pub lost_events: u64,
    /// Probes this kernel lacks (their causes cannot be named).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_probes: Vec<String>,
    /// The one-way latency every other sample is measured against (the
    /// p50 of the run), ns, and the accounts of samples near it, which are
    /// taken off every other sample's ([`Band`]).
    pub p50_ns: u64,
    /// The samples between the p40 and the p60 themselves: their whole
    /// latency (`added_ns`) shared by the causes in them; `unexplained` is
    /// the path's own work (system calls, copies, the network stack).
    #[serde(default)]
    pub median: Band,
    /// Samples accounted, in the bands below.
    pub samples: u64,
    /// Tail samples that could not be accounted (after a loss of events,
    /// or beyond the slowest kept).
    #[serde(default)]
    pub uncovered: u64,
    /// p50-p90, p90-p99, p99-p99.9, p99.9+.
    pub bands: Vec<Band>,
    /// The slowest samples, each with its own account.
    pub slowest: Vec<SampleAccount>,
}

/// The account of the samples of one percentile band.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Band {
    /// `p50-p90`, `p90-p99`, `p99-p99.9`, `p99.9+`.
    pub band: String,
    /// Samples accounted in the band.
    pub samples: u64,
    /// Their mean time over the p50, one-way, ns.
    pub added_ns: u64,
    /// The added time's shares by cause, largest first; they and
    /// `unexplained` add up to 1.
    pub causes: Vec<Share>,
    /// The share no recorded event accounts for.
    pub unexplained: f64,
}

/// One cause's share of a band's added time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Share {
    /// What it was, e.g. `subscriber preempted by kworker/1:2 (pid 93)`,
    /// `IRQ 36 virtio0-input`, `wake-up from idle`.
    pub cause: String,
    /// Its kind: `preempted`, `shared_core`, `irq`, `softirq`, `ipi`,
    /// `wake_from_idle`.
    pub kind: String,
    /// Share of the band's added time, 0-1.
    pub share: f64,
}

/// One sample's account.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SampleAccount {
    /// Its one-way latency, ns.
    pub latency_ns: u64,
    /// When it was sent, ns after the measurement started.
    pub at_ns: u64,
    /// Its time over the p50, one-way, ns.
    pub added_ns: u64,
    /// Each cause's added time, largest first.
    pub causes: Vec<CauseTime>,
    /// Added time no event accounts for, ns.
    pub unexplained_ns: u64,
    /// Migrations and page faults of the measuring processes in its window.
    pub migrations: u32,
    pub faults: u32,
}

/// One cause's added time in a sample.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CauseTime {
    /// As in [`Share::cause`].
    pub cause: String,
    /// As in [`Share::kind`].
    pub kind: String,
    /// One-way, ns.
    pub ns: u64,
}
