//! The throughput sending loop, shared by publisher 0 (which measures) and
//! the extra publishers of `--publishers M`: a flagged warm-up, then
//! samples numbered from 0 at full speed or on a `--rate` schedule until the
//! duration or count is reached. The hot loop reads the clock only for the
//! sample's timestamp and, every 64 samples (every sample when paced), for
//! the end and a 100 ms `poll` of the caller's liveness checks.

use crate::Fault;
use crate::spec::RunSpec;
use pubsubperf_core::sample::{FLAG_CHECK, FLAG_ECHO, FLAG_WARMUP, Header, fill_pattern};
use pubsubperf_core::{Binding, BindingError, Writer};

/// Writes the header (and with `check` the pattern) of sample `seq`,
/// stamped with `B`'s clock; returns the stamp.
#[inline]
pub(crate) fn fill_sample(
    buf: &mut [u8],
    seq: u64,
    publisher: u8,
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

/// Sends warm-up and measured samples as publisher `publisher`; every
/// `echo_every`th measured sample asks for an echo (0: none). `poll` runs
/// every 100 ms; `fault` turns a binding error into the run's fault.
/// Returns measured samples sent, measured ns, and the fault if any.
/// Times come from `B`'s clock.
pub(crate) fn send_stream<B: Binding>(
    w: &mut B::Writer,
    spec: &RunSpec,
    publisher: u8,
    echo_every: u64,
    poll: &mut dyn FnMut() -> Result<Poll, Fault>,
    fault: &dyn Fn(BindingError) -> Fault,
) -> (u64, u64, Option<Fault>) {
    let size = spec.size;
    let period = if spec.rate > 0.0 {
        1e9 / spec.rate
    } else {
        0.0
    };
    let start = B::now_ns();
    let warm_end = start + spec.warmup_ns;
    let mut next_poll = start + 100_000_000;
    let mut i = 0u64;
    while B::now_ns() < warm_end {
        if period > 0.0 {
            B::wait_until(start + (i as f64 * period) as u64);
        }
        let seq = i;
        if let Err(e) = w.send(size, |b| {
            fill_sample(b, seq, publisher, FLAG_WARMUP, false, B::now_ns);
        }) {
            return (0, 0, Some(fault(e)));
        }
        i += 1;
        let now = B::now_ns();
        if now >= next_poll {
            next_poll = now + 100_000_000;
            match poll() {
                Ok(Poll::Go) => {}
                Ok(Poll::Stop) => return (0, 0, None),
                Err(f) => return (0, 0, Some(f)),
            }
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
    let mut seq = 0u64;
    let mut result = None;
    while seq < count {
        if period > 0.0 {
            B::wait_until(m_start + (seq as f64 * period) as u64);
        }
        let flags = if echo_every > 0 && seq.is_multiple_of(echo_every) {
            FLAG_ECHO
        } else {
            0
        };
        let this = seq;
        if let Err(e) = w.send(size, |b| {
            fill_sample(b, this, publisher, flags, spec.check, B::now_ns);
        }) {
            result = Some(fault(e));
            break;
        }
        seq += 1;
        if seq.is_multiple_of(64) || period > 0.0 {
            let now = B::now_ns();
            if now >= end {
                break;
            }
            if now >= next_poll {
                next_poll = now + 100_000_000;
                match poll() {
                    Ok(Poll::Go) => {}
                    Ok(Poll::Stop) => break,
                    Err(f) => {
                        result = Some(f);
                        break;
                    }
                }
            }
        }
    }
    if result.is_none()
        && let Err(e) = w.flush()
    {
        result = Some(fault(e));
    }
    (seq, B::now_ns() - m_start, result)
}
