//! One direction of a relayed flow: a timed FIFO and the thread that
//! delivers each item at its due time (or direct delivery when D = 0).

use crate::{POLL, Shared};
use pubsubperf_core::clock::now_ns;
use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError};

/// Delivers one item; false when the destination is gone (the line ends).
pub type Deliver<T> = Box<dyn FnMut(T) -> bool + Send>;

/// One direction of a flow.
pub enum Line<T: Send + 'static> {
    /// No delay: the reading thread delivers itself.
    Direct(Deliver<T>),
    /// Delayed: items wait in a FIFO for their due time.
    Delayed {
        tx: mpsc::Sender<(u64, T)>,
        delay_ns: u64,
    },
}

impl<T: Send + 'static> Line<T> {
    /// A line towards `to` whose items reach `deliver` the delay towards
    /// `to` after they were read.
    pub fn new(
        shared: &Arc<Shared>,
        name: &str,
        to: std::net::IpAddr,
        mut deliver: Deliver<T>,
    ) -> Line<T> {
        let delay_ns = shared.delay_toward(to);
        if delay_ns == 0 {
            return Line::Direct(deliver);
        }
        let (tx, rx) = mpsc::channel::<(u64, T)>();
        let sh = shared.clone();
        shared.spawn(name, move || {
            precise_timer();
            loop {
                match rx.recv_timeout(POLL) {
                    Ok((due, item)) => {
                        wait_until(due, &sh);
                        let late = now_ns().saturating_sub(due);
                        let c = &sh.counters;
                        c.delayed.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        c.late_ns_sum
                            .fetch_add(late, std::sync::atomic::Ordering::Relaxed);
                        c.late_ns_max
                            .fetch_max(late, std::sync::atomic::Ordering::Relaxed);
                        if sh.stopped() || !deliver(item) {
                            return;
                        }
                    }
                    Err(RecvTimeoutError::Timeout) => {
                        if sh.stopped() {
                            return;
                        }
                    }
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            }
        });
        Line::Delayed { tx, delay_ns }
    }

    /// Passes on an item read at `read_ns`; false when the line has ended.
    #[inline]
    pub fn push(&mut self, read_ns: u64, item: T) -> bool {
        match self {
            Line::Direct(d) => d(item),
            Line::Delayed { tx, delay_ns } => tx.send((read_ns + *delay_ns, item)).is_ok(),
        }
    }
}

/// How long before the due time the delivery thread stops sleeping and
/// spins: covers the scheduler's wake-up latency on a busy machine.
const SPIN_NS: u64 = 400_000;

/// Timer slack of 1 ns for this thread: sleeps end when asked, not up to
/// 50 µs later (the default slack).
fn precise_timer() {
    // SAFETY: prctl with PR_SET_TIMERSLACK takes a plain integer.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

/// Waits until `due` (a [`now_ns`] value): sleeps while more than 500 µs
/// remain, then spins. Returns early when the relay stops.
fn wait_until(due: u64, shared: &Shared) {
    loop {
        let now = now_ns();
        if now >= due {
            return;
        }
        let left = due - now;
        if left > SPIN_NS + 100_000 {
            let nap = (left - SPIN_NS).min(POLL.as_nanos() as u64);
            std::thread::sleep(std::time::Duration::from_nanos(nap));
            if shared.stopped() {
                return;
            }
        } else {
            std::hint::spin_loop();
        }
    }
}
