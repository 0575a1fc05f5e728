//! Topology runs of BASE versus NEW: graphs are matched by topology name,
//! binding and transport, their paths and topics by name. Graphs of one
//! key on one side are repetitions: each path's histograms are merged
//! exactly and each topic's counts summed (its lost % recomputed from the
//! summed losses over what its hops' writers sent); Welch's t-test runs on
//! the per-repetition p50 of each path. `--fail-if` conditions on path and
//! topic metrics are checked on every matched path and topic.

use crate::error::{ReportError, Result};
use crate::failif::Condition;
use crate::stat::{TTest, welch};
use pubsubperf_core::graph_result::{GraphRun, GraphTopic};
use pubsubperf_core::stats::{LatencyRecorder, LatencySummary};

/// What matches a topology run of BASE with one of NEW.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GraphKey {
    /// The topology's name.
    pub name: String,
    /// The binding every node ran.
    pub binding: String,
    /// The transport within it.
    pub transport: String,
}

impl GraphKey {
    /// The key of a topology run.
    pub fn of(g: &GraphRun) -> GraphKey {
        GraphKey {
            name: g.name.clone(),
            binding: g.binding.clone(),
            transport: g.transport.clone(),
        }
    }

    /// `chain5 udp`, or `chain5 cyclonedds/udp` when the transport is not
    /// the binding's own name.
    pub fn label(&self) -> String {
        if self.transport == self.binding {
            format!("{} {}", self.name, self.binding)
        } else {
            format!("{} {}/{}", self.name, self.binding, self.transport)
        }
    }
}

/// One path matched by name.
#[derive(Debug, Clone)]
pub struct PathComparison {
    /// The path's name (`src -topic-> relay -topic-> sink`).
    pub name: String,
    /// BASE's end-to-end latency, repetitions merged.
    pub base: LatencySummary,
    /// NEW's.
    pub new: LatencySummary,
    /// Per-repetition p50, BASE then NEW.
    pub samples: (Vec<f64>, Vec<f64>),
    /// Welch's t-test on those values.
    pub test: TTest,
}

/// One topic matched by name.
#[derive(Debug, Clone)]
pub struct TopicComparison {
    /// The topic's name.
    pub name: String,
    /// BASE's counts, repetitions summed.
    pub base: GraphTopic,
    /// NEW's.
    pub new: GraphTopic,
}

/// One matched topology.
#[derive(Debug, Clone)]
pub struct GraphComparison {
    /// Name, binding, transport.
    pub key: GraphKey,
    /// Repetitions on each side.
    pub reps: (usize, usize),
    /// Paths both sides have, in BASE's order.
    pub paths: Vec<PathComparison>,
    /// Topics both sides have, in BASE's order.
    pub topics: Vec<TopicComparison>,
    /// Paths only BASE has.
    pub only_base_paths: Vec<String>,
    /// Paths only NEW has.
    pub only_new_paths: Vec<String>,
}

/// Every topology of BASE and NEW, matched.
#[derive(Debug, Clone, Default)]
pub struct GraphsCompared {
    /// Matched topologies, in BASE's order.
    pub graphs: Vec<GraphComparison>,
    /// Topologies only BASE has.
    pub only_base: Vec<GraphKey>,
    /// Topologies only NEW has.
    pub only_new: Vec<GraphKey>,
}

/// A violated condition found on a path or topic: its label (`chain5 udp
/// path a -t-> b`), the quantity compared and whether it holds.
pub type Checked = (String, f64, bool);

/// The topology runs of each side grouped by key, in order of appearance.
fn group(graphs: &[GraphRun]) -> Vec<(GraphKey, Vec<&GraphRun>)> {
    let mut out: Vec<(GraphKey, Vec<&GraphRun>)> = Vec::new();
    for g in graphs {
        let k = GraphKey::of(g);
        match out.iter_mut().find(|(x, _)| *x == k) {
            Some((_, v)) => v.push(g),
            None => out.push((k, vec![g])),
        }
    }
    out
}

/// Matches the topology runs of BASE and NEW.
pub fn compare_graphs(base: &[GraphRun], new: &[GraphRun]) -> Result<GraphsCompared> {
    let (b, n) = (group(base), group(new));
    let mut out = GraphsCompared::default();
    for (key, b_runs) in &b {
        match n.iter().find(|(k, _)| k == key) {
            Some((_, n_runs)) => out.graphs.push(compare_one(key, b_runs, n_runs)?),
            None => out.only_base.push(key.clone()),
        }
    }
    out.only_new = n
        .into_iter()
        .map(|(k, _)| k)
        .filter(|k| !b.iter().any(|(x, _)| x == k))
        .collect();
    Ok(out)
}

fn path_names<'a>(runs: &[&'a GraphRun]) -> Vec<&'a str> {
    let mut names: Vec<&str> = Vec::new();
    for p in runs.iter().flat_map(|g| &g.paths) {
        if !names.contains(&p.name.as_str()) {
            names.push(&p.name);
        }
    }
    names
}

/// A path's latency in every repetition that has it.
fn path_runs<'a>(runs: &[&'a GraphRun], name: &str) -> Vec<&'a LatencySummary> {
    runs.iter()
        .flat_map(|g| g.paths.iter().filter(|p| p.name == name))
        .map(|p| &p.latency_ns)
        .collect()
}

/// The exact merge of a path's repetitions (histograms added).
fn merged(key: &GraphKey, path: &str, parts: &[&LatencySummary]) -> Result<LatencySummary> {
    if let [one] = parts {
        return Ok((*one).clone());
    }
    let mut acc: Option<LatencyRecorder> = None;
    for (i, s) in parts.iter().enumerate() {
        let rec = LatencyRecorder::from_summary(s).map_err(|m| ReportError::Histogram {
            context: format!("topology {} path {path} (run {})", key.label(), i + 1),
            message: m,
        })?;
        match &mut acc {
            None => acc = Some(rec),
            Some(a) => a.merge(&rec),
        }
    }
    acc.map(|a| a.summary())
        .ok_or_else(|| ReportError::Empty(format!("topology {}: no path {path}", key.label())))
}

/// A topic's counts summed over the repetitions that have it; with several,
/// lost % is the summed losses over what its readers should have received
/// (every hop's writer's measured samples, as each run counted them).
fn summed_topic(runs: &[&GraphRun], name: &str) -> Option<GraphTopic> {
    let parts: Vec<(&GraphRun, &GraphTopic)> = runs
        .iter()
        .flat_map(|g| g.topics.iter().filter(|t| t.name == name).map(|t| (*g, t)))
        .collect();
    let (_, first) = parts.first()?;
    if parts.len() == 1 {
        return Some((*first).clone());
    }
    let mut t = (*first).clone();
    let mut expected = 0u64;
    (t.sent, t.received, t.lost, t.late, t.too_late) = (0, 0, 0, 0, 0);
    for (g, x) in &parts {
        t.sent += x.sent;
        t.received += x.received;
        t.lost += x.lost;
        t.late += x.late;
        t.too_late += x.too_late;
        expected += g
            .hops
            .iter()
            .filter(|h| h.topic == name)
            .map(|h| h.sent)
            .sum::<u64>();
    }
    t.lost_percent = if expected > 0 {
        t.lost as f64 * 100.0 / expected as f64
    } else {
        0.0
    };
    Some(t)
}

fn compare_one(key: &GraphKey, b: &[&GraphRun], n: &[&GraphRun]) -> Result<GraphComparison> {
    let (b_names, n_names) = (path_names(b), path_names(n));
    let mut paths = Vec::new();
    for name in &b_names {
        if !n_names.contains(name) {
            continue;
        }
        let (bp, np) = (path_runs(b, name), path_runs(n, name));
        let p50s = |v: &[&LatencySummary]| -> Vec<f64> {
            v.iter()
                .filter(|l| l.count > 0)
                .map(|l| l.p50 as f64)
                .collect()
        };
        let samples = (p50s(&bp), p50s(&np));
        paths.push(PathComparison {
            name: name.to_string(),
            base: merged(key, name, &bp)?,
            new: merged(key, name, &np)?,
            test: welch(&samples.0, &samples.1),
            samples,
        });
    }
    let mut topics = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for t in b.iter().flat_map(|g| &g.topics) {
        if seen.contains(&t.name.as_str()) {
            continue;
        }
        seen.push(&t.name);
        if let (Some(base), Some(new)) = (summed_topic(b, &t.name), summed_topic(n, &t.name)) {
            topics.push(TopicComparison {
                name: t.name.clone(),
                base,
                new,
            });
        }
    }
    let only = |a: &[&str], other: &[&str]| -> Vec<String> {
        a.iter()
            .filter(|x| !other.contains(x))
            .map(|x| x.to_string())
            .collect()
    };
    Ok(GraphComparison {
        key: key.clone(),
        reps: (b.len(), n.len()),
        only_base_paths: only(&b_names, &n_names),
        only_new_paths: only(&n_names, &b_names),
        paths,
        topics,
    })
}

impl GraphComparison {
    /// Checks `cond` on every matched path (path metrics) and topic (topic
    /// metrics); empty when the condition is about neither.
    pub fn check(&self, cond: &Condition) -> Vec<Checked> {
        let m = cond.metric;
        let label = self.key.label();
        let paths = self.paths.iter().filter_map(|p| {
            let (q, v) = cond.check_values(m.path_value(&p.base)?, m.path_value(&p.new)?);
            Some((format!("{label} path {}", p.name), q, v))
        });
        let topics = self.topics.iter().filter_map(|t| {
            let (q, v) = cond.check_values(m.topic_value(&t.base)?, m.topic_value(&t.new)?);
            Some((format!("{label} topic {}", t.name), q, v))
        });
        paths.chain(topics).collect()
    }
}
