//! The throughput sending loop, shared by publisher 0 (which measures) and
//! the extra publishers of `--publishers M`: a flagged warm-up, then
//! samples numbered from 0 at full speed, on a `--rate` schedule, in
//! `--demand` bursts (N samples back to back, then a 10 ms pause, as RTI's
//! Throughput example sends), or with a `--sleep` after each write until
//! the duration or count is reached. The hot loop reads the clock only for
//! the timestamp of a sample that asks for an echo (the only ones whose
//! timestamp is read: latency under load; Perftest's throughput test stamps
//! only its latency samples too) or that the subscribers record for the
//! fan-out (every `stamp_every`th; the others carry 0) and, every 64 sends
//! or, when sends are slower, about once a millisecond (every sample when
//! paced by `--rate` or sleeping, and after each burst), for the end and a
//! 100 ms `poll` of the caller's liveness checks. A batched writer
//! is flushed before it waits for its next `--rate` slot, pauses or
//! sleeps.

use crate::Fault;
use crate::check_every::CheckEvery;
use crate::spec::RunSpec;
use pubsubperf_core::sample::{FLAG_CHECK, FLAG_ECHO, FLAG_WARMUP, Header, fill_pattern};
use pubsubperf_core::{Binding, BindingError, Reliability, Writer};

/// Writes the header (and with `check` the pattern) of sample `seq` of the
/// run keyed `key`, stamped with `B`'s clock; returns the stamp.
#[inline]
pub(crate) fn fill_sample(
    buf: &mut [u8],
    seq: u64,
    publisher: u8,
    key: u64,
    flags: u8,
    check: bool,
    stamp: impl FnOnce() -> u64,
) -> u64 {
    if check {
        fill_pattern(buf, seq);
    }
    let timestamp = stamp();
    Header {
        seq,
        publisher,
        flags: flags | if check { FLAG_CHECK } else { 0 },
        timestamp,
        key,
    }
    .write(buf);
    timestamp
}

/// Real time for liveness (peer silence, echo timeout, drain, heartbeats),
/// given a reading `measured` of `B`'s clock: the same reading unless that
/// clock is virtual, so real bindings pay no second clock read.
#[inline(always)]
pub(crate) fn real_time<B: Binding>(measured: u64) -> u64 {
    if B::VIRTUAL_CLOCK {
        pubsubperf_core::clock::now_ns()
    } else {
        measured
    }
}

/// What the caller's poll says.
pub(crate) enum Poll {
    /// Go on sending.
    Go,
    /// Stop sending normally (told to stop).
    Stop,
}

/// What [`send_stream`] did.
pub(crate) struct Streamed {
    /// Measured samples sent (accepted by the binding).
    pub(crate) sent: u64,
    /// Measured sends the binding refused (best effort): not sent, so in
    /// neither `sent` nor the subscriber's gaps.
    pub(crate) rejected: u64,
    /// The first refusal, for the result's note.
    pub(crate) first_refusal: Option<BindingError>,
    /// Measured ns.
    pub(crate) duration_ns: u64,
    /// What cut it short.
    pub(crate) fault: Option<Fault>,
    /// Warm-up samples sent (accepted by the binding).
    pub(crate) warmup: u64,
}

/// The pause after each burst of `--demand` samples: 10 ms, as in RTI's
/// Throughput example.
pub const DEMAND_PAUSE_NS: u64 = 10_000_000;

/// After `attempts` sends: with `--demand N`, at the end of each burst of N
/// flushes a batch (or it would sit in the writer through the pause),
/// waits [`DEMAND_PAUSE_NS`] on `B`'s clock (a sleep, no allocation) and
/// returns true; otherwise false. A failed flush is returned, after the
/// pause.
#[inline(always)]
fn demand_pause<B: Binding>(
    w: &mut B::Writer,
    attempts: u64,
    demand: u64,
) -> Result<bool, BindingError> {
    if demand > 0 && attempts.is_multiple_of(demand) {
        let flushed = w.flush();
        B::wait_until(B::now_ns() + DEMAND_PAUSE_NS);
        flushed.map(|()| true)
    } else {
        Ok(false)
    }
}

/// Waits for a `--rate` slot at `due` on `B`'s clock: spinning the last
/// stretch ([`Binding::wait_until`]), or with `--pace sleep` only sleeping,
/// so that a late wake-up leaves the overdue slots to be sent back to back.
#[inline(always)]
fn pace<B: Binding>(due: u64, sleep: bool) {
    if !sleep {
        B::wait_until(due);
        return;
    }
    let now = B::now_ns();
    if due > now {
        std::thread::sleep(std::time::Duration::from_nanos(due - now));
    }
}

/// True when `e` is a refusal the run counts instead of ending: a
/// [`BindingError::Refused`] under best effort.
#[inline(always)]
fn counted(e: &BindingError, best_effort: bool) -> bool {
    best_effort && matches!(e, BindingError::Refused { .. })
}

/// `--sleep` (Perftest's -sleep): after a write attempt (refused ones too,
/// so that a refusing writer keeps its pace) flushes a batch, as when
/// pacing idles, and sleeps. Returns the write's result, else the flush's.
#[inline]
fn sleep_after<W: Writer>(
    w: &mut W,
    r: Result<(), BindingError>,
    sleep: std::time::Duration,
) -> Result<(), BindingError> {
    if sleep.is_zero() {
        return r;
    }
    let r = r.and_then(|()| w.flush());
    std::thread::sleep(sleep);
    r
}

/// A stream's settings, read once from its spec; passed by value to each
/// phase, so that its loop keeps them in registers.
#[derive(Clone, Copy)]
struct Settings {
    size: usize,
    check: bool,
    demand: u64,
    pace_sleep: bool,
    publisher: u8,
    key: u64,
    echo_every: u64,
    /// Fan-out: every this many measured samples (a power of two) carry
    /// their send time for the subscribers to record (0: none).
    stamp_every: u64,
    best_effort: bool,
    /// ns between `--rate` slots (0: unpaced).
    period: f64,
    batched: bool,
    sleep: std::time::Duration,
    /// On a schedule (rate or sleep): the clock is read after every send.
    timed: bool,
}

impl Settings {
    fn of(spec: &RunSpec, publisher: u8, echo_every: u64, stamp_every: u64) -> Settings {
        let period = if spec.rate > 0.0 {
            1e9 / spec.rate
        } else {
            0.0
        };
        Settings {
            size: spec.size,
            check: spec.check,
            demand: spec.demand,
            pace_sleep: spec.pace_sleep,
            publisher,
            key: spec.run_key,
            echo_every,
            stamp_every,
            best_effort: spec.endpoint.reliability == Reliability::BestEffort,
            period,
            batched: spec.endpoint.batch_bytes > 0,
            sleep: std::time::Duration::from_nanos(spec.sleep_ns),
            timed: period > 0.0 || spec.sleep_ns > 0,
        }
    }
}

/// The caller's liveness checks, shared by the phases of one stream: its
/// poll (every 100 ms), when it runs next, and how a binding error becomes
/// the run's fault.
struct Liveness<'a> {
    next_poll: u64,
    poll: &'a mut dyn FnMut() -> Result<Poll, Fault>,
    fault: &'a dyn Fn(BindingError) -> Fault,
}

/// Sends warm-up and measured samples as publisher `publisher`; every
/// `echo_every`th measured sample asks for an echo (0: none), every
/// `stamp_every`th (a power of two, 0: none) carries its send time for the
/// subscribers' fan-out record ([`crate::fan_out`]). `poll` runs
/// every 100 ms; `fault` turns a binding error into the run's fault.
/// Times come from `B`'s clock. Both phases run one loop ([`phase`]): the
/// warm-up runs the measured part's code (its clock checks, pacing and
/// polls), which starts again from 0 for the measured part.
///
/// Under best effort a measured send the binding refuses
/// ([`BindingError::Refused`]) is counted as rejected and the same sequence
/// number goes into the next attempt; the `--rate` schedule and the
/// end/poll checks count attempts, so a writer refused every time still
/// keeps its schedule and ends on time; so do `--demand` bursts (a burst
/// is N attempts, the example's N writes). Under reliable it ends the run.
pub(crate) fn send_stream<B: Binding>(
    w: &mut B::Writer,
    spec: &RunSpec,
    publisher: u8,
    (echo_every, stamp_every): (u64, u64),
    poll: &mut dyn FnMut() -> Result<Poll, Fault>,
    fault: &dyn Fn(BindingError) -> Fault,
) -> Streamed {
    let set = Settings::of(spec, publisher, echo_every, stamp_every);
    let start = B::now_ns();
    let mut live = Liveness {
        next_poll: start + 100_000_000,
        poll,
        fault,
    };
    let mut out = Streamed {
        sent: 0,
        rejected: 0,
        first_refusal: None,
        duration_ns: 0,
        fault: None,
        warmup: 0,
    };
    if spec.warmup_ns > 0 {
        let (warm, ended) = phase::<B, true>(
            w,
            set,
            &mut live,
            &mut out,
            start,
            start + spec.warmup_ns,
            u64::MAX,
        );
        // Counted once, not per sample.
        out.warmup = warm;
        if !ended {
            return out;
        }
    }
    let _ = w.flush();
    let m_start = B::now_ns();
    let end = if spec.duration_ns > 0 {
        m_start + spec.duration_ns
    } else {
        u64::MAX
    };
    let count = if spec.count > 0 { spec.count } else { u64::MAX };
    (out.sent, _) = phase::<B, false>(w, set, &mut live, &mut out, m_start, end, count);
    // A refused last batch: its samples were counted as sent, so the
    // subscriber counts them as lost.
    if out.fault.is_none()
        && let Err(e) = w.flush()
        && !counted(&e, set.best_effort)
    {
        out.fault = Some((live.fault)(e));
    }
    out.duration_ns = B::now_ns() - m_start;
    out
}

/// One phase of a stream from `start`: the warm-up (`WARM`: samples
/// flagged, its refusals and failed flushes not counted; a failed flush
/// shows in the measured part) or the measured part, until the clock
/// passes `end` or `count` samples went. Sequence numbers, the `--rate`
/// schedule and the clock checks start from 0 at `start`. Returns the
/// samples sent and whether the phase ran to its end (not stopped by the
/// poll or a fault, which is in `out`).
#[inline(always)]
fn phase<B: Binding, const WARM: bool>(
    w: &mut B::Writer,
    set: Settings,
    live: &mut Liveness<'_>,
    out: &mut Streamed,
    start: u64,
    end: u64,
    count: u64,
) -> (u64, bool) {
    let Settings {
        size,
        check,
        demand,
        pace_sleep,
        publisher,
        key,
        echo_every,
        stamp_every,
        best_effort,
        period,
        batched,
        sleep,
        timed,
    } = set;
    let mut checks = CheckEvery::new(start);
    let mut seq = 0u64;
    let mut attempt = 0u64;
    // A flush that fails goes on after a refusal under best effort and in
    // the warm-up.
    let flush_goes_on = |e: &BindingError| WARM || counted(e, best_effort);
    while seq < count {
        if period > 0.0 {
            let due = start + (attempt as f64 * period) as u64;
            // A batched writer about to wait sends what it holds first, or
            // the samples would sit in the batch while the writer idles.
            if batched
                && B::now_ns() < due
                && let Err(e) = w.flush()
                && !flush_goes_on(&e)
            {
                out.fault = Some((live.fault)(e));
                return (seq, false);
            }
            pace::<B>(due, pace_sleep);
        }
        let flags = if WARM {
            FLAG_WARMUP
        } else if echo_every > 0 && seq.is_multiple_of(echo_every) {
            FLAG_ECHO
        } else {
            0
        };
        let this = seq;
        let r = w.send(size, |b| {
            fill_sample(b, this, publisher, key, flags, !WARM && check, || {
                let stamped = stamp_every > 0 && this & (stamp_every - 1) == 0;
                if flags & FLAG_ECHO != 0 || (stamped && !WARM) {
                    B::now_ns()
                } else {
                    0
                }
            });
        });
        attempt += 1;
        match sleep_after(w, r, sleep) {
            Ok(()) => seq += 1,
            Err(e) if counted(&e, best_effort) => {
                if !WARM {
                    out.rejected += 1;
                    out.first_refusal.get_or_insert(e);
                }
            }
            Err(e) => {
                out.fault = Some((live.fault)(e));
                return (seq, false);
            }
        }
        let paused = match demand_pause::<B>(w, attempt, demand) {
            Ok(p) => p,
            Err(e) if flush_goes_on(&e) => true,
            Err(e) => {
                out.fault = Some((live.fault)(e));
                return (seq, false);
            }
        };
        if !checks.due(attempt, timed || paused) {
            continue;
        }
        let now = B::now_ns();
        checks.checked(now);
        if !WARM && now >= end {
            break;
        }
        if now >= live.next_poll {
            live.next_poll = now + 100_000_000;
            match (live.poll)() {
                Ok(Poll::Go) => {}
                Ok(Poll::Stop) => return (seq, false),
                Err(f) => {
                    out.fault = Some(f);
                    return (seq, false);
                }
            }
        }
        // The warm-up polls at its last check too: a stop then ends the
        // run before anything is measured.
        if WARM && now >= end {
            break;
        }
    }
    (seq, true)
}
