//! Exact answers through the whole tool, from the `mock` binding: its
//! virtual clock makes each ping's latency `delay-ns + step-ns × (k mod
//! period)` for send number k (see crates/mock), so results, merges and
//! reports have values known in advance. No figure here describes a machine.

use std::path::Path;
use std::process::{Command, Output};

/// Runs pubsubperf with its own empty data directory, so that this machine's
/// saved calibration (which adds lines under the tables) does not show.
fn run(args: &[&str]) -> Output {
    let data = tempfile::tempdir().expect("temp dir");
    let o = Command::new(env!("CARGO_BIN_EXE_pubsubperf"))
        .args(args)
        .env("XDG_DATA_HOME", data.path())
        .output()
        .expect("runs");
    assert!(
        o.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("written")).expect("valid json")
}

/// A mock `test` run (no warm-up, not saved) with `args`, its results
/// JSON written to `out` and returned with the table it printed.
fn mock_table(test: &str, args: &[&str], out: &Path) -> (serde_json::Value, String) {
    mock_warmed(test, "0s", args, out)
}

/// [`mock_table`] with a `--warmup` of `warmup`.
fn mock_warmed(test: &str, warmup: &str, args: &[&str], out: &Path) -> (serde_json::Value, String) {
    let mut all = vec![test, "-b", "mock", "--warmup", warmup, "--no-save", "-q"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", out.to_str().unwrap()]);
    let o = run(&all);
    (json(out), String::from_utf8_lossy(&o.stdout).into_owned())
}

/// [`mock_table`] without the table.
fn mock(test: &str, args: &[&str], out: &Path) -> serde_json::Value {
    mock_table(test, args, out).0
}

/// A mock latency run of `n` pings with default options into `out`.
fn latency(n: u64, out: &Path) -> serde_json::Value {
    mock("latency", &["-n", &n.to_string()], out)
}

/// The default mock delays of the first `n` sends.
fn delays(n: u64) -> Vec<u64> {
    (0..n).map(|k| 1000 + 10 * (k % 100)).collect()
}

/// Nearest rank: the smallest value with at least q·n values at or below it.
fn rank(sorted: &[u64], q: f64) -> u64 {
    let r = ((q * sorted.len() as f64).ceil() as usize).max(1);
    sorted[r - 1]
}

fn check_latency(l: &serde_json::Value, mut values: Vec<u64>) {
    values.sort_unstable();
    let n = values.len() as u64;
    let sum: u64 = values.iter().sum();
    assert_eq!(l["count"], n, "{l}");
    assert_eq!(l["min"], values[0], "{l}");
    assert_eq!(l["max"], *values.last().unwrap(), "{l}");
    assert_eq!(l["sum"], sum.to_string(), "{l}");
    assert_eq!(l["mean"].as_f64().unwrap(), sum as f64 / n as f64, "{l}");
    for (key, q) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99_9", 0.999)] {
        assert_eq!(l[key], rank(&values, q), "{key} of {l}");
    }
}

#[test]
fn latency_percentiles_are_exact() {
    let dir = tempfile::tempdir().unwrap();
    let r = latency(500, &dir.path().join("a.json"));
    let run = &r["runs"][0];
    assert_eq!(run["binding"], "mock");
    assert_eq!(run["complete"], true);
    let l = &run["latency_ns"];
    check_latency(l, delays(500));
    // The figures the user reads: 1000..1990 ns, five of each.
    assert_eq!(l["p50"], 1490);
    assert_eq!(l["p90"], 1890);
    assert_eq!(l["p99"], 1980);
    assert_eq!(l["mean"], 1495.0);
}

#[test]
fn each_second_has_its_own_percentiles() {
    let dir = tempfile::tempdir().unwrap();
    // Ping k takes 1 ms + 1 µs × k: each second's pings are slower than the
    // last second's, so each second's percentiles differ from the run's.
    let r = mock(
        "latency",
        &[
            "-n",
            "3000",
            "--opt",
            "delay-ns=1000000",
            "--opt",
            "step-ns=1000",
            "--opt",
            "period=3000",
        ],
        &dir.path().join("i.json"),
    );
    let intervals = r["runs"][0]["intervals"].as_array().expect("intervals");
    assert!(intervals.len() >= 4, "{intervals:?}");
    let mut first = 0u64;
    for iv in intervals {
        let n = iv["received"].as_u64().unwrap();
        let mut values: Vec<u64> = (first..first + n).map(|k| 1_000_000 + 1000 * k).collect();
        values.sort_unstable();
        for (key, q) in [("latency_p50_ns", 0.5), ("latency_p99_ns", 0.99)] {
            let exact = rank(&values, q);
            let got = iv[key].as_u64().unwrap_or_else(|| panic!("{key} in {iv}"));
            // The histogram's bucket: within 0.1 %, never below (see core::stats).
            assert!(
                got >= exact && got <= exact + exact / 1000,
                "{key} {got}, exact {exact}: {iv}"
            );
        }
        assert_eq!(iv["latency_max_ns"], *values.last().unwrap(), "{iv}");
        first += n;
    }
}

#[test]
fn one_way_equals_round_trip_half() {
    let dir = tempfile::tempdir().unwrap();
    let r = mock(
        "latency",
        &["-n", "300", "--one-way"],
        &dir.path().join("o.json"),
    );
    check_latency(&r["runs"][0]["latency_ns"], delays(300));
}

#[test]
fn loss_is_exact() {
    let dir = tempfile::tempdir().unwrap();
    let r = mock(
        "throughput",
        &[
            "--best-effort",
            "--opt",
            "drop-every=10",
            "--receive-queue",
            "20000",
            "-n",
            "10000",
        ],
        &dir.path().join("t.json"),
    );
    let run = &r["runs"][0];
    let t = &run["throughput"];
    assert_eq!(t["sent"], 10000, "{run}");
    assert_eq!(t["received"], 9000, "{run}");
    assert_eq!(t["lost"], 1000, "{run}");
    assert_eq!(t["duplicates"], 0, "{run}");
}

#[test]
fn a_run_of_slow_sends_ends_on_time() {
    // Each send moves the virtual clock 100 ms: a 1 s run is 10 sends, of
    // small samples as of large ones, not the 64 sends between two clock
    // checks of a fast writer.
    for size in ["64", "1MiB"] {
        let dir = tempfile::tempdir().unwrap();
        let r = mock(
            "throughput",
            &[
                "--size",
                size,
                "--duration",
                "1s",
                "--opt",
                "delay-ns=100000000",
                "--opt",
                "step-ns=0",
            ],
            &dir.path().join("t.json"),
        );
        let t = &r["runs"][0]["throughput"];
        assert_eq!(t["sent"], 10, "{size}: {t}");
        assert_eq!(t["received"], 10, "{size}: {t}");
    }
}

#[test]
fn unpaced_best_effort_loss_is_explained_under_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--best-effort",
        "--opt",
        "drop-every=10",
        "--receive-queue",
        "20000",
        "-n",
        "1000",
    ];
    let (_, table) = mock_table("throughput", &args, &dir.path().join("t.json"));
    assert!(
        table.contains(
            "mock, 64 B: 10.0 % lost: the unpaced best-effort sender outran the receiver"
        ),
        "{table}"
    );
    // A paced run's loss is the path's, not the sender's: no such line.
    let paced = [&args[..], &["--rate", "100000"]].concat();
    let (_, table) = mock_table("throughput", &paced, &dir.path().join("p.json"));
    assert!(!table.contains("outran the receiver"), "{table}");
}

/// 1000 samples under best effort through a mock writer that refuses
/// every 10th send (its sends number 9, 19, 29, ...).
const REFUSING_1000: &[&str] = &[
    "--best-effort",
    "--opt",
    "refuse-every=10",
    "--receive-queue",
    "20000",
    "-n",
    "1000",
];

#[test]
fn refused_sends_are_counted_as_rejected_under_best_effort() {
    let dir = tempfile::tempdir().unwrap();
    // Sends number 9, 19, 29, ... are refused: 1000 accepted take 1111
    // attempts, 111 of them refused; none of them is sent, so none is lost.
    let (v, table) = mock_table("throughput", REFUSING_1000, &dir.path().join("t.json"));
    let r = &v["runs"][0];
    let t = &r["throughput"];
    assert_eq!(t["sent"], 1000, "{r}");
    assert_eq!(t["received"], 1000, "{r}");
    assert_eq!(t["lost"], 0, "{r}");
    assert_eq!(t["rejected"], 111, "{r}");
    assert_eq!(r["complete"], true, "{r}");
    let reason = t["rejected_reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("mock send refused: writer queue full"),
        "{r}"
    );
    assert!(
        table.contains("mock, 64 B: 111 sends rejected (not sent, so in neither Sent nor Lost): mock send refused: writer queue full"),
        "{table}"
    );
    // The CSV has the column.
    let csv = dir.path().join("t.csv");
    run(&[
        "throughput",
        "-b",
        "mock",
        "--warmup",
        "0s",
        "--no-save",
        "-q",
        "--best-effort",
        "--opt",
        "refuse-every=10",
        "-n",
        "100",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = head
        .iter()
        .position(|c| *c == "rejected")
        .expect("rejected column");
    assert_eq!(row[col], "11", "{text}");
}

#[test]
fn refusals_of_the_warm_up_are_not_counted() {
    let dir = tempfile::tempdir().unwrap();
    // A millisecond of warm-up on the mock's clock is some 700 sends, 70
    // of them refused; the measured part's 1000 accepted sends take 1111
    // or 1112 attempts (where the warm-up ended in the cycle of 10), and
    // only their refusals count.
    let (v, _) = mock_warmed(
        "throughput",
        "1ms",
        REFUSING_1000,
        &dir.path().join("w.json"),
    );
    let r = &v["runs"][0];
    let t = &r["throughput"];
    assert_eq!(t["sent"], 1000, "{r}");
    assert_eq!(t["received"], 1000, "{r}");
    assert_eq!(t["lost"], 0, "{r}");
    assert_eq!(r["config"]["warmup_ns"], 1_000_000, "{r}");
    let rejected = t["rejected"].as_u64().unwrap();
    assert!(rejected == 111 || rejected == 112, "{r}");
    assert_eq!(r["complete"], true, "{r}");
}

#[test]
fn a_refused_send_ends_a_reliable_run_with_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_pubsubperf"))
        .args([
            "throughput",
            "-b",
            "mock",
            "--warmup",
            "0s",
            "--no-save",
            "-q",
            "--opt",
            "refuse-every=10",
            "-n",
            "1000",
            "--json",
        ])
        .arg(dir.path().join("r.json"))
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success(),
        "a reliable run went on after a refusal: {err}"
    );
    assert!(
        err.contains("mock send refused: writer queue full: the middleware's send queue is full"),
        "{err}"
    );
}

#[test]
fn lost_pings_are_counted_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let (r, table) = mock_table(
        "latency",
        &[
            "--best-effort",
            "--opt",
            "drop-every=100",
            "--echo-timeout",
            "2s",
            "-n",
            "200",
        ],
        &dir.path().join("l.json"),
    );
    // The ping writer drops pings 100 and 200; the echo writer answers the
    // other 198 and drops its echo 100. The echo timeout is long, so that a
    // busy machine does not turn a late echo into a loss.
    let run = &r["runs"][0];
    assert_eq!(run["pings"]["sent"], 200, "{run}");
    assert_eq!(run["pings"]["echoed"], 197, "{run}");
    assert_eq!(run["pings"]["lost"], 3, "{run}");
    assert_eq!(run["latency_clock"], "virtual", "{run}");
    assert_eq!(run["latency_ns"]["count"], 197, "{run}");
    assert!(
        table.contains("64 B: 3 of 200 pings lost (no echo within --echo-timeout)"),
        "{table}"
    );
}

/// Issue 17: under best effort a ping the binding refuses is counted as
/// rejected (not sent, not lost) and the run goes on; a refused echo is a
/// lost ping. Both show in the latency table, the sweep summary's
/// `rejected` column and `--fail-if rejected>0`.
#[test]
fn refused_pings_are_counted_as_rejected_under_best_effort() {
    let dir = tempfile::tempdir().unwrap();
    let l = dir.path().join("l.json");
    // The ping writer refuses its sends 9, 19, ...: 300 pings take 333
    // attempts, 33 refused. The echo writer refuses its echoes 9, 19, ...
    // of the 300: at least 30 pings lost (a late echo on a busy machine
    // may add to them).
    let (r, table) = mock_table(
        "latency",
        &[
            "--best-effort",
            "--opt",
            "refuse-every=10",
            "--echo-timeout",
            "100ms",
            "-n",
            "300",
        ],
        &l,
    );
    let one = &r["runs"][0];
    let p = &one["pings"];
    assert_eq!(one["complete"], true, "{one}");
    assert_eq!(p["sent"], 300, "{one}");
    assert_eq!(p["rejected"], 33, "{one}");
    assert!(p["lost"].as_u64().unwrap() >= 30, "{one}");
    assert_eq!(
        p["echoed"].as_u64().unwrap() + p["lost"].as_u64().unwrap(),
        300,
        "{one}"
    );
    let reason = p["rejected_reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("mock send refused: writer queue full"),
        "{one}"
    );
    assert!(
        table.contains("64 B: 33 pings rejected (not sent, so in neither sent nor lost): mock send refused: writer queue full"),
        "{table}"
    );
    // --fail-if rejected>0 fails (exit 3) on it, and holds on a clean run
    // (each compared with itself: the options are part of the cell).
    let clean = dir.path().join("c.json");
    latency(100, &clean);
    let (l, clean) = (l.to_str().unwrap(), clean.to_str().unwrap());
    let o = Command::new(env!("CARGO_BIN_EXE_pubsubperf"))
        .args(["compare", l, l, "--fail-if", "rejected>0"])
        .output()
        .expect("runs");
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(3), "{out}");
    assert!(out.contains("rejected is 33"), "{out}");
    run(&["compare", clean, clean, "--fail-if", "rejected>0"]);
}

/// The sweep summary has a `rejected` column: refused pings (latency) and
/// refused sends (throughput).
#[test]
fn the_sweep_summary_shows_rejected_sends_and_pings() {
    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("s.toml");
    std::fs::write(
        &toml,
        "[matrix]\nbindings = [\"mock\"]\ntests = [\"latency\", \"throughput\"]\nreliability = [\"best-effort\"]\nsizes = [64]\n[settings]\ncount = 100\nwarmup = \"0s\"\ncpu = \"none\"\necho_timeout = \"100ms\"\nopt = [\"refuse-every=10\"]\nreceive_queue = 1000\n",
    )
    .unwrap();
    let o = run(&[
        "sweep",
        toml.to_str().unwrap(),
        "--db",
        dir.path().join("r.sqlite").to_str().unwrap(),
        "--json",
        dir.path().join("s.json").to_str().unwrap(),
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    let head = out
        .lines()
        .find(|l| l.starts_with("BINDING"))
        .unwrap_or_else(|| panic!("no summary: {out}"));
    assert!(head.trim_end().ends_with("rejected"), "{out}");
    let rows: Vec<&str> = out.lines().filter(|l| l.starts_with("mock")).collect();
    assert_eq!(rows.len(), 2, "{out}");
    // 100 sent take 111 attempts: 11 refused, in both tests.
    for row in rows {
        assert_eq!(row.split_whitespace().last(), Some("11"), "{out}");
    }
}

#[test]
fn merged_percentiles_equal_the_pooled_samples() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    // Different counts of one cell: different distributions (250 pings
    // cover the cycle 2.5 times, 130 pings 1.3 times).
    latency(250, &a);
    latency(130, &b);
    let m = dir.path().join("m.json");
    run(&[
        "merge",
        "-o",
        m.to_str().unwrap(),
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ]);
    let merged = json(&m);
    assert_eq!(merged["runs"].as_array().unwrap().len(), 1, "{merged}");
    let mut pooled = delays(250);
    pooled.extend(delays(130));
    check_latency(&merged["runs"][0]["latency_ns"], pooled);
}

#[test]
fn report_shows_the_exact_figures() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    latency(500, &a);
    let html = dir.path().join("r.html");
    run(&["report", "-o", html.to_str().unwrap(), a.to_str().unwrap()]);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("1.490 µs (500 samples"),
        "p50 of 500 mock pings missing"
    );
    assert!(page.contains("mock"));
}

#[test]
fn compare_table_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    latency(500, &a);
    latency(500, &b);
    let o = run(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--fail-if",
        "p50>+1%",
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    let table: Vec<&str> = text.lines().skip(2).collect();
    assert_eq!(
        table,
        [
            "Latency, one-way µs (repetitions merged; p-value: Welch's t-test on per-repetition p50):",
            "CELL     REPS  p50 BASE  p50 NEW  Δ p50  p99 BASE  p99 NEW  Δ p99  max NEW  p-value",
            "mock 64   1/1     1.490    1.490  +0.0%     1.980    1.980  +0.0%    1.990      n/a",
            "(* p < 0.05; n/a: a test needs at least 2 repetitions on each side)",
        ],
        "{text}"
    );
}

#[test]
fn latency_table_snapshot() {
    let o = run(&[
        "latency",
        "-b",
        "mock",
        "-n",
        "500",
        "--warmup",
        "0s",
        "--no-save",
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5, "{text}");
    // Discovery takes real time, even the mock's: its figures are not compared.
    assert!(
        lines[4].starts_with("discovery: 64 B: writer matched "),
        "{text}"
    );
    assert!(
        lines[0].starts_with("latency over mock (mock), reliable, bytes, wait block"),
        "{text}"
    );
    assert_eq!(
        lines[1],
        "One-way latency in µs (one-way = round trip / 2):"
    );
    // CPU columns are real measurements of the process: not compared.
    assert_eq!(
        lines[3][..lines[2].find("CPUpub").unwrap()].trim_end(),
        "        64        500      1.495      0.289      1.000      1.990      1.490      1.890      1.980      1.990      1.990      1.990"
    );
}

/// A `--fail-if` condition that holds exits with 3 (a regression), not 1
/// (an error): 150 pings cover the delay cycle 1.5 times, so their p50 is
/// below that of 300 pings (1.370 against 1.490 µs).
#[test]
fn fail_if_violation_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    // Not pinned: the figures are virtual, and a busy core must not stall the run.
    mock("latency", &["-n", "150", "--cpu", "none"], &a);
    mock("latency", &["-n", "300", "--cpu", "none"], &b);
    let o = Command::new(env!("CARGO_BIN_EXE_pubsubperf"))
        .args(["compare", a.to_str().unwrap(), b.to_str().unwrap()])
        .args(["--fail-if", "p50>+1%"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(3), "{out}");
    assert!(
        out.contains("FAILED: 1 --fail-if violation(s)") && out.contains("p50>+1%: mock 64"),
        "{out}"
    );
    // The same comparison the other way round holds: exit 0.
    let o = run(&[
        "compare",
        b.to_str().unwrap(),
        a.to_str().unwrap(),
        "--fail-if",
        "p50>+1%",
    ]);
    assert_eq!(o.status.code(), Some(0));
}
