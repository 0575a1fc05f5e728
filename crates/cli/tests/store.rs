//! The results store through the CLI, against both engines where the
//! property is both's: SQLite (a file) and PostgreSQL (a server of the
//! test's own, pubsubperf_testkit::postgres, reached over TCP as a role
//! with a password). Concurrent writers all land; a writer killed inside
//! its transaction leaves no partial run; a sweep survives a server
//! restart between cells, and a server gone fails with a clear line and
//! nothing measured lost; a wrong or missing password, or one in the URL,
//! is one line naming the store, exit 2.

use pubsubperf_testkit::postgres::PgServer;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

/// The CLI with a clean environment: no store, labels, password or
/// password file of the machine's (HOME is `home`).
fn cli(home: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pubsubperf"));
    for k in [
        "PUBSUBPERF_DB",
        "PUBSUBPERF_LABELS",
        "PGPASSWORD",
        "PGPASSFILE",
        "PGSSLMODE",
        "PGUSER",
    ] {
        c.env_remove(k);
    }
    c.env("HOME", home).env("XDG_DATA_HOME", home);
    c
}

/// The CLI with the role's password in PGPASSWORD.
fn cli_pw(home: &Path) -> Command {
    let mut c = cli(home);
    c.env("PGPASSWORD", PgServer::PASSWORD);
    c
}

fn ok(o: Output) -> Output {
    assert!(
        o.status.success(),
        "exit {:?}: {}{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// A results file of `n` mock latency runs, of a measurement's start and
/// figures, told apart by their start times (on day `day` of December).
fn results(dir: &Path, n: usize) -> String {
    results_of_day(dir, n, 1)
}

fn results_of_day(dir: &Path, n: usize, day: usize) -> String {
    let one = dir.join("one.json");
    ok(cli(dir)
        .args(["latency", "-b", "mock", "-n", "50", "--warmup", "0s"])
        .args(["--no-save", "-q", "--json", one.to_str().unwrap()])
        .output()
        .unwrap());
    let mut f: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&one).unwrap()).unwrap();
    let run = f["runs"][0].clone();
    f["runs"] = (0..n)
        .map(|i| {
            let mut r = run.clone();
            r["started_at"] = format!("2026-12-{day:02}T10:00:{i:02}Z").into();
            r
        })
        .collect();
    let out = dir.join(format!("runs{n}-{day}.json"));
    std::fs::write(&out, f.to_string()).unwrap();
    out.to_str().unwrap().to_string()
}

/// The number of runs in the store (`history`'s "N of M run(s)").
fn count(home: &Path, db: &str) -> usize {
    let o = ok(cli_pw(home).args(["history", "--db", db]).output().unwrap());
    let err = String::from_utf8_lossy(&o.stderr);
    let line = err
        .lines()
        .find(|l| l.contains(" run(s)"))
        .unwrap_or_else(|| panic!("no count: {err}"));
    line.split_whitespace()
        .nth(2)
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count: {line}"))
}

/// Both stores: a SQLite file in `dir` and the server's `results`.
fn stores(server: &PgServer, dir: &Path) -> [String; 2] {
    [
        dir.join("r.sqlite").to_str().unwrap().to_string(),
        server.url(PgServer::USER, "results", ""),
    ]
}

/// `pubsubperf import ARGS... --db DB` of each of `writers`, all at once;
/// each must succeed.
fn at_once(home: &Path, db: &str, writers: impl Iterator<Item = Vec<String>>) {
    let running: Vec<Running> = writers
        .map(|args| {
            Running(
                cli_pw(home)
                    .arg("import")
                    .args(args)
                    .args(["--db", db])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap(),
            )
        })
        .collect();
    for mut w in running {
        let status = w.0.wait().unwrap();
        assert!(status.success(), "{db}: a writer failed: {status:?}");
    }
}

#[test]
fn concurrent_writers_all_land() {
    let server = PgServer::start();
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<String> = (0..4)
        .map(|i| results_of_day(dir.path(), 5, i + 1))
        .collect();
    for db in stores(&server, dir.path()) {
        at_once(
            dir.path(),
            &db,
            (0..4).map(|i| vec![files[i].clone(), "--label".into(), format!("commit=c{i}")]),
        );
        assert_eq!(count(dir.path(), &db), 20, "{db}");
    }
    // Each run names its host and the commit under test.
    let host = server.psql_on(
        "results",
        "SELECT COUNT(DISTINCT commit_id) || ' ' || COUNT(host) FROM runs",
    );
    assert_eq!(host, "4 20");
}

/// Moving a lab in: writers at once importing the same results store it
/// once, and a host's SQLite store imported into PostgreSQL, twice, and
/// after one of its files was, stores each run once; each import says
/// what it stored and what the store already had.
#[test]
fn the_same_runs_imported_at_once_or_again_are_stored_once() {
    let server = PgServer::start();
    let dir = tempfile::tempdir().unwrap();
    let file = results(dir.path(), 5);
    for db in stores(&server, dir.path()) {
        at_once(dir.path(), &db, (0..4).map(|_| vec![file.clone()]));
        assert_eq!(count(dir.path(), &db), 5, "{db}");
    }
    let [host, lab] = stores(&server, dir.path());
    let second = results_of_day(dir.path(), 3, 9);
    ok(cli(dir.path())
        .args(["import", &second, "--db", &host])
        .output()
        .unwrap());
    let import = |source: &str| {
        let o = ok(cli_pw(dir.path())
            .args(["import", source, "--db", &lab])
            .output()
            .unwrap());
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    };
    let first = import(&host);
    assert!(
        first.starts_with(&format!(
            "pubsubperf import: 3 run(s) from {host} stored as group "
        )) && first.ends_with("; 5 already stored, not stored again"),
        "{first}"
    );
    assert_eq!(
        import(&host),
        format!(
            "pubsubperf import: 0 run(s) from {host} stored; 8 already stored, not stored again"
        )
    );
    assert_eq!(count(dir.path(), &lab), 8);
}

/// A writer killed (SIGKILL) while its transaction is open, after its
/// first run went in (held there by the test hook
/// PUBSUBPERF_TEST_HOLD_SAVE_S), leaves none of its runs; the store
/// takes the next writer's.
#[test]
fn a_writer_killed_mid_transaction_leaves_no_partial_run() {
    let server = PgServer::start();
    let dir = tempfile::tempdir().unwrap();
    let file = results(dir.path(), 5);
    for db in stores(&server, dir.path()) {
        let mut w = Running(
            cli_pw(dir.path())
                .args(["import", &file, "--db", &db])
                .env("PUBSUBPERF_TEST_HOLD_SAVE_S", "120")
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        );
        let mut lines = BufReader::new(w.0.stderr.take().unwrap()).lines();
        let held = lines
            .by_ref()
            .map_while(Result::ok)
            .find(|l| l.contains("PUBSUBPERF_TEST_HOLD_SAVE_S"));
        assert!(
            held.is_some(),
            "{db}: the writer never held its transaction"
        );
        w.0.kill().unwrap();
        w.0.wait().unwrap();
        assert_eq!(count(dir.path(), &db), 0, "{db}: a partial run");
        ok(cli_pw(dir.path())
            .args(["import", &file, "--db", &db])
            .output()
            .unwrap());
        assert_eq!(count(dir.path(), &db), 5, "{db}");
    }
}

/// A child process killed (if still running) and reaped when dropped,
/// a failing test's too.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A sweep of two udp cells (3 s each, over loopback) whose first cell has
/// been saved: its second cell has started.
fn sweep(dir: &Path, db: &str, json: &Path) -> (Running, impl Iterator<Item = String>) {
    let toml = dir.join("s.toml");
    std::fs::write(
        &toml,
        "[matrix]\nbindings = [\"udp\"]\ntests = [\"throughput\"]\nreliability = [\"best-effort\"]\n\
         sizes = [64, 128]\nrate = [1000]\n[settings]\nduration = \"3s\"\nwarmup = \"0s\"\ncpu = \"none\"\n",
    )
    .unwrap();
    let mut s = cli_pw(dir)
        .args(["sweep", toml.to_str().unwrap(), "--db", db])
        .args(["--json", json.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(s.stderr.take().unwrap())
        .lines()
        .map_while(Result::ok);
    let s = Running(s);
    let mut seen = Vec::new();
    for l in lines.by_ref() {
        if l.starts_with("[2/2]") {
            return (s, lines);
        }
        seen.push(l);
    }
    panic!("the sweep never reached its second cell: {seen:?}")
}

/// A sweep into a server's store, with `between` done to the server once
/// the first cell is saved: its exit, standard error from then on, JSON
/// file, store and directory.
fn sweep_across(
    server: &PgServer,
    dir: &Path,
    between: impl FnOnce(&PgServer),
) -> (
    std::process::ExitStatus,
    Vec<String>,
    std::path::PathBuf,
    String,
) {
    let db = server.url(PgServer::USER, "results", "");
    let json = dir.join("s.json");
    let (mut s, rest) = sweep(dir, &db, &json);
    between(server);
    let err: Vec<String> = rest.collect();
    let status = s.0.wait().unwrap();
    (status, err, json, db)
}

fn json_runs(p: &Path) -> usize {
    let f: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    f["runs"].as_array().map_or(0, Vec::len)
}

/// The server restarts while the second cell measures: its save
/// connects anew, and both cells are in the store and the JSON file.
#[test]
fn a_sweep_reconnects_after_a_server_restart_between_cells() {
    let (server, dir) = (PgServer::start(), tempfile::tempdir().unwrap());
    let (status, err, json, db) = sweep_across(&server, dir.path(), |server| {
        server.stop();
        server.start_again();
    });
    assert!(status.success(), "{status:?}: {err:?}");
    assert_eq!(json_runs(&json), 2);
    assert_eq!(count(dir.path(), &db), 2);
}

/// The server is gone when the second cell ends: the sweep stops with one
/// line naming the cell, --db and the store, and the JSON file has both
/// cells' runs; with the server back, `--resume` measures the cell the
/// store lacks.
#[test]
fn a_sweep_whose_server_is_gone_fails_clearly_and_keeps_the_json() {
    let (server, dir) = (PgServer::start(), tempfile::tempdir().unwrap());
    let (status, err, json, db) = sweep_across(&server, dir.path(), PgServer::stop);
    assert_eq!(status.code(), Some(1), "{err:?}");
    let line = err
        .iter()
        .find(|l| l.contains("saving cell"))
        .unwrap_or_else(|| panic!("no line on the store: {err:?}"));
    assert!(
        line.contains("--db") && line.contains(&db) && line.contains("cannot connect"),
        "{line}"
    );
    assert_eq!(json_runs(&json), 2, "nothing measured is lost");
    // With the server back, --resume measures the cell the store lacks.
    server.start_again();
    let o = ok(cli_pw(dir.path())
        .args(["sweep", dir.path().join("s.toml").to_str().unwrap()])
        .args(["--db", &db, "--resume"])
        .output()
        .unwrap());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("1 already done, 1 to run"), "{err}");
    assert_eq!(count(dir.path(), &db), 2);
}

/// One line on standard error, exit 2, naming `--db` and `what`.
fn refused(o: Output, what: &str) -> String {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("--db") && err.contains(what), "{err}");
    err
}

#[test]
fn passwords_come_from_pgpassword_or_pgpass_never_the_url() {
    use std::os::unix::fs::PermissionsExt;
    let server = PgServer::start();
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let db = server.url(PgServer::USER, "results", "");
    // A wrong password.
    let o = cli(home)
        .args(["history", "--db", &db])
        .env("PGPASSWORD", "wrong")
        .output()
        .unwrap();
    let err = refused(o, &db);
    assert!(err.contains("PGPASSWORD"), "{err}");
    // None at all.
    let err = refused(
        cli(home).args(["history", "--db", &db]).output().unwrap(),
        &db,
    );
    assert!(err.contains("asks for a password"), "{err}");
    // One in the URL: refused before connecting, and not repeated.
    let with = format!("postgres://lab:{}@127.0.0.1:1/results", PgServer::PASSWORD);
    let o = cli(home).args(["history", "--db", &with]).output().unwrap();
    let err = refused(o, "PGPASSWORD");
    assert!(!err.contains(PgServer::PASSWORD), "{err}");
    // ~/.pgpass, read only when its owner alone may read it.
    let pgpass = home.join(".pgpass");
    std::fs::write(
        &pgpass,
        format!(
            "127.0.0.1:{}:results:{}:{}\n",
            server.port(),
            PgServer::USER,
            PgServer::PASSWORD
        ),
    )
    .unwrap();
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o644)).unwrap();
    let err = refused(
        cli(home).args(["history", "--db", &db]).output().unwrap(),
        &db,
    );
    assert!(err.contains("chmod 0600"), "{err}");
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o600)).unwrap();
    ok(cli(home).args(["history", "--db", &db]).output().unwrap());
    // And PUBSUBPERF_DB takes a URL as --db does.
    ok(cli(home)
        .args(["history"])
        .env("PUBSUBPERF_DB", &db)
        .output()
        .unwrap());
}
