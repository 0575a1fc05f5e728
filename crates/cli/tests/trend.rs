//! `pubsubperf history --trend` on a store whose runs name their commit:
//! a 15 % rise at commit c20 is shown there, and `--fail-if` turns it
//! into exit 3 for CI (a threshold above it does not); a malformed
//! condition is one line, exit 2. The report's Trends section, as
//! Chromium draws it, plots the series with the change point marked.

use std::path::Path;
use std::process::{Command, Output};

fn pp(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pubsubperf"))
        .args(args)
        .env_remove("PUBSUBPERF_DB")
        .env_remove("PUBSUBPERF_LABELS")
        .env("XDG_DATA_HOME", home)
        .output()
        .expect("runs")
}

#[test]
fn a_rise_at_a_commit_is_found_and_fails_ci() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let one = home.join("one.json");
    let o = pp(
        home,
        &[
            "latency",
            "-b",
            "mock",
            "-n",
            "50",
            "--warmup",
            "0s",
            "--no-save",
            "-q",
            "--json",
            one.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&one).unwrap()).unwrap();
    let db = home.join("r.sqlite");
    let db = db.to_str().unwrap();
    // 30 commits of 2 runs each, 10 µs ± 3 %, then 11.5 µs from c20 on.
    for c in 0..30 {
        let level = if c >= 20 { 11_500.0 } else { 10_000.0 };
        let run = file["runs"][0].clone();
        let runs: Vec<serde_json::Value> = (0..2)
            .map(|rep| {
                let mut r = run.clone();
                let jitter = 1.0 + 0.03 * ((c * 2 + rep) as f64 * 2.1).sin();
                r["latency_ns"]["p50"] = serde_json::json!((level * jitter) as u64);
                r
            })
            .collect();
        file["runs"] = serde_json::Value::Array(runs);
        let f = home.join(format!("c{c}.json"));
        std::fs::write(&f, file.to_string()).unwrap();
        let label = format!("commit=c{c}");
        let o = pp(
            home,
            &["import", f.to_str().unwrap(), "--db", db, "--label", &label],
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let o = pp(home, &["history", "--db", db, "--trend"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    let change: Vec<&str> = out.lines().filter(|l| l.contains("change at")).collect();
    assert_eq!(change.len(), 1, "{out}");
    assert!(
        change[0].contains("change at c20: +1") && change[0].ends_with("worse"),
        "{out}"
    );
    let o = pp(
        home,
        &["history", "--db", db, "--trend", "--fail-if", "change>10%"],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains("worse at mock/") && err.contains(" at c20 (+1"),
        "{err}"
    );
    let o = pp(
        home,
        &["history", "--db", db, "--trend", "--fail-if", "change>25%"],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = pp(
        home,
        &["history", "--db", db, "--trend", "--fail-if", "slower"],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("--fail-if 'slower'"), "{err}");

    let html = home.join("trends.html");
    let o = pp(
        home,
        &["report", "--db", db, "--out", html.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let exe = pubsubperf_testkit::chromium::require();
    let dom =
        pubsubperf_testkit::chromium::rendered_dom(&exe, &format!("file://{}", html.display()));
    let trends = &dom[dom.find("id=\"plot-trend-0\"").expect("a trend plot")..];
    let plot = &trends[..trends.find("</svg>").expect("closed svg")];
    assert!(
        plot.contains("change point"),
        "the change is marked: {plot}"
    );
    assert!(
        trends.contains("change at c20: +1"),
        "the change is listed under its plot"
    );
}
