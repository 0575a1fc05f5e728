//! How a reliable writer waits for room: a loan, a pool buffer or a queue
//! slot that its readers still hold.

use crate::{BindingError, CancelToken};
use std::time::{Duration, Instant};

/// Attempts with a yield in between before the writer sleeps.
const YIELDS_BEFORE_SLEEP: u32 = 1000;
/// The sleep between later attempts.
const SLEEP: Duration = Duration::from_micros(50);

/// Retries `attempt` until it gives room, the run is cancelled, or `block`
/// passes ([`BindingError::WriteTimeout`]). Room comes back as soon as a
/// reader releases a sample, so the writer yields the core for the first
/// thousand attempts (about a millisecond), then sleeps 50 µs between
/// attempts. Neither extreme works: a 50 µs sleep from the first miss held
/// iceoryx's 16 MiB zero-copy throughput at 0.14 × its reference's, and a
/// spinning retry stalled zenoh's shared memory at 4 MiB and up (each
/// attempt fed zenoh's real-time watchdog thread, which took a core from
/// the readers).
#[cold]
pub fn wait_for_room<T>(
    block: Duration,
    cancel: &CancelToken,
    mut attempt: impl FnMut() -> Option<T>,
) -> Result<T, BindingError> {
    let start = Instant::now();
    let mut tries = 0u32;
    loop {
        if cancel.is_cancelled() {
            return Err(BindingError::Cancelled);
        }
        if start.elapsed() >= block {
            return Err(BindingError::WriteTimeout(block));
        }
        if tries < YIELDS_BEFORE_SLEEP {
            std::thread::yield_now();
            tries += 1;
        } else {
            std::thread::sleep(SLEEP);
        }
        if let Some(room) = attempt() {
            return Ok(room);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn room_that_comes_back_is_taken() {
        let mut n = 0;
        let got = wait_for_room(Duration::from_secs(5), &CancelToken::new(), || {
            n += 1;
            (n == 1500).then_some(n)
        });
        assert_eq!(got.unwrap(), 1500);
    }

    #[test]
    fn no_room_ends_in_the_block_timeout_or_the_cancel() {
        let t = Duration::from_millis(20);
        let r = wait_for_room(t, &CancelToken::new(), || None::<()>);
        assert!(matches!(r, Err(BindingError::WriteTimeout(d)) if d == t));
        let cancel = CancelToken::new();
        cancel.cancel();
        let r = wait_for_room(Duration::from_secs(5), &cancel, || None::<()>);
        assert!(matches!(r, Err(BindingError::Cancelled)));
    }
}
