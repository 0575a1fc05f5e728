//! BASE versus NEW: cells are matched by their [`CellKey`]; runs of the
//! same cell on one side are repetitions. Each side's repetitions are
//! merged exactly for the figures (p50, p99, samples/s, ...), and the
//! per-repetition values (p50 for latency, samples/s for throughput) go
//! into Welch's t-test. `--fail-if` conditions are checked on the merged
//! figures of every matched cell. Topology runs are matched apart
//! ([`crate::graph_compare`]): by topology, then path and topic.

use crate::error::Result;
use crate::failif::{Condition, Metric};
use crate::graph_compare::{GraphsCompared, compare_graphs};
use crate::key::{CellKey, NON_ESSENTIAL, flatten};
use crate::merge::{group_by_cell, merge_runs};
use crate::stat::{TTest, welch};
use pubsubperf_core::environment::Environment;
use pubsubperf_core::result::{ResultsFile, Run};
use std::collections::BTreeMap;

/// One matched cell.
#[derive(Debug, Clone)]
pub struct CellComparison {
    /// The cell.
    pub key: CellKey,
    /// BASE's repetitions merged.
    pub base: Run,
    /// NEW's repetitions merged.
    pub new: Run,
    /// Repetitions on each side.
    pub reps: (usize, usize),
    /// The metric tested across repetitions (p50 for latency cells,
    /// samples/s for throughput cells).
    pub tested: Metric,
    /// Per-repetition values of `tested`, BASE then NEW.
    pub samples: (Vec<f64>, Vec<f64>),
    /// Welch's t-test on those values.
    pub test: TTest,
}

/// A violated `--fail-if` condition on one cell.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    /// The condition as given.
    pub condition: String,
    /// The cell's label.
    pub cell: String,
    /// What was found (e.g. `p99 changed by +12.5%`).
    pub found: String,
}

/// The whole comparison.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// Name of BASE (file name or selection).
    pub base_name: String,
    /// Name of NEW.
    pub new_name: String,
    /// Matched cells, in BASE's order.
    pub cells: Vec<CellComparison>,
    /// Cells only BASE has.
    pub only_base: Vec<CellKey>,
    /// Cells only NEW has.
    pub only_new: Vec<CellKey>,
    /// Non-essential settings that differ between the sides
    /// (`duration_ns: 1000000000 → 5000000000`).
    pub setting_differences: Vec<String>,
    /// Differences of environment (machine, kernel, binding versions).
    pub environment_differences: Vec<String>,
    /// Violated conditions.
    pub violations: Vec<Violation>,
    /// Conditions that no matched cell, path or topic could be checked
    /// against.
    pub unchecked: Vec<String>,
    /// The topology runs of both sides, matched.
    pub graphs: GraphsCompared,
}

/// Compares two results.
pub fn compare(
    base_name: &str,
    base: &ResultsFile,
    new_name: &str,
    new: &ResultsFile,
    conditions: &[Condition],
) -> Result<Comparison> {
    let base_groups = group_by_cell(&base.runs);
    let new_groups: BTreeMap<CellKey, Vec<&Run>> = group_by_cell(&new.runs).into_iter().collect();
    let mut cells = Vec::new();
    let mut only_base = Vec::new();
    let mut diffs: BTreeMap<String, (Vec<String>, Vec<String>)> = BTreeMap::new();
    for (key, b_runs) in &base_groups {
        let Some(n_runs) = new_groups.get(key) else {
            only_base.push(key.clone());
            continue;
        };
        let tested = if key.test == "throughput" {
            Metric::SamplesPerS
        } else {
            Metric::P50
        };
        let vals =
            |rs: &[&Run]| -> Vec<f64> { rs.iter().filter_map(|r| tested.value(r)).collect() };
        let samples = (vals(b_runs), vals(n_runs));
        let test = welch(&samples.0, &samples.1);
        collect_setting_diffs(b_runs, n_runs, &mut diffs);
        cells.push(CellComparison {
            key: key.clone(),
            base: merge_runs(b_runs)?,
            new: merge_runs(n_runs)?,
            reps: (b_runs.len(), n_runs.len()),
            tested,
            samples,
            test,
        });
    }
    let base_keys: std::collections::HashSet<&CellKey> =
        base_groups.iter().map(|(k, _)| k).collect();
    let only_new: Vec<CellKey> = group_by_cell(&new.runs)
        .into_iter()
        .map(|(k, _)| k)
        .filter(|k| !base_keys.contains(k))
        .collect();
    let labels = cell_labels(&cells.iter().map(|c| c.key.clone()).collect::<Vec<_>>());
    let graphs = compare_graphs(&base.graphs, &new.graphs)?;
    let mut violations = Vec::new();
    let mut unchecked = Vec::new();
    for cond in conditions {
        let mut checked = false;
        for (c, label) in cells.iter().zip(&labels) {
            if let Some((q, violated)) = cond.check(&c.base, &c.new) {
                checked = true;
                if violated {
                    violations.push(Violation {
                        condition: cond.text.clone(),
                        cell: label.clone(),
                        found: cond.describe(q),
                    });
                }
            }
        }
        for g in &graphs.graphs {
            for (label, q, violated) in g.check(cond) {
                checked = true;
                if violated {
                    violations.push(Violation {
                        condition: cond.text.clone(),
                        cell: label,
                        found: cond.describe(q),
                    });
                }
            }
        }
        if !checked {
            unchecked.push(cond.text.clone());
        }
    }
    let setting_differences = diffs
        .into_iter()
        .map(|(k, (b, n))| format!("{k}: {} → {}", b.join("|"), n.join("|")))
        .collect();
    Ok(Comparison {
        base_name: base_name.to_string(),
        new_name: new_name.to_string(),
        cells,
        only_base,
        only_new,
        setting_differences,
        environment_differences: environment_differences(&base.environment, &new.environment),
        violations,
        unchecked,
        graphs,
    })
}

fn collect_setting_diffs(
    base: &[&Run],
    new: &[&Run],
    out: &mut BTreeMap<String, (Vec<String>, Vec<String>)>,
) {
    let ignore = [
        "run_id",
        "endpoint.run_id",
        "endpoint.max_sample_size",
        "merged",
        "sweep",
    ];
    let relevant = |k: &str| {
        let top = k.split('.').next().unwrap_or(k);
        (NON_ESSENTIAL.contains(&k) || NON_ESSENTIAL.contains(&top))
            && !ignore.contains(&k)
            && !ignore.contains(&top)
    };
    let values = |rs: &[&Run]| -> BTreeMap<String, Vec<String>> {
        let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for r in rs {
            for (k, v) in flatten(&r.config) {
                if relevant(&k) {
                    let e = m.entry(k).or_default();
                    if !e.contains(&v) {
                        e.push(v);
                    }
                }
            }
        }
        m
    };
    let (b, n) = (values(base), values(new));
    for (k, bv) in &b {
        let nv = n.get(k).cloned().unwrap_or_else(|| vec!["-".into()]);
        if &nv != bv {
            let e = out.entry(k.clone()).or_default();
            for v in bv {
                if !e.0.contains(v) {
                    e.0.push(v.clone());
                }
            }
            for v in nv {
                if !e.1.contains(&v) {
                    e.1.push(v);
                }
            }
        }
    }
}

fn environment_differences(a: &Environment, b: &Environment) -> Vec<String> {
    let mut out = Vec::new();
    let mut field = |name: &str, x: &str, y: &str| {
        if x != y {
            out.push(format!("{name}: {x} → {y}"));
        }
    };
    field("host", &a.hostname, &b.hostname);
    field("cpu", &a.cpu_model, &b.cpu_model);
    field("architecture", &a.arch, &b.arch);
    field(
        "emulated",
        a.emulated.as_deref().unwrap_or("no"),
        b.emulated.as_deref().unwrap_or("no"),
    );
    field("cores", &a.cores.to_string(), &b.cores.to_string());
    field("kernel", &a.kernel, &b.kernel);
    field("os", &a.os, &b.os);
    for (k, v) in &a.bindings {
        if let Some(w) = b.bindings.get(k) {
            field(&format!("{k} version"), v, w);
        }
    }
    out
}

/// Short labels of cells: the series label, the test when the cells are
/// of several, and the size.
pub fn cell_labels(keys: &[CellKey]) -> Vec<String> {
    let series: Vec<_> = keys.iter().map(CellKey::series).collect();
    let mut uniq = series.clone();
    uniq.sort();
    uniq.dedup();
    let labels = crate::label::series_labels(&uniq);
    let tests_differ = keys.iter().any(|k| k.test != keys[0].test);
    keys.iter()
        .zip(&series)
        .map(|(k, s)| {
            let i = uniq.iter().position(|u| u == s).unwrap_or(0);
            let test = if tests_differ {
                format!(" {}", k.test)
            } else {
                String::new()
            };
            format!(
                "{}{test} {}",
                labels[i],
                pubsubperf_core::size::format_size(k.size)
            )
        })
        .collect()
}
