//! Files a local stranger could redirect: a symbolic link planted at the
//! path of every output the user names (a run's --json and --csv, a
//! report, an export, the man pages, the results database) never sends
//! what is written to its target. Runs the real binary; no figure is
//! asserted.

use std::path::Path;
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pubsubperf"))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn ok(args: &[&str]) -> Output {
    let o = bin().args(args).output().expect("runs");
    assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
    o
}

/// A link at `at` to `victim`.
fn plant(victim: &Path, at: &Path) {
    std::os::unix::fs::symlink(victim, at).unwrap();
}

#[test]
fn links_planted_at_every_output_leave_their_target_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let outputs = [
        "run.json",
        "run.csv",
        "r.html",
        "e.json",
        "e.csv",
        "man/pubsubperf.1",
    ];
    std::fs::create_dir(dir.path().join("man")).unwrap();
    for o in outputs {
        plant(&victim, &dir.path().join(o));
    }
    ok(&[
        "latency",
        "-b",
        "udp",
        "-n",
        "200",
        "--warmup",
        "0s",
        "-q",
        "--no-save",
        "--json",
        &d("run.json"),
        "--csv",
        &d("run.csv"),
    ]);
    ok(&["report", &d("run.json"), "--out", &d("r.html")]);
    let db = d("results.sqlite");
    ok(&["import", &d("run.json"), "--db", &db]);
    ok(&[
        "export",
        "--db",
        &db,
        "--json",
        &d("e.json"),
        "--csv",
        &d("e.csv"),
    ]);
    ok(&["man", "--dir", &d("man")]);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    for o in outputs {
        let p = dir.path().join(o);
        let m = std::fs::symlink_metadata(&p).unwrap();
        assert!(m.is_file(), "{o} is still a link");
        assert!(m.len() > 0, "{o} is empty");
    }
}

/// A results database whose path is a symbolic link is refused in one line
/// naming --db (exit 2), by every command that opens it; the target is
/// never written.
#[test]
fn a_database_path_that_is_a_link_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    plant(&victim, &dir.path().join("db.sqlite"));
    // Dangling, as a stranger would leave it for a file yet to come.
    plant(
        &dir.path().join("nothing"),
        &dir.path().join("later.sqlite"),
    );
    for db in [d("db.sqlite"), d("later.sqlite")] {
        for args in [
            vec!["history", "--db", &db],
            vec![
                "latency", "-b", "udp", "-n", "100", "--warmup", "0s", "-q", "--db", &db,
            ],
        ] {
            let o = bin().args(&args).output().unwrap();
            let e = text(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
            assert_eq!(e.trim_end().lines().count(), 1, "{args:?}: {e}");
            assert!(
                e.contains("--db: ") && e.contains("is a symbolic link"),
                "{args:?}: {e}"
            );
        }
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(!dir.path().join("nothing").exists());
}
