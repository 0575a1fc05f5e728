//! The results store's suite, run against both engines: SQLite (a file)
//! and PostgreSQL (a server of the test's own, see
//! pubsubperf_testkit::postgres). Both read back what was saved, and the
//! same; an older PostgreSQL store is migrated forward; TLS is used as
//! `sslmode` says.

mod common;

use common::*;
use pubsubperf_core::result::ResultsFile;
use pubsubperf_report::db::{self, Database, Filter, SaveMeta, StoredGraph, StoredRun};
use pubsubperf_testkit::postgres::PgServer;
use std::path::Path;

/// A results file with one topology run.
fn with_graph() -> ResultsFile {
    let mut f = file(Vec::new());
    f.graphs.push(
        serde_json::from_value(serde_json::json!({
            "name": "chain", "binding": "udp", "transport": "udp",
            "started": "2026-12-01T10:00:00Z", "duration_s": 1.0, "warmup_s": 0.1,
            "clock": "clock_monotonic", "nodes": [], "topics": [], "hops": [], "paths": []
        }))
        .unwrap(),
    );
    f
}

/// The suite: what one engine must do. Returns what it read back.
fn suite(location: &Path) -> (Vec<StoredRun>, Vec<StoredGraph>) {
    let mut db = Database::open(location).unwrap();
    assert_eq!(db.schema_version().unwrap(), 6);
    assert_eq!(db.count().unwrap(), 0);
    let file = sample(2, 1.0, 1.0);
    let meta = SaveMeta {
        group: Some("g-one".into()),
        command: Some("pubsubperf import".into()),
        labels: [("commit".to_string(), "abc123".to_string())].into(),
        ..Default::default()
    };
    assert_eq!(db.save(&file, &meta).unwrap(), "g-one");
    assert_eq!(db.count().unwrap(), file.runs.len() as u64);
    let runs = db.query(&Filter::default()).unwrap();
    let mut saved = file.runs.clone();
    saved.sort_by(|a, b| a.started_at.cmp(&b.started_at));
    let back: Vec<_> = runs.iter().map(|r| r.run.clone()).collect();
    assert_eq!(back, saved, "a run read back equals the run saved");
    for r in &runs {
        assert_eq!(r.host.as_deref(), Some("fixture"));
        assert_eq!(r.labels["commit"], "abc123");
        assert_eq!(
            (r.group.as_str(), r.tool_version.as_str()),
            ("g-one", "0.1.0")
        );
        assert_eq!(r.environment, file.environment);
    }
    let n = |f: Filter| db.query(&f).unwrap().len();
    assert_eq!(
        n(Filter {
            binding: Some("udp".into()),
            ..Default::default()
        }),
        10
    );
    assert_eq!(
        n(Filter {
            size: Some(1024),
            test: Some("throughput".into()),
            ..Default::default()
        }),
        4
    );
    assert_eq!(
        n(Filter {
            group: Some("g-o".into()),
            ..Default::default()
        }),
        20
    );
    assert_eq!(
        n(Filter {
            since: Some("2026-11-22T00:00:00Z".into()),
            ..Default::default()
        }),
        10
    );
    let last = db
        .query(&Filter {
            limit: Some(3),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(
        last,
        runs[runs.len() - 3..],
        "the most recent, oldest first"
    );
    // Topology runs, and a second file into the same group.
    db.save(&with_graph(), &meta).unwrap();
    let graphs = db.query_graphs(&Filter::default()).unwrap();
    assert_eq!(graphs.len(), 1);
    assert_eq!(graphs[0].graph, with_graph().graphs[0]);
    assert_eq!(graphs[0].host.as_deref(), Some("fixture"));
    assert_eq!(graphs[0].labels["commit"], "abc123");
    assert_eq!(db.count_graphs().unwrap(), 1);
    let env = db.group_environment("g-one").unwrap().unwrap();
    assert_eq!(env.hostname, "fixture");
    assert_eq!(db.group_environment("none").unwrap(), None);
    // The same file again, into any group, is stored once.
    let again = db.save_counted(&file, &SaveMeta::default()).unwrap();
    assert_eq!((again.runs, again.graphs, again.already), (0, 0, 20));
    assert_eq!(db.group_environment(&again.group).unwrap(), None);
    let again = db.save_counted(&with_graph(), &meta).unwrap();
    assert_eq!((again.runs, again.graphs, again.already), (0, 0, 1));
    // Opening again keeps everything (and migrates nothing).
    drop(db);
    let db = Database::open(location).unwrap();
    assert_eq!(db.count().unwrap(), 20);
    (db.query(&Filter::default()).unwrap(), graphs)
}

#[test]
fn sqlite_passes_the_store_suite() {
    let dir = tempfile::tempdir().unwrap();
    suite(&dir.path().join("r.sqlite"));
}

/// The same suite on PostgreSQL, which reads back what SQLite does.
#[test]
fn postgres_passes_the_store_suite_and_reads_back_what_sqlite_does() {
    let server = PgServer::start();
    let url = server.url("postgres", "results", "");
    let pg = suite(Path::new(&url));
    let dir = tempfile::tempdir().unwrap();
    let sqlite = suite(&dir.path().join("r.sqlite"));
    assert_eq!(pg, sqlite);
}

/// A PostgreSQL store of version 4 (no host, labels, commit nor digest
/// columns) gains them when opened, the host filled from each group's
/// environment, each run's identity from its JSON.
#[test]
fn an_older_postgres_store_is_migrated_forward() {
    let server = PgServer::start();
    let url = server.url("postgres", "results", "");
    let mut db = Database::open(Path::new(&url)).unwrap();
    db.save(&sample(1, 1.0, 1.0), &SaveMeta::default()).unwrap();
    drop(db);
    server.psql_on(
        "results",
        "ALTER TABLE runs DROP COLUMN host, DROP COLUMN labels, DROP COLUMN commit_id;
         ALTER TABLE graphs DROP COLUMN host, DROP COLUMN labels, DROP COLUMN commit_id;
         ALTER TABLE runs DROP COLUMN digest;
         ALTER TABLE graphs DROP COLUMN digest;
         UPDATE schema_version SET version = 4;",
    );
    let mut db = Database::open(Path::new(&url)).unwrap();
    assert_eq!(db.schema_version().unwrap(), 6);
    // The runs stored before identities were kept are given theirs: the
    // same file saved again is recognised.
    assert_eq!(
        server.psql_on("results", "SELECT COUNT(*) FROM runs WHERE digest IS NULL"),
        "0"
    );
    let again = db
        .save_counted(&sample(1, 1.0, 1.0), &SaveMeta::default())
        .unwrap();
    assert_eq!((again.runs, again.already), (0, 10));
    let runs = db.query(&Filter::default()).unwrap();
    assert_eq!(runs.len(), 10);
    assert!(runs.iter().all(|r| r.host.as_deref() == Some("fixture")));
    assert!(runs.iter().all(|r| r.labels.is_empty()));
    assert_eq!(
        server.psql_on(
            "results",
            "SELECT COUNT(*) FROM runs WHERE commit_id IS NULL"
        ),
        "10"
    );
}

/// `sslmode=require` connects over TLS, `sslmode=disable` without, and
/// `verify-full` refuses a certificate no root vouches for, naming the store.
#[test]
fn tls_is_used_as_sslmode_says() {
    let server = PgServer::start();
    let tls = server.url("postgres", "results", "sslmode=require");
    let plain = server.url("postgres", "results", "sslmode=disable");
    let a = Database::open(Path::new(&tls)).unwrap();
    let b = Database::open(Path::new(&plain)).unwrap();
    let ssl = server.psql(
        "SELECT s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
         WHERE a.application_name = 'pubsubperf' ORDER BY a.backend_start",
    );
    assert_eq!(ssl, "t\nf");
    drop((a, b));
    let verify = server.url("postgres", "results", "sslmode=verify-full");
    let e = Database::open(Path::new(&verify)).expect_err("an unknown certificate");
    let m = e.to_string();
    assert!(
        e.is_usage() && m.contains(&verify) && !m.contains('\n'),
        "{m}"
    );
}

/// A lab moving in: a host's SQLite store imported into PostgreSQL keeps
/// each run's group, sweep place, host and labels; imported again, or
/// after some of its runs were imported as a JSON file, each run is
/// stored once. The SQLite file is read, never changed.
#[test]
fn a_sqlite_store_moves_into_postgres_once() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("host.sqlite");
    let mut local = Database::open(&source).unwrap();
    let cell = SaveMeta {
        group: Some("g-sweep".into()),
        sweep: Some("nightly".into()),
        cell: Some("udp-64".into()),
        repetition: 2,
        labels: [("commit".to_string(), "abc123".to_string())].into(),
        ..Default::default()
    };
    local.save(&sample(1, 1.0, 1.0), &cell).unwrap();
    local.save(&with_graph(), &SaveMeta::default()).unwrap();
    drop(local);
    let before = std::fs::read(&source).unwrap();
    assert!(db::is_sqlite_file(&source));
    assert!(!db::is_sqlite_file(&dir.path().join("none")));

    let server = PgServer::start();
    let url = server.url("postgres", "results", "");
    let mut lab = Database::open(Path::new(&url)).unwrap();
    // One of its runs came in earlier as a JSON file.
    let mut one = sample(1, 1.0, 1.0);
    one.runs.truncate(1);
    lab.save(&one, &SaveMeta::default()).unwrap();
    let (runs, graphs) = db::read_sqlite_store(&source).unwrap();
    assert_eq!((runs.len(), graphs.len()), (10, 1));
    let saved = lab
        .import_stored(&runs, &graphs, "import host.sqlite")
        .unwrap();
    let total = |s: &[db::Saved]| {
        s.iter().fold((0, 0, 0), |t, s| {
            (t.0 + s.runs, t.1 + s.graphs, t.2 + s.already)
        })
    };
    assert_eq!(total(&saved), (9, 1, 1));
    let again = lab
        .import_stored(&runs, &graphs, "import host.sqlite")
        .unwrap();
    assert_eq!(total(&again), (0, 0, 11));
    assert_eq!(lab.count().unwrap(), 10);
    assert_eq!(lab.count_graphs().unwrap(), 1);
    let moved = lab
        .query(&Filter {
            group: Some("g-sweep".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(moved.len(), 9);
    for r in &moved {
        assert_eq!(
            (r.sweep.as_deref(), r.cell.as_deref(), r.repetition),
            (Some("nightly"), Some("udp-64"), 2)
        );
        assert_eq!(r.labels["commit"], "abc123");
        assert_eq!(r.host.as_deref(), Some("fixture"));
    }
    assert_eq!(
        std::fs::read(&source).unwrap(),
        before,
        "the source is unchanged"
    );
}
