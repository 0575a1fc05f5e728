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

/// Repeats `attempt` until it yields a value, `timeout` passes (`Ok(None)`),
/// or the run is cancelled. `attempt` returns `Ok(None)` when nothing
/// happened yet; it blocks for at most [`POLL`] itself (`wait` is
/// [`WaitMode::Block`]: the clock is read after each attempt) or returns at
/// once (`Busy`: read after every [`SPINS_PER_CHECK`] attempts).
#[inline]
pub fn retry<T>(
    timeout: Duration,
    cancel: &CancelToken,
    wait: WaitMode,
    mut attempt: impl FnMut() -> Result<Option<T>, BindingError>,
) -> Result<Option<T>, BindingError> {
    let per_check = match wait {
        WaitMode::Busy => SPINS_PER_CHECK,
        WaitMode::Block => 1,
    };
    let start = Instant::now();
    loop {
        for _ in 0..per_check {
            if let Some(v) = attempt()? {
                return Ok(Some(v));
            }
        }
        if cancel.is_cancelled() {
            return Err(BindingError::Cancelled);
        }
        if start.elapsed() >= timeout {
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
        let got: Result<Option<()>, _> = retry(Duration::from_secs(60), &cancel, wait, || {
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
            let got = retry(Duration::from_secs(60), &cancel, wait, || {
                n += 1;
                Ok((n == 5).then_some(n))
            });
            assert_eq!(got.unwrap(), Some(5));
            let start = Instant::now();
            let none: Option<()> = retry(Duration::from_millis(20), &cancel, wait, || {
                std::thread::yield_now();
                Ok(None)
            })
            .unwrap();
            assert_eq!(none, None);
            let took = start.elapsed();
            assert!(
                took >= Duration::from_millis(20) && took < Duration::from_secs(5),
                "{wait:?} took {took:?}"
            );
        }
    }
}
