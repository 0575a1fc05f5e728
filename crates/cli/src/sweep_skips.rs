//! The cells a sweep skipped, by reason (a binding not built here or not
//! available on this machine, or one that cannot run a cell's settings),
//! for the tally printed when the sweep ends.

/// Skipped cells, each once (every repetition of a cell is skipped alike),
/// grouped by reason in the order the reasons came.
#[derive(Debug, Default)]
pub(crate) struct Skips {
    reasons: Vec<(String, Vec<String>)>,
}

impl Skips {
    /// Records that cell `key` was skipped for `why`.
    pub(crate) fn add(&mut self, key: &str, why: &str) {
        let at = match self.reasons.iter().position(|(r, _)| r == why) {
            Some(i) => i,
            None => {
                self.reasons.push((why.to_string(), Vec::new()));
                self.reasons.len() - 1
            }
        };
        let keys = &mut self.reasons[at].1;
        if !keys.iter().any(|k| k == key) {
            keys.push(key.to_string());
        }
    }

    /// Cells skipped.
    pub(crate) fn cells(&self) -> usize {
        self.reasons.iter().map(|(_, k)| k.len()).sum()
    }

    /// The tally: `N cells skipped:` and a line per reason, or nothing when
    /// no cell was skipped.
    pub(crate) fn tally(&self) -> String {
        let n = self.cells();
        if n == 0 {
            return String::new();
        }
        let mut out = format!("{n} {} skipped:\n", cells_word(n));
        for (why, keys) in &self.reasons {
            out += &format!("  {} {}: {why}\n", keys.len(), cells_word(keys.len()));
        }
        out
    }
}

fn cells_word(n: usize) -> &'static str {
    if n == 1 { "cell" } else { "cells" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_counted_once_and_grouped_by_reason() {
        let mut s = Skips::default();
        assert_eq!(s.tally(), "");
        let off = "--binding connext: not available on this machine: no libnddsc";
        s.add("latency/connext/size=64", off);
        s.add("latency/connext/size=1024", off);
        s.add("latency/mock/size=1073741824", "--size 1073741824: too big");
        // The second repetition of a skipped cell is the same cell.
        s.add("latency/connext/size=64", off);
        assert_eq!(s.cells(), 3);
        assert_eq!(
            s.tally(),
            format!("3 cells skipped:\n  2 cells: {off}\n  1 cell: --size 1073741824: too big\n")
        );
    }
}
