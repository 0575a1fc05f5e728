//! Helpers shared by the socket bindings for bounded, cancellable waits.

use pubsubperf_core::{BindingError, CancelToken};
use std::io::ErrorKind;
use std::time::{Duration, Instant};

pub use pubsubperf_core::binding::CANCEL_POLL as POLL;

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
/// happened yet; it blocks for at most [`POLL`] itself (blocking mode) or
/// returns at once (busy mode).
pub fn retry<T>(
    timeout: Duration,
    cancel: &CancelToken,
    mut attempt: impl FnMut() -> Result<Option<T>, BindingError>,
) -> Result<Option<T>, BindingError> {
    let start = Instant::now();
    loop {
        if let Some(v) = attempt()? {
            return Ok(Some(v));
        }
        // Each attempt is a system call, so reading the (vDSO) clock and an
        // atomic here costs little in comparison.
        if cancel.is_cancelled() {
            return Err(BindingError::Cancelled);
        }
        if start.elapsed() >= timeout {
            return Ok(None);
        }
    }
}
