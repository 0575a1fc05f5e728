//! Maximum throughput search (RFC 2544 style): instead of the user trying
//! sending rates by hand, find the highest rate whose loss stays at or under
//! a bound.
//!
//! Method:
//! 1. A first trial sends as fast as possible. If its loss is within the
//!    bound, that is the answer (the binding or its flow control limits the
//!    rate, not loss): reliable bindings end here.
//! 2. Otherwise the publisher's achieved sending rate of that trial is the
//!    upper bound `hi` and 0 the lower bound `lo`. The second trial sends at
//!    the rate the receiver kept up with in the first (its received rate),
//!    the likeliest neighbourhood of the answer; each further trial sends
//!    at `(lo + hi) / 2`. A trial within the bound raises `lo`, one above it
//!    lowers `hi`.
//! 3. The search stops when `hi - lo` is within `resolution` (relative to
//!    `hi`) or after `max_trials`. The answer is the best trial within the
//!    bound (the highest measured received rate; of equal ones, the highest
//!    sending rate), or none if every trial lost too much.

/// One trial of the search (recorded in the run's `config.find_max`).
pub use pubsubperf_core::result::Trial;

/// Search parameters.
#[derive(Debug, Clone, Copy)]
pub struct SearchParams {
    /// Highest acceptable loss, percent.
    pub max_loss_percent: f64,
    /// Stop when the bracket is this narrow, relative (0.02 = 2 %).
    pub resolution: f64,
    /// At most this many trials.
    pub max_trials: usize,
}

impl Default for SearchParams {
    fn default() -> Self {
        SearchParams {
            max_loss_percent: 0.0,
            resolution: 0.02,
            max_trials: 12,
        }
    }
}

/// Runs the search. `trial(rate)` measures one trial (rate 0 = as fast as
/// possible) and returns `(sent_per_s, received_per_s, lost_percent)`, or
/// `None` when the run failed (the search stops). Returns every trial and
/// the index of the best one within the bound.
pub fn find_max(
    params: SearchParams,
    mut trial: impl FnMut(f64) -> Option<(f64, f64, f64)>,
) -> (Vec<Trial>, Option<usize>) {
    let mut trials = Vec::new();
    let mut best: Option<usize> = None;
    let record =
        |trials: &mut Vec<Trial>, best: &mut Option<usize>, target: f64, r: (f64, f64, f64)| {
            let ok = r.2 <= params.max_loss_percent;
            trials.push(Trial {
                target_rate: target,
                sent_per_s: r.0,
                received_per_s: r.1,
                lost_percent: r.2,
                ok,
            });
            let i = trials.len() - 1;
            // The most received; of equals, the highest rate sent.
            let better = |b: &Trial| (b.received_per_s, b.sent_per_s) < (r.1, r.0);
            if ok && best.is_none_or(|b| better(&trials[b])) {
                *best = Some(i);
            }
            ok
        };
    let Some(first) = trial(0.0) else {
        return (trials, best);
    };
    if record(&mut trials, &mut best, 0.0, first) {
        return (trials, best);
    }
    let mut hi = first.0;
    let mut lo = 0.0f64;
    // The receiver's pace while overrun, when it is inside the bracket.
    let mut guess = Some(first.1).filter(|r| *r > 0.0 && *r < hi);
    while trials.len() < params.max_trials && hi > 0.0 && (hi - lo) / hi > params.resolution {
        let mid = guess.take().unwrap_or((lo + hi) / 2.0);
        let Some(r) = trial(mid) else { break };
        if record(&mut trials, &mut best, mid, r) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (trials, best)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic link: it carries up to `cap` samples/s without loss
    /// and drops the excess.
    fn link(cap: f64) -> impl FnMut(f64) -> Option<(f64, f64, f64)> {
        move |rate| {
            let sent = if rate == 0.0 { 3.0 * cap } else { rate };
            let received = sent.min(cap);
            Some((sent, received, (sent - received) * 100.0 / sent))
        }
    }

    #[test]
    fn finds_the_capacity_within_resolution() {
        let (trials, best) = find_max(SearchParams::default(), link(100_000.0));
        let b = &trials[best.unwrap()];
        assert!(b.ok && b.lost_percent == 0.0);
        assert!(
            b.received_per_s <= 100_000.0 && b.received_per_s >= 98_000.0,
            "{b:?}"
        );
        assert!(trials.len() <= 12);
    }

    #[test]
    fn the_second_trial_is_at_the_received_rate_of_the_first() {
        let p = SearchParams {
            max_trials: 3,
            ..Default::default()
        };
        let (trials, best) = find_max(p, link(100_000.0));
        // Unpaced: 300k sent, 100k received; then 100k (no loss), then the
        // middle of 100k..300k (loss).
        let targets: Vec<f64> = trials.iter().map(|t| t.target_rate).collect();
        assert_eq!(targets, [0.0, 100_000.0, 200_000.0]);
        assert_eq!(best, Some(1));
    }

    #[test]
    fn lossless_at_full_speed_stops_at_once() {
        let (trials, best) = find_max(SearchParams::default(), |_| Some((5e5, 5e5, 0.0)));
        assert_eq!(trials.len(), 1);
        assert_eq!(best, Some(0));
    }

    #[test]
    fn loss_bound_allows_more() {
        let p = SearchParams {
            max_loss_percent: 10.0,
            ..Default::default()
        };
        let (trials, best) = find_max(p, link(100_000.0));
        let b = &trials[best.unwrap()];
        // Up to 10 % loss allowed: sending ~111k/s to a 100k/s link qualifies.
        assert!(b.target_rate > 100_000.0 && b.lost_percent <= 10.0, "{b:?}");
    }

    #[test]
    fn failed_trial_stops() {
        let (trials, best) = find_max(SearchParams::default(), |_| None);
        assert!(trials.is_empty() && best.is_none());
    }
}
