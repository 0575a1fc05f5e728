//! `--topics N`: N runs set up side by side (one per topic, each with its
//! own session) start measuring together. Each run passes the gate once
//! its endpoints are matched (or its set-up failed) and waits there until
//! every run has come; the measured windows then begin within a few
//! milliseconds of each other instead of a discovery apart.

use crate::{Fault, INTERRUPTED};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The gate of one point's runs.
#[derive(Debug)]
pub struct StartGate {
    expected: usize,
    arrived: AtomicUsize,
    failed: AtomicBool,
}

impl StartGate {
    /// A gate for `expected` runs.
    pub fn new(expected: usize) -> StartGate {
        StartGate {
            expected,
            arrived: AtomicUsize::new(0),
            failed: AtomicBool::new(false),
        }
    }

    /// Arrives (`ready`: this run's set-up succeeded) and waits, at most
    /// `timeout`, for the others. Fails when another run's set-up failed
    /// or did not arrive in time.
    pub fn pass(&self, ready: bool, timeout: Duration) -> Result<(), Fault> {
        if !ready {
            self.failed.store(true, Ordering::Release);
        }
        self.arrived.fetch_add(1, Ordering::AcqRel);
        let end = Instant::now() + timeout;
        while self.arrived.load(Ordering::Acquire) < self.expected {
            if self.failed.load(Ordering::Acquire) {
                break;
            }
            if Instant::now() > end {
                return Err(Fault::Peer(format!(
                    "the other topics' runs were not set up within {:.1} s (--connect-timeout)",
                    timeout.as_secs_f64()
                )));
            }
            if INTERRUPTED.load(Ordering::Relaxed) {
                return Err(Fault::Interrupted);
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        if ready && self.failed.load(Ordering::Acquire) {
            return Err(Fault::Peer(
                "another topic's run failed to set up (its error follows)".into(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn every_run_waits_for_the_last_and_a_failure_frees_them_all() {
        let g = Arc::new(StartGate::new(3));
        let waiting: Vec<_> = (0..2)
            .map(|_| {
                let g = g.clone();
                std::thread::spawn(move || g.pass(true, Duration::from_secs(5)))
            })
            .collect();
        std::thread::sleep(Duration::from_millis(20));
        assert!(waiting.iter().all(|t| !t.is_finished()));
        g.pass(true, Duration::from_secs(5)).unwrap();
        for t in waiting {
            t.join().unwrap().unwrap();
        }
        let g = StartGate::new(2);
        assert!(
            g.pass(false, Duration::from_secs(5)).is_ok(),
            "the failed run goes on to its own error"
        );
        let g2 = Arc::new(StartGate::new(2));
        g2.failed.store(true, Ordering::Release);
        assert!(g2.pass(true, Duration::from_secs(5)).is_err());
        let alone = StartGate::new(2);
        assert!(alone.pass(true, Duration::from_millis(10)).is_err());
    }
}
