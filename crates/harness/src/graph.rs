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
pub(crate) mod plan;
mod reading;

pub use node::NodeReport;
pub use plan::{NodePlan, plans, topic_name};

use crate::Fault;
use crate::protocol::Msg;
use crate::session::{Peers, RemoteAccess, Session, SubConn};
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

/// Where a topology's nodes run.
pub struct Placement {
    /// How the nodes without a `host` start here (one per such node, in
    /// the topology's order): processes, or threads for in-process bindings.
    pub local: Peers,
    /// How to reach the agents of the nodes with a `host`.
    pub access: RemoteAccess,
    /// Time allowed for the nodes to start, answer and match.
    pub connect_timeout: Duration,
}

/// The nodes' sessions: this host's, and the agents' (one node each).
struct Sessions {
    local: Option<Session>,
    remote: Option<Session>,
    /// Per node: whether it runs on an agent.
    far: Vec<bool>,
}

impl Sessions {
    fn start(t: &Topology, placement: Placement) -> Result<Sessions, Fault> {
        let far: Vec<bool> = t.nodes.iter().map(|n| n.host.is_some()).collect();
        let locals = far.iter().filter(|f| !**f).count();
        let addrs: Vec<String> = t.nodes.iter().filter_map(|n| n.host.clone()).collect();
        let timeout = placement.connect_timeout;
        let local = (locals > 0)
            .then(|| Session::start(placement.local, timeout))
            .transpose()?;
        let remote = match addrs.is_empty() {
            true => None,
            false => {
                let peers = Peers::Remote {
                    addrs,
                    access: placement.access,
                };
                Some(Session::start(peers, timeout)?)
            }
        };
        Ok(Sessions { local, remote, far })
    }

    /// Every node's connection, in the topology's order (each session
    /// holds its nodes in that order).
    fn conns(&mut self) -> Vec<&mut SubConn> {
        let mut local = self.local.iter_mut().flat_map(|s| s.subs.iter_mut());
        let mut remote = self.remote.iter_mut().flat_map(|s| s.subs.iter_mut());
        self.far
            .iter()
            .map(|&far| {
                let next = if far { remote.next() } else { local.next() };
                next.expect("a connection per node")
            })
            .collect()
    }

    /// The address of this host towards the agents, when there are any:
    /// where this host's nodes' readers must bind for them.
    fn outward_ip(&self) -> Option<String> {
        self.remote
            .as_ref()
            .and_then(|s| s.subs.first())
            .map(|c| c.local_ip())
    }

    fn close(self) {
        for s in [self.local, self.remote].into_iter().flatten() {
            s.close();
        }
    }
}

/// Each node's clock against this host's: its offset and the estimate's
/// bound (0 and 0 for this host's nodes).
struct Clocks {
    offsets_ns: Vec<i64>,
    bounds_ns: Vec<u64>,
}

/// Probes the clock of every node on an agent
/// ([`crate::clock_offset::probe`]).
fn probe_clocks(conns: &mut [&mut SubConn]) -> Result<Clocks, Fault> {
    let mut clocks = Clocks {
        offsets_ns: vec![0; conns.len()],
        bounds_ns: vec![0; conns.len()],
    };
    for (n, c) in conns.iter_mut().enumerate() {
        if c.own_clock {
            let e = crate::clock_offset::probe(c)?;
            clocks.offsets_ns[n] = e.offset_ns;
            clocks.bounds_ns[n] = e.bound_ns;
        }
    }
    Ok(clocks)
}

/// Runs topology `t` with the settings of `spec` (binding, endpoint,
/// warm-up, duration), its nodes placed as `placement` says.
pub fn run_topology(t: &Topology, spec: &RunSpec, placement: Placement) -> Result<GraphRun, Fault> {
    let spec = spec.keyed()?;
    let mut bindings: Vec<&str> = vec![spec.binding.as_str()];
    for b in t.nodes.iter().filter_map(|n| n.binding.as_deref()) {
        if !bindings.contains(&b) {
            bindings.push(b);
        }
    }
    for b in bindings {
        crate::registry::with_binding!(b, B => B::host_services(&spec.endpoint), unknown => Ok(()))
            .map_err(|e| Fault::Binding(format!("{b}: {e}")))?;
    }
    let timeout = placement.connect_timeout;
    let mut sessions = Sessions::start(t, placement)?;
    let outward = sessions.outward_ip();
    let result = (|| {
        let mut conns = sessions.conns();
        let clocks = probe_clocks(&mut conns)?;
        let plans = plans(t, spec.endpoint.reliability, &clocks.offsets_ns);
        let setup = Setup {
            spec: &spec,
            plans: &plans,
            outward,
            timeout,
        };
        let (reports, started) = orchestrate(t, &setup, &mut conns)?;
        let places: Vec<String> = conns.iter().map(|c| place(c)).collect();
        Ok(assemble(t, &spec, &reports, &places, &clocks, started))
    })();
    sessions.close();
    result
}

/// What every node is set up with.
struct Setup<'a> {
    spec: &'a RunSpec,
    plans: &'a [NodePlan],
    /// Where this host's nodes bind when some nodes are on agents.
    outward: Option<String>,
    timeout: Duration,
}

/// `process`, `thread`, or the agent's address.
fn place(c: &SubConn) -> String {
    if c.own_clock {
        c.peer.clone()
    } else if c.peer.starts_with("thread") {
        "thread".into()
    } else {
        "process".into()
    }
}

/// The node's name in a fault.
fn at(t: &Topology, node: usize, conn: &SubConn) -> impl Fn(Fault) -> Fault {
    let name = t.nodes[node].name.clone();
    let own = format!("subscriber {}: ", conn.index);
    move |f| match f {
        Fault::Peer(m) => Fault::Peer(format!(
            "node {name}: {}",
            m.strip_prefix(own.as_str()).unwrap_or(&m)
        )),
        f => f,
    }
}

/// The node's next message other than a heartbeat, within `timeout`.
fn next(t: &Topology, node: usize, conn: &SubConn, timeout: Duration) -> Result<Msg, Fault> {
    loop {
        match conn.recv_heard(timeout).map_err(at(t, node, conn))? {
            Msg::Heartbeat | Msg::NodeDone => {}
            m => return Ok(m),
        }
    }
}

fn unexpected(t: &Topology, node: usize, m: &Msg) -> Fault {
    Fault::Peer(format!("node {}: unexpected {m:?}", t.nodes[node].name))
}

/// Sets every node up: plans out, readers' locators in, writers' readers
/// out, every node matched.
fn set_up(t: &Topology, setup: &Setup<'_>, conns: &mut [&mut SubConn]) -> Result<(), Fault> {
    for (n, (conn, plan)) in conns.iter_mut().zip(setup.plans).enumerate() {
        let mut spec = setup.spec.clone();
        if let Some(b) = &t.nodes[n].binding {
            spec.binding = b.clone();
            spec.peer_binding = b.clone();
        }
        conn.send(&Msg::NodeSetup {
            spec: Box::new(spec),
            plan: Box::new(plan.clone()),
            bind_ip: if conn.own_clock {
                None
            } else {
                setup.outward.clone()
            },
        })?;
    }
    let mut by_topic: Vec<Vec<(usize, String)>> = vec![Vec::new(); t.topics.len()];
    for (n, (conn, plan)) in conns.iter().zip(setup.plans).enumerate() {
        match next(t, n, conn, setup.timeout)? {
            Msg::NodeLocators { readers } if readers.len() == plan.readers.len() => {
                for (r, l) in plan.readers.iter().zip(readers) {
                    by_topic[r.topic].push((r.index, l));
                }
            }
            other => return Err(unexpected(t, n, &other)),
        }
    }
    for list in &mut by_topic {
        list.sort();
    }
    for (conn, plan) in conns.iter_mut().zip(setup.plans) {
        let writers = plan
            .writers
            .iter()
            .map(|w| by_topic[w.topic].iter().map(|(_, l)| l.clone()).collect())
            .collect();
        conn.send(&Msg::NodePeers { writers })?;
    }
    for (n, conn) in conns.iter().enumerate() {
        match next(t, n, conn, setup.timeout)? {
            Msg::Ready { .. } => {}
            other => return Err(unexpected(t, n, &other)),
        }
    }
    Ok(())
}

/// Sets the nodes up, runs them, and collects their reports; returns
/// them with the time the measurement started.
fn orchestrate(
    t: &Topology,
    setup: &Setup<'_>,
    conns: &mut [&mut SubConn],
) -> Result<(Vec<NodeReport>, String), Fault> {
    set_up(t, setup, conns)?;
    let started = pubsubperf_core::time::rfc3339_now();
    for conn in conns.iter_mut() {
        conn.touch();
        conn.send(&Msg::Start)?;
    }
    wait_for_sources(t, setup, conns)?;
    for conn in conns.iter_mut() {
        conn.send(&Msg::Drain)?;
    }
    let mut reports = Vec::new();
    for (n, conn) in conns.iter().enumerate() {
        match next(t, n, conn, GRACE)? {
            Msg::NodeResult { report } => reports.push(*report),
            other => return Err(unexpected(t, n, &other)),
        }
    }
    Ok((reports, started))
}

/// Waits until every node with sources said they are done (the warm-up
/// and duration on their clock), keeping every node's connection alive.
fn wait_for_sources(t: &Topology, setup: &Setup<'_>, conns: &[&mut SubConn]) -> Result<(), Fault> {
    let spec = setup.spec;
    let mut pending: Vec<bool> = setup
        .plans
        .iter()
        .map(|p| p.writers.iter().any(|w| w.from_reader.is_none()))
        .collect();
    let deadline = Instant::now() + Duration::from_nanos(spec.warmup_ns + spec.duration_ns) + GRACE;
    while pending.iter().any(|p| *p) {
        for (i, conn) in conns.iter().enumerate() {
            conn.check(clock::now_ns()).map_err(at(t, i, conn))?;
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
    clocks: &Clocks,
    started: String,
) -> GraphRun {
    let bound = |a: usize, b: usize| clocks.bounds_ns[a].saturating_add(clocks.bounds_ns[b]);
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
            history: topic.history.map(|h| h.to_string()),
            durability: topic.durability.map(|d| {
                match d {
                    pubsubperf_core::Durability::Volatile => "volatile",
                    pubsubperf_core::Durability::TransientLocal => "transient-local",
                }
                .to_string()
            }),
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
                    clock_bound_ns: bound(writer.node, n),
                    below_zero: h.below_zero,
                    latency_ns: h.latency.clone(),
                });
            }
            for (p, latency, below_zero) in &r.paths {
                let path = &t.paths[*p];
                let source = t.streams[path.streams[0] as usize].node;
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
                    clock_bound_ns: bound(source, n),
                    below_zero: *below_zero,
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
        .enumerate()
        .map(|(i, ((r, node), place))| GraphNode {
            placement: r.placement.clone(),
            conditions: node_conditions(&r.placement),
            name: node.name.clone(),
            place: place.clone(),
            cpu: node.cpu,
            priority: node.priority,
            resources: r.resources.clone(),
            foreign: r.foreign,
            binding: node.binding.clone(),
            clock_offset_ns: node.host.is_some().then_some(clocks.offsets_ns[i]),
            clock_bound_ns: node.host.is_some().then_some(clocks.bounds_ns[i]),
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

/// A node's threads checked against its `cpu`: each pinned elsewhere is
/// named (its threads share its core by plan, so sharing is no fault).
fn node_conditions(placement: &[pubsubperf_core::placement::Placement]) -> Vec<String> {
    placement
        .iter()
        .flat_map(|p| pubsubperf_core::placement::conditions(std::slice::from_ref(p)))
        .collect()
}
