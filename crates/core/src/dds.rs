//! What the DDS bindings (cyclonedds, fastdds, connext) share, so that
//! they meet across vendors: topic names, the domain of a run, and the wait
//! for matched endpoints.

use crate::CancelToken;
use std::time::{Duration, Instant};

/// The DDS topic name of a harness topic in a run: `pp_<run id>_<topic>`,
/// only `[A-Za-z0-9_]` (a run id comes from a session's setup; nothing
/// else of it reaches a name).
pub fn topic(run_id: &str, topic: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect()
    };
    format!("pp_{}_{}", clean(run_id), clean(topic))
}

/// The DDS domain of a run without `--domain` (so that cross-vendor runs
/// meet and concurrent runs stay apart): 1..=`max` from an FNV-1a hash of
/// the run id (domain 0 is left to other DDS applications).
pub fn domain(run_id: &str, max: u32) -> u32 {
    let mut h: u32 = 2166136261;
    for b in run_id.bytes() {
        h = (h ^ u32::from(b)).wrapping_mul(16777619);
    }
    1 + h % max
}

/// Polls `matched` (a middleware's current count of matched endpoints)
/// every 5 ms until it reaches `want`; the last count on timeout or cancel.
pub fn wait_count(
    want: usize,
    timeout: Duration,
    cancel: &CancelToken,
    mut matched: impl FnMut() -> i32,
) -> Result<(), i32> {
    let start = Instant::now();
    loop {
        let n = matched();
        if usize::try_from(n).is_ok_and(|n| n >= want) {
            return Ok(());
        }
        if cancel.is_cancelled() || start.elapsed() >= timeout {
            return Err(n);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_cleaned_and_domains_stay_in_range() {
        assert_eq!(topic("ct12-0-order", "echo0"), "pp_ct12_0_order_echo0");
        assert_eq!(topic("a<b>", "x,y"), "pp_a_b__x_y");
        assert!((0..500).all(|i| (1..=230).contains(&domain(&format!("r{i}"), 230))));
    }

    #[test]
    fn a_count_that_never_comes_returns_the_last_one() {
        let c = CancelToken::new();
        assert_eq!(wait_count(2, Duration::from_millis(20), &c, || 1), Err(1));
        assert_eq!(wait_count(1, Duration::from_secs(5), &c, || 1), Ok(()));
        c.cancel();
        assert_eq!(wait_count(1, Duration::from_secs(5), &c, || 0), Err(0));
    }
}
