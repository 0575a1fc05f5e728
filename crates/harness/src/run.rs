//! The publisher side of a run: sets the run up on every subscriber, sends,
//! measures, and assembles the result.
//!
//! ## Latency method
//! Ping-pong: the publisher stamps a sample with the binding's clock
//! ([`Binding::now_ns`]: `CLOCK_MONOTONIC` for every real binding; but see
//! [`round_trip_clock`] for busy waits) and sends it; the subscriber echoes a sample of the same size; when the echo
//! arrives the publisher records `(now - stamp) / 2`: **one-way latency =
//! round trip / 2** (as Perftest and ddsperf report it). With `--one-way`
//! (one host only), the subscriber writes its receive time into the echo and
//! the publisher records `receive time - stamp` instead. Samples sent during
//! `--warmup` are flagged and not recorded. Without `--rate`, each ping goes
//! out as soon as the previous echo came back. With `--rate R`, pings go out
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
use crate::session::Session;
use crate::spec::RunSpec;
use crate::stream::{Poll, fill_sample, real_time, send_stream};
use crate::{Fault, INTERRUPTED};
use pubsubperf_core::result::{Interval, Pings, Run, RunResources, TestKind, Throughput};
use pubsubperf_core::sample::{FLAG_CHECK, FLAG_ECHO, FLAG_WARMUP, HEADER_LEN, Header};
use pubsubperf_core::stats::LatencyRecorder;
use pubsubperf_core::sys::{self, Resources, Usage};
use pubsubperf_core::{
    Binding, BindingError, Reader, Reliability, TopicSpec, WaitMode, Writer, clock,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

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

/// The text that goes with every latency figure.
pub fn latency_method(spec: &RunSpec) -> String {
    if spec.one_way {
        "one-way = subscriber receive time - publisher send time (same host clock)".into()
    } else {
        "one-way = round trip / 2".into()
    }
}

struct Endpoints<B: Binding> {
    _binding: B,
    writer: B::Writer,
    echo: Vec<B::Reader>,
}

fn setup<B: Binding>(s: &mut Session, spec: &RunSpec) -> Result<Endpoints<B>, Fault> {
    let timeout = s.connect_timeout;
    for sub in s.subs.iter_mut() {
        let mut sp = spec.clone();
        sp.subscriber_index = sub.index;
        sub.send(&Msg::Setup { spec: Box::new(sp) })?;
    }
    let mut locators = Vec::new();
    for sub in &s.subs {
        match sub.recv(timeout)? {
            Msg::Locators { data } => locators.push(data),
            other => return Err(Fault::Peer(format!("unexpected {other:?} during set-up"))),
        }
    }
    for (i, p) in s.pubs.iter_mut().enumerate() {
        p.send(&Msg::PubSetup {
            spec: Box::new(spec.clone()),
            publisher: (i + 1) as u8,
            data: locators.clone(),
        })?;
    }
    let mut cfg = spec.endpoint.clone();
    cfg.bind_ip = s
        .subs
        .first()
        .map_or_else(|| "127.0.0.1".into(), |c| c.local_ip());
    let bind = |e: BindingError| Fault::Binding(format!("{}: {e}", spec.binding));
    let mut binding = B::open(&cfg).map_err(bind)?;
    let needs_echo = spec.test == TestKind::Latency || spec.latency_every > 0;
    let mut echo = Vec::new();
    let mut echo_locs = Vec::new();
    for sub in &s.subs {
        if needs_echo {
            let (r, l) = binding
                .create_reader(&TopicSpec {
                    name: format!("echo{}", sub.index),
                    index: 0,
                })
                .map_err(bind)?;
            echo.push(r);
            echo_locs.push(l);
        } else {
            echo_locs.push(String::new());
        }
    }
    let writer = binding
        .create_writer(
            &TopicSpec {
                name: "data".into(),
                index: 0,
            },
            &locators,
        )
        .map_err(bind)?;
    for (sub, l) in s.subs.iter_mut().zip(echo_locs) {
        sub.send(&Msg::Peer { echo: l })?;
    }
    let mut endpoints = Endpoints {
        _binding: binding,
        writer,
        echo,
    };
    let n = s.subs.len();
    endpoints.writer.wait_matched(n, timeout).map_err(|e| {
        Fault::Peer(format!(
            "subscribers never matched: {e} (--connect-timeout {:.1} s)",
            timeout.as_secs_f64()
        ))
    })?;
    for r in endpoints.echo.iter_mut() {
        r.wait_matched(timeout).map_err(|e| {
            Fault::Peer(format!(
                "echo never matched: {e} (--connect-timeout {:.1} s)",
                timeout.as_secs_f64()
            ))
        })?;
    }
    for sub in s.subs.iter().chain(s.pubs.iter()) {
        match sub.recv(timeout)? {
            Msg::Ready => {}
            other => return Err(Fault::Peer(format!("unexpected {other:?} during set-up"))),
        }
    }
    Ok(endpoints)
}

/// Room for every interval report a run of `--duration` makes (one per
/// subscriber per interval in throughput runs, one per interval in latency
/// runs, plus the partial ones at the ends), so that the measuring loops never
/// grow the vector: no allocation or copy of it mid-run, and a long run's
/// memory grows only by the reports themselves. Runs bounded by `--count`
/// start with room for a minute.
fn expected_intervals(spec: &RunSpec, subs: usize) -> usize {
    let per_interval = spec.interval_ms.max(1) * 1_000_000;
    let span = if spec.duration_ns > 0 {
        spec.duration_ns
    } else {
        60_000_000_000
    };
    let n = (span / per_interval + 2) as usize;
    let n = if spec.test == TestKind::Throughput {
        n * subs.max(1)
    } else {
        n
    };
    n.min(1 << 20)
}

fn apply_rt(spec: &RunSpec) -> Result<(), Fault> {
    if let Some(cpu) = spec.pub_cpu {
        sys::pin_to_cpu(cpu).map_err(Fault::Config)?;
    }
    if let Some(p) = spec.rt_priority {
        sys::set_rt_priority(p).map_err(Fault::Config)?;
    }
    if spec.mlock {
        sys::mlock_all().map_err(Fault::Config)?;
    }
    Ok(())
}

/// Runs one test over binding `B`.
pub fn run<B: Binding>(
    s: &mut Session,
    spec: &RunSpec,
    on_interval: &mut dyn FnMut(&Interval),
) -> RunOutcome {
    if let Err(f) = apply_rt(spec) {
        return RunOutcome::failed(f);
    }
    for sub in &s.subs {
        sub.touch();
    }
    let mut ep = match setup::<B>(s, spec) {
        Ok(e) => e,
        Err(f) => {
            spec.endpoint.cancel.cancel();
            return RunOutcome::failed(f);
        }
    };
    for sub in s.subs.iter_mut().chain(s.pubs.iter_mut()) {
        if let Err(f) = sub.send(&Msg::Start) {
            return RunOutcome::failed(f);
        }
        sub.touch();
    }
    let started_at = pubsubperf_core::time::rfc3339_now();
    let usage0 = Usage::now();
    let mut intervals = Vec::with_capacity(expected_intervals(spec, s.subs.len()));
    let (clock_name, ns_per_tick) = round_trip_clock::<B>(spec);
    let measured = match spec.test {
        TestKind::Latency => match ns_per_tick {
            Some(f) => {
                latency_loop::<B, clock::Tsc>(s, spec, &mut ep, &mut intervals, on_interval, f)
            }
            None => latency_loop::<B, BindingClock<B>>(
                s,
                spec,
                &mut ep,
                &mut intervals,
                on_interval,
                1.0,
            ),
        },
        TestKind::Throughput => throughput_loop(s, spec, &mut ep, &mut intervals, on_interval),
    };
    let pub_res = Usage::now().since(&usage0);
    let Measured {
        rec,
        sent,
        duration_ns,
        mut fault,
        echoed,
    } = measured;

    // Extra publishers: stop early if this one did, then collect their counts.
    let mut sent_by = vec![sent];
    let pub_wait = Duration::from_nanos(spec.duration_ns) + Duration::from_secs(10);
    for p in s.pubs.iter_mut() {
        if fault.is_some() {
            let _ = p.send(&Msg::Stop {
                sent: 0,
                sent_by: Vec::new(),
            });
        }
        let deadline = std::time::Instant::now() + pub_wait;
        let mut got = 0;
        loop {
            match p.recv(deadline.saturating_duration_since(std::time::Instant::now())) {
                Ok(Msg::PubDone { sent, .. }) => {
                    got = sent;
                    break;
                }
                Ok(_) => {}
                Err(f) => {
                    fault.get_or_insert(f);
                    break;
                }
            }
        }
        sent_by.push(got);
    }
    // Collect every live subscriber's result (it may already be gone).
    let mut subs_tp: Vec<Throughput> = Vec::new();
    let mut pubs_tp: Vec<Throughput> = Vec::new();
    let mut sub_res: Vec<Resources> = Vec::new();
    let mut bad = 0;
    let stop = Msg::Stop {
        sent,
        sent_by: if sent_by.len() > 1 {
            sent_by.clone()
        } else {
            Vec::new()
        },
    };
    for sub in s.subs.iter_mut() {
        if sub.send(&stop).is_err() {
            continue;
        }
        // Reliable subscribers may drain a backlog (they stop after 2 s of quiet).
        let wait = Duration::from_secs(if spec.endpoint.reliability == Reliability::Reliable {
            30
        } else {
            10
        });
        let deadline = std::time::Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match sub.recv(left) {
                Ok(Msg::Result {
                    throughput,
                    by_publisher,
                    bad_samples,
                    resources,
                    ..
                }) => {
                    if let Some(t) = throughput {
                        subs_tp.push(t);
                    }
                    // Per publisher, summed over subscribers.
                    for (i, t) in by_publisher.into_iter().enumerate() {
                        if pubs_tp.len() <= i {
                            pubs_tp.push(Throughput::default());
                        }
                        let p = &mut pubs_tp[i];
                        p.sent += t.sent;
                        p.received += t.received;
                        p.bytes += t.bytes;
                        p.lost += t.lost;
                        p.duplicates += t.duplicates;
                        p.out_of_order += t.out_of_order;
                        p.samples_per_s += t.samples_per_s;
                        p.mbps += t.mbps;
                    }
                    sub_res.push(resources);
                    bad += bad_samples;
                    break;
                }
                Ok(Msg::Interval { interval }) if spec.test == TestKind::Throughput => {
                    on_interval(&interval);
                    intervals.push(interval);
                }
                Ok(_) => {}
                Err(f) => {
                    fault.get_or_insert(f);
                    break;
                }
            }
        }
    }
    // Late interval reports.
    for sub in &s.subs {
        while let Some(m) = sub.try_recv() {
            if let Msg::Interval { interval } = m
                && spec.test == TestKind::Throughput
            {
                intervals.push(interval);
            }
        }
    }
    spec.endpoint.cancel.cancel();
    drop(ep);

    let throughput = if spec.test == TestKind::Throughput {
        let mut total = Throughput::default();
        if subs_tp.is_empty() {
            // Subscriber gone: what its interval reports said.
            total.received = intervals.iter().map(|i| i.received).sum();
            total.lost = intervals.iter().map(|i| i.lost).sum();
            total.bytes = total.received * spec.size as u64;
            total.sent = sent;
            let secs = duration_ns as f64 / 1e9;
            total.finish(secs);
        } else {
            for t in &subs_tp {
                total.sent += t.sent;
                total.received += t.received;
                total.bytes += t.bytes;
                total.lost += t.lost;
                total.duplicates += t.duplicates;
                total.out_of_order += t.out_of_order;
                total.samples_per_s += t.samples_per_s;
                total.mbps += t.mbps;
            }
            // Totals over all subscribers; `sent` counts each delivery the
            // publisher owed (sent × subscribers), so loss % stays per delivery.
            total.lost_percent = if total.sent > 0 {
                total.lost as f64 * 100.0 / total.sent as f64
            } else {
                0.0
            };
        }
        total.sent_per_s =
            sent_by.iter().sum::<u64>() as f64 / (duration_ns as f64 / 1e9).max(1e-9);
        Some(total)
    } else {
        None
    };
    let latency = rec.filter(|r| r.count() > 0 || spec.test == TestKind::Latency);
    let run = Run {
        binding: spec.binding.clone(),
        transport: spec.endpoint.transport.clone(),
        test: spec.test,
        size: spec.size,
        zero_copy: spec.endpoint.zero_copy,
        data_type: serde_json::to_value(spec.endpoint.data_type)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default(),
        reliable: spec.endpoint.reliability == Reliability::Reliable,
        config: spec.config_json(),
        latency_method: latency.as_ref().map(|_| latency_method(spec)),
        latency_clock: (spec.test == TestKind::Latency).then(|| clock_name.to_owned()),
        latency_ns: latency.map(|r| r.summary()),
        pings: (spec.test == TestKind::Latency).then_some(Pings {
            sent,
            echoed,
            lost: sent - echoed,
        }),
        throughput,
        intervals,
        subscribers: if subs_tp.len() > 1 {
            subs_tp
        } else {
            Vec::new()
        },
        publishers: pubs_tp
            .into_iter()
            .map(|mut t| {
                t.lost_percent = if t.sent > 0 {
                    t.lost as f64 * 100.0 / t.sent as f64
                } else {
                    0.0
                };
                t
            })
            .collect(),
        resources: RunResources {
            publisher: pub_res,
            subscriber: sub_res.first().cloned().unwrap_or_default(),
        },
        bad_samples: bad,
        complete: fault.is_none(),
        error: fault.as_ref().map(|f| f.to_string()),
        started_at,
        duration_s: duration_ns as f64 / 1e9,
    };
    RunOutcome {
        run: Some(run),
        fault: fault.take(),
    }
}

/// What a test loop measured.
struct Measured {
    /// Latencies (latency test; throughput test with echoes).
    rec: Option<LatencyRecorder>,
    /// Samples (pings) sent while measuring.
    sent: u64,
    /// How long the measurement ran.
    duration_ns: u64,
    /// What cut it short.
    fault: Option<Fault>,
    /// Latency test: the pings whose echo came back.
    echoed: u64,
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
    for p in &s.pubs {
        p.check_alive()?;
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

/// Ping-pong with round trips timed by `C` (`ns_per_tick` converts its
/// readings); everything else (warm-up, duration, intervals) on `B`'s clock.
fn latency_loop<B: Binding, C: clock::RoundTrip>(
    s: &Session,
    spec: &RunSpec,
    ep: &mut Endpoints<B>,
    intervals: &mut Vec<Interval>,
    on_interval: &mut dyn FnMut(&Interval),
    ns_per_tick: f64,
) -> Measured {
    let mut rec = LatencyRecorder::new();
    let size = spec.size;
    let nsubs = s.subs.len().max(1) as u64;
    let echo_timeout = spec.echo_timeout_ms.max(1) * 1_000_000;
    let period = if spec.rate > 0.0 {
        (1e9 / spec.rate) as u64
    } else {
        0
    };
    let one_way = spec.one_way;
    let start = B::now_ns();
    let warm_end = start + spec.warmup_ns;
    let mut measure_start = warm_end;
    let mut warm = spec.warmup_ns > 0;
    let mut seq = 0u64;
    let mut echoed = 0u64;
    let mut warm_seq = 0u64;
    let mut next_send = start;
    let interval_ns = spec.interval_ms.max(1) * 1_000_000;
    let mut next_report = warm_end + interval_ns;
    let (mut i_count, mut i_sum, mut i_max) = (0u64, 0u128, 0u64);
    let mut checked_at = start;
    let fault = loop {
        let now = B::now_ns();
        if warm && now >= warm_end {
            warm = false;
            measure_start = now;
            next_send = now;
            next_report = now + interval_ns;
        }
        if !warm
            && ((spec.count > 0 && seq >= spec.count)
                || (spec.duration_ns > 0 && now - measure_start >= spec.duration_ns))
        {
            break None;
        }
        if now - checked_at > 50_000_000 {
            checked_at = now;
            if let Err(f) = check_peers(s) {
                break Some(f);
            }
        }
        if now >= next_report {
            if i_count > 0 {
                let iv = Interval {
                    t_s: (now - measure_start) as f64 / 1e9,
                    received: i_count,
                    samples_per_s: i_count as f64 * 1e9 / interval_ns as f64,
                    latency_mean_ns: Some(i_sum as f64 / i_count as f64),
                    latency_max_ns: Some(i_max),
                    ..Default::default()
                };
                on_interval(&iv);
                intervals.push(iv);
            }
            (i_count, i_sum, i_max) = (0, 0, 0);
            next_report += interval_ns;
            // Subscribers' heartbeats; their figures are not needed here.
            for sub in &s.subs {
                while sub.try_recv().is_some() {}
            }
        }
        let (this_seq, flags) = if warm {
            (warm_seq, FLAG_ECHO | FLAG_WARMUP)
        } else {
            (seq, FLAG_ECHO)
        };
        if period > 0 && !warm {
            B::wait_until(next_send);
            next_send += period;
        }
        let mut sent_at = 0;
        if let Err(e) = ep
            .writer
            .send(size, |b| {
                sent_at = fill_sample(b, this_seq, 0, flags, spec.check, C::start);
            })
            .and_then(|_| ep.writer.flush())
        {
            break Some(send_fault(e, s));
        }
        let target = (this_seq % nsubs) as usize;
        let want = (this_seq, flags);
        // The echo timeout runs from the ping's own timestamp (or, when the
        // round trip has its own clock, from the loop's reading just before
        // the send): no clock read between the send and the echo.
        let real_sent_at = if C::MONOTONIC {
            real_time::<B>(sent_at)
        } else {
            real_time::<B>(now)
        };
        let mut got: Option<(u64, u64)> = None;
        let reader = &mut ep.echo[target];
        let res = loop {
            let r = reader.recv(Duration::from_millis(100), &mut |b: &[u8]| {
                let t = C::stop();
                if let Some(h) = Header::read(b)
                    && (h.seq, h.flags & !FLAG_CHECK) == want
                {
                    let sub_rx = if b.len() >= HEADER_LEN + 8 {
                        u64::from_le_bytes(
                            b[HEADER_LEN..HEADER_LEN + 8].try_into().expect("8 bytes"),
                        )
                    } else {
                        0
                    };
                    got = Some((
                        C::ns(t.saturating_sub(h.timestamp), ns_per_tick),
                        sub_rx.saturating_sub(h.timestamp),
                    ));
                }
            });
            match r {
                Err(e) => break Err(send_fault(e, s)),
                Ok(_) if got.is_some() => break Ok(()),
                Ok(_) => {
                    if let Err(f) = check_peers(s) {
                        break Err(f);
                    }
                    if clock::now_ns() - real_sent_at > echo_timeout {
                        break Ok(());
                    }
                }
            }
        };
        if let Err(f) = res {
            break Some(f);
        }
        if warm {
            warm_seq += 1;
            continue;
        }
        seq += 1;
        // No echo within --echo-timeout: the ping is lost and not recorded.
        if let Some((rtt, ow)) = got {
            echoed += 1;
            let v = if one_way { ow } else { rtt / 2 };
            if period > 0 {
                rec.record_corrected(v, period / 2);
            } else {
                rec.record(v);
            }
            i_count += 1;
            i_sum += u128::from(v);
            i_max = i_max.max(v);
        }
    };
    drain_intervals(s, false, intervals, on_interval);
    let duration = B::now_ns().saturating_sub(measure_start);
    Measured {
        rec: Some(rec),
        sent: seq,
        duration_ns: duration,
        fault,
        echoed,
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

fn throughput_loop<B: Binding>(
    s: &Session,
    spec: &RunSpec,
    ep: &mut Endpoints<B>,
    intervals: &mut Vec<Interval>,
    on_interval: &mut dyn FnMut(&Interval),
) -> Measured {
    let every = spec.latency_every;
    // Latency under load: a thread records echoes while this one sends.
    let stop = Arc::new(AtomicBool::new(false));
    let echo_thread = if every > 0 {
        let mut readers = std::mem::take(&mut ep.echo);
        let stop = stop.clone();
        Some(std::thread::spawn(move || {
            // Left unpinned: it shares the publisher's core budget.
            let mut rec = LatencyRecorder::new();
            let slice = Duration::from_millis(if readers.len() > 1 { 1 } else { 20 });
            while !stop.load(Ordering::Acquire) {
                for r in readers.iter_mut() {
                    let _ = r.recv(slice, &mut |b: &[u8]| {
                        if let Some(h) = Header::read(b)
                            && h.flags & FLAG_WARMUP == 0
                        {
                            rec.record((B::now_ns().saturating_sub(h.timestamp)) / 2);
                        }
                    });
                }
            }
            (rec, readers)
        }))
    } else {
        None
    };
    let (seq, duration, fault) = send_stream::<B>(
        &mut ep.writer,
        spec,
        0,
        every,
        &mut || {
            check_peers(s)?;
            drain_intervals(s, true, intervals, on_interval);
            Ok(Poll::Go)
        },
        &|e| send_fault(e, s),
    );
    drain_intervals(s, true, intervals, on_interval);
    let rec = echo_thread.map(|t| {
        // Let the last echoes come back.
        std::thread::sleep(Duration::from_millis(50));
        stop.store(true, Ordering::Release);
        let (rec, readers) = t
            .join()
            .unwrap_or_else(|_| (LatencyRecorder::new(), Vec::new()));
        ep.echo = readers;
        rec
    });
    Measured {
        rec,
        sent: seq,
        duration_ns: duration,
        fault,
        echoed: 0,
    }
}
