//! The axes one command may list (issue 47): the rate, the subscribers,
//! the publishers and the topics of each run, read from its `config`, and which of them
//! differ among the runs of a table (those get a column, as the size has
//! one). A throughput search's rate is its result, not an axis.

use crate::search;
use pubsubperf_core::rate::format_rate;
use pubsubperf_core::result::Run;

/// A run's values on the listed axes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Axes {
    /// Samples per second (0: max, no limit); None for a search's run,
    /// whose rate is what it found.
    pub rate: Option<f64>,
    /// Subscribers.
    pub subscribers: u64,
    /// Publishers.
    pub publishers: u64,
    /// Topics side by side (`--topics`).
    pub topics: u64,
}

impl Axes {
    /// The values of `run` (results written before publishers were
    /// recorded have one).
    pub fn of(run: &Run) -> Axes {
        let c = &run.config;
        let searched = c.get(search::RECORD).is_some();
        Axes {
            rate: (!searched).then(|| c["rate"].as_f64().unwrap_or(0.0)),
            subscribers: c["subscribers"].as_u64().unwrap_or(1),
            publishers: c["publishers"].as_u64().unwrap_or(1),
            topics: c["topics"].as_u64().unwrap_or(1),
        }
    }

    /// The values other than the defaults (one subscriber and publisher,
    /// no rate limit) in words, e.g. `at 1k/s, 4 subscribers`; empty
    /// when all are defaults.
    pub fn note(&self) -> String {
        let mut parts = Vec::new();
        if let Some(r) = self.rate.filter(|&r| r > 0.0) {
            parts.push(format!("at {}", format_rate(r)));
        }
        if self.subscribers != 1 {
            parts.push(format!("{} subscribers", self.subscribers));
        }
        if self.publishers != 1 {
            parts.push(format!("{} publishers", self.publishers));
        }
        if self.topics != 1 {
            parts.push(format!("{} topics", self.topics));
        }
        parts.join(", ")
    }
}

/// Which axes differ among a table's runs: each gets a column.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AxisColumns {
    /// A rate column.
    pub rate: bool,
    /// A subscribers column.
    pub subscribers: bool,
    /// A publishers column.
    pub publishers: bool,
    /// A topics column.
    pub topics: bool,
}

impl AxisColumns {
    /// The columns that `runs` differ in.
    pub fn of<'a>(runs: impl IntoIterator<Item = &'a Run>) -> AxisColumns {
        let axes: Vec<Axes> = runs.into_iter().map(Axes::of).collect();
        let differ = |f: &dyn Fn(&Axes) -> String| axes.iter().any(|a| f(a) != f(&axes[0]));
        AxisColumns {
            rate: differ(&|a| format!("{:?}", a.rate)),
            subscribers: differ(&|a| a.subscribers.to_string()),
            publishers: differ(&|a| a.publishers.to_string()),
            topics: differ(&|a| a.topics.to_string()),
        }
    }

    /// The columns' headers: `Rate`, `Subs`, `Pubs`, `Topics`.
    pub fn headers(&self) -> Vec<&'static str> {
        let mut h = Vec::new();
        if self.rate {
            h.push("Rate");
        }
        if self.subscribers {
            h.push("Subs");
        }
        if self.publishers {
            h.push("Pubs");
        }
        if self.topics {
            h.push("Topics");
        }
        h
    }

    /// A run's cells under [`AxisColumns::headers`] (`-` for a search's rate).
    pub fn cells(&self, run: &Run) -> Vec<String> {
        let a = Axes::of(run);
        let mut c = Vec::new();
        if self.rate {
            c.push(a.rate.map_or("-".into(), format_rate));
        }
        if self.subscribers {
            c.push(a.subscribers.to_string());
        }
        if self.publishers {
            c.push(a.publishers.to_string());
        }
        if self.topics {
            c.push(a.topics.to_string());
        }
        c
    }

    /// The headers, each right-aligned in `width` and followed by a space
    /// (empty when no axis differs): a prefix of a fixed-width table's
    /// header line.
    pub fn header_prefix(&self, width: usize) -> String {
        self.headers()
            .iter()
            .map(|h| format!("{h:>width$} "))
            .collect()
    }

    /// A run's cells as [`AxisColumns::header_prefix`] aligns them.
    pub fn row_prefix(&self, run: &Run, width: usize) -> String {
        self.cells(run)
            .iter()
            .map(|c| format!("{c:>width$} "))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(config: serde_json::Value) -> Run {
        serde_json::from_value(serde_json::json!({
            "binding": "udp", "transport": "udp", "test": "latency", "size": 64,
            "zero_copy": false, "data_type": "bytes", "reliable": false, "config": config,
            "resources": {"publisher": {"cpu_percent": 1.0, "max_rss_kib": 1, "voluntary_cs": 0, "involuntary_cs": 0},
                          "subscriber": {"cpu_percent": 1.0, "max_rss_kib": 1, "voluntary_cs": 0, "involuntary_cs": 0}}
        }))
        .unwrap()
    }

    #[test]
    fn columns_for_what_differs() {
        let runs = [
            run(serde_json::json!({"rate": 100.0, "subscribers": 1})),
            run(serde_json::json!({"rate": 0.0, "subscribers": 1})),
        ];
        let cols = AxisColumns::of(&runs);
        assert_eq!(cols.headers(), ["Rate"]);
        assert_eq!(cols.cells(&runs[0]), ["100/s"]);
        assert_eq!(cols.cells(&runs[1]), ["max"]);
        assert_eq!(cols.header_prefix(6), "  Rate ");
        let runs = [
            run(serde_json::json!({"rate": 0.0, "subscribers": 1, "publishers": 1})),
            run(serde_json::json!({"rate": 0.0, "subscribers": 4, "publishers": 2})),
        ];
        let cols = AxisColumns::of(&runs);
        assert_eq!(cols.headers(), ["Subs", "Pubs"]);
        assert_eq!(cols.row_prefix(&runs[1], 4), "   4    2 ");
        assert_eq!(AxisColumns::of(&runs[..1]).headers(), Vec::<&str>::new());
        assert_eq!(Axes::of(&runs[1]).note(), "4 subscribers, 2 publishers");
        assert_eq!(
            Axes::of(&run(serde_json::json!({"rate": 1000.0}))).note(),
            "at 1k/s"
        );
    }

    #[test]
    fn a_searched_rate_is_no_axis() {
        let runs = [
            run(serde_json::json!({"rate": 100.0, "find_max": {"found": true}})),
            run(serde_json::json!({"rate": 200.0, "find_max": {"found": true}})),
        ];
        assert_eq!(AxisColumns::of(&runs).headers(), Vec::<&str>::new());
        assert_eq!(Axes::of(&runs[0]).note(), "");
    }
}
