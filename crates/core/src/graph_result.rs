//! The result of a topology run (`graphs` in a results file): per path,
//! per hop, per topic and per node. Part of the result schema
//! ([`crate::result`]): fields are added, never renamed or removed.
//!
//! ## Method
//! Every sample carries the time its source wrote it (the origin) and the
//! time the last writer wrote it (the hop's stamp), both
//! `CLOCK_MONOTONIC` of the writer's host, corrected to the run's clock
//! where nodes run on other hosts. A reader records, for each sample:
//! - the **hop** latency: its receive time minus the hop's stamp, per
//!   writer (stream) of the topic, classed against the topic's `deadline`
//!   (late) and `too_late`;
//! - where the node sinks the topic, the **path** latency: its receive time
//!   minus the origin, per path (the streams the sample went through);
//! - where the node relays the topic, the **residence**: from the receive
//!   time to the stamp of the copy it writes (the next hop's start).
//!
//! So a path's latency is, sample by sample, exactly the sum of its hops'
//! and its relays' residences, and so are their exact sums.
//!
//! One-way times, not round trips: on one host both readings are the same
//! clock; a node on an agent host has its clock's offset estimated before
//! the run (`crate::result::ClockOffset`'s method: four-timestamp probes over
//! the control channel) and every reading of its clock corrected by it, the
//! figures then carrying the estimates' bound. Warm-up samples are relayed but not recorded. Loss per hop is the
//! writer's measured samples minus those the reader received from it; a
//! sample still on its way when the readers have been quiet for the drain
//! time after the sources stopped counts as lost.

use crate::stats::LatencySummary;
use crate::sys::Resources;
use serde::{Deserialize, Serialize};

/// One topology run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphRun {
    /// The topology's name.
    pub name: String,
    /// The binding every node ran.
    pub binding: String,
    /// The transport within it.
    pub transport: String,
    /// When the measurement started (RFC 3339, UTC).
    pub started: String,
    /// Measured seconds (from the sources' start to their stop).
    pub duration_s: f64,
    /// Warm-up seconds before that.
    pub warmup_s: f64,
    /// What ran differently from the middleware's defaults.
    #[serde(default)]
    pub deviations: Vec<String>,
    /// The clock of the figures: `clock_monotonic`, or `virtual` (mock).
    pub clock: String,
    /// Every node.
    pub nodes: Vec<GraphNode>,
    /// Every topic.
    pub topics: Vec<GraphTopic>,
    /// Every hop: one writer of a topic to one reader.
    pub hops: Vec<GraphHop>,
    /// Every path from a source to a sink.
    pub paths: Vec<GraphPath>,
    /// Every relay: the time a sample spends inside the relaying node.
    #[serde(default)]
    pub relays: Vec<GraphRelay>,
}

/// One relay: a node writing again on `to` what it received on `from`.
/// A path's latency is exactly the sum of its hops' and its relays'
/// (each reading is of one clock).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphRelay {
    /// The relaying node.
    pub node: String,
    /// The topic it receives.
    pub from: String,
    /// The topic it writes.
    pub to: String,
    /// From a sample's receive to the stamp of its copy, ns.
    pub residence_ns: LatencySummary,
}

/// One node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphNode {
    /// Its name in the file.
    pub name: String,
    /// Where each of its measuring threads ran, read back from the kernel
    /// (sources, then readers; [`crate::placement`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub placement: Vec<crate::placement::Placement>,
    /// What in `placement` differs from its `cpu`, one reason each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<String>,
    /// `process`, `thread` (in-process bindings) or the agent's address.
    pub place: String,
    /// The core it was pinned to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<usize>,
    /// Its SCHED_FIFO priority.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
    /// CPU and memory over the measured part (a thread's node: the CPU of
    /// its threads; memory is the process's).
    pub resources: Resources,
    /// Samples received without the run's key.
    #[serde(default)]
    pub foreign: u64,
    /// Its own binding, where it differs from the run's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binding: Option<String>,
    /// On an agent host: its `CLOCK_MONOTONIC` minus this host's, ns,
    /// estimated before the run over the control channel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_offset_ns: Option<i64>,
    /// How far that estimate can be off, ns (it always holds for the
    /// probes; drift during the run adds to it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_bound_ns: Option<u64>,
}

/// One topic: its hops together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphTopic {
    /// Its name in the file.
    pub name: String,
    /// Sample size, bytes.
    pub size: usize,
    /// Samples per second of each source (None: written by relays).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// `reliable` or `best-effort`.
    pub reliability: String,
    /// Its DDS history (`keep-last:N`, `keep-all`) where the file sets one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<String>,
    /// Its DDS durability where the file sets one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub durability: Option<String>,
    /// Measured samples its writers wrote.
    pub sent: u64,
    /// Measured samples its readers received, all readers together.
    pub received: u64,
    /// Samples a reader should have received and did not, all readers.
    pub lost: u64,
    /// `lost` over what the readers should have received, %.
    pub lost_percent: f64,
    /// The deadline: a hop slower than this is late, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_ns: Option<u64>,
    /// A hop slower than this is too late, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub too_late_ns: Option<u64>,
    /// Received samples slower than the deadline but not too late.
    pub late: u64,
    /// Received samples slower than `too_late_ns`.
    pub too_late: u64,
}

/// One hop: a writer of a topic to one of its readers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphHop {
    /// The topic.
    pub topic: String,
    /// The writing node.
    pub from: String,
    /// The reading node.
    pub to: String,
    /// The topic the writer relays (None: the writer is a source).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relays: Option<String>,
    /// Measured samples the writer wrote.
    pub sent: u64,
    /// Distinct measured samples the reader received from it.
    pub received: u64,
    /// `sent - received`.
    pub lost: u64,
    /// Samples received more than once.
    #[serde(default)]
    pub duplicates: u64,
    /// Late samples (see [`GraphTopic::late`]).
    pub late: u64,
    /// Too-late samples.
    pub too_late: u64,
    /// Across hosts: how far each latency can be off from the clocks'
    /// estimates (the two nodes' bounds added), ns; absent on one host.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub clock_bound_ns: u64,
    /// Across hosts: latencies that came out below zero after the clocks'
    /// correction (recorded as 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub below_zero: u64,
    /// Hop latency, ns.
    pub latency_ns: LatencySummary,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One path from a source to a sink.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphPath {
    /// `src -topic-> relay -topic-> sink`.
    pub name: String,
    /// The nodes passed, the source's first and the sink's last.
    pub nodes: Vec<String>,
    /// The topics passed, in order.
    pub topics: Vec<String>,
    /// Across hosts: how far each latency can be off (the source's and
    /// the sink's bounds added), ns.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub clock_bound_ns: u64,
    /// Across hosts: latencies below zero after the correction.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub below_zero: u64,
    /// End-to-end latency, origin to the sink, ns.
    pub latency_ns: LatencySummary,
}
