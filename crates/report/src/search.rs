//! The throughput search (`--find-max`, and the quick comparison's
//! best-effort throughput): its record in a run's `config.find_max`, which
//! of a searched run's settings are the search's outputs, and the report's
//! table of its trials.
//!
//! A searched run is the search's best trial. Its `rate` is the rate the
//! search settled on and `find_max.found` / `find_max.trials` what it
//! tried: results of the measurement, not settings of it, so they are
//! neither part of a cell's identity nor of a series label.

use crate::error::{ReportError, Result};
use crate::svg::esc;
use pubsubperf_core::result::{Run, SearchRecord, Trial};
use pubsubperf_core::size::format_size;
use serde::Deserialize;
use std::fmt::Write as _;

/// The config key of the search's record.
pub const RECORD: &str = "find_max";

/// The search recorded in a run, if the run is a search's.
pub fn record(run: &Run) -> Result<Option<SearchRecord>> {
    let Some(v) = run.config.get(RECORD) else {
        return Ok(None);
    };
    SearchRecord::deserialize(v)
        .map(Some)
        .map_err(|source| ReportError::SearchRecord {
            context: format!("{} {} {} B", run.binding, run.test, run.size),
            source,
        })
}

/// True for a flattened config key that a search produced rather than was
/// given: the settled `rate` and the record's `found` and `trials`. The
/// bound and the trial limit (`find_max.max_loss_percent`,
/// `find_max.max_trials`) are settings.
pub fn is_output(key: &str) -> bool {
    key == "rate" || key == "find_max.found" || key.starts_with("find_max.trials")
}

/// True when a flattened config holds a search's record.
pub fn searched<'a>(mut keys: impl Iterator<Item = &'a String>) -> bool {
    keys.any(|k| k.starts_with("find_max."))
}

/// The trials of one series' searches as a table: one row per trial, per
/// size and repetition. `cells` are (sample size, the searches of its
/// repetitions). Empty when no cell was searched.
pub fn table(label: &str, color: &str, cells: &[(usize, &[SearchRecord])]) -> String {
    let Some(first) = cells.iter().find_map(|(_, s)| s.first()) else {
        return String::new();
    };
    let mut h = String::new();
    let _ = writeln!(
        h,
        "<table class=\"num search\">\n<caption><span class=\"sw\" style=\"background:{color}\"></span>Throughput search: {} (the highest rate with loss ≤ {} %, at most {} trials)</caption>\n<thead><tr><th>size</th><th>run</th><th>trial</th><th>offered /s</th><th>sent /s</th><th>received /s</th><th>lost %</th><th>within the bound</th></tr></thead>\n<tbody>",
        esc(label),
        first.max_loss_percent,
        first.max_trials
    );
    for (size, searches) in cells {
        for (run, s) in searches.iter().enumerate() {
            for (i, t) in s.trials.iter().enumerate() {
                h.push_str(&row(*size, run + 1, i + 1, t));
            }
            if !s.found {
                let _ = writeln!(
                    h,
                    "<tr><td>{}</td><td>{}</td><td colspan=\"6\">no trial within the bound: no throughput figure</td></tr>",
                    format_size(*size),
                    run + 1
                );
            }
        }
    }
    h.push_str("</tbody>\n</table>\n");
    h
}

fn row(size: usize, run: usize, trial: usize, t: &Trial) -> String {
    let offered = if t.target_rate > 0.0 {
        format!("{:.0}", t.target_rate)
    } else {
        "as fast as accepted".into()
    };
    format!(
        "<tr><td>{}</td><td>{run}</td><td>{trial}</td><td>{offered}</td><td>{:.0}</td><td>{:.0}</td><td>{:.4}</td><td>{}</td></tr>\n",
        format_size(size),
        t.sent_per_s,
        t.received_per_s,
        t.lost_percent,
        if t.ok { "yes" } else { "no" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::CellKey;

    fn run(config: serde_json::Value) -> Run {
        serde_json::from_value(serde_json::json!({
            "binding": "udp", "transport": "udp", "test": "throughput", "size": 1024,
            "zero_copy": false, "data_type": "bytes", "reliable": false, "config": config,
            "resources": {"publisher": {"cpu_percent": 1.0, "max_rss_kib": 1, "voluntary_cs": 0, "involuntary_cs": 0},
                          "subscriber": {"cpu_percent": 1.0, "max_rss_kib": 1, "voluntary_cs": 0, "involuntary_cs": 0}}
        }))
        .unwrap()
    }

    fn searched() -> serde_json::Value {
        serde_json::json!({"rate": 20000.0, "find_max": {"max_loss_percent": 0.1, "max_trials": 6,
            "found": true, "trials": [
                {"target_rate": 0.0, "sent_per_s": 100000.0, "received_per_s": 55000.0, "lost_percent": 45.0, "ok": false},
                {"target_rate": 20000.0, "sent_per_s": 20000.0, "received_per_s": 19990.0, "lost_percent": 0.05, "ok": true}]}})
    }

    #[test]
    fn reads_the_record() {
        let s = record(&run(searched())).unwrap().unwrap();
        assert!(s.found);
        assert_eq!(s.trials.len(), 2);
        assert_eq!(s.trials[1].target_rate, 20000.0);
        assert_eq!(
            record(&run(serde_json::json!({"rate": 0.0}))).unwrap(),
            None
        );
        let bad = record(&run(serde_json::json!({"find_max": {"trials": 3}})));
        assert!(
            matches!(bad, Err(ReportError::SearchRecord { .. })),
            "{bad:?}"
        );
    }

    #[test]
    fn outputs_are_the_settled_rate_and_the_trials() {
        assert!(is_output("rate"));
        assert!(is_output("find_max.found"));
        assert!(is_output("find_max.trials"));
        assert!(!is_output("find_max.max_loss_percent"));
        assert!(!is_output("endpoint.batch_bytes"));
    }

    #[test]
    fn searches_settling_on_different_rates_are_one_cell() {
        let settled = |rate: f64| {
            let mut c = searched();
            c["rate"] = serde_json::json!(rate);
            c["find_max"]["trials"][1]["target_rate"] = serde_json::json!(rate);
            CellKey::of(&run(c))
        };
        let a = settled(20_000.0);
        assert_eq!(a, settled(21_000.0));
        assert_eq!(a.essentials["find_max.max_loss_percent"], "0.1");
        assert!(!a.essentials.contains_key("rate"));
        assert!(!a.essentials.contains_key("find_max.trials"));
        // Without a search the rate is a setting.
        let paced = CellKey::of(&run(serde_json::json!({"rate": 20000.0})));
        assert_eq!(paced.essentials["rate"], "20000.0");
    }

    #[test]
    fn table_has_a_row_per_trial() {
        let s = record(&run(searched())).unwrap().unwrap();
        let h = table("udp", "#1f77b4", &[(1024, std::slice::from_ref(&s))]);
        assert!(
            h.contains(
                "Throughput search: udp (the highest rate with loss ≤ 0.1 %, at most 6 trials)"
            ),
            "{h}"
        );
        assert_eq!(h.matches("<tr><td>1KiB</td>").count(), 2, "{h}");
        assert!(h.contains("<td>as fast as accepted</td><td>100000</td><td>55000</td><td>45.0000</td><td>no</td>"), "{h}");
        assert!(
            h.contains("<td>20000</td><td>20000</td><td>19990</td><td>0.0500</td><td>yes</td>"),
            "{h}"
        );
        assert_eq!(table("udp", "#000", &[(1024, &[])]), "");
    }
}
