//! The axes of one command: `--size`, `--rate`, `--subscribers`,
//! `--publishers` and `--topics` each take a list, and every combination is
//! one run.
//!
//! The runs go in this order: topics, then subscribers, then publishers,
//! then size, then rate (then a `--demand` ramp's demands), the first
//! varying slowest. The subscriber and publisher processes are started once
//! per (topics, subscribers, publishers) and serve every size and rate of
//! it, as they serve every size today; only a change of those starts new
//! processes (with `--topics N`, N sessions side by side).
//!
//! A sweep file's `rate` and `subscribers` axes make one cell per value
//! instead (each cell its own command, for `--resume`); each cell's
//! command comes back through these same parsers with one value.

use super::UsageError;
use pubsubperf_core::rate::{Rate, parse_rate_list};

/// The most subscribers or publishers on one host.
pub const MAX_PEERS: usize = 64;

/// One run of a command's axes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Topics side by side (`--topics`).
    pub topics: usize,
    /// Subscribers.
    pub subscribers: usize,
    /// Publishers.
    pub publishers: usize,
    /// Sample size, bytes.
    pub size: usize,
    /// Samples per second (0: `max`, no limit).
    pub rate: Rate,
    /// The demand of a `--demand` ramp (0: none).
    pub demand: u64,
}

/// Every combination of the axes, in the order of the module's doc.
pub fn points(
    topics: &[usize],
    subscribers: &[usize],
    publishers: &[usize],
    sizes: &[usize],
    rates: &[Rate],
    demands: &[u64],
) -> Vec<Point> {
    let mut out = Vec::new();
    for &topics in topics {
        for &subscribers in subscribers {
            for &publishers in publishers {
                for &size in sizes {
                    for &rate in rates {
                        for &demand in demands {
                            out.push(Point {
                                topics,
                                subscribers,
                                publishers,
                                size,
                                rate,
                                demand,
                            });
                        }
                    }
                }
            }
        }
    }
    out
}

/// `--rate`'s list (`1,10,100,1k,10k,max`); without `--rate`, `max` alone.
pub fn rates(v: Option<&str>) -> Result<Vec<Rate>, UsageError> {
    match v {
        None => Ok(vec![0.0]),
        Some(v) => parse_rate_list(v).map_err(|e| UsageError(format!("--rate: {e}"))),
    }
}

/// A list of process counts (`--subscribers 1,2,4,8`, `--publishers`):
/// each 1 to [`MAX_PEERS`], each once.
pub fn counts(flag: &str, v: &str) -> Result<Vec<usize>, UsageError> {
    let how = format!("give counts from 1 to {MAX_PEERS} separated by commas, like 1,2,4,8");
    let mut out = Vec::new();
    for item in v.split(',') {
        let item = item.trim();
        if item.is_empty() {
            return Err(UsageError(format!("{flag} '{v}': an empty item ({how})")));
        }
        let n: usize = item
            .parse()
            .map_err(|_| UsageError(format!("{flag} '{item}': not a count ({how})")))?;
        if !(1..=MAX_PEERS).contains(&n) {
            return Err(UsageError(format!(
                "{flag} {n}: must be between 1 and {MAX_PEERS}"
            )));
        }
        if out.contains(&n) {
            return Err(UsageError(format!(
                "{flag} '{v}': {n} is given twice (give each count once)"
            )));
        }
        out.push(n);
    }
    Ok(out)
}

/// True when a setting's text is a list of more than one item.
pub fn is_list(v: &str) -> bool {
    v.contains(',')
}
