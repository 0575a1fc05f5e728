//! One run, on the publisher's side: sets it up on every subscriber of a
//! [`Session`], sends, measures, collects the subscribers' results and
//! assembles the [`Run`].
//!
//! ## Latency method
//! Ping-pong: the publisher stamps a sample with the binding's clock
//! ([`Binding::now_ns`]: `CLOCK_MONOTONIC` for every real binding; but see
//! [`round_trip_clock`] for busy waits) and sends it; the subscriber echoes a sample of the same size; when the echo
//! arrives the publisher records `(now - stamp) / 2`: **one-way latency =
//! round trip / 2** (as Perftest and ddsperf report it). With `--one-way`,
//! the subscriber writes its receive time into the echo and the publisher
//! records each direction too ([`one_way`]); across hosts the subscriber's
//! clock offset is estimated before and after the run
//! ([`crate::clock_offset`]). Samples sent during
//! `--warmup` are flagged and not recorded. Without `--rate`, each ping goes
//! out as soon as the previous echo came back: with `--receive listener`
//! (and no `--wait busy`) written by the echo's callback on the
//! middleware's receive thread, as ddsperf's ping does, while the
//! publisher's thread sleeps through 10 ms windows and records the round
//! trips after each; else by the publisher's thread once the echo woke it. With `--rate R`, pings go out
//! on a fixed schedule (every 1/R s); an echo slower than the schedule
//! delays later pings, so values are recorded with coordinated-omission
//! correction ([`LatencyRecorder::record_corrected`] with the schedule's
//! interval expressed one-way, 1/(2R)). A ping whose echo does not come
//! back within `--echo-timeout` counts as lost and the next one is sent.
//!
//! ## Throughput method
//! The publisher sends as fast as the binding accepts (or at `--rate`),
//! numbering samples 0, 1, 2 ...; after the measured duration or count it
//! tells each subscriber how many it sent. Each subscriber counts distinct
//! samples, bytes, gaps (lost), duplicates and late samples, and reports
//! per interval and in total; its rates are over its own window from the
//! first to the last measured sample received. With `--latency-every N`
//! every Nth sample asks for an echo, and the publisher records round trip
//! / 2 of those echoes in a separate thread (latency under load).

use crate::protocol::Msg;
use crate::registry::with_binding;
use crate::session::Session;
use crate::spec::RunSpec;
use crate::stream::{Poll, fill_sample, real_time, send_stream};
use crate::{Fault, INTERRUPTED};
use pubsubperf_core::received::HEAD_LEN;
use pubsubperf_core::result::{Interval, Pings, Run, RunResources, TestKind, Throughput};
use pubsubperf_core::sample::{FLAG_CHECK, FLAG_ECHO, FLAG_WARMUP, HEADER_LEN, Header};
use pubsubperf_core::stats::LatencyRecorder;
use pubsubperf_core::sys::{self, Resources, Usage};
use pubsubperf_core::tail::{Kept, TailKeeper, TailSamples};
use pubsubperf_core::{
    Binding, BindingError, Reader, Received, Reliability, TopicSpec, WaitMode, Writer, clock,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

mod collect;
mod interval_books;
mod latency;
pub mod one_way;
mod setup;
mod throughput;

use collect::{
    assemble, collect_publishers, collect_subscribers, keep_late_intervals, total_throughput,
};
use interval_books::IntervalBooks;
use latency::latency_loop;
use one_way::{Clocks, Directions};
use setup::{Endpoints, interval_store, start};
use throughput::throughput_loop;

/// What a run produced: a result (complete or partial) and, if it was cut
/// short, why.
pub struct RunOutcome {
    /// The result; `None` when nothing was measured (failed set-up).
    pub run: Option<Run>,
    /// Why the run ended early or failed.
    pub fault: Option<Fault>,
}

impl RunOutcome {
    /// A run that measured nothing.
    pub fn failed(f: Fault) -> Self {
        RunOutcome {
            run: None,
            fault: Some(f),
        }
    }
}

/// The clock that times round trips: the time-stamp counter
/// ([`clock::Tsc`]) when the publisher busy-waits (`--wait busy`), times a
/// round trip (not `--one-way`), has a real clock, the kernel keeps time
/// with the TSC and `--clock` is not `monotonic`; `CLOCK_MONOTONIC` (the
/// binding's clock) otherwise.
/// Returns the name recorded in the result and the TSC's nanoseconds per
/// tick (calibrated once per process, over 50 ms of spinning).
///
/// Why only with busy waits: on the 2-vCPU VMs we measure on, the TSC and
/// `CLOCK_MONOTONIC` agree to 3e-7 while a thread spins, but across a sleep
/// of the vCPU the TSC counts less than `CLOCK_MONOTONIC`: 40-280 ns for
/// sleeps of 1-100 us, 0.6-2.1 us for 1-10 ms. A blocked ping would be
/// timed short, so blocking runs keep `CLOCK_MONOTONIC`. With busy waits
/// the readings' cost matters: `clock_gettime` there costs 30-50 ns,
/// `rdtsc` 15 ns (both advance in steps of about 10 ns on that VM; on bare
/// metal the TSC counts in ticks of well under 1 ns).
pub fn round_trip_clock<B: Binding>(spec: &RunSpec) -> (&'static str, Option<f64>) {
    static FACTOR: std::sync::OnceLock<Option<f64>> = std::sync::OnceLock::new();
    if B::VIRTUAL_CLOCK {
        return ("virtual", None);
    }
    if spec.test != TestKind::Latency
        || spec.endpoint.wait != WaitMode::Busy
        || spec.one_way
        || spec.clock == crate::spec::RoundTripClock::Monotonic
    {
        return ("clock_monotonic", None);
    }
    match FACTOR.get_or_init(|| clock::Tsc::usable().then(|| clock::Tsc::calibrate(50_000_000))) {
        Some(f) => ("tsc", Some(*f)),
        None => ("clock_monotonic", None),
    }
}

/// A binding's own clock as a round-trip clock.
struct BindingClock<B>(std::marker::PhantomData<B>);

impl<B: Binding> clock::RoundTrip for BindingClock<B> {
    const MONOTONIC: bool = !B::VIRTUAL_CLOCK;
    #[inline(always)]
    fn start() -> u64 {
        B::now_ns()
    }
    #[inline(always)]
    fn stop() -> u64 {
        B::now_ns()
    }
    #[inline(always)]
    fn ns(ticks: u64, _: f64) -> u64 {
        ticks
    }
}

/// The text that goes with every latency figure: its headline, which for
/// `--one-way` is known once the run's clocks are ([`one_way::finish`]).
pub fn latency_method(one_way: Option<&pubsubperf_core::result::OneWay>) -> String {
    match one_way {
        Some(o) if o.headline == "forward" && o.clocks == "one clock" => {
            "one-way = subscriber receive time - publisher send time (same host clock)".into()
        }
        Some(o) if o.headline == "forward" => format!(
            "one-way = subscriber receive time - publisher send time - clock offset (estimated, +-{:.1} us)",
            o.bound_ns as f64 / 1e3
        ),
        Some(o) => format!(
            "one-way = round trip / 2 (the clock offset's bound, +-{:.1} us, is more than a tenth of the forward p50; both directions in one_way)",
            o.bound_ns as f64 / 1e3
        ),
        None => "one-way = round trip / 2".into(),
    }
}

/// Runs one test on the session's subscribers, over the binding the spec
/// names. With `--profile`, the same cell runs first without it, and its
/// figures go into the profile (`profile.unprofiled`).
///
/// The calling thread is pinned and prioritised for the run as the spec
/// says and put back as it was after it ([`sys::ThreadState`]), so that
/// every run of a process is set up like its first.
pub fn run(s: &mut Session, spec: &RunSpec, on_interval: &mut dyn FnMut(&Interval)) -> RunOutcome {
    let _state = sys::ThreadState::save();
    if !spec.profile {
        return run_once(s, spec, on_interval);
    }
    let mut plain = spec.clone();
    plain.profile = false;
    plain.endpoint.run_id = format!("{}u", spec.endpoint.run_id);
    plain.endpoint.cancel = pubsubperf_core::CancelToken::new();
    let reference = run_once(s, &plain, &mut |_| {});
    if reference.fault.is_some() {
        return reference;
    }
    let mut out = run_once(s, spec, on_interval);
    if let (Some(r), Some(p)) = (
        reference.run,
        out.run.as_mut().and_then(|r| r.profile.as_mut()),
    ) {
        p.unprofiled = Some(pubsubperf_core::profile::Unprofiled {
            p50_ns: r
                .latency_ns
                .filter(|_| r.test == TestKind::Latency)
                .map(|l| l.p50),
            samples_per_s: r.throughput.map(|t| t.samples_per_s),
        });
    }
    out
}

/// One run of `spec`, under a key of its own.
fn run_once(s: &mut Session, spec: &RunSpec, on_interval: &mut dyn FnMut(&Interval)) -> RunOutcome {
    let spec = &match spec.keyed() {
        Ok(keyed) => keyed,
        Err(f) => return RunOutcome::failed(f),
    };
    let name = spec.binding.as_str();
    with_binding!(name, B => run_over::<B>(s, spec, on_interval),
        unknown => RunOutcome::failed(Fault::Config(crate::registry::unknown_binding("--binding", name))))
}

/// Runs one test over binding `B`.
fn run_over<B: Binding>(
    s: &mut Session,
    spec: &RunSpec,
    on_interval: &mut dyn FnMut(&Interval),
) -> RunOutcome {
    let mut clocks = match probe_clocks(s, spec) {
        Ok(before) => Clocks {
            before,
            after: Vec::new(),
        },
        Err(f) => return RunOutcome::failed(f),
    };
    let (mut ep, profiler) = match start::<B>(s, spec) {
        Ok(started) => started,
        Err(f) => return RunOutcome::failed(f),
    };
    let mut discovery = std::mem::take(&mut ep.discovery);
    let their_deviations = std::mem::take(&mut ep.their_deviations);
    let started_at = pubsubperf_core::time::rfc3339_now();
    let usage0 = Usage::now();
    let mut intervals = interval_store(spec, s.subs.len());
    let (clock_name, ns_per_tick) = round_trip_clock::<B>(spec);
    s.watch_run(Some(&spec.endpoint.cancel));
    let offsets = clocks.offsets();
    let explaining = match crate::explaining::start(s, spec) {
        Ok(x) => x,
        Err(f) => {
            s.watch_run(None);
            return RunOutcome::failed(f);
        }
    };
    let placed = pubsubperf_core::placement::Watch::start();
    let mut m = measure(
        s,
        spec,
        &mut ep,
        &mut intervals,
        on_interval,
        ns_per_tick,
        &offsets,
    );
    let placement = placed.finish("publisher", spec.pub_cpu);
    let recorded = explaining.map(crate::explaining::stop);
    s.watch_run(None);
    let publisher = Usage::now().since(&usage0);
    let profile = profiler.map(|p| {
        let what = match spec.test {
            TestKind::Latency => "pings sent, warm-up included",
            TestKind::Throughput => "samples sent, warm-up included",
        };
        p.finish(m.sent + m.warmup, what)
    });
    let mut rejected = m.rejected;
    let mut publishers = Vec::new();
    let sent_by = collect_publishers(
        s,
        spec,
        m.sent,
        &mut rejected,
        &mut m.fault,
        &mut publishers,
    );
    let mut peers = collect_subscribers(
        s,
        spec,
        &sent_by,
        rejected,
        &mut intervals,
        on_interval,
        &mut m.fault,
    );
    keep_late_intervals(s, spec, &mut intervals);
    // A subscriber's counts not trusted are no figures, in its intervals
    // neither.
    intervals.retain(|i| !peers.untrusted_subscribers.contains(&i.subscriber));
    spec.endpoint.cancel.cancel();
    drop(ep);
    let trusted = peers.untrusted.is_empty();
    let throughput = (spec.test == TestKind::Throughput && trusted).then(|| Throughput {
        rejected,
        rejected_reason: m.first_refusal.as_ref().map(|e| e.to_string()),
        ..total_throughput(
            spec,
            &peers.subscribers,
            &intervals,
            &sent_by,
            m.duration_ns,
        )
    });
    if m.fault.is_none() {
        clocks.after = probe_clocks(s, spec).unwrap_or_default();
    }
    let fan_out = crate::fan_out::combine(crate::fan_out::every_of(spec, &s.subs), &peers.arrivals);
    for &(i, first) in &peers.first_samples {
        if let Some(d) = discovery.subscribers.get_mut(i) {
            d.first_sample_ns = first;
        }
    }
    let peers_placements = std::mem::take(&mut peers.placements);
    let fault = m.fault.take();
    let tail = m.tail.take();
    let directions = m.directions.take();
    let by_subscriber = std::mem::take(&mut m.by_subscriber);
    let mut run = assemble(
        spec, m, peers, throughput, intervals, publisher, clock_name, started_at, &fault,
    );
    collect::add_their_deviations(&mut run.config, &their_deviations);
    if let (Some(p), Some(r)) = (profile, run.profile.as_mut()) {
        r.publisher = p;
    }
    run.placement = std::iter::once(placement)
        .chain(publishers)
        .chain(peers_placements)
        .collect();
    run.conditions
        .extend(pubsubperf_core::placement::conditions(&run.placement));
    explain(&mut run, recorded, tail);
    run.discovery = Some(discovery);
    run.fan_out = fan_out;
    run.latency_by_subscriber = by_subscriber.iter().map(|r| r.summary()).collect();
    if let Some(d) = directions {
        let (one_way, headline) = one_way::finish(d, &clocks, run.latency_ns.take());
        run.latency_method = Some(latency_method(Some(&one_way)));
        run.latency_ns = headline;
        run.one_way = Some(one_way);
    }
    RunOutcome {
        run: Some(run),
        fault,
    }
}

/// `--explain`: the account of the run's samples, or the condition that
/// says why there is none.
fn explain(
    run: &mut Run,
    recorded: Option<Result<crate::explaining::Recorded, Fault>>,
    tail: Option<(TailSamples, u64)>,
) {
    let Some(recorded) = recorded else { return };
    let r = match recorded {
        Ok(r) => r,
        Err(f) => {
            run.conditions.push(format!("no explanation: {f}"));
            return;
        }
    };
    let (Some((samples, start)), Some(latency)) = (tail, run.latency_ns.as_ref()) else {
        run.conditions
            .push("no explanation: the run has no latency samples".into());
        return;
    };
    run.explanation = crate::explaining::account(&r, &samples, start, latency, &run.placement);
    if let Some(e) = &run.explanation
        && e.lost_events > 0
    {
        run.conditions.push(format!(
            "explanation incomplete: the kernel's ring buffer was full, {} events lost; {} tail samples not accounted",
            e.lost_events, e.uncovered
        ));
    }
}

/// `--one-way`: each subscriber's clock offset, estimated where it is
/// another host's ([`crate::clock_offset`]); none otherwise.
fn probe_clocks(
    s: &mut Session,
    spec: &RunSpec,
) -> Result<Vec<Option<crate::clock_offset::Estimate>>, Fault> {
    if !spec.one_way || spec.test != TestKind::Latency {
        return Ok(Vec::new());
    }
    s.subs
        .iter_mut()
        .map(|sub| {
            sub.own_clock
                .then(|| crate::clock_offset::probe(sub))
                .transpose()
        })
        .collect()
}

/// The test's loop, with the round-trip clock chosen for the run.
fn measure<B: Binding>(
    s: &Session,
    spec: &RunSpec,
    ep: &mut Endpoints<B>,
    intervals: &mut Vec<Interval>,
    on_interval: &mut dyn FnMut(&Interval),
    ns_per_tick: Option<f64>,
    offsets: &[i64],
) -> Measured {
    match (spec.test, ns_per_tick) {
        (TestKind::Latency, Some(f)) => {
            latency_loop::<B, clock::Tsc>(s, spec, ep, intervals, on_interval, f, offsets)
        }
        (TestKind::Latency, None) => {
            latency_loop::<B, BindingClock<B>>(s, spec, ep, intervals, on_interval, 1.0, offsets)
        }
        (TestKind::Throughput, _) => throughput_loop(s, spec, ep, intervals, on_interval),
    }
}

/// What a test loop measured.
struct Measured {
    /// Latencies (latency test; throughput test with echoes).
    rec: Option<LatencyRecorder>,
    /// `--one-way`: each direction.
    directions: Option<Directions>,
    /// Latency with several subscribers: each one's echoes, by index.
    by_subscriber: Vec<LatencyRecorder>,
    /// Samples (pings) sent while measuring.
    sent: u64,
    /// Best effort: measured sends (throughput) or pings (latency) the
    /// binding refused.
    rejected: u64,
    /// The first of those refusals.
    first_refusal: Option<BindingError>,
    /// How long the measurement ran.
    duration_ns: u64,
    /// What cut it short.
    fault: Option<Fault>,
    /// Latency test: the pings whose echo came back.
    echoed: u64,
    /// Warm-up samples (pings) sent.
    warmup: u64,
    /// Echoes without the run's key (a stray or injected datagram on the
    /// echo's data port): not round trips.
    foreign: u64,
    /// `--explain`: the samples kept for the account, and when the
    /// measurement started (CLOCK_MONOTONIC).
    tail: Option<(TailSamples, u64)>,
}

/// Liveness of every peer, on the real clock (never a binding's virtual one).
#[inline]
fn check_peers(s: &Session) -> Result<(), Fault> {
    if INTERRUPTED.load(Ordering::Relaxed) {
        return Err(Fault::Interrupted);
    }
    let now = clock::now_ns();
    for sub in &s.subs {
        sub.check(now)?;
    }
    // Extra publishers too are told and heard once a second.
    for p in &s.pubs {
        p.check(now)?;
    }
    Ok(())
}

fn drain_intervals(
    s: &Session,
    keep: bool,
    intervals: &mut Vec<Interval>,
    on_interval: &mut dyn FnMut(&Interval),
) {
    for sub in &s.subs {
        while let Some(m) = sub.try_recv() {
            match m {
                // Latency runs keep the publisher's own intervals; the
                // subscribers' reports there are heartbeats only.
                Msg::Interval { interval } if keep => {
                    on_interval(&interval);
                    intervals.push(interval);
                }
                // An error report ends the session's receiver; `check` sees it.
                _ => {}
            }
        }
    }
}

fn send_fault(e: BindingError, s: &Session) -> Fault {
    if INTERRUPTED.load(Ordering::Relaxed) {
        return Fault::Interrupted;
    }
    if let Err(f) = check_peers(s) {
        return f;
    }
    match e {
        BindingError::Disconnected | BindingError::Cancelled => {
            Fault::Peer(format!("subscriber connection lost: {e}"))
        }
        e => Fault::Binding(e.to_string()),
    }
}
