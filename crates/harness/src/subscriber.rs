//! The subscriber side of a run: receives (and echoes) samples, counts them,
//! and reports to the publisher over the control channel.

use crate::channel::Ctl;
use crate::check_every::CheckEvery;
use crate::protocol::{ControlError, Msg};
use crate::rate_window::RateWindow;
use crate::spec::RunSpec;
use crate::sub_interval::{self, Totals};
use crate::{Fault, INTERRUPTED};
use pubsubperf_core::received::HEAD_LEN;
use pubsubperf_core::result::{Interval, TestKind, Throughput};
use pubsubperf_core::sample::{
    FLAG_CHECK, FLAG_ECHO, FLAG_WARMUP, HEADER_LEN, Header, check_pattern, fill_pattern,
};
use pubsubperf_core::seq::SeqTracker;
use pubsubperf_core::sys::{self, Usage};
use pubsubperf_core::{Binding, Reader, ReceiveMode, Received, TopicSpec, Writer, clock};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// State the control thread shares with the measuring loop.
#[derive(Default)]
struct Shared {
    /// Set when the publisher said Stop.
    stopped: AtomicBool,
    /// Samples sent per publisher id, set before `stopped`.
    sent_by: std::sync::Mutex<Vec<u64>>,
    /// Sends the publishers had refused, set before `stopped`.
    rejected: std::sync::atomic::AtomicU64,
    /// Set when the control connection closed, or went silent.
    gone: AtomicBool,
    /// Set when it went silent for [`crate::session::PEER_SILENCE`].
    silent: AtomicBool,
}

fn ctl_err(e: ControlError) -> Fault {
    Fault::Peer(format!("publisher: {e}"))
}

/// Serves one run whose `Setup` was just received, on binding `B`.
/// Each interval and the result go to `watch` too.
pub fn serve_run<B: Binding>(
    ctl: &Ctl,
    spec: &RunSpec,
    setup_timeout: Duration,
    destinations: &crate::destinations::Destinations,
    watch: crate::serve::Watch,
) -> Result<(), Fault> {
    // The serving side set `bind_ip` (crate::serve).
    let cfg = spec.keyed_endpoint();
    if let Some(cpu) = spec.sub_cpu {
        sys::pin_to_cpu(cpu).map_err(Fault::Config)?;
    }
    if let Some(p) = spec.rt_priority {
        sys::set_rt_priority(p).map_err(Fault::Config)?;
    }
    if spec.mlock {
        sys::mlock_all().map_err(Fault::Config)?;
    }
    let idx = spec.subscriber_index;
    let mut binding = B::open(&cfg).map_err(|e| Fault::Binding(e.to_string()))?;
    let reader_created = clock::now_ns();
    let (mut reader, loc) = binding
        .create_reader(&TopicSpec {
            name: TopicSpec::data_name(spec.test == TestKind::Latency).into(),
            index: idx,
        })
        .map_err(|e| Fault::Binding(e.to_string()))?;
    ctl.send(&Msg::Locators { data: loc }).map_err(ctl_err)?;
    let echo_loc = match ctl.recv(Some(setup_timeout)).map_err(ctl_err)? {
        Msg::Peer { echo } => {
            destinations.check("the echo locator", &echo)?;
            echo
        }
        Msg::Error { message } => return Err(Fault::Peer(message)),
        other => return Err(Fault::Peer(format!("unexpected {other:?}"))),
    };
    let needs_echo = spec.test == TestKind::Latency || spec.latency_every > 0;
    let echo_created = clock::now_ns();
    let mut echo = if needs_echo {
        let topic = TopicSpec {
            name: format!("echo{idx}"),
            index: 0,
        };
        Some(
            binding
                .create_writer(&topic, &[echo_loc])
                .map_err(|e| Fault::Binding(e.to_string()))?,
        )
    } else {
        None
    };
    reader
        .wait_matched(setup_timeout)
        .map_err(|e| Fault::Binding(e.to_string()))?;
    let reader_matched = clock::now_ns();
    if let Some(w) = echo.as_mut() {
        w.wait_matched(1, setup_timeout)
            .map_err(|e| Fault::Binding(e.to_string()))?;
    }
    let discovery = pubsubperf_core::result::SubscriberDiscovery {
        reader_matched_ns: reader_matched.saturating_sub(reader_created),
        echo_writer_matched_ns: echo
            .is_some()
            .then(|| clock::now_ns().saturating_sub(echo_created)),
        first_sample_ns: None,
    };
    let profiler = spec.profile.then(crate::profiler::Profiler::attach);
    ctl.send(&Msg::Ready {
        discovery: Some(discovery),
        deviations: crate::registry::held_deviations(&spec.peer_binding, spec.test, &cfg),
    })
    .map_err(ctl_err)?;
    match ctl.recv(Some(setup_timeout)).map_err(ctl_err)? {
        Msg::Start => {}
        Msg::Error { message } => return Err(Fault::Peer(message)),
        other => return Err(Fault::Peer(format!("unexpected {other:?}"))),
    }

    // From here on a thread reads the control channel, so the measuring
    // loop only checks atomics.
    let shared = Arc::new(Shared::default());
    let ctl_read = ctl.try_clone().map_err(|e| Fault::Peer(e.to_string()))?;
    let sh = shared.clone();
    let cancel = cfg.cancel.clone();
    let control = pubsubperf_core::helper::spawn_helper(ctl_read, move |ctl_read| {
        // The publisher's heartbeats (crate::session::HEARTBEAT) and Stop.
        let mut heard = std::time::Instant::now();
        loop {
            let msg = ctl_read.recv(Some(Duration::from_millis(200)));
            if msg.is_ok() {
                heard = std::time::Instant::now();
            }
            match msg {
                Ok(Msg::Stop {
                    sent,
                    sent_by,
                    rejected,
                }) => {
                    // One count per publisher id: no more ids than a run
                    // may have publishers are read.
                    let mut by = if sent_by.is_empty() {
                        vec![sent]
                    } else {
                        sent_by
                    };
                    by.truncate(crate::serve::Bounds::ENDPOINTS);
                    *sh.sent_by.lock().unwrap_or_else(|e| e.into_inner()) = by;
                    sh.rejected.store(rejected, Ordering::Relaxed);
                    sh.stopped.store(true, Ordering::Release);
                    return;
                }
                Ok(_) => {}
                Err(ControlError::Timeout(_)) => {
                    if INTERRUPTED.load(Ordering::Relaxed) {
                        return;
                    }
                    if heard.elapsed() > crate::session::PEER_SILENCE {
                        sh.silent.store(true, Ordering::Release);
                        sh.gone.store(true, Ordering::Release);
                        cancel.cancel();
                        return;
                    }
                }
                Err(_) => {
                    sh.gone.store(true, Ordering::Release);
                    cancel.cancel();
                    return;
                }
            }
        }
    });

    let start = Usage::now();
    let placed = pubsubperf_core::placement::Watch::start();
    let res = measure::<B>(ctl, spec, &mut reader, echo.as_mut(), &shared, &mut *watch);
    let placement = placed.finish(&format!("subscriber {idx}"), spec.sub_cpu);
    let resources = Usage::now().since(&start);
    let profile = profiler.map(|p| {
        let handled = res.as_ref().map_or(0, |r| r.handled);
        Box::new(p.finish(handled, "samples received, warm-up included"))
    });
    // The control thread ends on Stop, on close, or within 200 ms of an interrupt.
    cfg.cancel.cancel();
    let _ = control.join();
    let m = res?;
    drop(echo);
    drop(reader);
    drop(binding);
    let result = Msg::Result {
        throughput: m.throughput,
        by_publisher: m.by_publisher,
        echoed: m.echoed,
        bad_samples: m.bad,
        foreign: m.foreign,
        resources,
        profile,
        first_sample_ns: m
            .first_sample_at
            .map(|t| crate::stream::real_time::<B>(t).saturating_sub(reader_created)),
        arrivals: m.arrivals,
        placement: Some(Box::new(placement)),
    };
    watch(spec, &result);
    ctl.send(&result).map_err(ctl_err)
}

/// What a subscriber counted over a run.
struct Measured {
    throughput: Option<Throughput>,
    by_publisher: Vec<Throughput>,
    echoed: u64,
    /// Samples whose payload failed the `--check` pattern.
    bad: u64,
    /// Samples without the run's key, or from a publisher the run does not
    /// have: never counted as received, lost or reordered, never echoed.
    foreign: u64,
    /// Every sample handed over, warm-up and foreign included.
    handled: u64,
    /// When the first sample (warm-up or foreign included) arrived, on
    /// `B`'s clock.
    first_sample_at: Option<u64>,
    /// Fan-out: the recorded samples' delays ([`crate::fan_out`]).
    arrivals: Vec<u32>,
}

/// After the publisher's stop, a reliable subscriber gives up on the rest
/// of the samples once none came for this long. Longer than a repair takes
/// through loss: Linux TCP doubles its retransmission timeout after each
/// retransmission that is lost again (200 ms, 0.4, 0.8, 1.6, 3.2 s), so a
/// segment dropped four times in a row arrives 3.2 s after the previous
/// one; 2 s cut such runs short as lost (seen once through a 5 % drop rule).
const RELIABLE_DRAIN_QUIET_NS: u64 = 5_000_000_000;
/// The same for best effort: nothing is repaired, so what is still in
/// flight arrives within moments or never.
const BEST_EFFORT_DRAIN_QUIET_NS: u64 = 300_000_000;

/// Receives (and echoes) until the publisher's stop and the drain. Receive
/// times, the rate window and the intervals come from `B`'s clock; the drain
/// after the stop and the heartbeats follow the real clock.
fn measure<B: Binding>(
    ctl: &Ctl,
    spec: &RunSpec,
    reader: &mut B::Reader,
    mut echo: Option<&mut B::Writer>,
    shared: &Shared,
    watch: crate::serve::Watch,
) -> Result<Measured, Fault> {
    let idx = spec.subscriber_index as u64;
    let nsubs = spec.subscribers.max(1) as u64;
    let every = if spec.test == TestKind::Latency {
        1
    } else {
        spec.latency_every.max(1)
    };
    let check = spec.check;
    let (key, publishers) = (spec.run_key, spec.publishers.max(1));
    let mut trackers: Vec<SeqTracker> = Vec::new();
    let mut bad = 0u64;
    let mut foreign = 0u64;
    let mut handled = 0u64;
    let mut first_sample_at = None;
    let mut echoed = 0u64;
    let mut window = RateWindow::default();
    let mut arrivals = crate::fan_out::Arrivals::new(spec.fan_out_every);
    let mut echo_err: Option<String> = None;
    let interval_ns = spec.interval_ms.max(1) * 1_000_000;
    let mut t0 = B::now_ns();
    let mut heard_real = clock::now_ns();
    let mut next_report = t0 + interval_ns;
    let mut last_report = (t0, 0u64, 0u64, Usage::now());
    let mut stop_seen_at: Option<u64> = None;
    let mut last_progress = heard_real;
    let size = spec.size as u64;
    let stamp_echo = spec.test == TestKind::Latency && spec.one_way;
    let best_effort = spec.endpoint.reliability == pubsubperf_core::Reliability::BestEffort;
    // The rate window ends at the last timed arrival (src/rate_window.rs).
    // On our own thread a receive call returns as soon as it delivered, so
    // the clock read after it times its last sample and the per-sample
    // code reads no clock; a listener delivers on the middleware's thread
    // while this one sleeps through the window, so there samples are timed
    // as they arrive. Either way the clock is read only as often as
    // `CheckEvery` says: per sample or call while they come slowly, down
    // to every 64th while they come fast (two more reads per sample in the
    // listener cut zenoh's 64-byte rate by 14 %).
    let time_each = spec.endpoint.receive == ReceiveMode::Listener;
    let (mut measured, mut each) = (0u64, CheckEvery::new(0));
    let (mut calls, mut per_call) = (0u64, CheckEvery::new(0));
    let mut now = t0;
    let mut real = heard_real;
    let mut measured_in_call;
    loop {
        measured_in_call = false;
        let n = reader
            .recv_window(Duration::from_millis(50), &mut |s: Received| {
                if handled == 0 {
                    first_sample_at = Some(B::now_ns());
                }
                handled += 1;
                let h = match Header::read(s.head()) {
                    Some(h) if h.key == key && usize::from(h.publisher) < publishers => h,
                    _ => {
                        foreign += 1;
                        return;
                    }
                };
                // Fan-out: this sample's delay, for every `every`-th one.
                if arrivals.wants(h.seq) && h.publisher == 0 && h.flags & FLAG_WARMUP == 0 {
                    arrivals.record(h.seq, B::now_ns().saturating_sub(h.timestamp));
                }
                // Our receive time goes into the echo only for true one-way
                // latency; otherwise the clock is read after the echo is
                // sent, so that its cost is not in the publisher's round trip.
                let rx_stamp = if stamp_echo { B::now_ns() } else { 0 };
                if check && h.flags & FLAG_CHECK != 0 && !check_pattern(s, h.seq) {
                    bad += 1;
                }
                // Round-robin echo: with N subscribers, subscriber i answers
                // echo requests number i, i+N, ... (Perftest's way). One
                // subscriber answers all, without two divisions per echo.
                if h.flags & FLAG_ECHO != 0
                    && (nsubs == 1 || (h.seq / every) % nsubs == idx)
                    && let Some(w) = echo.as_deref_mut()
                {
                    // The echo carries the ping's header; a binding that can
                    // sends the received bytes as they are, unless they must
                    // carry our receive time (--one-way), or --check, whose
                    // echo is built as before this path existed.
                    let sent_as_is = if stamp_echo || check {
                        None
                    } else {
                        s.as_slice().and_then(|b| w.send_from(b))
                    };
                    let r = sent_as_is.unwrap_or_else(|| {
                        let len = s.len();
                        w.send(len, |b| {
                            b[..HEADER_LEN].copy_from_slice(&s.head()[..HEADER_LEN]);
                            if check {
                                fill_pattern(b, h.seq);
                            }
                            if len >= HEAD_LEN {
                                // Our receive time, for true one-way latency on one host.
                                b[HEADER_LEN..HEAD_LEN].copy_from_slice(&rx_stamp.to_le_bytes());
                            }
                        })
                    });
                    match r.and_then(|_| w.flush()) {
                        Ok(()) => echoed += 1,
                        // Best effort: an echo the kernel or middleware
                        // refuses was not sent; its ping gets no echo and
                        // the publisher counts it as lost.
                        Err(pubsubperf_core::BindingError::Refused { .. }) if best_effort => {}
                        Err(e) => echo_err = Some(e.to_string()),
                    }
                }
                if h.flags & FLAG_WARMUP != 0 || spec.test == TestKind::Latency {
                    return;
                }
                let p = h.publisher as usize;
                if p >= trackers.len() {
                    trackers.resize_with(p + 1, SeqTracker::new);
                }
                trackers[p].observe(h.seq);
                measured += 1;
                if !window.started() {
                    let now = B::now_ns();
                    window.start(now, &trackers);
                    t0 = now;
                    next_report = now + interval_ns;
                    last_report.0 = now;
                } else if !time_each {
                    measured_in_call = true;
                } else if each.due(measured, false) {
                    let now = B::now_ns();
                    each.checked(now);
                    window.mark(now, &trackers);
                }
            })
            .or_else(|e| match e {
                pubsubperf_core::BindingError::Cancelled => Ok(0),
                pubsubperf_core::BindingError::Disconnected => Ok(0),
                e => Err(Fault::Binding(e.to_string())),
            })?;
        if let Some(e) = echo_err.take() {
            return Err(Fault::Binding(format!("echo: {e}")));
        }
        calls += 1;
        if n == 0 || per_call.due(calls, false) {
            now = B::now_ns();
            per_call.checked(now);
            if measured_in_call {
                window.mark(now, &trackers);
            }
            real = crate::stream::real_time::<B>(now);
        }
        if n > 0 {
            last_progress = real;
        }
        if B::VIRTUAL_CLOCK && real - heard_real > 1_000_000_000 {
            // A virtual clock may take long to reach the next interval.
            heard_real = real;
            let _ = ctl.send(&Msg::Heartbeat);
        }
        if now >= next_report && !window.started() && spec.test == TestKind::Throughput {
            // Still in warm-up: intervals start with the first measured sample.
            next_report = now + interval_ns;
            let _ = ctl.send(&Msg::Heartbeat);
        } else if now >= next_report {
            let received: u64 = trackers.iter().map(|t| t.received).sum();
            // A forged sequence number makes a loss near u64::MAX: no wrap.
            let lost = trackers.iter().fold(0u64, |n, t| n.saturating_add(t.lost));
            let u = Usage::now();
            let last = Totals {
                at_ns: last_report.0,
                counted: last_report.1,
                lost: last_report.2,
            };
            let totals = Totals::new(spec.test, now, received, echoed, lost);
            let interval = Interval {
                cpu_percent: u.since(&last_report.3).cpu_percent,
                ..sub_interval::interval(&last, &totals, t0, size, spec.subscriber_index)
            };
            last_report = (now, totals.counted, lost, u);
            next_report = now + interval_ns;
            let msg = Msg::Interval { interval };
            watch(spec, &msg);
            // A failed send means the publisher is gone; the control thread notices too.
            let _ = ctl.send(&msg);
        }
        if shared.gone.load(Ordering::Acquire) {
            return Err(Fault::Gone(if shared.silent.load(Ordering::Acquire) {
                format!(
                    "the publisher has been silent for {} s (hung or unreachable)",
                    crate::session::PEER_SILENCE.as_secs()
                )
            } else {
                "the publisher went away".into()
            }));
        }
        if INTERRUPTED.load(Ordering::Relaxed) {
            return Err(Fault::Interrupted);
        }
        if shared.stopped.load(Ordering::Acquire) {
            let sent: u64 = shared
                .sent_by
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .sum();
            let at = *stop_seen_at.get_or_insert(real);
            if spec.test == TestKind::Latency {
                break;
            }
            // Drain what is still in flight: until everything arrived, or
            // no sample came for a while (the rest is lost).
            let received: u64 = trackers.iter().map(|t| t.received).sum();
            let quiet_ns = if spec.endpoint.reliability == pubsubperf_core::Reliability::Reliable {
                RELIABLE_DRAIN_QUIET_NS
            } else {
                BEST_EFFORT_DRAIN_QUIET_NS
            };
            if received >= sent || real - last_progress.max(at) > quiet_ns {
                break;
            }
        }
    }
    let mut out = Measured {
        throughput: None,
        by_publisher: Vec::new(),
        echoed,
        bad,
        foreign,
        handled,
        first_sample_at,
        arrivals: arrivals.into_delays(),
    };
    if spec.test == TestKind::Latency {
        return Ok(out);
    }
    let sent_by = shared
        .sent_by
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    // A publisher none of whose samples arrived still counts: all lost.
    if trackers.len() < sent_by.len().max(1) {
        trackers.resize_with(sent_by.len().max(1), SeqTracker::new);
    }
    // Rates over the subscriber's window: the samples received from the
    // first measured one to the last timed one, over that time.
    let seconds = window.seconds();
    let mut tp = Throughput::default();
    let mut by_publisher = Vec::new();
    for (p, t) in trackers.iter_mut().enumerate() {
        let sent = sent_by.get(p).copied().unwrap_or(0);
        t.finish(sent);
        let mut one = Throughput {
            sent,
            received: t.received,
            bytes: t.received.saturating_mul(size),
            lost: t.lost,
            duplicates: t.duplicates,
            out_of_order: t.out_of_order,
            ..Default::default()
        };
        one.finish_window(seconds, window.count(p));
        by_publisher.push(one);
        tp.received = tp.received.saturating_add(t.received);
        tp.lost = tp.lost.saturating_add(t.lost);
        tp.duplicates = tp.duplicates.saturating_add(t.duplicates);
        tp.out_of_order = tp.out_of_order.saturating_add(t.out_of_order);
    }
    tp.sent = sent_by.iter().sum();
    tp.rejected = shared.rejected.load(Ordering::Relaxed);
    tp.bytes = tp.received.saturating_mul(size);
    tp.finish_window(seconds, window.total());
    if by_publisher.len() < 2 {
        by_publisher.clear();
    }
    out.throughput = Some(tp);
    out.by_publisher = by_publisher;
    Ok(out)
}
