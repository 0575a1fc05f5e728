//! The results database: every run ever measured (or imported), with its
//! environment and configuration, in one SQLite file.
//!
//! Layout (schema version 4, `PRAGMA user_version`; version 1 lacked the
//! `rejected` column, version 2 the `profile_method` column and version 3
//! the `graphs` table, which opening such a database adds):
//! - `groups`: one row per saved results file (one invocation): id, time,
//!   tool version, environment JSON, command line.
//! - `runs`: one row per run: the whole run JSON plus indexed columns for
//!   filtering (time, binding, transport, test, size, reliable, zero_copy,
//!   data_type, p50, p99, samples_per_s, mbps, lost_percent, rejected,
//!   profile_method: the tracer of a `--profile` run), the sweep name,
//!   cell key and repetition number when the run came from a sweep, and the
//!   group id.
//! - `graphs`: one row per topology run (`pubsubperf topology`): the whole
//!   graph JSON plus its time, topology name, binding and transport, and
//!   the group id.
//!
//! The whole run (or graph) JSON is the source of truth: the columns are
//! copies for queries, and a run read back equals the run saved.

use crate::error::{ReportError, Result};
use pubsubperf_core::environment::Environment;
use pubsubperf_core::graph_result::GraphRun;
use pubsubperf_core::result::{ResultsFile, Run, SCHEMA_VERSION, ToolInfo};
use rusqlite::{Connection, OptionalExtension, params};
use std::path::{Path, PathBuf};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS groups (
    id           TEXT PRIMARY KEY,
    time         TEXT NOT NULL,
    tool_version TEXT NOT NULL,
    environment  TEXT NOT NULL,
    command      TEXT
);
CREATE TABLE IF NOT EXISTS runs (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    group_id      TEXT NOT NULL REFERENCES groups(id),
    time          TEXT NOT NULL,
    binding       TEXT NOT NULL,
    transport     TEXT NOT NULL,
    test          TEXT NOT NULL,
    size          INTEGER NOT NULL,
    reliable      INTEGER NOT NULL,
    zero_copy     INTEGER NOT NULL,
    data_type     TEXT NOT NULL,
    p50           INTEGER,
    p99           INTEGER,
    samples_per_s REAL,
    mbps          REAL,
    lost_percent  REAL,
    rejected      INTEGER,
    profile_method TEXT,
    complete      INTEGER NOT NULL,
    sweep         TEXT,
    cell          TEXT,
    repetition    INTEGER NOT NULL DEFAULT 0,
    run           TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_time ON runs(time);
CREATE INDEX IF NOT EXISTS runs_cell ON runs(binding, test, size);
CREATE INDEX IF NOT EXISTS runs_sweep ON runs(sweep, cell, repetition);
CREATE INDEX IF NOT EXISTS runs_group ON runs(group_id);
CREATE TABLE IF NOT EXISTS graphs (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    group_id      TEXT NOT NULL REFERENCES groups(id),
    time          TEXT NOT NULL,
    name          TEXT NOT NULL,
    binding       TEXT NOT NULL,
    transport     TEXT NOT NULL,
    run           TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS graphs_time ON graphs(time);
CREATE INDEX IF NOT EXISTS graphs_group ON graphs(group_id);
";

/// The schema's version (`PRAGMA user_version`).
const VERSION: i64 = 4;

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

/// A run read back from the database.
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
    /// The run as saved.
    pub run: Run,
}

/// A topology run read back from the database.
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
    /// The graph as saved.
    pub graph: GraphRun,
}

/// An open results database.
pub struct Database {
    conn: Connection,
    path: PathBuf,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database")
            .field("path", &self.path)
            .finish()
    }
}

/// The default database file: `$PUBSUBPERF_DB`, else
/// `$XDG_DATA_HOME/pubsubperf/results.sqlite`, else
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

/// The schema's migrations, oldest first: (column of `runs`, its type, the
/// JSON path in each stored run that fills it).
/// - 1 → 2: `rejected` (refused sends, best effort);
/// - 2 → 3: `profile_method` (the publisher's tracer of a `--profile` run).
const MIGRATIONS: [(&str, &str, &str); 2] = [
    ("rejected", "INTEGER", "$.throughput.rejected"),
    ("profile_method", "TEXT", "$.profile.publisher.method"),
];

/// Adds a column of [`MIGRATIONS`] that a database lacks, filled from each
/// stored run's JSON (NULL where the run has no such part).
fn add_column(conn: &Connection, (name, kind, path): (&str, &str, &str)) -> rusqlite::Result<()> {
    let has: i64 = conn.query_row(
        "SELECT COUNT(*) FROM pragma_table_info('runs') WHERE name = ?1",
        [name],
        |r| r.get(0),
    )?;
    if has == 0 {
        conn.execute_batch(&format!(
            "ALTER TABLE runs ADD COLUMN {name} {kind};
             UPDATE runs SET {name} = json_extract(run, '{path}');"
        ))?;
    }
    Ok(())
}

/// Refuses a database path that is a symbolic link, and creates the file
/// when there is none (`O_CREAT|O_EXCL`, which follows no link; mode 0644
/// as SQLite would), so that a link planted at its name is never followed.
fn create_new(path: &Path) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let io = |e| ReportError::Io {
        path: path.to_path_buf(),
        source: e,
    };
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            return Err(ReportError::DbSymlink(path.to_path_buf()));
        }
        Ok(_) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(e)),
    }
    let created = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(path);
    match created {
        Ok(_) => Ok(()),
        // Someone made it since: a link is refused, a file taken as it is.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            match std::fs::symlink_metadata(path) {
                Ok(m) if m.file_type().is_symlink() => {
                    Err(ReportError::DbSymlink(path.to_path_buf()))
                }
                _ => Ok(()),
            }
        }
        Err(e) => Err(io(e)),
    }
}

impl Database {
    /// Opens (creating it and its directory if needed) the database at `path`.
    /// A `path` that is a symbolic link is refused; a new database file is
    /// created exclusively, never through a link, before SQLite opens it
    /// (which follows no link either: `SQLITE_OPEN_NOFOLLOW`; its journals
    /// are opened `O_NOFOLLOW`).
    pub fn open(path: &Path) -> Result<Database> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| ReportError::Io {
                path: dir.to_path_buf(),
                source: e,
            })?;
        }
        create_new(path)?;
        let db_err = |e| ReportError::Db {
            path: path.to_path_buf(),
            source: e,
        };
        let flags = rusqlite::OpenFlags::default() | rusqlite::OpenFlags::SQLITE_OPEN_NOFOLLOW;
        let conn = Connection::open_with_flags(path, flags).map_err(db_err)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(db_err)?;
        conn.execute_batch(SCHEMA).map_err(db_err)?;
        for m in MIGRATIONS {
            add_column(&conn, m).map_err(db_err)?;
        }
        conn.pragma_update(None, "user_version", VERSION)
            .map_err(db_err)?;
        Ok(Database {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// The file this database lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, e: rusqlite::Error) -> ReportError {
        ReportError::Db {
            path: self.path.clone(),
            source: e,
        }
    }

    /// Saves every run and every topology run of a results file in one
    /// transaction; returns the run-group id. Sweep name, cell and repetition come from `meta`, or
    /// else from a run's `config.sweep` object (`name`, `cell`,
    /// `repetition`) when the runner recorded them there. A file saved
    /// into a group that exists (a sweep saves each cell as it ends, all
    /// in the invocation's group) adds its runs to it; the group keeps its
    /// first environment, with the versions of the file's bindings added.
    pub fn save(&mut self, file: &ResultsFile, meta: &SaveMeta) -> Result<String> {
        let group = meta.group.clone().unwrap_or_else(new_group_id);
        let env = serde_json::to_string(&file.environment).unwrap_or_default();
        let tx = self.conn.transaction().map_err(|e| ReportError::Db {
            path: self.path.clone(),
            source: e,
        })?;
        let now = crate::time::rfc3339_now();
        let res: rusqlite::Result<()> = (|| {
            let stored: Option<String> = tx
                .query_row(
                    "SELECT environment FROM groups WHERE id = ?1",
                    [&group],
                    |r| r.get(0),
                )
                .optional()?;
            match stored {
                None => {
                    tx.execute(
                        "INSERT INTO groups (id, time, tool_version, environment, command)
                         VALUES (?1, ?2, ?3, ?4, ?5)",
                        params![group, now, file.tool.version, env, meta.command],
                    )?;
                }
                Some(stored) => {
                    if let Some(merged) = with_bindings(&stored, &file.environment) {
                        tx.execute(
                            "UPDATE groups SET environment = ?2 WHERE id = ?1",
                            params![group, merged],
                        )?;
                    }
                }
            }
            for run in &file.runs {
                insert_run(&tx, &group, run, meta, &now)?;
            }
            for g in &file.graphs {
                tx.execute(
                    "INSERT INTO graphs (group_id, time, name, binding, transport, run)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![
                        group,
                        if g.started.is_empty() {
                            &now
                        } else {
                            &g.started
                        },
                        g.name,
                        g.binding,
                        g.transport,
                        serde_json::to_string(g).unwrap_or_default(),
                    ],
                )?;
            }
            Ok(())
        })();
        res.and_then(|()| tx.commit()).map_err(|e| self.err(e))?;
        Ok(group)
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
                    g.tool_version, g.environment
             FROM runs r JOIN groups g ON g.id = r.group_id WHERE 1=1",
        );
        let mut args: Vec<Box<dyn rusqlite::ToSql>> = Vec::new();
        let mut add = |cond: &str, v: Box<dyn rusqlite::ToSql>| {
            args.push(v);
            sql.push_str(&format!(" AND {cond} ?{}", args.len()));
        };
        if let Some(b) = &filter.binding {
            add("r.binding =", Box::new(b.clone()));
        }
        if let Some(t) = &filter.transport {
            add("r.transport =", Box::new(t.clone()));
        }
        if let Some(t) = &filter.test {
            add("r.test =", Box::new(t.clone()));
        }
        if let Some(s) = filter.size {
            add("r.size =", Box::new(s as i64));
        }
        if let Some(s) = &filter.since {
            add("r.time >=", Box::new(s.clone()));
        }
        if let Some(s) = &filter.sweep {
            add("r.sweep =", Box::new(s.clone()));
        }
        if let Some(g) = &filter.group {
            add("r.group_id LIKE", Box::new(format!("{g}%")));
        }
        sql.push_str(" ORDER BY r.time DESC, r.id DESC");
        if let Some(n) = filter.limit {
            sql.push_str(&format!(" LIMIT {n}"));
        }
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.err(e))?;
        let refs: Vec<&dyn rusqlite::ToSql> = args.iter().map(|b| b.as_ref()).collect();
        let rows = stmt
            .query_map(refs.as_slice(), |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, Option<String>>(3)?,
                    row.get::<_, Option<String>>(4)?,
                    row.get::<_, i64>(5)?,
                    row.get::<_, String>(6)?,
                    row.get::<_, String>(7)?,
                    row.get::<_, String>(8)?,
                ))
            })
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for row in rows {
            let (id, group, time, sweep, cell, rep, run, tool_version, env) =
                row.map_err(|e| self.err(e))?;
            let bad = |m: String| ReportError::DbRun {
                path: self.path.clone(),
                id,
                message: m,
            };
            let run: Run = serde_json::from_str(&run).map_err(|e| bad(e.to_string()))?;
            let environment: Environment =
                serde_json::from_str(&env).map_err(|e| bad(format!("environment: {e}")))?;
            out.push(StoredRun {
                id,
                group,
                time,
                sweep,
                cell,
                repetition: rep.max(0) as u32,
                tool_version,
                environment,
                run,
            });
        }
        out.reverse();
        Ok(out)
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
            "SELECT x.id, x.group_id, x.time, x.run, g.tool_version, g.environment
             FROM graphs x JOIN groups g ON g.id = x.group_id WHERE 1=1",
        );
        let mut args: Vec<String> = Vec::new();
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
                args.push(v);
                sql.push_str(&format!(" AND {cond} ?{}", args.len()));
            }
        }
        sql.push_str(" ORDER BY x.time DESC, x.id DESC");
        if let Some(n) = filter.limit {
            sql.push_str(&format!(" LIMIT {n}"));
        }
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(rusqlite::params_from_iter(&args), |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, String>(3)?,
                    row.get::<_, String>(4)?,
                    row.get::<_, String>(5)?,
                ))
            })
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for row in rows {
            let (id, group, time, run, tool_version, env) = row.map_err(|e| self.err(e))?;
            let bad = |m: String| ReportError::DbRun {
                path: self.path.clone(),
                id,
                message: m,
            };
            let graph: GraphRun =
                serde_json::from_str(&run).map_err(|e| bad(format!("topology run: {e}")))?;
            let environment: Environment =
                serde_json::from_str(&env).map_err(|e| bad(format!("environment: {e}")))?;
            out.push(StoredGraph {
                id,
                group,
                time,
                tool_version,
                environment,
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
        self.conn
            .query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| {
                r.get::<_, i64>(0)
            })
            .map(|n| n.max(0) as u64)
            .map_err(|e| self.err(e))
    }

    /// The environment of a run group, if it exists.
    pub fn group_environment(&self, group: &str) -> Result<Option<Environment>> {
        let s: Option<String> = self
            .conn
            .query_row(
                "SELECT environment FROM groups WHERE id = ?1",
                [group],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))?;
        Ok(s.and_then(|s| serde_json::from_str(&s).ok()))
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

fn insert_run(
    tx: &rusqlite::Transaction<'_>,
    group: &str,
    run: &Run,
    meta: &SaveMeta,
    now: &str,
) -> rusqlite::Result<()> {
    let sw = &run.config["sweep"];
    let sweep = meta
        .sweep
        .clone()
        .or_else(|| sw["name"].as_str().map(String::from));
    let cell = meta
        .cell
        .clone()
        .or_else(|| sw["cell"].as_str().map(String::from));
    let repetition = if meta.repetition > 0 {
        u64::from(meta.repetition)
    } else {
        sw["repetition"].as_u64().unwrap_or(0)
    };
    let time = if run.started_at.is_empty() {
        now
    } else {
        run.started_at.as_str()
    };
    let lat = run.latency_ns.as_ref();
    let tp = run.throughput.as_ref();
    tx.execute(
        "INSERT INTO runs (group_id, time, binding, transport, test, size, reliable,
            zero_copy, data_type, p50, p99, samples_per_s, mbps, lost_percent, rejected,
            profile_method, complete, sweep, cell, repetition, run)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
            ?19, ?20, ?21)",
        params![
            group,
            time,
            run.binding,
            run.transport,
            run.test.to_string(),
            run.size as i64,
            run.reliable,
            run.zero_copy,
            run.data_type,
            lat.map(|l| l.p50 as i64),
            lat.map(|l| l.p99 as i64),
            tp.map(|t| t.samples_per_s),
            tp.map(|t| t.mbps),
            tp.map(|t| t.lost_percent),
            tp.map(|t| t.rejected as i64),
            run.profile.as_ref().map(|p| p.publisher.method.as_str()),
            run.complete,
            sweep,
            cell,
            repetition as i64,
            serde_json::to_string(run).unwrap_or_default(),
        ],
    )?;
    Ok(())
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

/// Saves a finished results file in the database at `path` (the default
/// location when `None`). Returns the database path and the run-group id.
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
        let v1 = SCHEMA
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
                r#"INSERT INTO groups (id, time, tool_version, environment) VALUES ('g', 't', 'v', '{}');
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
        let column = |c: &str| -> Vec<Option<rusqlite::types::Value>> {
            db.conn
                .prepare(&format!("SELECT {c} FROM runs ORDER BY id"))
                .unwrap()
                .query_map([], |r| r.get(0))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap()
        };
        use rusqlite::types::Value::{Integer, Text};
        assert_eq!(column("rejected"), [Some(Integer(7)), None]);
        assert_eq!(
            column("profile_method"),
            [None, Some(Text("strace -c -f".into()))]
        );
        let v: i64 = db
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, VERSION);
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
        let cut = SCHEMA.find("CREATE TABLE IF NOT EXISTS graphs").unwrap();
        let v3 = &SCHEMA[..cut];
        assert!(!v3.contains("graphs"), "the schema has the table");
        {
            let c = Connection::open(&path).unwrap();
            c.execute_batch(v3).unwrap();
            c.pragma_update(None, "user_version", 3).unwrap();
        }
        let mut db = Database::open(&path).unwrap();
        let has: i64 = db
            .conn
            .query_row(
                "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'graphs'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(has, 1);
        let v: i64 = db
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, VERSION);
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
        let groups: i64 = db
            .conn
            .query_row("SELECT COUNT(*) FROM groups", [], |r| r.get(0))
            .unwrap();
        assert_eq!(groups, 1);
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
