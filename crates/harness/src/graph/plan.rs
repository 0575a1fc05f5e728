//! What one node of a topology is told to do ([`NodePlan`]): only numbers
//! (topic, stream and path indices, sizes, rates), never a name, a path or
//! a string that reaches the middleware: an agent that runs a node builds
//! its topic names itself ([`topic_name`]).

use crate::Fault;
use pubsubperf_core::{Durability, History, Reliability};
use pubsubperf_topology::graph::{MAX_HOPS, MAX_STREAMS, MAX_TOPICS, StreamKind};
use pubsubperf_topology::route::ROUTE_END;
use pubsubperf_topology::{Topology, file::MAX_RATE};
use serde::{Deserialize, Serialize};

/// The middleware topic name of topic `index` (`g0`, `g1`, ...).
pub fn topic_name(index: usize) -> String {
    format!("g{index}")
}

/// One node's part.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NodePlan {
    /// The node's index in the topology.
    pub node: usize,
    /// The core to pin its threads to.
    pub cpu: Option<usize>,
    /// Its threads' SCHED_FIFO priority.
    pub priority: Option<i32>,
    /// Its readers, one per topic it takes in.
    pub readers: Vec<ReaderPlan>,
    /// Its writers: sources first, then relays ([`WriterPlan::from_reader`]).
    pub writers: Vec<WriterPlan>,
    /// Per stream id, the writing node's clock minus this node's, ns (0 on
    /// one host): what a reading of that node's clock is corrected by.
    #[serde(default)]
    pub clock_deltas_ns: Vec<i64>,
}

/// The QoS of a topic's endpoints: what opens a binding instance of its
/// own on a node (its endpoint configuration differs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopicQos {
    /// Reliability.
    pub reliability: Reliability,
    /// DDS history (None: the run's).
    #[serde(default)]
    pub history: Option<History>,
    /// DDS durability (None: the run's).
    #[serde(default)]
    pub durability: Option<Durability>,
}

/// A writer of the node: a stream of the topology.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WriterPlan {
    /// The stream's id (carried in every sample it writes).
    pub stream: u8,
    /// The topic.
    pub topic: usize,
    /// Sample size, bytes.
    pub size: usize,
    /// The topic's QoS.
    pub qos: TopicQos,
    /// Readers the topic has (to wait for before the run).
    pub readers: usize,
    /// A source: samples per second. None for a relay.
    pub rate: Option<f64>,
    /// A relay: the index in [`NodePlan::readers`] of the reader it relays.
    pub from_reader: Option<usize>,
    /// A source under a virtual clock: receptions one sample causes in
    /// the graph (the lockstep waits for them all).
    pub receptions: u64,
}

/// A reader of the node.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReaderPlan {
    /// The topic.
    pub topic: usize,
    /// Its index among the topic's readers.
    pub index: usize,
    /// The topic's QoS.
    pub qos: TopicQos,
    /// The streams that write the topic (a hop each).
    pub writers: Vec<u8>,
    /// Paths that end here (the node sinks the topic).
    pub paths: Vec<PathPlan>,
    /// Late beyond this hop latency, ns.
    pub deadline_ns: Option<u64>,
    /// Too late beyond this, ns.
    pub too_late_ns: Option<u64>,
}

/// A path ending at a reader.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PathPlan {
    /// The path's index in the topology.
    pub path: usize,
    /// Its streams, the source's first.
    pub streams: Vec<u8>,
}

fn ns(d: Option<std::time::Duration>) -> Option<u64> {
    d.map(|d| d.as_nanos().min(u128::from(u64::MAX)) as u64)
}

/// Every node's plan, in the topology's node order; `default` is the
/// reliability of topics that name none; `offsets_ns` each node's clock
/// minus the orchestrator's (empty: all on one host).
pub fn plans(t: &Topology, default: Reliability, offsets_ns: &[i64]) -> Vec<NodePlan> {
    let offset = |n: usize| offsets_ns.get(n).copied().unwrap_or(0);
    let rel = |topic: usize| TopicQos {
        reliability: t.topics[topic].reliability.unwrap_or(default),
        history: t.topics[topic].history,
        durability: t.topics[topic].durability,
    };
    (0..t.nodes.len())
        .map(|n| {
            let readers: Vec<ReaderPlan> = t
                .readers
                .iter()
                .filter(|r| r.node == n)
                .map(|r| ReaderPlan {
                    topic: r.topic,
                    index: r.index,
                    qos: rel(r.topic),
                    writers: t.writers_of(r.topic).map(|(i, _)| i as u8).collect(),
                    paths: t
                        .paths
                        .iter()
                        .enumerate()
                        .filter(|(_, p)| {
                            p.sink == n
                                && p.streams
                                    .last()
                                    .is_some_and(|&s| t.streams[s as usize].topic == r.topic)
                        })
                        .map(|(i, p)| PathPlan {
                            path: i,
                            streams: p.streams.clone(),
                        })
                        .collect(),
                    deadline_ns: ns(t.topics[r.topic].deadline),
                    too_late_ns: ns(t.topics[r.topic].too_late),
                })
                .collect();
            let mut writers: Vec<WriterPlan> = Vec::new();
            let streams = t.streams.iter().enumerate().filter(|(_, s)| s.node == n);
            let (sources, relays): (Vec<_>, Vec<_>) =
                streams.partition(|(_, s)| s.kind == StreamKind::Source);
            for (i, s) in sources.into_iter().chain(relays) {
                let topic = &t.topics[s.topic];
                let from_reader = match s.kind {
                    StreamKind::Source => None,
                    StreamKind::Relay { from } => readers.iter().position(|r| r.topic == from),
                };
                writers.push(WriterPlan {
                    stream: i as u8,
                    topic: s.topic,
                    size: topic.size,
                    qos: rel(s.topic),
                    readers: t.readers_of(s.topic).count(),
                    rate: if from_reader.is_none() {
                        topic.rate
                    } else {
                        None
                    },
                    from_reader,
                    receptions: t.receptions_per_sample(i),
                });
            }
            NodePlan {
                node: n,
                cpu: t.nodes[n].cpu,
                priority: t.nodes[n].priority,
                readers,
                writers,
                clock_deltas_ns: t
                    .streams
                    .iter()
                    .map(|s| offset(s.node).saturating_sub(offset(n)))
                    .collect(),
            }
        })
        .collect()
}

impl NodePlan {
    /// Checks a plan as a node receives it (from the network, for an
    /// agent): every number in range, every sample within `max_size`.
    pub fn check(&self, max_size: usize) -> Result<(), Fault> {
        let bad = |why: String| Err(Fault::Config(format!("topology node plan: {why}")));
        if self.readers.len() > MAX_TOPICS
            || self.writers.len() > MAX_STREAMS
            || self.clock_deltas_ns.len() > MAX_STREAMS
        {
            return bad("more readers or writers than a topology has".into());
        }
        if self.priority.is_some_and(|p| !(1..=99).contains(&p)) {
            return bad("priority out of 1-99".into());
        }
        for w in &self.writers {
            if !(ROUTE_END..=max_size).contains(&w.size) {
                return bad(format!("a sample of {} B (at most {max_size})", w.size));
            }
            if w.rate.is_some_and(|r| !(r > 0.0 && r <= MAX_RATE)) {
                return bad("a rate out of range".into());
            }
            if w.from_reader.is_some_and(|r| r >= self.readers.len())
                || w.rate.is_some() == w.from_reader.is_some()
            {
                return bad(
                    "a writer that is neither a source nor a relay of one of its readers".into(),
                );
            }
        }
        for r in &self.readers {
            if r.writers.len() > MAX_STREAMS
                || r.paths.len() > MAX_STREAMS * MAX_STREAMS
                || r.paths
                    .iter()
                    .any(|p| p.streams.is_empty() || p.streams.len() > MAX_HOPS)
            {
                return bad("a reader with too many writers or paths".into());
            }
        }
        Ok(())
    }
}
