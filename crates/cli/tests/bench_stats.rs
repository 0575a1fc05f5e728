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

/// Latency rows "ours_p50 ours_p99 ref_p50 ref_p99": the reference 10 / 20
/// us, ours p50 = 10 × (0.90 + 0.02 k) for round k = 0..n-1 (given
/// shuffled), ours p99 = 20 × 1.10 (every round misses by 10 %).
fn latency_rows(n: usize) -> String {
    (0..n)
        .map(|i| (i * 7) % n)
        .map(|k| format!("{} 22 10 20\n", 10.0 * (0.90 + 0.02 * k as f64)))
        .collect()
}

fn ratios(rows: &str, kind: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rows");
    std::fs::write(&path, rows).unwrap();
    let table = dir.path().join("table.tsv");
    let out = python(
        "ratios.py",
        &[path.to_str().unwrap(), kind, "busy", "1024", "ref"],
        &[("BENCH_TABLE", &table)],
    );
    out + "TSV " + &std::fs::read_to_string(&table).unwrap()
}

#[test]
fn nine_rounds_give_the_second_and_eighth_ratio_as_the_interval() {
    let out = ratios(&latency_rows(9), "lat");
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
    let out = ratios(&latency_rows(15), "lat");
    assert!(out.contains("median ratios p50 1.040 (met)"), "{out}");
    assert!(
        out.contains("over 15 rounds: p50 0.960-1.120 (holds the goal)"),
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
    // Two reports: nine rounds whose p50 holds the goal and whose p99 misses
    // beyond noise, and fifteen rounds whose p50 holds the goal.
    for (rounds, size) in [(9, "64"), (15, "1024")] {
        let rows_path = dir.path().join("rows");
        std::fs::write(&rows_path, latency_rows(rounds)).unwrap();
        python(
            "ratios.py",
            &[rows_path.to_str().unwrap(), "lat", "busy", size, "ref"],
            &[("BENCH_TABLE", &table)],
        );
    }
    let out = python("table.py", &[table.to_str().unwrap()], &[]);
    // 64 B: p50 met beyond noise, p99 missed beyond noise (no dagger), 9
    // rounds of the row's 15; 1 KiB: p50 0.960-1.120 holds the goal (dagger),
    // p99 missed beyond it.
    assert!(
        out.contains("| 0.980 / **1.100** (9 of 15) | 1.040† / **1.100** |"),
        "{out}"
    );
    assert!(
        out.contains(
            "0 of 2 cells met every goal; of the 2 missed, 0 missed only within their rounds' noise"
        ),
        "{out}"
    );
}
