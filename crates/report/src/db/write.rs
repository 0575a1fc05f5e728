//! Writing to the store: a results file saved, or another store's runs
//! imported, each group in one transaction; a run the store already has
//! (by its identity, [`super::identity`]) is not stored again.

use super::backend::{Exec, Kind, Value};
use super::{Database, SaveMeta, StoredGraph, StoredRun, identity, new_group_id, text};
use crate::error::Result;
use pubsubperf_core::environment::Environment;
use pubsubperf_core::graph_result::GraphRun;
use pubsubperf_core::result::{ResultsFile, Run};
use std::collections::BTreeMap;

/// What a save stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Saved {
    /// The run group its runs went into (not made when none was new).
    pub group: String,
    /// Runs stored.
    pub runs: usize,
    /// Topology runs stored.
    pub graphs: usize,
    /// Runs and topology runs the store already had (the same start and
    /// figures, see [`identity`]): not stored again.
    pub already: usize,
}

/// Where a run stands in a sweep.
struct Place {
    sweep: Option<String>,
    cell: Option<String>,
    repetition: u64,
}

impl Place {
    /// From `meta`, or else from the run's `config.sweep` object (`name`,
    /// `cell`, `repetition`) where the runner recorded them.
    fn of(run: &Run, meta: &SaveMeta) -> Place {
        let sw = &run.config["sweep"];
        Place {
            sweep: meta
                .sweep
                .clone()
                .or_else(|| sw["name"].as_str().map(String::from)),
            cell: meta
                .cell
                .clone()
                .or_else(|| sw["cell"].as_str().map(String::from)),
            repetition: if meta.repetition > 0 {
                u64::from(meta.repetition)
            } else {
                sw["repetition"].as_u64().unwrap_or(0)
            },
        }
    }
}

/// Who measured a run, and with what labels.
struct Origin {
    host: Option<String>,
    labels: BTreeMap<String, String>,
}

impl Origin {
    fn stored(host: &Option<String>, labels: &BTreeMap<String, String>) -> Origin {
        Origin {
            host: host.clone(),
            labels: labels.clone(),
        }
    }

    fn values(&self) -> [Value; 3] {
        [
            Value::Text(self.host.clone()),
            labels_json(&self.labels),
            Value::Text(self.labels.get("commit").cloned()),
        ]
    }
}

/// A run to save.
struct RunEntry<'a> {
    run: &'a Run,
    place: Place,
    origin: Origin,
    digest: String,
}

/// A topology run to save.
struct GraphEntry<'a> {
    graph: &'a GraphRun,
    origin: Origin,
    digest: String,
}

/// The group row of a save.
struct GroupRow<'a> {
    id: String,
    tool_version: &'a str,
    environment: &'a Environment,
    command: Option<String>,
}

/// The test hook that holds a save's transaction open after its first
/// run: `PUBSUBPERF_TEST_HOLD_SAVE_S=SECONDS` (the store tests kill a
/// writer there). Not for use: a save so held keeps its store waiting.
const HOLD_HOOK: &str = "PUBSUBPERF_TEST_HOLD_SAVE_S";

fn hold_for_test() {
    if let Some(s) = std::env::var(HOLD_HOOK)
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
    {
        eprintln!("pubsubperf: {HOLD_HOOK}: holding the store's transaction for {s} s");
        std::thread::sleep(std::time::Duration::from_secs_f64(s.max(0.0)));
    }
}

fn labels_json(labels: &BTreeMap<String, String>) -> Value {
    Value::Text((!labels.is_empty()).then(|| serde_json::to_string(labels).unwrap_or_default()))
}

impl Database {
    /// Saves every run and every topology run of a results file in one
    /// transaction; returns the run-group id. Sweep name, cell and repetition come from `meta`, or
    /// else from a run's `config.sweep` object (`name`, `cell`,
    /// `repetition`) when the runner recorded them there. A file saved
    /// into a group that exists (a sweep saves each cell as it ends, all
    /// in the invocation's group) adds its runs to it; the group keeps its
    /// first environment, with the versions of the file's bindings added.
    pub fn save(&mut self, file: &ResultsFile, meta: &SaveMeta) -> Result<String> {
        self.save_counted(file, meta).map(|s| s.group)
    }

    /// [`Database::save`], saying what was stored: a run the store already
    /// has (see [`identity`]) is not stored again, and when none of the
    /// file's runs is new, no group is made.
    pub fn save_counted(&mut self, file: &ResultsFile, meta: &SaveMeta) -> Result<Saved> {
        let origin = || Origin {
            host: Some(file.environment.hostname.clone()),
            labels: meta.labels.clone(),
        };
        let runs = file
            .runs
            .iter()
            .map(|run| RunEntry {
                run,
                place: Place::of(run, meta),
                origin: origin(),
                digest: identity::run(run),
            })
            .collect();
        let graphs = file
            .graphs
            .iter()
            .map(|graph| GraphEntry {
                graph,
                origin: origin(),
                digest: identity::graph(graph),
            })
            .collect();
        let group = GroupRow {
            id: meta.group.clone().unwrap_or_else(new_group_id),
            tool_version: &file.tool.version,
            environment: &file.environment,
            command: meta.command.clone(),
        };
        self.write(&group, runs, graphs)
    }

    /// Stores runs and topology runs read from another store, each in its
    /// group (the same group id, its runs' own sweep places, hosts and
    /// labels), a group a transaction; what the store already has is not
    /// stored again. `command` is recorded with each group made.
    pub fn import_stored(
        &mut self,
        runs: &[StoredRun],
        graphs: &[StoredGraph],
        command: &str,
    ) -> Result<Vec<Saved>> {
        let mut groups: BTreeMap<&str, (Vec<&StoredRun>, Vec<&StoredGraph>)> = BTreeMap::new();
        for r in runs {
            groups.entry(&r.group).or_default().0.push(r);
        }
        for g in graphs {
            groups.entry(&g.group).or_default().1.push(g);
        }
        let mut saved = Vec::new();
        for (id, (runs, graphs)) in groups {
            let (environment, tool_version) = match (runs.first(), graphs.first()) {
                (Some(r), _) => (&r.environment, &r.tool_version),
                (None, Some(g)) => (&g.environment, &g.tool_version),
                (None, None) => continue,
            };
            let group = GroupRow {
                id: id.to_string(),
                tool_version,
                environment,
                command: Some(command.to_string()),
            };
            let run_entries = runs
                .iter()
                .map(|r| RunEntry {
                    run: &r.run,
                    place: Place {
                        sweep: r.sweep.clone(),
                        cell: r.cell.clone(),
                        repetition: u64::from(r.repetition),
                    },
                    origin: Origin::stored(&r.host, &r.labels),
                    digest: identity::run(&r.run),
                })
                .collect();
            let graph_entries = graphs
                .iter()
                .map(|g| GraphEntry {
                    graph: &g.graph,
                    origin: Origin::stored(&g.host, &g.labels),
                    digest: identity::graph(&g.graph),
                })
                .collect();
            saved.push(self.write(&group, run_entries, graph_entries)?);
        }
        Ok(saved)
    }

    /// Writes a group's new runs in one transaction. Each identity is
    /// locked (in order, so writers at once never wait on each other in a
    /// circle) before it is looked up, so two writers of one run store it
    /// once.
    fn write(
        &mut self,
        group: &GroupRow,
        runs: Vec<RunEntry>,
        graphs: Vec<GraphEntry>,
    ) -> Result<Saved> {
        let now = crate::time::rfc3339_now();
        let env = serde_json::to_string(group.environment).unwrap_or_default();
        let total = runs.len() + graphs.len();
        let mut saved = Saved {
            group: group.id.clone(),
            runs: 0,
            graphs: 0,
            already: 0,
        };
        self.engine.get_mut().transaction(&mut |tx| {
            let mut keys: Vec<&str> = runs
                .iter()
                .map(|r| r.digest.as_str())
                .chain(graphs.iter().map(|g| g.digest.as_str()))
                .collect();
            keys.sort_unstable();
            keys.dedup();
            for k in &keys {
                tx.lock(k)?;
            }
            let mut seen = std::collections::HashSet::new();
            let mut is_new = |tx: &mut dyn Exec, table: &str, digest: &str| -> Result<bool> {
                Ok(seen.insert(format!("{table} {digest}"))
                    && tx
                        .query(
                            &format!("SELECT id FROM {table} WHERE digest = ?1 LIMIT 1"),
                            &[text(digest)],
                            &[Kind::Int],
                        )?
                        .is_empty())
            };
            let mut new_runs = Vec::new();
            for r in &runs {
                if is_new(tx, "runs", &r.digest)? {
                    new_runs.push(r);
                }
            }
            let mut new_graphs = Vec::new();
            for g in &graphs {
                if is_new(tx, "graphs", &g.digest)? {
                    new_graphs.push(g);
                }
            }
            saved.runs = new_runs.len();
            saved.graphs = new_graphs.len();
            saved.already = total - new_runs.len() - new_graphs.len();
            if total > 0 && new_runs.is_empty() && new_graphs.is_empty() {
                return Ok(());
            }
            write_group(tx, group, &env, &now)?;
            for (i, r) in new_runs.iter().enumerate() {
                let mut row = run_row(&group.id, r.run, &r.place, &now);
                row.extend(r.origin.values());
                row.push(text(&r.digest));
                tx.execute(
                    "INSERT INTO runs (group_id, time, binding, transport, test, size, reliable,
                        zero_copy, data_type, p50, p99, samples_per_s, mbps, lost_percent, rejected,
                        profile_method, complete, sweep, cell, repetition, run, host, labels,
                        commit_id, digest)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15,
                        ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25)",
                    &row,
                )?;
                if i == 0 {
                    hold_for_test();
                }
            }
            for g in new_graphs {
                let time = if g.graph.started.is_empty() {
                    &now
                } else {
                    &g.graph.started
                };
                let [host, labels, commit] = g.origin.values();
                tx.execute(
                    "INSERT INTO graphs (group_id, time, name, binding, transport, run, host,
                        labels, commit_id, digest)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                    &[
                        text(&group.id),
                        text(time),
                        text(&g.graph.name),
                        text(&g.graph.binding),
                        text(&g.graph.transport),
                        text(serde_json::to_string(g.graph).unwrap_or_default()),
                        host,
                        labels,
                        commit,
                        text(&g.digest),
                    ],
                )?;
            }
            Ok(())
        })?;
        Ok(saved)
    }

    /// Gives the runs and topology runs stored before identities were
    /// kept (schema 5 and older, or written by an older version since)
    /// theirs. A row whose JSON this version cannot read keeps none.
    pub(super) fn fill_identities(&mut self) -> Result<()> {
        use Kind::{Int, Text};
        for table in ["runs", "graphs"] {
            let rows = self.engine.get_mut().query(
                &format!("SELECT id, run FROM {table} WHERE digest IS NULL"),
                &[],
                &[Int, Text],
            )?;
            let digests: Vec<(i64, String)> = rows
                .iter()
                .filter_map(|row| {
                    let json = row[1].text()?;
                    let digest = if table == "runs" {
                        identity::run(&serde_json::from_str(&json).ok()?)
                    } else {
                        identity::graph(&serde_json::from_str(&json).ok()?)
                    };
                    Some((row[0].int(), digest))
                })
                .collect();
            if digests.is_empty() {
                continue;
            }
            self.engine.get_mut().transaction(&mut |tx| {
                for (id, d) in &digests {
                    tx.execute(
                        &format!("UPDATE {table} SET digest = ?2 WHERE id = ?1"),
                        &[Value::Int(Some(*id)), text(d)],
                    )?;
                }
                Ok(())
            })?;
        }
        Ok(())
    }
}

/// A group's stored environment with the binding versions of `env` it
/// lacks, or `None` when it lacks none (or does not parse).
fn with_bindings(stored: &str, env: &Environment) -> Option<String> {
    let mut e: Environment = serde_json::from_str(stored).ok()?;
    let before = e.bindings.len();
    for (b, v) in &env.bindings {
        e.bindings.entry(b.clone()).or_insert_with(|| v.clone());
    }
    (e.bindings.len() > before).then(|| serde_json::to_string(&e).unwrap_or_default())
}

/// A group's row: made, or (a file saved into a group that exists) its
/// environment given the versions of bindings it lacked.
fn write_group(tx: &mut dyn Exec, group: &GroupRow, env: &str, now: &str) -> Result<()> {
    let stored = tx.query(
        "SELECT environment FROM groups WHERE id = ?1",
        &[text(&group.id)],
        &[Kind::Text],
    )?;
    match stored.first().and_then(|r| r[0].text()) {
        None => {
            tx.execute(
                "INSERT INTO groups (id, time, tool_version, environment, command)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                &[
                    text(&group.id),
                    text(now),
                    text(group.tool_version),
                    text(env),
                    Value::Text(group.command.clone()),
                ],
            )?;
        }
        Some(stored) => {
            if let Some(merged) = with_bindings(&stored, group.environment) {
                tx.execute(
                    "UPDATE groups SET environment = ?2 WHERE id = ?1",
                    &[text(&group.id), text(merged)],
                )?;
            }
        }
    }
    Ok(())
}

/// A run's row of `runs`, up to its JSON (`?1` to `?21`).
fn run_row(group: &str, run: &Run, place: &Place, now: &str) -> Vec<Value> {
    let time = if run.started_at.is_empty() {
        now
    } else {
        run.started_at.as_str()
    };
    let lat = run.latency_ns.as_ref();
    let tp = run.throughput.as_ref();
    vec![
        text(group),
        text(time),
        text(&run.binding),
        text(&run.transport),
        text(run.test.to_string()),
        Value::Int(Some(run.size as i64)),
        Value::Bool(run.reliable),
        Value::Bool(run.zero_copy),
        text(&run.data_type),
        Value::Int(lat.map(|l| l.p50 as i64)),
        Value::Int(lat.map(|l| l.p99 as i64)),
        Value::Real(tp.map(|t| t.samples_per_s)),
        Value::Real(tp.map(|t| t.mbps)),
        Value::Real(tp.map(|t| t.lost_percent)),
        Value::Int(tp.map(|t| t.rejected as i64)),
        Value::Text(run.profile.as_ref().map(|p| p.publisher.method.clone())),
        Value::Bool(run.complete),
        Value::Text(place.sweep.clone()),
        Value::Text(place.cell.clone()),
        Value::Int(Some(place.repetition as i64)),
        text(serde_json::to_string(run).unwrap_or_default()),
    ]
}
