//! The results store: every run ever measured (or imported), with its
//! environment and configuration, in one SQLite file (the default) or in a
//! PostgreSQL database that many hosts write to at once
//! (`postgres://USER@HOST[:PORT]/DB`). Both hold the same model
//! ([`schema`]); what is saved and how it is read is written once, here,
//! over the engine's statements ([`backend`]).
//!
//! Layout (schema version 6, in the `schema_version` table; opening an
//! older store adds what it lacks, see [`schema::COLUMNS`]):
//! - `groups`: one row per saved results file (one invocation): id, time,
//!   tool version, environment JSON (the machine, its cores and the
//!   middleware's versions), command line.
//! - `runs`: one row per run: the whole run JSON plus indexed columns for
//!   filtering (time, binding, transport, test, size, reliable, zero_copy,
//!   data_type, p50, p99, samples_per_s, mbps, lost_percent, rejected,
//!   profile_method: the tracer of a `--profile` run), the sweep name,
//!   cell key and repetition number when the run came from a sweep, the
//!   host that measured it, the labels it was saved with (JSON) and the
//!   commit under test (the `commit` label), its identity (`digest`, see
//!   [`identity`]: a run saved or imported again is not stored twice),
//!   and the group id.
//! - `graphs`: one row per topology run (`pubsubperf topology`): the whole
//!   graph JSON plus its time, topology name, binding and transport, host,
//!   labels, commit, and the group id.
//!
//! The whole run (or graph) JSON is the source of truth: the columns are
//! copies for queries, and a run read back equals the run saved. Each
//! saved results file is one transaction: a writer killed while saving
//! leaves none of its runs.

mod backend;
mod identity;
mod write;

pub use write::Saved;
#[cfg(feature = "postgres")]
mod pg_connect;
#[cfg(feature = "postgres")]
mod postgres;
mod schema;
mod sqlite;

use crate::error::{ReportError, Result};
use backend::{Engine, Kind, Value};
use pubsubperf_core::environment::Environment;
use pubsubperf_core::graph_result::GraphRun;
use pubsubperf_core::result::{ResultsFile, Run, SCHEMA_VERSION, ToolInfo};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where and how a saved results file came about.
#[derive(Debug, Clone, Default)]
pub struct SaveMeta {
    /// Run-group id; a new one is made when absent. Runs saved with the
    /// same group belong to one invocation (a sweep, one CLI call).
    pub group: Option<String>,
    /// Sweep name, for runs of a sweep.
    pub sweep: Option<String>,
    /// Cell key within the sweep (see [`crate::sweep::Cell::key`]).
    pub cell: Option<String>,
    /// Repetition number within the cell (1-based; 0 when not a sweep).
    pub repetition: u32,
    /// The command line, for the record.
    pub command: Option<String>,
    /// Labels of the runs (`--label KEY=VALUE`, `PUBSUBPERF_LABELS`); the
    /// `commit` label names the commit under test.
    pub labels: BTreeMap<String, String>,
}

/// Which runs to select. Every field narrows the selection; a field a
/// kind of run does not have selects none of that kind (a topology run
/// has no size nor sweep, a plain run no topology name).
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Binding name.
    pub binding: Option<String>,
    /// Transport name.
    pub transport: Option<String>,
    /// `latency`, `throughput` or `topology` (topology runs only).
    pub test: Option<String>,
    /// Sample size, bytes.
    pub size: Option<usize>,
    /// RFC 3339 lower bound on the run's start time (see [`crate::time::parse_since`]).
    pub since: Option<String>,
    /// Sweep name.
    pub sweep: Option<String>,
    /// Run-group id (or a unique prefix of one).
    pub group: Option<String>,
    /// Topology name (topology runs only).
    pub name: Option<String>,
    /// Only the most recent N runs (and, apart, the most recent N topology
    /// runs).
    pub limit: Option<usize>,
}

/// A run read back from the store.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRun {
    /// Row id (stable).
    pub id: i64,
    /// Run-group id.
    pub group: String,
    /// Start time, RFC 3339.
    pub time: String,
    /// Sweep name.
    pub sweep: Option<String>,
    /// Sweep cell key.
    pub cell: Option<String>,
    /// Repetition number.
    pub repetition: u32,
    /// Tool version that measured it.
    pub tool_version: String,
    /// Environment of the run's group.
    pub environment: Environment,
    /// The host that measured it (the environment's hostname when saved).
    pub host: Option<String>,
    /// The labels it was saved with (the `commit` label: the commit under test).
    pub labels: BTreeMap<String, String>,
    /// The run as saved.
    pub run: Run,
}

/// A topology run read back from the store.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredGraph {
    /// Row id (stable; its own sequence, apart from the runs').
    pub id: i64,
    /// Run-group id.
    pub group: String,
    /// Start time, RFC 3339.
    pub time: String,
    /// Tool version that measured it.
    pub tool_version: String,
    /// Environment of the run's group.
    pub environment: Environment,
    /// The host that measured it.
    pub host: Option<String>,
    /// The labels it was saved with.
    pub labels: BTreeMap<String, String>,
    /// The graph as saved.
    pub graph: GraphRun,
}

/// An open results store.
pub struct Database {
    /// Behind a cell: reading needs the connection mutably (PostgreSQL's
    /// client), and readers hold the store shared.
    engine: std::cell::RefCell<Box<dyn Engine>>,
    location: String,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database")
            .field("location", &self.location)
            .finish()
    }
}

/// True when `location` names a PostgreSQL store (`postgres://` or
/// `postgresql://`) rather than a SQLite file.
pub fn is_server(location: &Path) -> bool {
    location
        .to_str()
        .is_some_and(|s| s.starts_with("postgres://") || s.starts_with("postgresql://"))
}

/// The default store: `$PUBSUBPERF_DB` (a file or a `postgres://` URL),
/// else `$XDG_DATA_HOME/pubsubperf/results.sqlite`, else
/// `~/.local/share/pubsubperf/results.sqlite`.
pub fn default_path() -> Result<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(p) = var("PUBSUBPERF_DB") {
        return Ok(PathBuf::from(p));
    }
    let base = match (var("XDG_DATA_HOME"), var("HOME")) {
        (Some(x), _) => PathBuf::from(x),
        (None, Some(h)) => PathBuf::from(h).join(".local").join("share"),
        (None, None) => return Err(ReportError::NoDataDir),
    };
    Ok(base.join("pubsubperf").join("results.sqlite"))
}

/// A new run-group id: time, process and a counter, unique on this host.
pub fn new_group_id() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "{}-{:x}{:05x}{:x}",
        crate::time::rfc3339_now()
            .replace([':', '-'], "")
            .trim_end_matches('Z'),
        std::process::id(),
        nanos >> 12,
        N.fetch_add(1, Ordering::Relaxed)
    )
}

fn text(s: impl Into<String>) -> Value {
    Value::Text(Some(s.into()))
}

impl Database {
    /// Opens the store at `location`: a `postgres://` (or
    /// `postgresql://`) URL, else a SQLite file, created with its
    /// directory if needed (a path that is a symbolic link is refused).
    pub fn open(location: &Path) -> Result<Database> {
        let name = location.display().to_string();
        let engine: Box<dyn Engine> = if is_server(location) {
            open_server(&name)?
        } else {
            Box::new(sqlite::Sqlite::open(location)?)
        };
        let mut db = Database {
            engine: std::cell::RefCell::new(engine),
            location: name,
        };
        db.fill_identities()?;
        Ok(db)
    }

    /// The store's file or URL.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// Reads runs matching `filter`, oldest first (with `limit`, the most
    /// recent N, still oldest first).
    pub fn query(&self, filter: &Filter) -> Result<Vec<StoredRun>> {
        if filter.name.is_some() {
            // A topology's name: no plain run has one.
            return Ok(Vec::new());
        }
        let mut sql = String::from(
            "SELECT r.id, r.group_id, r.time, r.sweep, r.cell, r.repetition, r.run,
                    g.tool_version, g.environment, r.host, r.labels
             FROM runs r JOIN groups g ON g.id = r.group_id WHERE 1=1",
        );
        let mut args = Vec::new();
        let mut add = |cond: &str, v: Value| {
            args.push(v);
            sql.push_str(&format!(" AND {cond} ?{}", args.len()));
        };
        if let Some(b) = &filter.binding {
            add("r.binding =", text(b));
        }
        if let Some(t) = &filter.transport {
            add("r.transport =", text(t));
        }
        if let Some(t) = &filter.test {
            add("r.test =", text(t));
        }
        if let Some(s) = filter.size {
            add("r.size =", Value::Int(Some(s as i64)));
        }
        if let Some(s) = &filter.since {
            add("r.time >=", text(s));
        }
        if let Some(s) = &filter.sweep {
            add("r.sweep =", text(s));
        }
        if let Some(g) = &filter.group {
            add("r.group_id LIKE", text(format!("{g}%")));
        }
        sql.push_str(" ORDER BY r.time DESC, r.id DESC");
        if let Some(n) = filter.limit {
            sql.push_str(&format!(" LIMIT {n}"));
        }
        use Kind::{Int, Text};
        let rows = self.engine.borrow_mut().query(
            &sql,
            &args,
            &[
                Int, Text, Text, Text, Text, Int, Text, Text, Text, Text, Text,
            ],
        )?;
        let mut out = Vec::new();
        for row in rows {
            let id = row[0].int();
            let (run, environment, labels) = self.decode(id, &row[6], &row[8], &row[10])?;
            out.push(StoredRun {
                id,
                group: row[1].text().unwrap_or_default(),
                time: row[2].text().unwrap_or_default(),
                sweep: row[3].text(),
                cell: row[4].text(),
                repetition: row[5].int().max(0) as u32,
                tool_version: row[7].text().unwrap_or_default(),
                environment,
                host: row[9].text(),
                labels,
                run,
            });
        }
        out.reverse();
        Ok(out)
    }

    /// A stored row's JSON parts: the run (or graph), its group's
    /// environment and its labels.
    fn decode<T: serde::de::DeserializeOwned>(
        &self,
        id: i64,
        run: &Value,
        env: &Value,
        labels: &Value,
    ) -> Result<(T, Environment, BTreeMap<String, String>)> {
        let bad = |m: String| ReportError::DbRun {
            store: self.location.clone(),
            id,
            message: m,
        };
        let run = serde_json::from_str(&run.text().unwrap_or_default())
            .map_err(|e| bad(e.to_string()))?;
        let environment = serde_json::from_str(&env.text().unwrap_or_default())
            .map_err(|e| bad(format!("environment: {e}")))?;
        let labels = match labels.text() {
            Some(l) => serde_json::from_str(&l).map_err(|e| bad(format!("labels: {e}")))?,
            None => BTreeMap::new(),
        };
        Ok((run, environment, labels))
    }

    /// Reads topology runs matching `filter`, oldest first (with `limit`,
    /// the most recent N, still oldest first). A filter on size or sweep,
    /// or on a test other than `topology`, selects none.
    pub fn query_graphs(&self, filter: &Filter) -> Result<Vec<StoredGraph>> {
        if filter.size.is_some()
            || filter.sweep.is_some()
            || filter.test.as_deref().is_some_and(|t| t != "topology")
        {
            return Ok(Vec::new());
        }
        let mut sql = String::from(
            "SELECT x.id, x.group_id, x.time, x.run, g.tool_version, g.environment, x.host,
                    x.labels
             FROM graphs x JOIN groups g ON g.id = x.group_id WHERE 1=1",
        );
        let mut args = Vec::new();
        for (cond, v) in [
            ("x.binding =", filter.binding.clone()),
            ("x.transport =", filter.transport.clone()),
            ("x.time >=", filter.since.clone()),
            ("x.name =", filter.name.clone()),
            (
                "x.group_id LIKE",
                filter.group.as_ref().map(|g| format!("{g}%")),
            ),
        ] {
            if let Some(v) = v {
                args.push(text(v));
                sql.push_str(&format!(" AND {cond} ?{}", args.len()));
            }
        }
        sql.push_str(" ORDER BY x.time DESC, x.id DESC");
        if let Some(n) = filter.limit {
            sql.push_str(&format!(" LIMIT {n}"));
        }
        use Kind::{Int, Text};
        let rows = self.engine.borrow_mut().query(
            &sql,
            &args,
            &[Int, Text, Text, Text, Text, Text, Text, Text],
        )?;
        let mut out = Vec::new();
        for row in rows {
            let id = row[0].int();
            let (graph, environment, labels) = self
                .decode::<GraphRun>(id, &row[3], &row[5], &row[7])
                .map_err(|e| match e {
                    ReportError::DbRun { store, id, message } => ReportError::DbRun {
                        store,
                        id,
                        message: format!("topology run: {message}"),
                    },
                    e => e,
                })?;
            out.push(StoredGraph {
                id,
                group: row[1].text().unwrap_or_default(),
                time: row[2].text().unwrap_or_default(),
                tool_version: row[4].text().unwrap_or_default(),
                environment,
                host: row[6].text(),
                labels,
                graph,
            });
        }
        out.reverse();
        Ok(out)
    }

    /// Number of runs stored.
    pub fn count(&self) -> Result<u64> {
        self.count_rows("runs")
    }

    /// Number of topology runs stored.
    pub fn count_graphs(&self) -> Result<u64> {
        self.count_rows("graphs")
    }

    fn count_rows(&self, table: &str) -> Result<u64> {
        let rows = self.engine.borrow_mut().query(
            &format!("SELECT COUNT(*) FROM {table}"),
            &[],
            &[Kind::Int],
        )?;
        Ok(rows.first().map_or(0, |r| r[0].int().max(0) as u64))
    }

    /// The store's schema version.
    pub fn schema_version(&self) -> Result<i64> {
        let rows = self.engine.borrow_mut().query(
            "SELECT MAX(version) FROM schema_version",
            &[],
            &[Kind::Int],
        )?;
        Ok(rows.first().map_or(0, |r| r[0].int()))
    }

    /// The environment of a run group, if it exists.
    pub fn group_environment(&self, group: &str) -> Result<Option<Environment>> {
        let rows = self.engine.borrow_mut().query(
            "SELECT environment FROM groups WHERE id = ?1",
            &[text(group)],
            &[Kind::Text],
        )?;
        Ok(rows
            .first()
            .and_then(|r| r[0].text())
            .and_then(|s| serde_json::from_str(&s).ok()))
    }
}

#[cfg(feature = "postgres")]
fn open_server(url: &str) -> Result<Box<dyn Engine>> {
    Ok(Box::new(postgres::Postgres::open(url)?))
}

#[cfg(not(feature = "postgres"))]
fn open_server(url: &str) -> Result<Box<dyn Engine>> {
    Err(ReportError::StoreUrl {
        url: url.to_string(),
        message: "this pubsubperf was built without the PostgreSQL store (feature postgres); \
                  give a SQLite file, or use a build with it"
            .into(),
    })
}

/// Builds a results file from stored runs and topology runs. The
/// environment is that of the first run (else of the first topology run);
/// `notes` says when they came from other machines.
pub fn to_results_file(
    runs: &[StoredRun],
    graphs: &[StoredGraph],
) -> Result<(ResultsFile, Vec<String>)> {
    let sources: Vec<(&Environment, &str)> = runs
        .iter()
        .map(|r| (&r.environment, r.tool_version.as_str()))
        .chain(
            graphs
                .iter()
                .map(|g| (&g.environment, g.tool_version.as_str())),
        )
        .collect();
    let &(first_env, first_version) = sources
        .first()
        .ok_or_else(|| ReportError::Empty("no runs match the selection".into()))?;
    let mut env = first_env.clone();
    let mut notes = Vec::new();
    let mut other_hosts: Vec<String> = Vec::new();
    for (e, _) in &sources {
        if (e.cpu_model != env.cpu_model || e.hostname != env.hostname || e.kernel != env.kernel)
            && !other_hosts.contains(&e.hostname)
        {
            other_hosts.push(e.hostname.clone());
        }
        for (b, v) in &e.bindings {
            env.bindings.entry(b.clone()).or_insert_with(|| v.clone());
        }
    }
    if !other_hosts.is_empty() {
        notes.push(format!(
            "the selection mixes environments (also {}); the file keeps the environment of the first run ({})",
            other_hosts.join(", "),
            first_env.hostname
        ));
    }
    Ok((
        ResultsFile {
            tool: ToolInfo {
                name: "pubsubperf".into(),
                version: first_version.to_string(),
                schema: SCHEMA_VERSION,
            },
            environment: env,
            runs: runs.iter().map(|r| r.run.clone()).collect(),
            graphs: graphs.iter().map(|g| g.graph.clone()).collect(),
        },
        notes,
    ))
}

pub use sqlite::is_sqlite_file;

/// Every run and topology run of the SQLite store at `path`, read from a
/// copy of it (the store itself is neither changed nor migrated).
pub fn read_sqlite_store(path: &Path) -> Result<(Vec<StoredRun>, Vec<StoredGraph>)> {
    let dir = tempfile::tempdir().map_err(|e| ReportError::Io {
        path: std::env::temp_dir(),
        source: e,
    })?;
    let copy = dir.path().join("copy.db");
    sqlite::snapshot(path, &copy)?;
    let db = Database::open(&copy)?;
    let all = Filter::default();
    Ok((db.query(&all)?, db.query_graphs(&all)?))
}

/// Saves a finished results file in the store at `path` (a file or a
/// `postgres://` URL; the default location when `None`). Returns the
/// store's location and the run-group id.
/// This is what `latency`, `throughput` and `sweep` call after measuring.
pub fn store(
    path: Option<&Path>,
    file: &ResultsFile,
    meta: &SaveMeta,
) -> Result<(PathBuf, String)> {
    let p = match path {
        Some(p) => p.to_path_buf(),
        None => default_path()?,
    };
    let mut db = Database::open(&p)?;
    let group = db.save(file, meta)?;
    Ok((p, group))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::Connection;

    /// A symbolic link at the database's path, or at its journal's, never
    /// sends the results to its target; the link is refused, naming it.
    #[test]
    fn a_planted_symlink_is_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let link = dir.path().join("link.sqlite");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let e = Database::open(&link).expect_err("a link is refused");
        assert!(
            matches!(e, ReportError::DbSymlink(_)) && e.is_usage(),
            "{e}"
        );
        assert!(e.to_string().contains("is a symbolic link"), "{e}");
        // A new database's file is its own, and its journal no link.
        let path = dir.path().join("new.sqlite");
        std::os::unix::fs::symlink(&victim, dir.path().join("new.sqlite-journal")).unwrap();
        // Opening writes its schema, through the journal.
        let opened = Database::open(&path).map(|_| ());
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "precious",
            "{opened:?}"
        );
        assert!(!std::fs::symlink_metadata(&path).unwrap().is_symlink());
    }

    /// A version-1 database (no `rejected` nor `profile_method` column)
    /// gets the columns, filled from each stored run's JSON, when opened.
    #[test]
    fn version_1_gains_the_later_columns() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v1.sqlite");
        let v1 = schema::SQLITE
            .replace("    rejected      INTEGER,\n", "")
            .replace("    profile_method TEXT,\n", "");
        assert!(
            !v1.contains("rejected") && !v1.contains("profile_method"),
            "the schema has both columns"
        );
        {
            let c = Connection::open(&path).unwrap();
            c.execute_batch(&v1).unwrap();
            c.execute_batch(
                r#"INSERT INTO groups (id, time, tool_version, environment) VALUES ('g', 't', 'v', '{"hostname": "h1"}');
                   INSERT INTO runs (group_id, time, binding, transport, test, size, reliable,
                       zero_copy, data_type, complete, run)
                   VALUES ('g', 't', 'udp', 'udp', 'throughput', 64, 0, 0, 'bytes', 1,
                       '{"throughput": {"rejected": 7}}'),
                          ('g', 't', 'udp', 'udp', 'latency', 64, 0, 0, 'bytes', 1,
                       '{"profile": {"publisher": {"method": "strace -c -f"}}}');"#,
            )
            .unwrap();
        }
        let db = Database::open(&path).unwrap();
        let column = |c: &str, k: Kind| -> Vec<Value> {
            db.engine
                .borrow_mut()
                .query(&format!("SELECT {c} FROM runs ORDER BY id"), &[], &[k])
                .unwrap()
                .into_iter()
                .map(|mut r| r.remove(0))
                .collect()
        };
        assert_eq!(
            column("rejected", Kind::Int),
            [Value::Int(Some(7)), Value::Int(None)]
        );
        assert_eq!(
            column("profile_method", Kind::Text),
            [Value::Text(None), text("strace -c -f")]
        );
        assert_eq!(column("host", Kind::Text), [text("h1"), text("h1")]);
        assert_eq!(db.schema_version().unwrap(), schema::VERSION);
        // Opening again changes nothing.
        drop(db);
        Database::open(&path).unwrap();
    }

    /// A version-3 database (no `graphs` table) gains the table when
    /// opened, keeps its runs, and stores and returns topology runs.
    #[test]
    fn version_3_gains_the_graphs_table() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v3.sqlite");
        let cut = schema::SQLITE
            .find("CREATE TABLE IF NOT EXISTS graphs")
            .unwrap();
        let v3 = &schema::SQLITE[..cut];
        assert!(!v3.contains("graphs"), "the schema has the table");
        {
            let c = Connection::open(&path).unwrap();
            c.execute_batch(v3).unwrap();
            c.pragma_update(None, "user_version", 3).unwrap();
        }
        let mut db = Database::open(&path).unwrap();
        let has = db
            .engine
            .borrow_mut()
            .query(
                "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'graphs'",
                &[],
                &[Kind::Int],
            )
            .unwrap();
        assert_eq!(has[0][0].int(), 1);
        assert_eq!(db.schema_version().unwrap(), schema::VERSION);
        assert_eq!(db.count_graphs().unwrap(), 0);
        let graph: GraphRun = serde_json::from_value(serde_json::json!({
            "name": "chain", "binding": "udp", "transport": "udp",
            "started": "2026-12-01T10:00:00Z", "duration_s": 1.0, "warmup_s": 0.1,
            "clock": "clock_monotonic", "nodes": [], "topics": [], "hops": [], "paths": []
        }))
        .unwrap();
        let file: ResultsFile = serde_json::from_value(serde_json::json!({
            "tool": {"name": "pubsubperf", "version": "0.1.0", "schema": 1},
            "environment": {"cpu_model": "c", "cores": 2, "kernel": "k", "hostname": "h",
                "os": "o", "bindings": {}},
            "runs": [], "graphs": [graph]
        }))
        .unwrap();
        db.save(&file, &SaveMeta::default()).unwrap();
        let back = db.query_graphs(&Filter::default()).unwrap();
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].graph, file.graphs[0]);
        assert_eq!(back[0].time, "2026-12-01T10:00:00Z");
        drop(db);
        assert_eq!(Database::open(&path).unwrap().count_graphs().unwrap(), 1);
    }

    /// Files saved into one group (a sweep's cells) are one group: its
    /// runs are all of theirs, its environment the first one's with every
    /// file's binding versions.
    #[test]
    fn files_saved_into_a_group_share_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut db = Database::open(&dir.path().join("g.sqlite")).unwrap();
        let file = |binding: &str, host: &str| -> ResultsFile {
            serde_json::from_value(serde_json::json!({
                "tool": {"name": "pubsubperf", "version": "0.1.0", "schema": 1},
                "environment": {"cpu_model": "c", "cores": 2, "kernel": "k", "hostname": host,
                    "os": "o", "bindings": {binding: format!("{binding} 1.0")}},
                "runs": [], "graphs": []
            }))
            .unwrap()
        };
        let meta = SaveMeta {
            group: Some("sweep-group".into()),
            command: Some("sweep s.toml".into()),
            ..SaveMeta::default()
        };
        assert_eq!(
            db.save(&file("udp", "first"), &meta).unwrap(),
            "sweep-group"
        );
        assert_eq!(
            db.save(&file("tcp", "second"), &meta).unwrap(),
            "sweep-group"
        );
        assert_eq!(
            db.save(&file("udp", "third"), &meta).unwrap(),
            "sweep-group"
        );
        let groups = db
            .engine
            .borrow_mut()
            .query("SELECT COUNT(*) FROM groups", &[], &[Kind::Int])
            .unwrap();
        assert_eq!(groups[0][0].int(), 1);
        let env = db.group_environment("sweep-group").unwrap().unwrap();
        assert_eq!(env.hostname, "first");
        let bindings: Vec<(&str, &str)> = env
            .bindings
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(bindings, [("tcp", "tcp 1.0"), ("udp", "udp 1.0")]);
    }
}
