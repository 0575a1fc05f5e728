//! The latency test's loop: ping-pong, one ping in flight, each round trip
//! timed by the run's round-trip clock (see the method in [`super`]).

use super::*;

/// The latencies of the current report interval.
#[derive(Default)]
struct IntervalSums {
    count: u64,
    sum: u128,
    max: u64,
}

impl IntervalSums {
    #[inline(always)]
    fn add(&mut self, v: u64) {
        self.count += 1;
        self.sum += u128::from(v);
        self.max = self.max.max(v);
    }
}

/// Ends a latency run's report interval at `t_ns` into the measurement:
/// its line (when it saw an echo), and the subscribers' heartbeats read and
/// dropped (their figures are not needed here).
#[cold]
fn report_interval(
    s: &Session,
    sums: &mut IntervalSums,
    t_ns: u64,
    interval_ns: u64,
    intervals: &mut Vec<Interval>,
    on_interval: &mut dyn FnMut(&Interval),
) {
    if sums.count > 0 {
        let iv = Interval {
            t_s: t_ns as f64 / 1e9,
            received: sums.count,
            samples_per_s: sums.count as f64 * 1e9 / interval_ns as f64,
            latency_mean_ns: Some(sums.sum as f64 / sums.count as f64),
            latency_max_ns: Some(sums.max),
            ..Default::default()
        };
        on_interval(&iv);
        intervals.push(iv);
    }
    *sums = IntervalSums::default();
    for sub in &s.subs {
        while sub.try_recv().is_some() {}
    }
}

/// Waits for the echo of the ping `want` (sequence number and flags) and
/// returns its (round trip, subscriber receive time - stamp), both in
/// nanoseconds; `None` when no echo came within `echo_timeout` of
/// `real_sent_at` (the ping is lost). Peers are checked between waits.
/// With `poll` (`--wait busy`) the echo is polled for on this thread, also
/// where the subscriber receives in a listener.
#[inline(always)]
fn await_echo<R: Reader, C: clock::RoundTrip>(
    s: &Session,
    reader: &mut R,
    poll: bool,
    want: (u64, u8),
    real_sent_at: u64,
    echo_timeout: u64,
    ns_per_tick: f64,
) -> Result<Option<(u64, u64)>, Fault> {
    let mut got: Option<(u64, u64)> = None;
    loop {
        let mut on_echo = |b: &[u8]| {
            let t = C::stop();
            if let Some(h) = Header::read(b)
                && (h.seq, h.flags & !FLAG_CHECK) == want
            {
                let sub_rx = if b.len() >= HEADER_LEN + 8 {
                    u64::from_le_bytes(b[HEADER_LEN..HEADER_LEN + 8].try_into().expect("8 bytes"))
                } else {
                    0
                };
                got = Some((
                    C::ns(t.saturating_sub(h.timestamp), ns_per_tick),
                    sub_rx.saturating_sub(h.timestamp),
                ));
            }
        };
        let wait = Duration::from_millis(100);
        let r = if poll {
            reader.recv(wait, &mut on_echo)
        } else {
            reader.recv_on_arrival(wait, &mut on_echo)
        };
        match r {
            Err(e) => return Err(send_fault(e, s)),
            Ok(_) if got.is_some() => return Ok(got),
            Ok(_) => {
                check_peers(s)?;
                if clock::now_ns() - real_sent_at > echo_timeout {
                    return Ok(None);
                }
            }
        }
    }
}

/// Ping-pong with round trips timed by `C` (`ns_per_tick` converts its
/// readings); everything else (warm-up, duration, intervals) on `B`'s clock.
pub(super) fn latency_loop<B: Binding, C: clock::RoundTrip>(
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
    let poll = spec.endpoint.wait == pubsubperf_core::WaitMode::Busy;
    let start = B::now_ns();
    let warm_end = start + spec.warmup_ns;
    let mut measure_start = warm_end;
    let mut warm = spec.warmup_ns > 0;
    let mut seq = 0u64;
    let mut echoed = 0u64;
    let mut rejected = 0u64;
    let mut first_refusal = None;
    let mut warm_seq = 0u64;
    let mut next_send = start;
    let interval_ns = spec.interval_ms.max(1) * 1_000_000;
    let mut next_report = warm_end + interval_ns;
    let mut iv = IntervalSums::default();
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
            report_interval(
                s,
                &mut iv,
                now - measure_start,
                interval_ns,
                intervals,
                on_interval,
            );
            next_report += interval_ns;
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
            // Best effort: a refused ping was not sent. It is counted as
            // rejected (not as sent, so not as lost either), its sequence
            // number goes into the next attempt, and the run goes on, as a
            // throughput run's refused sends do.
            if matches!(e, BindingError::Refused { .. })
                && spec.endpoint.reliability == Reliability::BestEffort
            {
                if !warm {
                    rejected += 1;
                    if first_refusal.is_none() {
                        first_refusal = Some(e);
                    }
                }
                continue;
            }
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
        let got = match await_echo::<B::Reader, C>(
            s,
            &mut ep.echo[target],
            poll,
            want,
            real_sent_at,
            echo_timeout,
            ns_per_tick,
        ) {
            Ok(got) => got,
            Err(f) => break Some(f),
        };
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
            iv.add(v);
        }
    };
    drain_intervals(s, false, intervals, on_interval);
    let duration = B::now_ns().saturating_sub(measure_start);
    Measured {
        rec: Some(rec),
        sent: seq,
        rejected,
        first_refusal,
        duration_ns: duration,
        fault,
        echoed,
        warmup: warm_seq,
    }
}
