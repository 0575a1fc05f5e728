//! A checked topology: topics, nodes, and what follows from them, numbered
//! once: the *streams* (every writer: a node's source of a topic, or its
//! relay from one topic to another), the *readers* (one per node and topic
//! it takes in) and the *paths* (from a source through every relay to each
//! node that sinks the topic, as the list of streams a sample went
//! through).

use pubsubperf_core::{Durability, History, Reliability};
use std::time::Duration;

/// Most streams a sample can pass through (the source's and each relay's):
/// its route is carried in the sample ([`crate::route`]).
pub const MAX_HOPS: usize = 15;
/// Most streams (writers) in a topology: a stream's id is one byte of the
/// sample header.
pub const MAX_STREAMS: usize = 255;
/// Most nodes in a topology.
pub const MAX_NODES: usize = 128;
/// Most topics in a topology.
pub const MAX_TOPICS: usize = 128;

/// A whole topology, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Topology {
    /// Its name (the file's `name`, else the file's stem).
    pub name: String,
    /// The binding every node runs (`binding`), unless the command line
    /// names one.
    pub binding: Option<String>,
    /// How long the sources send, measured.
    pub duration: Duration,
    /// How long they send before that, not measured.
    pub warmup: Duration,
    /// The topics, in the file's order of names (sorted).
    pub topics: Vec<Topic>,
    /// The nodes, sorted by name.
    pub nodes: Vec<Node>,
    /// Every writer, its index the writer id carried in samples.
    pub streams: Vec<Stream>,
    /// Every reader.
    pub readers: Vec<Reader>,
    /// Every path from a source to a sink.
    pub paths: Vec<Path>,
}

/// One topic.
#[derive(Debug, Clone, PartialEq)]
pub struct Topic {
    /// Its name in the file.
    pub name: String,
    /// Sample size in bytes, header included.
    pub size: usize,
    /// Samples per second each source of the topic writes (None: only
    /// relays write it, at the rate they receive).
    pub rate: Option<f64>,
    /// Its reliability (None: the binding's default).
    pub reliability: Option<Reliability>,
    /// Its DDS history (None: the binding's default).
    pub history: Option<History>,
    /// Its DDS durability (None: the binding's default).
    pub durability: Option<Durability>,
    /// A sample whose hop on this topic took longer is late.
    pub deadline: Option<Duration>,
    /// A sample whose hop on this topic took longer is too late (not late).
    pub too_late: Option<Duration>,
}

/// One node: a process (or a thread, for in-process bindings).
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// Its name in the file.
    pub name: String,
    /// The core its threads are pinned to.
    pub cpu: Option<usize>,
    /// Its threads' real-time priority (SCHED_FIFO, 1-99).
    pub priority: Option<i32>,
    /// The agent it runs on (`HOST:PORT` or `ssh://[user@]host[:port]`);
    /// None: this host.
    pub host: Option<String>,
    /// Its own binding, where it differs from the run's (bindings that
    /// interoperate: the DDS stacks).
    pub binding: Option<String>,
    /// Topics it writes at their rate (sources).
    pub publish: Vec<usize>,
    /// Topics it takes in and records (sinks).
    pub subscribe: Vec<usize>,
    /// Topics it republishes.
    pub relay: Vec<Relay>,
}

/// A relay: every sample received on `from` is written again on `to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Relay {
    /// Topic taken in.
    pub from: usize,
    /// Topic written.
    pub to: usize,
}

/// What makes a stream write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamKind {
    /// The node writes at the topic's rate.
    Source,
    /// The node writes each sample it receives on this topic.
    Relay {
        /// The topic it receives on.
        from: usize,
    },
}

/// A writer: one node writing one topic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stream {
    /// The node that writes.
    pub node: usize,
    /// The topic written.
    pub topic: usize,
    /// Why it writes.
    pub kind: StreamKind,
}

/// A reader: one node taking in one topic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reader {
    /// The node.
    pub node: usize,
    /// The topic.
    pub topic: usize,
    /// Its index among the topic's readers.
    pub index: usize,
    /// The node sinks the topic (records every path that ends here).
    pub sink: bool,
}

/// A path: a source's stream, each relay's stream after it, and the node
/// that sinks the last one's topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Path {
    /// Stream ids in the order a sample passes them (the first a source).
    pub streams: Vec<u8>,
    /// The sink node.
    pub sink: usize,
}

impl Topology {
    /// The streams (writers) of a topic.
    pub fn writers_of(&self, topic: usize) -> impl Iterator<Item = (usize, &Stream)> {
        self.streams
            .iter()
            .enumerate()
            .filter(move |(_, s)| s.topic == topic)
    }

    /// The readers of a topic.
    pub fn readers_of(&self, topic: usize) -> impl Iterator<Item = &Reader> {
        self.readers.iter().filter(move |r| r.topic == topic)
    }

    /// The relay streams a node writes for samples received on `topic`.
    pub fn relays_at(&self, node: usize, topic: usize) -> impl Iterator<Item = usize> + '_ {
        self.streams.iter().enumerate().filter_map(move |(i, s)| {
            (s.node == node && s.kind == (StreamKind::Relay { from: topic })).then_some(i)
        })
    }

    /// How many receptions one sample of `stream` causes in the whole
    /// graph: each reader of its topic, and what each of those relays.
    pub fn receptions_per_sample(&self, stream: usize) -> u64 {
        let topic = self.streams[stream].topic;
        self.readers_of(topic)
            .map(|r| {
                1 + self
                    .relays_at(r.node, topic)
                    .map(|s| self.receptions_per_sample(s))
                    .sum::<u64>()
            })
            .sum()
    }

    /// A path as people read it: `camera@sensor -> filter -> display`
    /// names the nodes and, before each arrow, the topic.
    pub fn path_name(&self, path: &Path) -> String {
        let mut out = String::new();
        for &s in &path.streams {
            let st = &self.streams[s as usize];
            out.push_str(&self.nodes[st.node].name);
            out.push_str(" -");
            out.push_str(&self.topics[st.topic].name);
            out.push_str("-> ");
        }
        out.push_str(&self.nodes[path.sink].name);
        out
    }

    /// The most readers any topic has, and the most writers.
    pub fn fan(&self) -> (usize, usize) {
        (0..self.topics.len())
            .map(|t| (self.readers_of(t).count(), self.writers_of(t).count()))
            .fold((1, 1), |(r, w), (a, b)| (r.max(a), w.max(b)))
    }

    /// The largest sample size of any topic.
    pub fn max_size(&self) -> usize {
        self.topics.iter().map(|t| t.size).max().unwrap_or(0)
    }

    /// Numbers the streams, readers and paths of `topics` and `nodes`;
    /// refuses a cycle or a path longer than [`MAX_HOPS`] streams.
    pub(crate) fn derive(&mut self) -> Result<(), String> {
        self.streams.clear();
        self.readers.clear();
        for (n, node) in self.nodes.iter().enumerate() {
            for &t in &node.publish {
                self.streams.push(Stream {
                    node: n,
                    topic: t,
                    kind: StreamKind::Source,
                });
            }
            for r in &node.relay {
                self.streams.push(Stream {
                    node: n,
                    topic: r.to,
                    kind: StreamKind::Relay { from: r.from },
                });
            }
        }
        if self.streams.len() > MAX_STREAMS {
            return Err(format!(
                "nodes: {} writers (publish and relay entries); at most {MAX_STREAMS}",
                self.streams.len()
            ));
        }
        for t in 0..self.topics.len() {
            let mut index = 0;
            for (n, node) in self.nodes.iter().enumerate() {
                let sink = node.subscribe.contains(&t);
                if sink || node.relay.iter().any(|r| r.from == t) {
                    self.readers.push(Reader {
                        node: n,
                        topic: t,
                        index,
                        sink,
                    });
                    index += 1;
                }
            }
        }
        self.paths.clear();
        for s in 0..self.streams.len() {
            if self.streams[s].kind == StreamKind::Source {
                let mut route = vec![s as u8];
                self.walk(&mut route)?;
            }
        }
        Ok(())
    }

    /// Extends `route` (ending in a stream) to every sink it reaches.
    fn walk(&mut self, route: &mut Vec<u8>) -> Result<(), String> {
        let last = *route.last().expect("a route starts with a stream") as usize;
        let topic = self.streams[last].topic;
        let readers: Vec<Reader> = self.readers_of(topic).copied().collect();
        for r in readers {
            if r.sink {
                self.paths.push(Path {
                    streams: route.clone(),
                    sink: r.node,
                });
            }
            let next: Vec<usize> = self.relays_at(r.node, topic).collect();
            for s in next {
                if route.contains(&(s as u8)) {
                    let names: Vec<&str> = route
                        .iter()
                        .map(|&x| self.nodes[self.streams[x as usize].node].name.as_str())
                        .collect();
                    return Err(format!(
                        "nodes: the relays make a cycle ({} -> {}); a sample would go round for ever",
                        names.join(" -> "),
                        self.nodes[r.node].name
                    ));
                }
                if route.len() == MAX_HOPS {
                    return Err(format!(
                        "nodes: a path through node '{}' has more than {MAX_HOPS} hops; shorten the chain",
                        self.nodes[r.node].name
                    ));
                }
                route.push(s as u8);
                self.walk(route)?;
                route.pop();
            }
        }
        Ok(())
    }
}
