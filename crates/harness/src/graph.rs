//! Topology runs: a whole graph of nodes ([`pubsubperf_topology`]), each a
//! process of its own (threads of this one for in-process bindings), run
//! by this process as the orchestrator over the control channel:
//!
//! 1. each node gets its plan ([`NodePlan`]: numbers only) and creates its
//!    readers; the orchestrator passes every reader's locator to the
//!    nodes that write its topic, which create their writers and wait to
//!    be matched (discovery is not measured);
//! 2. Start: sources send at their rates for the warm-up and the duration
//!    of their clock, relays republish what they receive, every reader
//!    records hop and path latencies ([`books`]);
//! 3. once every source is done, Drain: readers stop after [`node::QUIET`]
//!    without a sample; each node reports, and the orchestrator reckons
//!    loss per hop and topic ([`pubsubperf_core::graph_result`]).
//!
//! With a virtual clock (the mock) one sample at a time goes through the
//! graph ([`lockstep`]), so that every figure is exact.

mod books;
mod lockstep;
pub mod node;
mod plan;
mod reading;

pub use node::NodeReport;
pub use plan::{NodePlan, plans, topic_name};

use crate::Fault;
use crate::protocol::Msg;
use crate::session::{Peers, Session, SubConn};
use crate::spec::RunSpec;
use pubsubperf_core::graph_result::{
    GraphHop, GraphNode, GraphPath, GraphRelay, GraphRun, GraphTopic,
};
use pubsubperf_core::result::TestKind;
use pubsubperf_core::{Binding, Reliability, clock};
use pubsubperf_topology::{StreamKind, Topology};
use std::time::{Duration, Instant};

/// How long the orchestrator waits for the sources beyond their schedule,
/// and for the reports after Drain.
const GRACE: Duration = Duration::from_secs(10);

/// Runs topology `t` with the settings of `spec` (binding, endpoint,
/// warm-up, duration), its nodes started as `peers` says (one per node).
pub fn run_topology(t: &Topology, spec: &RunSpec, peers: Peers) -> Result<GraphRun, Fault> {
    let spec = spec.keyed()?;
    let plans = plans(t, spec.endpoint.reliability);
    crate::registry::with_binding!(spec.binding.as_str(), B => B::host_services(&spec.endpoint), unknown => Ok(()))
        .map_err(|e| Fault::Binding(e.to_string()))?;
    let mut session = Session::start(peers, Duration::from_secs(30).min(spec_timeout(&spec)))?;
    let result = orchestrate(t, &spec, &plans, &mut session.subs);
    session.close();
    result
}

fn spec_timeout(spec: &RunSpec) -> Duration {
    Duration::from_millis(spec.echo_timeout_ms.max(10_000))
}

/// The node's name in a fault.
fn at(t: &Topology, conn: &SubConn) -> impl Fn(Fault) -> Fault {
    let name = t.nodes[conn.index].name.clone();
    let own = format!("subscriber {}: ", conn.index);
    move |f| match f {
        Fault::Peer(m) => Fault::Peer(format!(
            "node {name}: {}",
            m.strip_prefix(own.as_str()).unwrap_or(&m)
        )),
        f => f,
    }
}

fn expect_ready(t: &Topology, conn: &SubConn, timeout: Duration) -> Result<(), Fault> {
    loop {
        match conn.recv(timeout).map_err(at(t, conn))? {
            Msg::Ready { .. } => return Ok(()),
            Msg::Heartbeat => {}
            other => {
                return Err(Fault::Peer(format!(
                    "node {}: unexpected {other:?}",
                    t.nodes[conn.index].name
                )));
            }
        }
    }
}

fn orchestrate(
    t: &Topology,
    spec: &RunSpec,
    plans: &[NodePlan],
    conns: &mut [SubConn],
) -> Result<GraphRun, Fault> {
    let timeout = spec_timeout(spec);
    for (conn, plan) in conns.iter_mut().zip(plans) {
        conn.send(&Msg::NodeSetup {
            spec: Box::new(spec.clone()),
            plan: Box::new(plan.clone()),
        })?;
    }
    let mut by_topic: Vec<Vec<(usize, String)>> = vec![Vec::new(); t.topics.len()];
    for (conn, plan) in conns.iter().zip(plans) {
        match conn.recv(timeout).map_err(at(t, conn))? {
            Msg::NodeLocators { readers } if readers.len() == plan.readers.len() => {
                for (r, l) in plan.readers.iter().zip(readers) {
                    by_topic[r.topic].push((r.index, l));
                }
            }
            other => {
                return Err(Fault::Peer(format!(
                    "node {}: unexpected {other:?}",
                    t.nodes[conn.index].name
                )));
            }
        }
    }
    for list in &mut by_topic {
        list.sort();
    }
    for (conn, plan) in conns.iter_mut().zip(plans) {
        let writers = plan
            .writers
            .iter()
            .map(|w| by_topic[w.topic].iter().map(|(_, l)| l.clone()).collect())
            .collect();
        conn.send(&Msg::NodePeers { writers })?;
    }
    for conn in conns.iter() {
        expect_ready(t, conn, timeout)?;
    }
    let started = pubsubperf_core::time::rfc3339_now();
    for conn in conns.iter_mut() {
        conn.touch();
        conn.send(&Msg::Start)?;
    }
    wait_for_sources(t, spec, plans, conns)?;
    for conn in conns.iter_mut() {
        conn.send(&Msg::Drain)?;
    }
    let mut reports = Vec::new();
    for conn in conns.iter() {
        loop {
            match conn.recv_heard(GRACE).map_err(at(t, conn))? {
                Msg::NodeResult { report } => {
                    reports.push(*report);
                    break;
                }
                Msg::Heartbeat | Msg::NodeDone => {}
                other => {
                    return Err(Fault::Peer(format!(
                        "node {}: unexpected {other:?}",
                        t.nodes[conn.index].name
                    )));
                }
            }
        }
    }
    let places: Vec<String> = conns
        .iter()
        .map(|c| {
            if c.peer.starts_with("thread") {
                "thread".to_string()
            } else {
                "process".to_string()
            }
        })
        .collect();
    Ok(assemble(t, spec, &reports, &places, started))
}

/// Waits until every node with sources said they are done (the warm-up
/// and duration on their clock), keeping every node's connection alive.
fn wait_for_sources(
    t: &Topology,
    spec: &RunSpec,
    plans: &[NodePlan],
    conns: &[SubConn],
) -> Result<(), Fault> {
    let mut pending: Vec<bool> = plans
        .iter()
        .map(|p| p.writers.iter().any(|w| w.from_reader.is_none()))
        .collect();
    let deadline = Instant::now() + Duration::from_nanos(spec.warmup_ns + spec.duration_ns) + GRACE;
    while pending.iter().any(|p| *p) {
        for (i, conn) in conns.iter().enumerate() {
            conn.check(clock::now_ns()).map_err(at(t, conn))?;
            while let Some(m) = conn.try_recv() {
                match m {
                    Msg::NodeDone => pending[i] = false,
                    Msg::Error { message } => {
                        return Err(Fault::Peer(format!("node {}: {message}", t.nodes[i].name)));
                    }
                    _ => {}
                }
            }
        }
        if Instant::now() > deadline {
            let late: Vec<&str> = (0..pending.len())
                .filter(|&i| pending[i])
                .map(|i| t.nodes[i].name.as_str())
                .collect();
            return Err(Fault::Peer(format!(
                "the sources of node(s) {} did not finish within {} s of their schedule",
                late.join(", "),
                GRACE.as_secs()
            )));
        }
        if crate::INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(Fault::Interrupted);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(())
}

fn reliability_name(r: Reliability) -> &'static str {
    match r {
        Reliability::Reliable => "reliable",
        Reliability::BestEffort => "best-effort",
    }
}

/// The result from every node's report: loss per hop is the writer's
/// measured samples minus those the reader received from it.
fn assemble(
    t: &Topology,
    spec: &RunSpec,
    reports: &[NodeReport],
    places: &[String],
    started: String,
) -> GraphRun {
    let mut sent = vec![0u64; t.streams.len()];
    for r in reports {
        for &(s, n) in &r.sent {
            sent[s as usize] = n;
        }
    }
    let ns = |d: Option<Duration>| d.map(|d| d.as_nanos() as u64);
    let mut topics: Vec<GraphTopic> = t
        .topics
        .iter()
        .enumerate()
        .map(|(i, topic)| GraphTopic {
            name: topic.name.clone(),
            size: topic.size,
            rate: topic.rate,
            reliability: reliability_name(topic.reliability.unwrap_or(spec.endpoint.reliability))
                .into(),
            sent: t.writers_of(i).map(|(s, _)| sent[s]).sum(),
            received: 0,
            lost: 0,
            lost_percent: 0.0,
            deadline_ns: ns(topic.deadline),
            too_late_ns: ns(topic.too_late),
            late: 0,
            too_late: 0,
        })
        .collect();
    let mut expected = vec![0u64; t.topics.len()];
    let mut hops = Vec::new();
    let mut paths = Vec::new();
    for (n, report) in reports.iter().enumerate() {
        for r in &report.readers {
            for h in &r.hops {
                let writer = &t.streams[h.stream as usize];
                let should = sent[h.stream as usize];
                let lost = should.saturating_sub(h.received);
                let topic = &mut topics[r.topic];
                topic.received += h.received;
                topic.lost += lost;
                topic.late += h.late;
                topic.too_late += h.too_late;
                expected[r.topic] += should;
                hops.push(GraphHop {
                    topic: topic.name.clone(),
                    from: t.nodes[writer.node].name.clone(),
                    to: t.nodes[n].name.clone(),
                    relays: match writer.kind {
                        StreamKind::Relay { from } => Some(t.topics[from].name.clone()),
                        StreamKind::Source => None,
                    },
                    sent: should,
                    received: h.received,
                    lost,
                    duplicates: h.duplicates,
                    late: h.late,
                    too_late: h.too_late,
                    latency_ns: h.latency.clone(),
                });
            }
            for (p, latency) in &r.paths {
                let path = &t.paths[*p];
                let mut nodes: Vec<String> = path
                    .streams
                    .iter()
                    .map(|&s| t.nodes[t.streams[s as usize].node].name.clone())
                    .collect();
                nodes.push(t.nodes[path.sink].name.clone());
                paths.push(GraphPath {
                    name: t.path_name(path),
                    nodes,
                    topics: path
                        .streams
                        .iter()
                        .map(|&s| t.topics[t.streams[s as usize].topic].name.clone())
                        .collect(),
                    latency_ns: latency.clone(),
                });
            }
        }
    }
    for (topic, e) in topics.iter_mut().zip(expected) {
        topic.lost_percent = if e > 0 {
            topic.lost as f64 * 100.0 / e as f64
        } else {
            0.0
        };
    }
    paths.sort_by(|a, b| a.name.cmp(&b.name));
    let relays = reports
        .iter()
        .flat_map(|r| &r.residence)
        .map(|(s, stay)| {
            let st = &t.streams[*s as usize];
            let from = match st.kind {
                StreamKind::Relay { from } => from,
                StreamKind::Source => st.topic,
            };
            GraphRelay {
                node: t.nodes[st.node].name.clone(),
                from: t.topics[from].name.clone(),
                to: t.topics[st.topic].name.clone(),
                residence_ns: stay.clone(),
            }
        })
        .collect();
    let nodes = reports
        .iter()
        .zip(&t.nodes)
        .zip(places)
        .map(|((r, node), place)| GraphNode {
            name: node.name.clone(),
            place: place.clone(),
            cpu: node.cpu,
            priority: node.priority,
            resources: r.resources.clone(),
            foreign: r.foreign,
        })
        .collect();
    GraphRun {
        name: t.name.clone(),
        binding: spec.binding.clone(),
        transport: spec.endpoint.transport.clone(),
        started,
        duration_s: spec.duration_ns as f64 / 1e9,
        warmup_s: spec.warmup_ns as f64 / 1e9,
        deviations: crate::registry::deviations(
            &spec.binding,
            &spec.binding,
            TestKind::Latency,
            &spec.endpoint,
        ),
        clock: if crate::registry::synthetic(&spec.binding) {
            "virtual"
        } else {
            "clock_monotonic"
        }
        .into(),
        nodes,
        topics,
        hops,
        paths,
        relays,
    }
}
