//! The statistics of the bench scripts (bench/lib/ratios.py, table.py): the
//! median ratio of alternating rounds, its distribution-free interval, and
//! the table's verdicts, on rounds whose answers are known. The benchmark
//! pages quote these lines; a wrong order statistic would turn a cell's
//! verdict without a figure changing.

use std::path::{Path, PathBuf};
use std::process::Command;

use pubsubperf_testkit::require;

fn lib() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/lib")
}

fn python(script: &str, args: &[&str], env: &[(&str, &Path)]) -> String {
    require::command("python3", "python3");
    let out = Command::new("python3")
        .arg(lib().join(script))
        .args(args)
        // The table's dagger, whatever the locale.
        .env("PYTHONUTF8", "1")
        .envs(env.iter().copied())
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{script} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Latency rows "ours_p50 ours_p99 ref_p50 ref_p99" of `n` rounds: the
/// reference 10 / 20 us; ours p50 = 10 × (p50_from + 0.02 k) for round k =
/// 0..n-1 (given out of order: 0, n-1, 1, n-2, ...), ours p99 = 20 × p99
/// (the same ratio every round).
fn latency_rows(n: usize, p50_from: f64, p99: f64) -> String {
    (0..n)
        .map(|i| if i % 2 == 0 { i / 2 } else { n - 1 - i / 2 })
        .map(|k| {
            let p50 = 10.0 * (p50_from + 0.02 * k as f64);
            format!("{p50} {} 10 20\n", 20.0 * p99)
        })
        .collect()
}

/// Runs ratios.py on `rows` (kind "lat" or "tp", mode "busy", SIZE bytes),
/// appending its line to the table file `table`; what it printed.
fn report(rows: &str, kind: &str, size: &str, table: &Path) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rows");
    std::fs::write(&path, rows).unwrap();
    python(
        "ratios.py",
        &[path.to_str().unwrap(), kind, "busy", size, "ref"],
        &[("BENCH_TABLE", table)],
    )
}

fn ratios(rows: &str, kind: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    report(rows, kind, "1024", &dir.path().join("table.tsv"))
}

#[test]
fn nine_rounds_give_the_second_and_eighth_ratio_as_the_interval() {
    let out = ratios(&latency_rows(9, 0.90, 1.10), "lat");
    // p50 ratios 0.90, 0.92, ... 1.06: median 0.98; the sign test's 96.1 %
    // interval of nine rounds is the 2nd and 8th smallest.
    assert!(
        out.contains("median ratios p50 0.980 (met), p99 1.100 (NOT met)"),
        "{out}"
    );
    assert!(
        out.contains(
            "95 % intervals of the medians over 9 rounds: p50 0.920-1.040 (met), p99 1.100-1.100 (NOT met)"
        ),
        "{out}"
    );
}

#[test]
fn an_interval_that_holds_the_goal_says_so() {
    // Fifteen rounds: p50 ratios 0.90 ... 1.18, interval 4th and 12th
    // smallest: 0.96-1.12, which holds 1.05.
    let out = ratios(&latency_rows(15, 0.90, 1.10), "lat");
    assert!(out.contains("median ratios p50 1.040 (met)"), "{out}");
    assert!(
        out.contains("over 15 rounds: p50 0.960-1.120 (holds the goal)"),
        "{out}"
    );
}

#[test]
fn seventeen_rounds_give_the_fifth_and_thirteenth() {
    // 95.1 % coverage: at a level above 0.951 it would be the 4th and 14th.
    let out = ratios(&latency_rows(17, 0.90, 1.10), "lat");
    assert!(
        out.contains("over 17 rounds: p50 0.980-1.140 (holds the goal)"),
        "{out}"
    );
}

#[test]
fn six_rounds_give_the_extremes_and_five_none() {
    let out = ratios(&latency_rows(6, 0.90, 1.00), "lat");
    assert!(
        out.contains("over 6 rounds: p50 0.900-1.000 (met), p99 1.000-1.000 (met)"),
        "{out}"
    );
    let out = ratios(&latency_rows(5, 0.90, 1.00), "lat");
    assert!(
        out.contains("5 rounds: too few for a 95 % interval of the median (6 or more)"),
        "{out}"
    );
}

#[test]
fn a_series_short_of_rounds_is_named() {
    // One round's p99 is missing (0): p50 has six rounds, p99 five.
    let rows = latency_rows(6, 0.90, 1.00).replacen(" 20 10 20", " 0 10 20", 1);
    let out = ratios(&rows, "lat");
    assert!(
        out.contains(
            "intervals of the medians over their rounds: p50 0.900-1.000 (met), \
             p99 none (5 rounds; 6 or more make one)"
        ),
        "{out}"
    );
}

#[test]
fn fewer_than_six_rounds_have_no_interval() {
    let out = ratios("95 100\n100 100\n105 100\n", "tp");
    assert!(
        out.contains("median ratio 1.000 (met; goal >= 0.95)"),
        "{out}"
    );
    assert!(
        out.contains("3 rounds: too few for a 95 % interval of the median (6 or more)"),
        "{out}"
    );
}

#[test]
fn the_table_marks_a_miss_within_noise_and_counts_the_cells() {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("table.tsv");
    // One report per size:
    //   64 B   9 rounds: p50 0.90.. (met beyond noise), p99 1.10 (missed beyond)
    //   1 KiB 15 rounds: p50 0.90.. (0.960-1.120: holds the goal), p99 1.10
    //   64 KiB 9 rounds: p50 0.98.. (median 1.06, 1.000-1.120), p99 1.00:
    //                    missed only within noise
    //   1 MiB  3 rounds: met; 16 MiB 3 rounds: p99 1.10, no interval
    let reports = [
        ("64", latency_rows(9, 0.90, 1.10)),
        ("1024", latency_rows(15, 0.90, 1.10)),
        ("65536", latency_rows(9, 0.98, 1.00)),
        ("1048576", latency_rows(3, 0.90, 1.00)),
        ("16777216", latency_rows(3, 0.90, 1.10)),
    ];
    for (size, rows) in reports {
        report(&rows, "lat", size, &table);
    }
    let out = python("table.py", &[table.to_str().unwrap()], &[]);
    assert!(
        out.contains(
            "| 0.980 / **1.100** (9 of 15) | 1.040† / **1.100** | **1.060**† / 1.000 (9 of 15) \
             | 0.920 / 1.000 (3 of 15) | 0.920 / **1.100** (3 of 15) |"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "1 of the 5 cells with a figure met every goal; of the 4 missed, 1 only within \
             their rounds' noise, 2 beyond it, 1 with too few rounds for an interval"
        ),
        "{out}"
    );
}

/// With bench/counts.sh's verdicts (BENCH_COUNTS), a counted cell says what
/// its counts say, and one whose counts are at or under the reference's and
/// whose intervals hold the goal is settled: no recheck for it.
#[test]
fn counts_at_or_under_the_reference_settle_a_cell_within_noise() {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("table.tsv");
    for (size, rows) in [
        ("1024", latency_rows(15, 0.90, 1.10)),
        ("65536", latency_rows(9, 0.98, 1.00)),
        ("16777216", latency_rows(3, 0.90, 1.10)),
    ] {
        report(&rows, "lat", size, &table);
    }
    let counts = dir.path().join("counts.txt");
    std::fs::write(
        &counts,
        "subject kind size counter ours ref\n\
         verdict\t?\tlat\tbusy\tref\t1024\tMORE:futex-wait\n\
         verdict\t?\tlat\tbusy\tref\t65536\tok\n\
         verdict\t?\tlat\tbusy\tref\t16777216\tok\n",
    )
    .unwrap();
    let env = [("BENCH_COUNTS", counts.as_path())];
    let out = python("table.py", &[table.to_str().unwrap()], &env);
    assert!(
        out.contains(
            "| 1.040† / **1.100** · counts above ref: futex-wait \
             | **1.060**† / 1.000 (9 of 15) · counts ≤ ref (settled by counts) \
             | 0.920 / **1.100** (3 of 15) · counts ≤ ref |"
        ),
        "{out}"
    );
    let again = python("table.py", &["--recheck", table.to_str().unwrap()], &env);
    let sizes: Vec<&str> = again
        .lines()
        .map(|l| l.rsplit('\t').next().unwrap())
        .collect();
    // 16 MiB's counts are at or under, but three rounds have no interval.
    assert_eq!(sizes, ["1024", "16777216"], "{again}");
}

/// `CELLS=FILE bench/table.sh`, refused before anything is measured: a
/// missing file, a subject no script measures, and CELLS with FASTEST.
#[test]
fn table_sh_refuses_cells_it_cannot_measure() {
    require::command("bash", "bash");
    let dir = tempfile::tempdir().unwrap();
    let cells = dir.path().join("cells");
    std::fs::write(
        &cells,
        "zenoh\ttp\ttp:default\tzenoh-pingpong\t64\nbogus\tlat\tbusy\tref\t64\n",
    )
    .unwrap();
    let missing = dir.path().join("missing");
    let table = lib().join("../table.sh");
    for (file, fastest, says) in [
        (&missing, "0", "no such file, or empty"),
        (&cells, "0", "subject 'bogus' is not one of"),
        (&cells, "1", "with FASTEST=1 or DEFAULTS=1: choose one"),
    ] {
        let out = Command::new("bash")
            .arg(&table)
            .arg("1")
            .env("CELLS", file)
            .env("FASTEST", fastest)
            .env("OUT", dir.path().join("out"))
            .output()
            .expect("bash runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(2),
            "CELLS={file:?} FASTEST={fastest}: {err}"
        );
        assert!(
            err.contains(says),
            "CELLS={file:?} FASTEST={fastest}: {err}"
        );
    }
}
