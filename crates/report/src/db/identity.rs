//! A run's identity in the store, so that a run imported twice (a JSON
//! file imported again, a host's SQLite file moved into the lab's
//! PostgreSQL store after some of its runs were) is stored once.
//!
//! The identity is a SHA-256 digest of what makes a measurement that one:
//! when it started, what it measured (its cell: binding, transport, test,
//! size, QoS and the settings that make a cell, [`crate::key::CellKey`])
//! and the figures it got (percentiles with the histogram, rates). Two
//! runs with the same start, cell and figures are one run saved twice;
//! the rest of a run's JSON (other settings, resources, errors) is left
//! out, so that a run written by another version of the tool, with fields
//! added since, is still recognised. Digests are made by this version from
//! each run as it reads it (stored rows without one are given theirs when
//! the store is opened): a version that reads runs differently must
//! recompute them.

use pubsubperf_core::graph_result::GraphRun;
use pubsubperf_core::result::Run;
use sha2::{Digest, Sha256};

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn digest(key: &serde_json::Value) -> String {
    hex(&Sha256::digest(key.to_string().as_bytes()))
}

/// A run's identity.
pub fn run(r: &Run) -> String {
    let cell = crate::key::CellKey::of(r);
    digest(&serde_json::json!({
        "started_at": r.started_at,
        "binding": cell.binding,
        "transport": cell.transport,
        "test": cell.test,
        "size": cell.size,
        "reliable": cell.reliable,
        "zero_copy": cell.zero_copy,
        "data_type": cell.data_type,
        "settings": cell.essentials,
        "latency_ns": r.latency_ns,
        "throughput": r.throughput,
    }))
}

/// A topology run's identity.
pub fn graph(g: &GraphRun) -> String {
    digest(&serde_json::json!({
        "started": g.started,
        "name": g.name,
        "binding": g.binding,
        "transport": g.transport,
        "hops": g.hops,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pubsubperf_core::result::TestKind;

    fn measured() -> Run {
        crate::fixture::run(
            TestKind::Latency,
            "udp",
            64,
            serde_json::json!({"started_at": "2026-12-07T10:00:00Z", "latency_ns": {
                "count": 10, "mean": 1.0, "std": 0.0, "min": 1, "max": 9, "p50": 5,
                "p90": 7, "p99": 9, "p99_9": 9, "p99_99": 9, "p99_9999": 9, "histogram": ""}}),
        )
    }

    #[test]
    fn a_run_is_itself_whatever_else_changed_in_its_json() {
        let a = measured();
        let mut b = a.clone();
        b.error = Some("written by a later version".into());
        b.config = serde_json::json!({"run_id": 7, "duration_ns": 1});
        b.resources.publisher.max_rss_kib = 1;
        assert_eq!(run(&a), run(&b));
        assert_eq!(run(&a).len(), 64);
    }

    #[test]
    fn another_start_figure_or_cell_is_another_run() {
        let a = measured();
        let mut later = a.clone();
        later.started_at = "2026-12-07T10:00:01Z".into();
        let mut slower = a.clone();
        if let Some(l) = slower.latency_ns.as_mut() {
            l.p50 += 1;
        }
        let mut paced = a.clone();
        paced.config = serde_json::json!({"rate": 100.0});
        assert_ne!(run(&a), run(&later));
        assert_ne!(run(&a), run(&slower));
        assert_ne!(run(&a), run(&paced), "another cell");
    }
}
