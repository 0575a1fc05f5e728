//! One sample at a time through the graph, for a binding with a virtual
//! clock (the `mock`'s, which only its writers' sends advance): a source
//! takes the turn, waits for its slot, sends, and keeps the turn until
//! every reception the sample causes downstream (each reader, each relay's
//! send and its readers) has happened. No clock moves but the turn
//! holder's, so every hop and path latency is the exact sum of the mock's
//! delays, whatever the threads' order. Nodes of such a binding are
//! threads of one process, which these statics serve.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

static TURN: Mutex<()> = Mutex::new(());
static OUTSTANDING: AtomicU64 = AtomicU64::new(0);

/// How long a turn waits for its receptions before it gives the turn up:
/// a sample the mock drops (`--opt drop-every`) never arrives, and costs
/// its source this long (the mock's sends and receptions take microseconds).
const SETTLE: Duration = Duration::from_millis(50);

/// The turn, held by one source.
pub struct Turn(#[allow(dead_code)] MutexGuard<'static, ()>);

/// Takes the turn (waiting for the holder to give it up).
pub fn take() -> Turn {
    Turn(TURN.lock().unwrap_or_else(|p| p.into_inner()))
}

impl Turn {
    /// The next send causes `receptions` receptions.
    pub fn expect(&self, receptions: u64) {
        OUTSTANDING.store(receptions, Ordering::Release);
    }

    /// Waits until every expected reception happened (or [`SETTLE`]
    /// passed), then gives the turn up.
    pub fn settle(self) {
        let start = Instant::now();
        while OUTSTANDING.load(Ordering::Acquire) > 0 && start.elapsed() < SETTLE {
            std::thread::yield_now();
        }
        OUTSTANDING.store(0, Ordering::Release);
    }
}

/// A reader handled one sample (and relayed it).
pub fn received() {
    let _ = OUTSTANDING.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
}
