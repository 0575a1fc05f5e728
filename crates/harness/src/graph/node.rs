//! One node of a topology, on binding `B`: its readers, then (once the
//! orchestrator sent every reader's locator) its writers; on Start a
//! thread per source, sending at its rate, and a thread per reader, which
//! records each sample and writes it again on each relay fed by that
//! reader. On Drain the sources stop; the readers go on until no sample
//! came for [`QUIET`], then the node reports.

use super::books::{ReaderBooks, ReaderReport};
use super::lockstep;
use super::plan::{NodePlan, TopicQos, WriterPlan, topic_name};
use super::reading::{ReadOutcome, Relay, read};
use crate::channel::Ctl;
use crate::destinations::Destinations;
use crate::protocol::{ControlError, Msg};
use crate::session::{HEARTBEAT, PEER_SILENCE};
use crate::spec::RunSpec;
use crate::{Fault, INTERRUPTED};
use pubsubperf_core::placement::{Placement, Watch};
use pubsubperf_core::sample::{FLAG_WARMUP, Header};
use pubsubperf_core::stats::LatencySummary;
use pubsubperf_core::sys::{self, Usage};
use pubsubperf_core::{
    Binding, BindingError, EndpointConfig, Reader, Reliability, TopicSpec, Writer, clock,
};
use pubsubperf_topology::route::Route;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// After the sources stopped, a reader that received nothing for this
/// long is done (a sample later than this counts as lost).
pub const QUIET: Duration = Duration::from_millis(200);
/// The longest the readers drain after the sources stopped.
const DRAIN_MAX: Duration = Duration::from_secs(3);

/// What a node reports at the end.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NodeReport {
    /// Measured samples each of its writers wrote: (stream, samples).
    pub sent: Vec<(u8, u64)>,
    /// Each relay stream's residence: from the receive of a sample to the
    /// stamp of its relayed copy, ns.
    #[serde(default)]
    pub residence: Vec<(u8, LatencySummary)>,
    /// Sends its writers' middleware refused (best effort).
    pub rejected: u64,
    /// Its readers' books.
    pub readers: Vec<ReaderReport>,
    /// Resources over the measured part.
    pub resources: sys::Resources,
    /// Samples without the run's key.
    pub foreign: u64,
    /// Where each of its measuring threads ran (sources, then readers).
    #[serde(default)]
    pub placement: Vec<Placement>,
}

pub(super) fn bind(e: BindingError) -> Fault {
    Fault::Binding(e.to_string())
}

fn ctl_err(e: ControlError) -> Fault {
    Fault::Peer(format!("topology orchestrator: {e}"))
}

/// The node's binding instances, one per QoS its topics use.
struct Sides<B> {
    base: EndpointConfig,
    open: Vec<(TopicQos, B)>,
}

impl<B: Binding> Sides<B> {
    fn get(&mut self, q: TopicQos) -> Result<&mut B, Fault> {
        let i = match self.open.iter().position(|(x, _)| *x == q) {
            Some(i) => i,
            None => {
                let mut cfg = self.base.clone();
                cfg.reliability = q.reliability;
                cfg.history = q.history.or(cfg.history);
                cfg.durability = q.durability.or(cfg.durability);
                self.open.push((q, B::open(&cfg).map_err(bind)?));
                self.open.len() - 1
            }
        };
        Ok(&mut self.open[i].1)
    }
}

/// Serves a node whose `NodeSetup` was just received.
pub fn serve_node<B: Binding>(
    ctl: &Ctl,
    spec: &RunSpec,
    plan: &NodePlan,
    setup_timeout: Duration,
    destinations: &Destinations,
) -> Result<(), Fault> {
    plan.check(spec.endpoint.max_sample_size)?;
    if let Some(c) = plan.cpu {
        sys::pin_to_cpu(c).map_err(Fault::Config)?;
    }
    if let Some(p) = plan.priority {
        sys::set_rt_priority(p).map_err(Fault::Config)?;
    }
    let mut sides = Sides::<B> {
        base: spec.keyed_endpoint(),
        open: Vec::new(),
    };
    let mut readers = Vec::new();
    let mut locators = Vec::new();
    for r in &plan.readers {
        let topic = TopicSpec {
            name: topic_name(r.topic),
            index: r.index,
        };
        let (reader, loc) = sides.get(r.qos)?.create_reader(&topic).map_err(bind)?;
        readers.push(reader);
        locators.push(loc);
    }
    ctl.send(&Msg::NodeLocators { readers: locators })
        .map_err(ctl_err)?;
    let peers = ctl.recv(Some(setup_timeout)).map_err(ctl_err)?;
    crate::count_bounds::bounded_counts(&peers)?;
    let peers = match peers {
        Msg::NodePeers { writers } if writers.len() == plan.writers.len() => writers,
        Msg::Error { message } => return Err(Fault::Peer(message)),
        other => return Err(Fault::Peer(format!("unexpected {other:?}"))),
    };
    let mut writers = Vec::new();
    for (w, locs) in plan.writers.iter().zip(&peers) {
        for l in locs {
            destinations.check("a topology reader's locator", l)?;
        }
        let topic = TopicSpec {
            name: topic_name(w.topic),
            index: 0,
        };
        let mut writer = sides
            .get(w.qos)?
            .create_writer(&topic, locs)
            .map_err(bind)?;
        writer
            .wait_matched(w.readers, setup_timeout)
            .map_err(bind)?;
        writers.push(writer);
    }
    for r in &mut readers {
        r.wait_matched(setup_timeout).map_err(bind)?;
    }
    ctl.send(&Msg::Ready {
        discovery: None,
        deviations: Vec::new(),
    })
    .map_err(ctl_err)?;
    loop {
        match ctl.recv(Some(setup_timeout)).map_err(ctl_err)? {
            Msg::Start => break,
            Msg::Heartbeat => {}
            Msg::Error { message } => return Err(Fault::Peer(message)),
            other => return Err(Fault::Peer(format!("unexpected {other:?}"))),
        }
    }
    let report = run::<B>(ctl, spec, plan, readers, writers)?;
    drop(sides);
    ctl.send(&Msg::NodeResult {
        report: Box::new(report),
    })
    .map_err(ctl_err)
}

/// What the node's threads share.
pub(super) struct Shared {
    /// The sources stop.
    pub(super) stop_sources: AtomicBool,
    /// Sources still sending.
    sources_left: AtomicUsize,
    /// The readers stop.
    pub(super) stop_readers: AtomicBool,
    /// `CLOCK_MONOTONIC` of the node's last received sample.
    pub(super) last_rx_ns: AtomicU64,
    /// The first failure of a thread.
    failed: std::sync::OnceLock<Fault>,
}

impl Shared {
    fn new(sources: usize) -> Shared {
        Shared {
            stop_sources: AtomicBool::new(false),
            sources_left: AtomicUsize::new(sources),
            stop_readers: AtomicBool::new(false),
            last_rx_ns: AtomicU64::new(clock::now_ns()),
            failed: std::sync::OnceLock::new(),
        }
    }

    pub(super) fn fail(&self, f: Fault) {
        let _ = self.failed.set(f);
        self.stop_sources.store(true, Ordering::Release);
        self.stop_readers.store(true, Ordering::Release);
    }
}

/// A writer's counts.
#[derive(Default, Clone, Copy)]
pub(super) struct Sent {
    pub(super) measured: u64,
    pub(super) rejected: u64,
}

/// A source's thread: its counts and its writer, kept open.
type SourceThread<W> = JoinHandle<((Sent, W), Placement)>;
/// A reader's thread.
type ReaderThread<W> = JoinHandle<(Result<ReadOutcome<W>, Fault>, Placement)>;

/// The node's running threads.
struct Threads<B: Binding> {
    /// Each source's stream and thread.
    sources: Vec<(u8, SourceThread<B::Writer>)>,
    /// Each reader's topic and thread.
    readers: Vec<(usize, ReaderThread<B::Writer>)>,
}

fn run<B: Binding>(
    ctl: &Ctl,
    spec: &RunSpec,
    plan: &NodePlan,
    readers: Vec<B::Reader>,
    writers: Vec<B::Writer>,
) -> Result<NodeReport, Fault> {
    let sources = plan
        .writers
        .iter()
        .filter(|w| w.from_reader.is_none())
        .count();
    let shared = Arc::new(Shared::new(sources));
    let usage = Usage::now();
    let threads = start::<B>(spec, plan, readers, writers, &shared);
    let told = wait_for_drain(ctl, &shared);
    shared.stop_sources.store(true, Ordering::Release);
    let report = threads.finish(&shared, told.is_ok(), &usage);
    told?;
    if let Some(f) = shared.failed.get() {
        return Err(f.clone());
    }
    Ok(report)
}

/// Starts a thread per source and per reader (with the relays it feeds).
fn start<B: Binding>(
    spec: &RunSpec,
    plan: &NodePlan,
    readers: Vec<B::Reader>,
    writers: Vec<B::Writer>,
    shared: &Arc<Shared>,
) -> Threads<B> {
    let key = spec.run_key;
    let mut relays: Vec<Vec<Relay<B::Writer>>> = plan.readers.iter().map(|_| Vec::new()).collect();
    let mut sources = Vec::new();
    for (w, writer) in plan.writers.iter().zip(writers) {
        match w.from_reader {
            Some(r) => relays[r].push(Relay::new(w.clone(), writer)),
            None => {
                let (w, sh) = (w.clone(), shared.clone());
                let (warmup, duration) = (spec.warmup_ns, spec.duration_ns);
                let stream = w.stream;
                let cpu = plan.cpu;
                let t = std::thread::spawn(move || {
                    let watch = Watch::start();
                    let out = source::<B>(&w, writer, key, warmup, duration, &sh);
                    (
                        out,
                        watch.finish(&format!("source of stream {stream}"), cpu),
                    )
                });
                sources.push((stream, t));
            }
        }
    }
    let readers = plan
        .readers
        .iter()
        .zip(readers)
        .zip(relays)
        .map(|((r, reader), relay)| {
            let books = ReaderBooks::new(r, &plan.clock_deltas_ns);
            let (sh, sink) = (shared.clone(), !r.paths.is_empty());
            let (cpu, topic) = (plan.cpu, r.topic);
            let t = std::thread::spawn(move || {
                let watch = Watch::start();
                let out = read::<B>(reader, books, relay, key, sink, &sh);
                (out, watch.finish(&format!("reader of topic {topic}"), cpu))
            });
            (r.topic, t)
        })
        .collect();
    Threads { sources, readers }
}

impl<B: Binding> Threads<B> {
    /// Joins the sources, lets the readers drain (when the run ended as
    /// planned), joins them and writes the report. Every writer stays open
    /// until the readers are done: a stream binding's reader downstream
    /// takes a closed connection for a dead peer.
    fn finish(self, shared: &Shared, drain_first: bool, usage: &Usage) -> NodeReport {
        let mut report = NodeReport {
            sent: Vec::new(),
            residence: Vec::new(),
            rejected: 0,
            readers: Vec::new(),
            resources: Default::default(),
            foreign: 0,
            placement: Vec::new(),
        };
        let mut open_writers = Vec::new();
        for (stream, t) in self.sources {
            let ((s, writer), placed) = t.join().expect("a source thread panicked");
            report.placement.push(placed);
            report.sent.push((stream, s.measured));
            report.rejected += s.rejected;
            open_writers.push(writer);
        }
        if drain_first && shared.failed.get().is_none() {
            drain(shared);
        }
        shared.stop_readers.store(true, Ordering::Release);
        report.resources = Usage::now().since(usage);
        for (topic, t) in self.readers {
            let (out, placed) = t.join().expect("a reader thread panicked");
            report.placement.push(placed);
            let Ok(out) = out else {
                continue;
            };
            for ((stream, s, stay), writer) in out.relays {
                report.sent.push((stream, s.measured));
                report.residence.push((stream, stay.summary()));
                report.rejected += s.rejected;
                open_writers.push(writer);
            }
            report.foreign += out.foreign;
            report.readers.push(out.books.report(topic));
        }
        report
    }
}

/// Serves the control channel until the orchestrator says Drain (or a
/// source node's sources are done and it said so).
fn wait_for_drain(ctl: &Ctl, shared: &Shared) -> Result<(), Fault> {
    let mut told_done = false;
    let mut heard = Instant::now();
    let mut beat = Instant::now();
    loop {
        if !told_done && shared.sources_left.load(Ordering::Acquire) == 0 {
            ctl.send(&Msg::NodeDone).map_err(ctl_err)?;
            told_done = true;
        }
        if let Some(f) = shared.failed.get() {
            return Err(f.clone());
        }
        if beat.elapsed() >= HEARTBEAT {
            ctl.send(&Msg::Heartbeat).map_err(ctl_err)?;
            beat = Instant::now();
        }
        match ctl.recv(Some(Duration::from_millis(50))) {
            Ok(Msg::Drain) => return Ok(()),
            Ok(Msg::Error { message }) => return Err(Fault::Peer(message)),
            Ok(_) => heard = Instant::now(),
            Err(ControlError::Timeout(_)) => {
                if INTERRUPTED.load(Ordering::Relaxed) {
                    return Err(Fault::Interrupted);
                }
                if heard.elapsed() > PEER_SILENCE {
                    return Err(Fault::Gone(format!(
                        "the topology's orchestrator has been silent for {} s",
                        PEER_SILENCE.as_secs()
                    )));
                }
            }
            Err(e) => return Err(Fault::Gone(format!("topology orchestrator: {e}"))),
        }
    }
}

/// Waits until the node received nothing for [`QUIET`] (at most [`DRAIN_MAX`]).
fn drain(shared: &Shared) {
    let start = Instant::now();
    while start.elapsed() < DRAIN_MAX {
        let last = shared.last_rx_ns.load(Ordering::Acquire);
        let quiet = clock::now_ns().saturating_sub(last);
        let since_start = start.elapsed().as_nanos() as u64;
        if quiet.min(since_start) >= QUIET.as_nanos() as u64 {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A source: writes at its rate for the warm-up and the duration (of the
/// binding's clock), then stops (and says so).
fn source<B: Binding>(
    w: &WriterPlan,
    mut writer: B::Writer,
    key: u64,
    warmup_ns: u64,
    duration_ns: u64,
    shared: &Shared,
) -> (Sent, B::Writer) {
    let period = (1e9 / w.rate.unwrap_or(1.0)) as u64;
    let start = B::now_ns();
    let warm_end = start + warmup_ns;
    let end = warm_end + duration_ns;
    let mut next = start;
    let mut sent = Sent::default();
    while !shared.stop_sources.load(Ordering::Relaxed) {
        let turn = B::VIRTUAL_CLOCK.then(lockstep::take);
        B::wait_until(next);
        let now = B::now_ns();
        if now >= end {
            break;
        }
        let warm = now < warm_end;
        if let Some(t) = &turn {
            t.expect(w.receptions);
        }
        let header = Header {
            seq: sent.measured,
            publisher: w.stream,
            flags: if warm { FLAG_WARMUP } else { 0 },
            timestamp: now,
            key,
        };
        let route = Route::start(now, w.stream);
        match writer.send(w.size, |buf| {
            header.write(buf);
            route.write(buf);
        }) {
            Ok(()) => sent.measured += u64::from(!warm),
            Err(BindingError::Refused { .. }) if w.qos.reliability == Reliability::BestEffort => {
                sent.rejected += u64::from(!warm);
            }
            Err(e) => {
                shared.fail(bind(e));
                break;
            }
        }
        if let Some(t) = turn {
            t.settle();
        }
        next += period;
    }
    let _ = writer.flush();
    shared.sources_left.fetch_sub(1, Ordering::AcqRel);
    (sent, writer)
}
