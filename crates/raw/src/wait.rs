//! Helpers shared by the socket bindings for bounded, cancellable waits.

use pubsubperf_core::{BindingError, CancelToken, WaitMode};
use std::io::ErrorKind;
use std::time::{Duration, Instant};

pub use pubsubperf_core::binding::CANCEL_POLL as POLL;

/// Empty busy-mode attempts between two checks of the clock and the cancel
/// token. An empty non-blocking receive takes 0.1-0.3 µs, so the timeout and
/// a cancellation are seen within a few microseconds, and the spinning
/// receiver spends its time in the receive call rather than in the clock.
const SPINS_PER_CHECK: u32 = 32;

/// True for the errors a non-blocking or timed-out socket call returns when
/// nothing happened yet.
pub fn is_wait(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
    )
}

/// The time limit of one wait. Blocking, its clock starts at once; busy, at
/// the first check, so that a receive finding data at once reads no clock.
pub struct Deadline {
    timeout: Duration,
    start: Option<Instant>,
    /// Attempts between two checks of the clock and the cancel token.
    per_check: u32,
}

impl Deadline {
    /// `timeout` from now (`Block`) or from the first check (`Busy`).
    #[inline]
    pub fn new(timeout: Duration, wait: WaitMode) -> Self {
        match wait {
            WaitMode::Busy => Deadline {
                timeout,
                start: None,
                per_check: SPINS_PER_CHECK,
            },
            WaitMode::Block => Deadline {
                timeout,
                start: Some(Instant::now()),
                per_check: 1,
            },
        }
    }

    /// The time left (starting the clock if it has not started).
    pub fn left(&mut self) -> Duration {
        let start = *self.start.get_or_insert_with(Instant::now);
        self.timeout.saturating_sub(start.elapsed())
    }
}

/// Repeats `attempt` until it yields a value, `deadline` passes
/// (`Ok(None)`), or the run is cancelled. `attempt` returns `Ok(None)` when
/// nothing happened yet; it blocks for at most [`POLL`] itself (a
/// [`WaitMode::Block`] deadline: the clock is read after each attempt) or
/// returns at once (`Busy`: read after every [`SPINS_PER_CHECK`] attempts).
/// One deadline may serve several calls (a frame read in parts).
#[inline]
pub fn retry<T>(
    deadline: &mut Deadline,
    cancel: &CancelToken,
    mut attempt: impl FnMut() -> Result<Option<T>, BindingError>,
) -> Result<Option<T>, BindingError> {
    loop {
        for _ in 0..deadline.per_check {
            if let Some(v) = attempt()? {
                return Ok(Some(v));
            }
        }
        if cancel.is_cancelled() {
            return Err(BindingError::Cancelled);
        }
        if deadline.left().is_zero() {
            return Ok(None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Attempts made before `retry` gives up on a token cancelled from the
    /// `at`th attempt on.
    fn attempts_until_cancel(wait: WaitMode, at: u32) -> u32 {
        let cancel = CancelToken::new();
        let mut n = 0;
        let mut deadline = Deadline::new(Duration::from_secs(60), wait);
        let got: Result<Option<()>, _> = retry(&mut deadline, &cancel, || {
            n += 1;
            if n == at {
                cancel.cancel();
            }
            Ok(None)
        });
        assert!(matches!(got, Err(BindingError::Cancelled)), "{got:?}");
        n
    }

    #[test]
    fn block_checks_after_each_attempt_busy_after_a_batch() {
        assert_eq!(attempts_until_cancel(WaitMode::Block, 3), 3);
        assert_eq!(attempts_until_cancel(WaitMode::Busy, 3), SPINS_PER_CHECK);
        assert_eq!(
            attempts_until_cancel(WaitMode::Busy, SPINS_PER_CHECK + 1),
            2 * SPINS_PER_CHECK
        );
    }

    #[test]
    fn a_value_returns_at_once_and_nothing_returns_after_the_timeout() {
        let cancel = CancelToken::new();
        for wait in [WaitMode::Busy, WaitMode::Block] {
            let mut n = 0;
            let got = retry(
                &mut Deadline::new(Duration::from_secs(60), wait),
                &cancel,
                || {
                    n += 1;
                    Ok((n == 5).then_some(n))
                },
            );
            assert_eq!(got.unwrap(), Some(5));
            let start = Instant::now();
            let none: Option<()> = retry(
                &mut Deadline::new(Duration::from_millis(20), wait),
                &cancel,
                || {
                    std::thread::yield_now();
                    Ok(None)
                },
            )
            .unwrap();
            assert_eq!(none, None);
            let took = start.elapsed();
            assert!(
                took >= Duration::from_millis(20) && took < Duration::from_secs(5),
                "{wait:?} took {took:?}"
            );
        }
    }

    /// Attempts a wait with no time makes: one check's worth.
    #[test]
    fn a_zero_timeout_makes_one_checks_attempts() {
        let cancel = CancelToken::new();
        for (wait, want) in [(WaitMode::Busy, SPINS_PER_CHECK), (WaitMode::Block, 1)] {
            let mut n = 0;
            let got: Option<()> = retry(&mut Deadline::new(Duration::ZERO, wait), &cancel, || {
                n += 1;
                Ok(None)
            })
            .unwrap();
            assert_eq!((got, n), (None, want), "{wait:?}");
        }
    }

    /// A deadline shared by two waits (a frame read in parts): once the
    /// first has used it up, the second gives up at its first check.
    #[test]
    fn a_shared_deadline_bounds_the_second_wait() {
        let cancel = CancelToken::new();
        for (wait, per_check) in [(WaitMode::Busy, SPINS_PER_CHECK), (WaitMode::Block, 1)] {
            let mut deadline = Deadline::new(Duration::from_millis(30), wait);
            let mut n = 0;
            let first = retry(&mut deadline, &cancel, || {
                n += 1;
                if n > per_check {
                    // Past the first check, so the busy clock has started.
                    std::thread::sleep(Duration::from_millis(35));
                    return Ok(Some(()));
                }
                Ok(None)
            })
            .unwrap();
            assert_eq!(first, Some(()));
            let mut m = 0;
            let second: Option<()> = retry(&mut deadline, &cancel, || {
                m += 1;
                Ok(None)
            })
            .unwrap();
            assert_eq!((second, m), (None, per_check), "{wait:?}");
        }
    }
}
