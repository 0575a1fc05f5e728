//! Waiting for a cursor to move: spinning (busy) or sleeping on a futex in
//! shared memory (block), never sleeping for a fixed time and polling.
//!
//! The protocol is the classic one for a futex next to a lock-free queue.
//! The waiter announces itself (`sleepers += 1`), reads the futex word,
//! re-checks its condition and only then sleeps while the word is unchanged.
//! The mover publishes (`pos` store), then reads `sleepers`; if anyone is
//! there it bumps the word and wakes. Both sides put a sequentially
//! consistent fence between their store and their load, so either the
//! waiter sees the new position, or the mover sees the waiter and wakes it
//! (the word changed, so a wait that starts late returns at once).

use crate::layout::Cursor;
use crate::sys;
use pubsubperf_core::binding::CANCEL_POLL;
use pubsubperf_core::{BindingError, CancelToken, WaitMode};
use std::sync::atomic::{Ordering, fence};
use std::time::{Duration, Instant};

/// How a wait ended (cancellation is an error).
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The condition holds.
    Ready,
    /// The timeout passed.
    Timeout,
    /// `give_up` said the peer is gone.
    GaveUp,
}

/// Wakes whoever sleeps on `c` after the caller moved `c.pos` (or freed
/// what `c` guards). Costs a fence and a load when nobody sleeps.
#[inline(always)]
pub fn notify(c: &Cursor) {
    fence(Ordering::SeqCst);
    if c.sleepers.load(Ordering::Relaxed) != 0 {
        c.wake.fetch_add(1, Ordering::SeqCst);
        sys::futex_wake(&c.wake);
    }
}

/// Waits until `ready()` holds, `timeout` passes, the run is cancelled, or
/// `give_up()` (checked at least every [`CANCEL_POLL`] while blocked, and
/// every few million spins while busy) says the peer is gone. Blocking waits
/// sleep on `c.wake` for at most [`CANCEL_POLL`] at a time.
#[inline]
pub fn wait(
    c: &Cursor,
    mode: WaitMode,
    timeout: Duration,
    cancel: &CancelToken,
    mut ready: impl FnMut() -> bool,
    mut give_up: impl FnMut() -> bool,
) -> Result<Outcome, BindingError> {
    if ready() {
        return Ok(Outcome::Ready);
    }
    match mode {
        WaitMode::Busy => {
            // No clock read before the first 1024 polls: a sample that comes
            // within them (every one of a busy ping-pong) costs none, and the
            // side that just sent starts polling at once instead of ~40 ns
            // later (a clock read on this VM). The timeout counts from the
            // 1024th poll, some microseconds late.
            let mut spins = 0u32;
            let mut start: Option<Instant> = None;
            loop {
                if ready() {
                    return Ok(Outcome::Ready);
                }
                spins = spins.wrapping_add(1);
                if spins.is_multiple_of(1024) {
                    if cancel.is_cancelled() {
                        return Err(BindingError::Cancelled);
                    }
                    if start.get_or_insert_with(Instant::now).elapsed() >= timeout {
                        return Ok(Outcome::Timeout);
                    }
                    if spins.is_multiple_of(1 << 22) && give_up() {
                        return Ok(Outcome::GaveUp);
                    }
                }
                std::hint::spin_loop();
            }
        }
        WaitMode::Block => {
            // The clock is read only once the condition does not hold at
            // once: a sample that is already there costs no clock read.
            let start = Instant::now();
            loop {
                if ready() {
                    return Ok(Outcome::Ready);
                }
                if cancel.is_cancelled() {
                    return Err(BindingError::Cancelled);
                }
                let elapsed = start.elapsed();
                if elapsed >= timeout {
                    return Ok(Outcome::Timeout);
                }
                if give_up() {
                    return Ok(Outcome::GaveUp);
                }
                c.sleepers.fetch_add(1, Ordering::SeqCst);
                fence(Ordering::SeqCst);
                let word = c.wake.load(Ordering::SeqCst);
                if !ready() {
                    sys::futex_wait(&c.wake, word, (timeout - elapsed).min(CANCEL_POLL));
                }
                c.sleepers.fetch_sub(1, Ordering::SeqCst);
            }
        }
    }
}
