//! The identity of a measurement cell: what two runs must share to be
//! repetitions of the same measurement (for merging, comparing and
//! plotting as one series point).
//!
//! A cell is the binding, transport, test, size, reliability, zero copy and
//! data type, plus the *essential* settings of the run's `config`: the ones
//! that change what is measured (wait mode, rate, subscribers, echo
//! fraction, one-way mode, multicast, IPv6, batching, queues, socket
//! buffers, binding options, the peer binding). Settings that change only
//! how long or where a run measures (duration, count, warm-up, timeouts,
//! CPU pinning, priority, mlock) are *not* part of the identity: runs
//! differing only in those still match, and `compare` lists the
//! differences so that nobody is misled. A throughput search's outputs
//! (the rate it settled on, its trials) are results, not settings, and not
//! part of the identity either ([`crate::search::is_output`]).

use crate::search;
use pubsubperf_core::result::{Run, TestKind};
use std::collections::BTreeMap;

/// Config keys (flattened with dots) that are not part of a cell's identity.
pub const NON_ESSENTIAL: &[&str] = &[
    "run_id",
    "endpoint.run_id",
    "endpoint.max_sample_size",
    "endpoint.bind_ip",
    "endpoint.cancel",
    "endpoint.reliable_block_timeout_ms",
    "duration_ns",
    "count",
    "warmup_ns",
    "recovery_ms",
    "echo_timeout_ms",
    "interval_ms",
    "pub_cpu",
    "sub_cpu",
    "rt_priority",
    "mlock",
    "subscriber_index",
    "merged",
    "sweep",
    // Derived from the settings above (Binding::deviations), and absent
    // from results written before it was recorded.
    "deviations",
];

/// The setting a cell gains when its middleware batched by its own default
/// (zenoh's throughput data, `config.deviations` says `batched`), which no
/// batch size in the config records: such a run measures batched sends.
pub const BATCHED: &str = pubsubperf_core::binding::BATCHED_BY_DEFAULT;

/// True when the run's recorded deviations say `batched` without a size.
fn batched_by_default(run: &Run) -> bool {
    run.config["deviations"]
        .as_array()
        .is_some_and(|d| d.iter().any(|x| x.as_str() == Some(BATCHED)))
}

/// Config keys already carried by the run's own fields.
const IN_RUN_FIELDS: &[&str] = &[
    "binding",
    "test",
    "size",
    "endpoint.transport",
    "endpoint.reliability",
    "endpoint.zero_copy",
    "endpoint.data_type",
];

/// What makes two runs the same measurement.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CellKey {
    /// Binding name.
    pub binding: String,
    /// Transport within the binding.
    pub transport: String,
    /// `latency` or `throughput`.
    pub test: String,
    /// Sample size, bytes.
    pub size: usize,
    /// Reliable delivery.
    pub reliable: bool,
    /// Zero copy.
    pub zero_copy: bool,
    /// Data type.
    pub data_type: String,
    /// Essential config settings, flattened (`endpoint.wait` = `"block"`).
    pub essentials: BTreeMap<String, String>,
}

impl CellKey {
    /// The key of a run.
    pub fn of(run: &Run) -> CellKey {
        let mut essentials = flatten(&run.config);
        // A search's outputs are results of the measurement: repetitions of
        // a search settle on different rates yet measure the same thing.
        let searched = search::searched(essentials.keys());
        essentials.retain(|k, _| is_essential(k) && !(searched && search::is_output(k)));
        if batched_by_default(run) {
            essentials.insert(BATCHED.into(), "true".into());
        }
        CellKey {
            binding: run.binding.clone(),
            transport: run.transport.clone(),
            test: run.test.to_string(),
            size: run.size,
            reliable: run.reliable,
            zero_copy: run.zero_copy,
            data_type: run.data_type.clone(),
            essentials,
        }
    }

    /// The same key without the size: a series of a plot or table.
    pub fn series(&self) -> SeriesKey {
        SeriesKey {
            binding: self.binding.clone(),
            transport: self.transport.clone(),
            test: self.test.clone(),
            reliable: self.reliable,
            zero_copy: self.zero_copy,
            data_type: self.data_type.clone(),
            essentials: self.essentials.clone(),
        }
    }

    /// A short human label: `udp/udp latency 64 B best-effort bytes`.
    pub fn label(&self) -> String {
        format!(
            "{}/{} {} {} {}",
            self.binding,
            self.transport,
            self.test,
            pubsubperf_core::size::format_size(self.size),
            qos_label(self.reliable, self.zero_copy, &self.data_type)
        )
    }
}

/// A cell key without the size: one line of a plot.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SeriesKey {
    /// Binding name.
    pub binding: String,
    /// Transport.
    pub transport: String,
    /// Test kind.
    pub test: String,
    /// Reliable delivery.
    pub reliable: bool,
    /// Zero copy.
    pub zero_copy: bool,
    /// Data type.
    pub data_type: String,
    /// Essential settings.
    pub essentials: BTreeMap<String, String>,
}

/// `reliable`, `best-effort`, with `zero-copy` and the data type.
pub fn qos_label(reliable: bool, zero_copy: bool, data_type: &str) -> String {
    let mut s = String::from(if reliable { "reliable" } else { "best-effort" });
    if zero_copy {
        s.push_str(" zero-copy");
    }
    s.push(' ');
    s.push_str(data_type);
    s
}

fn is_essential(k: &str) -> bool {
    let top = k.split('.').next().unwrap_or(k);
    !NON_ESSENTIAL.contains(&k)
        && !NON_ESSENTIAL.contains(&top)
        && !IN_RUN_FIELDS.contains(&k)
        && !k.starts_with("endpoint.cancel")
}

/// Flattens a JSON object into `a.b.c` = compact value text (strings
/// without quotes). Objects nest; arrays and scalars are leaves. An empty
/// object (e.g. no binding options) is a leaf `{}` so that it is compared too.
pub fn flatten(v: &serde_json::Value) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    fn walk(prefix: &str, v: &serde_json::Value, out: &mut BTreeMap<String, String>) {
        match v {
            serde_json::Value::Object(m) if !m.is_empty() => {
                for (k, x) in m {
                    let p = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(&p, x, out);
                }
            }
            serde_json::Value::String(s) => {
                out.insert(prefix.to_string(), s.clone());
            }
            other => {
                if !prefix.is_empty() {
                    out.insert(prefix.to_string(), other.to_string());
                }
            }
        }
    }
    walk("", v, &mut out);
    out
}

/// The test kind from its name.
pub fn test_kind(s: &str) -> Option<TestKind> {
    match s {
        "latency" => Some(TestKind::Latency),
        "throughput" => Some(TestKind::Throughput),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flattens_nested_config() {
        let f =
            flatten(&serde_json::json!({"a": 1, "e": {"wait": "busy", "options": {}}, "n": null}));
        assert_eq!(f["a"], "1");
        assert_eq!(f["e.wait"], "busy");
        assert_eq!(f["e.options"], "{}");
        assert_eq!(f["n"], "null");
    }

    #[test]
    fn essentials_ignore_duration_and_run_id() {
        assert!(is_essential("endpoint.wait"));
        assert!(is_essential("rate"));
        assert!(!is_essential("duration_ns"));
        assert!(!is_essential("endpoint.run_id"));
        assert!(!is_essential("sweep.cell"));
        assert!(!is_essential("endpoint.transport"));
    }
}
