//! The latency test's loop: ping-pong, one ping in flight, each round trip
//! timed by the run's round-trip clock (see the method in [`super`]).

use super::*;

/// Ends a latency run's report interval at `t_ns` into the measurement:
/// its line (when it saw an echo) from the interval's books; and the
/// subscribers' heartbeats read and dropped (their figures are not needed
/// here).
#[cold]
fn report_interval(
    s: &Session,
    books: &mut IntervalBooks,
    t_ns: u64,
    interval_ns: u64,
    intervals: &mut Vec<Interval>,
    on_interval: &mut dyn FnMut(&Interval),
) {
    if let Some(iv) = books.close(t_ns, interval_ns) {
        on_interval(&iv);
        intervals.push(iv);
    }
    for sub in &s.subs {
        while sub.try_recv().is_some() {}
    }
}

/// A ping on its way: its sequence number and flags, its stamp on the
/// round-trip clock, and the loop's reading of `B`'s clock before it went.
#[derive(Clone, Copy)]
struct Ping {
    seq: u64,
    flags: u8,
    sent_at: u64,
    now: u64,
}

/// Which ping goes next: warm-up pings, then measured ones until the count
/// or the duration is reached. The loop asks it before each ping, and so
/// does the echo callback when it sends the next ping itself ([`Echoes`]).
struct Schedule {
    warm: bool,
    warm_end: u64,
    measure_start: u64,
    /// Set when the measurement started, for the loop to take.
    started: Option<u64>,
    seq: u64,
    warm_seq: u64,
    count: u64,
    duration_ns: u64,
}

impl Schedule {
    /// The ping to send at `now` (sequence number, flags), or `None` once
    /// the run is over. The first call at or after the warm-up's end starts
    /// the measurement.
    #[inline(always)]
    fn next(&mut self, now: u64) -> Option<(u64, u8)> {
        if self.warm && now >= self.warm_end {
            self.warm = false;
            self.measure_start = now;
            self.started = Some(now);
        }
        if !self.warm
            && ((self.count > 0 && self.seq >= self.count)
                || (self.duration_ns > 0 && now - self.measure_start >= self.duration_ns))
        {
            return None;
        }
        Some(if self.warm {
            (self.warm_seq, FLAG_ECHO | FLAG_WARMUP)
        } else {
            (self.seq, FLAG_ECHO)
        })
    }

    /// Counts a ping with `flags` as done: echoed, or lost.
    #[inline(always)]
    fn done(&mut self, flags: u8) {
        if flags & FLAG_WARMUP != 0 {
            self.warm_seq += 1;
        } else {
            self.seq += 1;
        }
    }
}

/// Sends ping `seq` with `flags`; its stamp on the round-trip clock `C`.
#[inline(always)]
fn send_ping<W: Writer, C: clock::RoundTrip>(
    w: &mut W,
    spec: &RunSpec,
    seq: u64,
    flags: u8,
) -> Result<u64, BindingError> {
    let mut sent_at = 0;
    w.send(spec.size, |b| {
        sent_at = fill_sample(b, seq, 0, spec.run_key, flags, spec.check, C::start);
    })?;
    w.flush()?;
    Ok(sent_at)
}

/// One echoed ping: its flags, its round trip and (`--one-way`) its
/// subscriber receive time - stamp - the clocks' offset, in nanoseconds.
#[derive(Clone, Copy, Default)]
struct Echoed {
    flags: u8,
    rtt: u64,
    /// When its ping was sent, on CLOCK_MONOTONIC.
    sent_ns: u64,
    forward: i64,
    /// The subscriber that echoed it (round robin: seq mod subscribers).
    sub: u16,
}

/// The most round trips one wait records when the callback sends each
/// next ping itself (a window of [`CHAINED_WINDOW`] at 2.4 µs a round trip);
/// the loop sends the one after.
const CHAINED_MAX: usize = 4096;

/// How long the loop's thread sleeps while the callback chains pings: the
/// books (intervals, peers, the end of the run) lag by at most this much.
const CHAINED_WINDOW: Duration = Duration::from_millis(10);

/// What the echo callback sees and records while the loop waits.
///
/// With a `chain` (`--receive listener` without `--rate` or `--wait
/// busy`), the callback, which the middleware's receive thread runs,
/// counts each echoed ping and writes the next one from there, as
/// ddsperf's ping and the vendors' latency programs answer in their
/// listener; the loop's thread sleeps through a window of
/// [`CHAINED_WINDOW`] (no wake-up per echo), then records the round trips
/// and keeps the books. Without it, each next ping waits for the loop's
/// thread to wake. A delivery may hand the callback the echo of a ping it
/// sent itself (the middleware takes everything it holds): that is
/// recorded too.
struct Echoes<'a, W> {
    /// The ping whose echo is awaited (none once the chain stopped).
    want: Option<Ping>,
    /// Room for the round trips recorded ([`CHAINED_MAX`] when chained).
    got: &'a mut [Echoed],
    n: usize,
    chain: Option<(&'a mut W, &'a mut Schedule, &'a RunSpec)>,
    /// A ping the callback could not send.
    failed: Option<BindingError>,
    /// The run's key, and the samples that came without it.
    key: u64,
    foreign: u64,
    /// `--one-way`: each subscriber's clock minus ours, by subscriber
    /// index (empty: round trips only).
    offsets: &'a [i64],
    /// Subscribers, each echoing one ping in this many.
    nsubs: u64,
}

impl<W: Writer> Echoes<'_, W> {
    /// A sample whose head (at least its first [`HEAD_LEN`] bytes, or all
    /// of it) is `b` arrived at `t` on the round-trip clock `C`.
    #[inline(always)]
    fn on_sample<B: Binding, C: clock::RoundTrip>(&mut self, b: &[u8], t: u64, ns_per_tick: f64) {
        let Some(p) = self.want else {
            return;
        };
        let h = match Header::read(b) {
            Some(h) if h.key == self.key => h,
            _ => {
                self.foreign += 1;
                return;
            }
        };
        if (h.seq, h.flags & !FLAG_CHECK) != (p.seq, p.flags) {
            return;
        }
        // The subscriber that echoed it (round robin), one division only
        // with several.
        let sub = if self.nsubs > 1 {
            (h.seq % self.nsubs) as usize
        } else {
            0
        };
        let forward = match self.offsets.get(sub) {
            Some(offset) if b.len() >= HEAD_LEN => {
                let sub_rx =
                    u64::from_le_bytes(b[HEADER_LEN..HEAD_LEN].try_into().expect("8 bytes"));
                (sub_rx.wrapping_sub(h.timestamp) as i64).wrapping_sub(*offset)
            }
            _ => 0,
        };
        self.got[self.n] = Echoed {
            flags: p.flags,
            rtt: C::ns(t.saturating_sub(h.timestamp), ns_per_tick),
            sent_ns: if C::MONOTONIC { p.sent_at } else { p.now },
            forward,
            sub: sub as u16,
        };
        self.n += 1;
        self.want = None;
        let Some((w, sched, spec)) = self.chain.as_mut() else {
            return;
        };
        sched.done(p.flags);
        if self.n == self.got.len() {
            return;
        }
        let now = B::now_ns();
        if let Some((seq, flags)) = sched.next(now) {
            match send_ping::<W, C>(w, spec, seq, flags) {
                Ok(sent_at) => {
                    self.want = Some(Ping {
                        seq,
                        flags,
                        sent_at,
                        now,
                    })
                }
                Err(e) => self.failed = Some(e),
            }
        }
    }
}

/// Waits for the echo of `echoes.want` (chained: for a window, while the
/// callback sends the next pings); returns when at least one came, or when
/// none came within `echo_timeout` of `real_sent_at` (the ping is lost).
/// Peers are checked between waits. With `poll` (`--wait busy`) the echo
/// is polled for on this thread, also where the subscriber receives in a
/// listener.
#[inline(always)]
fn await_echo<B: Binding, C: clock::RoundTrip>(
    s: &Session,
    reader: &mut B::Reader,
    poll: bool,
    echoes: &mut Echoes<'_, B::Writer>,
    real_sent_at: u64,
    echo_timeout: u64,
    ns_per_tick: f64,
) -> Result<(), Fault> {
    let chained = echoes.chain.is_some();
    loop {
        let mut on_echo = |b: Received| echoes.on_sample::<B, C>(b.head(), C::stop(), ns_per_tick);
        let wait = Duration::from_millis(100);
        let r = if poll {
            reader.recv(wait, &mut on_echo)
        } else if chained {
            reader.recv_window(CHAINED_WINDOW, &mut on_echo)
        } else {
            reader.recv_on_arrival(wait, &mut on_echo)
        };
        match r {
            Err(e) => return Err(send_fault(e, s)),
            Ok(_) if echoes.n > 0 => return Ok(()),
            Ok(_) => {
                check_peers(s)?;
                if clock::now_ns() - real_sent_at > echo_timeout {
                    return Ok(());
                }
            }
        }
    }
}

/// A ping that could not be sent: under best effort a refusal is counted
/// as rejected (not as sent, so not as lost either) and the loop sends the
/// same sequence number again, as a throughput run's refused sends are;
/// anything else ends the run.
fn refused(
    e: BindingError,
    s: &Session,
    spec: &RunSpec,
    warm: bool,
    rejected: &mut u64,
    first_refusal: &mut Option<BindingError>,
) -> Option<Fault> {
    if matches!(e, BindingError::Refused { .. })
        && spec.endpoint.reliability == Reliability::BestEffort
    {
        if !warm {
            *rejected += 1;
            if first_refusal.is_none() {
                *first_refusal = Some(e);
            }
        }
        return None;
    }
    Some(send_fault(e, s))
}

/// Ping-pong with round trips timed by `C` (`ns_per_tick` converts its
/// readings); everything else (warm-up, duration, intervals) on `B`'s clock.
/// With `--one-way`, `offsets` holds each subscriber's clock offset (0 on
/// this host) and both directions are recorded beside round trip / 2; the
/// intervals then show the forward direction.
pub(super) fn latency_loop<B: Binding, C: clock::RoundTrip>(
    s: &Session,
    spec: &RunSpec,
    ep: &mut Endpoints<B>,
    intervals: &mut Vec<Interval>,
    on_interval: &mut dyn FnMut(&Interval),
    ns_per_tick: f64,
    offsets: &[i64],
) -> Measured {
    let mut rec = LatencyRecorder::new();
    let mut directions = spec.one_way.then(Directions::new);
    // Several subscribers: each one's echoes (round robin) on their own.
    let mut by_sub: Vec<LatencyRecorder> = if s.subs.len() > 1 {
        (0..s.subs.len()).map(|_| LatencyRecorder::new()).collect()
    } else {
        Vec::new()
    };
    let nsubs = s.subs.len().max(1) as u64;
    let echo_timeout = spec.echo_timeout_ms.max(1) * 1_000_000;
    let period = if spec.rate > 0.0 {
        (1e9 / spec.rate) as u64
    } else {
        0
    };
    let poll = spec.endpoint.wait == pubsubperf_core::WaitMode::Busy;
    // Chained from the echo's callback only with one subscriber: with
    // several, the next ping's echo comes on another subscriber's echo
    // reader, which no one waits on until the window ends (a 5 ms median).
    let chained = !poll
        && period == 0
        && nsubs == 1
        && spec.endpoint.receive == pubsubperf_core::ReceiveMode::Listener;
    let start = B::now_ns();
    let mut sched = Schedule {
        warm: spec.warmup_ns > 0,
        warm_end: start + spec.warmup_ns,
        measure_start: start + spec.warmup_ns,
        started: None,
        seq: 0,
        warm_seq: 0,
        count: spec.count,
        duration_ns: spec.duration_ns,
    };
    let mut echoed = 0u64;
    let mut foreign = 0u64;
    let mut rejected = 0u64;
    let mut first_refusal = None;
    let mut next_send = start;
    let interval_ns = spec.interval_ms.max(1) * 1_000_000;
    let mut next_report = sched.warm_end + interval_ns;
    let mut books = IntervalBooks::new();
    let mut checked_at = start;
    // A ping the echo callback already sent.
    let mut pending: Option<Ping> = None;
    let mut got = vec![Echoed::default(); if chained { CHAINED_MAX } else { 1 }];
    let mut tail = spec.explain.then(TailKeeper::for_explain);
    let fault = loop {
        let now = B::now_ns();
        if now - checked_at > 50_000_000 {
            checked_at = now;
            if let Err(f) = check_peers(s) {
                break Some(f);
            }
        }
        // The interval's books (its percentiles, its line) are kept before
        // the next ping goes, so that they never lie inside a round trip our
        // thread times.
        if now >= next_report {
            report_interval(
                s,
                &mut books,
                now - sched.measure_start,
                interval_ns,
                intervals,
                on_interval,
            );
            next_report += interval_ns;
        }
        let ping = match pending.take() {
            Some(p) => p,
            None => {
                let Some((seq, flags)) = sched.next(now) else {
                    break None;
                };
                if let Some(t) = sched.started.take() {
                    next_send = t;
                    next_report = t + interval_ns;
                    books.restart_cpu();
                }
                if period > 0 && !sched.warm {
                    B::wait_until(next_send);
                    next_send += period;
                }
                match send_ping::<B::Writer, C>(&mut ep.writer, spec, seq, flags) {
                    Ok(sent_at) => Ping {
                        seq,
                        flags,
                        sent_at,
                        now,
                    },
                    Err(e) => {
                        match refused(e, s, spec, sched.warm, &mut rejected, &mut first_refusal) {
                            None => continue,
                            Some(f) => break Some(f),
                        }
                    }
                }
            }
        };
        let target = (ping.seq % nsubs) as usize;
        // The echo timeout runs from the ping's own timestamp (or, when the
        // round trip has its own clock, from the loop's reading just before
        // the send): no clock read between the send and the echo.
        let real_sent_at = if C::MONOTONIC {
            real_time::<B>(ping.sent_at)
        } else {
            real_time::<B>(ping.now)
        };
        let mut echoes = Echoes {
            want: Some(ping),
            got: &mut got,
            n: 0,
            chain: chained.then_some((&mut ep.writer, &mut sched, spec)),
            failed: None,
            key: spec.run_key,
            foreign: 0,
            offsets,
            nsubs,
        };
        if let Err(f) = await_echo::<B, C>(
            s,
            &mut ep.echo[target],
            poll,
            &mut echoes,
            real_sent_at,
            echo_timeout,
            ns_per_tick,
        ) {
            break Some(f);
        }
        let Echoes {
            want,
            n,
            failed,
            foreign: not_ours,
            ..
        } = echoes;
        foreign += not_ours;
        if n == 0 || !chained {
            // Not counted by the callback; with no echo within
            // --echo-timeout the ping is lost and not recorded.
            sched.done(ping.flags);
        } else {
            // The callback's last ping, still on its way.
            pending = want;
        }
        // The callback's pings may have started the measurement.
        if let Some(t) = sched.started.take() {
            next_report = t + interval_ns;
            books.restart_cpu();
        }
        for e in &got[..n] {
            if e.flags & FLAG_WARMUP != 0 {
                continue;
            }
            echoed += 1;
            let half = e.rtt / 2;
            let correct_ns = period / 2;
            if period > 0 {
                rec.record_corrected(half, correct_ns);
            } else {
                rec.record(half);
            }
            if let Some(t) = tail.as_mut() {
                t.record(Kept {
                    latency_ns: half,
                    start_ns: e.sent_ns,
                    end_ns: e.sent_ns + e.rtt,
                });
            }
            if let Some(r) = by_sub.get_mut(usize::from(e.sub)) {
                if period > 0 {
                    r.record_corrected(half, correct_ns);
                } else {
                    r.record(half);
                }
            }
            match directions.as_mut() {
                Some(d) => books.record(d.record(e.rtt, e.forward, correct_ns)),
                None => books.record(half),
            }
        }
        if let Some(e) = failed
            && let Some(f) = refused(e, s, spec, sched.warm, &mut rejected, &mut first_refusal)
        {
            break Some(f);
        }
    };
    drain_intervals(s, false, intervals, on_interval);
    let duration = B::now_ns().saturating_sub(sched.measure_start);
    Measured {
        rec: Some(rec),
        directions,
        by_subscriber: by_sub,
        sent: sched.seq,
        rejected,
        first_refusal,
        duration_ns: duration,
        fault,
        echoed,
        warmup: sched.warm_seq,
        foreign,
        tail: tail.map(|t| (t.finish(), sched.measure_start)),
    }
}
