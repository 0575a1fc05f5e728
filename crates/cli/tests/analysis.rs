//! The analysis commands end to end on real runs of the binary: report
//! (and its rendering in headless Chromium), merge, compare with
//! `--fail-if`, import, history and export, also of topology runs (over
//! the mock, whose figures are exact), and of a hostile imported file. No
//! test asserts a latency or throughput figure of a real binding.

use pubsubperf_testkit::chromium::{self, Chromium, rendered_dom};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pubsubperf"))
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn ok(args: &[&str]) -> Output {
    let o = run(args);
    assert!(
        o.status.success(),
        "{args:?}: {}{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    o
}

/// Asserts a one-line error naming `needle` and exit code 2.
fn usage_error(args: &[&str], needle: &str) {
    let o = run(args);
    let e = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
    assert_eq!(
        e.trim_end().lines().count(),
        1,
        "{args:?}: not one line: {e}"
    );
    assert!(e.contains(needle), "{args:?}: {e}");
}

/// Real results: a latency run over udp and a throughput run over tcp,
/// two sizes each, short. Runs saved by default go to a database in `dir`,
/// never the user's.
fn measure(dir: &Path, tag: &str) -> (PathBuf, PathBuf) {
    let lat = dir.join(format!("lat-{tag}.json"));
    let tp = dir.join(format!("tp-{tag}.json"));
    for (test, binding, out) in [("latency", "udp", &lat), ("throughput", "tcp", &tp)] {
        let o = bin()
            .env("PUBSUBPERF_DB", dir.join("default.sqlite"))
            .args([test, "-b", binding, "-s", "64,1KiB", "--duration", "1200ms"])
            .args(["--warmup", "100ms", "-q", "--json", out.to_str().unwrap()])
            .output()
            .expect("runs");
        assert!(o.status.success(), "{test}: {}", text(&o.stderr));
    }
    (lat, tp)
}

#[test]
fn report_renders_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let (lat, tp) = measure(dir.path(), "r");
    let out = dir.path().join("report.html");
    let svg = dir.path().join("svg");
    let o = ok(&[
        "report",
        lat.to_str().unwrap(),
        tp.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--svg-dir",
        svg.to_str().unwrap(),
    ]);
    assert!(text(&o.stdout).contains("wrote"));
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(
        !html.contains("<script") && !html.contains("https://"),
        "not self-contained"
    );
    let mut svgs: Vec<String> = std::fs::read_dir(&svg)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    svgs.sort();
    for want in [
        "latency-vs-size.svg",
        "throughput-samples.svg",
        "throughput-mbps.svg",
        "spectrum-latency-udp.svg",
        "cpu-latency.svg",
        "cpu-throughput.svg",
    ] {
        assert!(svgs.iter().any(|s| s == want), "{want} missing in {svgs:?}");
    }
    let exe = chromium::require();
    let url = format!("file://{}", out.display());
    // The DOM as Chromium parsed it: every plot is an svg with data points.
    let dom = rendered_dom(&exe, &url);
    let plots: Vec<&str> = dom.split("<svg").skip(1).collect();
    assert_eq!(plots.len(), svgs.len(), "each plot is inline once");
    for p in &plots {
        let body = &p[..p.find("</svg>").expect("closed svg")];
        let id = body
            .split("id=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .unwrap_or("?");
        let bars = body.matches("class=\"bar\"").count();
        assert!(
            body.contains("class=\"series\"") || bars > 0,
            "{id}: no line"
        );
        assert!(
            body.matches("class=\"pt\"").count() + bars >= 1,
            "{id}: no data point"
        );
        assert!(!body.contains("no data"), "{id}: empty");
    }
    // The screenshot is not blank: many non-background pixels, many colors.
    let png_path = dir.path().join("shot.png");
    let (_, err) = Chromium::start(
        &exe,
        &[
            format!("--screenshot={}", png_path.display()),
            "--window-size=1280,2400".into(),
            url,
        ],
    )
    .output();
    assert!(png_path.exists(), "no screenshot: {err}");
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(&png_path).unwrap(),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let bpp = info.color_type.samples();
    let px: Vec<&[u8]> = buf[..info.buffer_size()].chunks(bpp).collect();
    let first = px[0];
    let differing = px.iter().filter(|p| p[..3] != first[..3]).count();
    let mut colors: Vec<[u8; 3]> = px.iter().map(|p| [p[0], p[1], p[2]]).collect();
    colors.sort_unstable();
    colors.dedup();
    assert!(
        differing * 20 > px.len(),
        "screenshot is nearly uniform ({differing} of {} pixels differ)",
        px.len()
    );
    assert!(
        colors.len() > 50,
        "screenshot has only {} colors",
        colors.len()
    );
}

/// Each plot of a rendered page: its id and the texts of its legend (a bar
/// chart's legend is the names of its bars).
fn legends(dom: &str) -> Vec<(String, Vec<String>)> {
    dom.split("<svg")
        .skip(1)
        .map(|p| {
            let body = &p[..p.find("</svg>").expect("closed svg")];
            let id = body
                .split("id=\"")
                .nth(1)
                .and_then(|s| s.split('"').next())
                .unwrap_or("?")
                .to_string();
            let texts = body
                .split("<g class=\"legend\">")
                .nth(1)
                .map_or(Vec::new(), |g| {
                    g[..g.find("</g>").expect("closed legend")]
                        .split("<text")
                        .skip(1)
                        .map(|t| {
                            t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()].to_string()
                        })
                        .collect()
                });
            (id, texts)
        })
        .collect()
}

/// The quick comparison's report (the main job's `pubsubperf-report.html`,
/// the first a newcomer opens) as Chromium renders it: every series is
/// named by its binding, transport, mode and batching, exactly, and no
/// label holds `=` or `{` (a search's outputs, absent settings, JSON); the
/// throughput at its one size is a bar chart; the search's trials have a
/// table of their own. The figures are not checked.
#[test]
fn quick_report_legends_in_chromium() {
    let exe = chromium::require();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pubsubperf-report.html");
    let o = bin()
        .current_dir(dir.path())
        .env("PUBSUBPERF_DB", dir.path().join("unused.sqlite"))
        .args(["quick", "-b", "udp,tcp,cyclonedds", "--duration", "200ms"])
        .args(["--no-save", "--out", out.to_str().unwrap()])
        .output()
        .expect("runs");
    let said = format!("{}{}", text(&o.stdout), text(&o.stderr));
    assert!(o.status.success() && out.exists(), "quick: {said}");
    let dom = rendered_dom(&exe, &format!("file://{}", out.display()));
    let legends = legends(&dom);
    let legend = |id: &str| -> Vec<&str> {
        legends
            .iter()
            .find(|(i, _)| i == id)
            .unwrap_or_else(|| panic!("no {id} in the page; quick said: {said}"))
            .1
            .iter()
            .map(String::as_str)
            .collect()
    };
    let (dds, dds_tp) = (
        "cyclonedds/udp listener",
        "cyclonedds/udp listener batched 14720 B",
    );
    assert_eq!(
        legend("plot-latency-vs-size"),
        [dds, "tcp", "udp", "p50", "p99", "max"],
        "quick said: {said}"
    );
    for id in ["plot-throughput-samples", "plot-throughput-mbps"] {
        assert_eq!(legend(id), [dds_tp, "tcp", "udp"], "{id}");
    }
    assert_eq!(
        legend("plot-cpu-latency"),
        [dds, "tcp", "udp", "publisher", "subscriber"]
    );
    assert_eq!(
        legend("plot-cpu-throughput"),
        [
            format!("{dds_tp} publisher").as_str(),
            &format!("{dds_tp} subscriber"),
            "tcp publisher",
            "tcp subscriber",
            "udp publisher",
            "udp subscriber"
        ]
    );
    // One size: bars, one per series, not a line with one x.
    let tp = dom
        .split("<svg")
        .find(|p| p.contains("id=\"plot-throughput-samples\""))
        .unwrap();
    let tp = &tp[..tp.find("</svg>").unwrap()];
    assert_eq!(tp.matches("class=\"bar\"").count(), 3);
    assert!(!tp.contains("class=\"series\""));
    for (id, texts) in &legends {
        for t in texts {
            assert!(!t.contains(['=', '{']), "{id}: label '{t}'");
        }
    }
    for name in dom.split("data-name=\"").skip(1) {
        let name = &name[..name.find('"').unwrap()];
        assert!(!name.contains(['=', '{']), "series named '{name}'");
    }
    assert!(
        dom.contains(
            "Throughput search: udp (the highest rate with loss ≤ 0.1 %, at most 6 trials)"
        ),
        "no table of the search's trials"
    );
}

#[test]
fn merge_compare_import_history_export() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let (lat1, _) = measure(dir.path(), "1");
    let (lat2, _) = measure(dir.path(), "2");
    let (l1, l2) = (lat1.to_str().unwrap(), lat2.to_str().unwrap());
    // Merge: two repetitions of two cells become two runs with the summed counts.
    let o = ok(&["merge", l1, l2, "--out", &d("merged.json")]);
    assert!(
        text(&o.stdout).contains("4 run(s) from 2 file(s) merged into 2 cell(s)"),
        "{}",
        text(&o.stdout)
    );
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d("merged.json")).unwrap()).unwrap();
    let a: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&lat1).unwrap()).unwrap();
    let b: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&lat2).unwrap()).unwrap();
    for i in 0..2 {
        let n = |v: &serde_json::Value| v["runs"][i]["latency_ns"]["count"].as_u64().unwrap();
        assert_eq!(n(&m), n(&a) + n(&b));
    }
    // Compare a file with itself: no change, so the conditions hold.
    let o = ok(&[
        "compare",
        l1,
        l1,
        "--fail-if",
        "p99>+10%",
        "--fail-if",
        "p50>+1us",
    ]);
    let out = text(&o.stdout);
    assert!(
        out.contains("2 cell(s) matched") && out.contains("+0.0%"),
        "{out}"
    );
    // A limit no real run can meet fails with exit 3 (a regression, not
    // an error: 1) and says why.
    let o = run(&["compare", l1, l2, "--fail-if", "p50>1ns"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("FAILED: 2 --fail-if violation(s)"),
        "{}",
        text(&o.stdout)
    );
    usage_error(
        &["compare", l1, l2, "--fail-if", "p99>>3"],
        "--fail-if 'p99>>3'",
    );
    usage_error(
        &["compare", l1, l2, "--fail-if", "p95>+1%"],
        "unknown metric 'p95'",
    );
    usage_error(&["compare", l1, &d("missing.json")], "NEW");
    usage_error(
        &["report", &d("missing.json"), "--out", &d("x.html")],
        "RESULTS",
    );
    // Database: import, history, export, and a database selection in compare.
    let db = d("results.sqlite");
    ok(&["import", l1, "--db", &db]);
    ok(&["import", l2, "--db", &db, "--sweep", "second"]);
    let o = ok(&["history", "--db", &db]);
    let h = text(&o.stdout);
    assert_eq!(h.lines().count(), 5, "{h}");
    assert!(h.contains("second#0"), "{h}");
    let o = ok(&["history", "--db", &db, "--size", "1KiB", "--limit", "1"]);
    assert_eq!(text(&o.stdout).lines().count(), 2);
    usage_error(
        &["history", "--db", &db, "--since", "yesterday"],
        "--since 'yesterday'",
    );
    usage_error(&["history", "--db", &db, "--test", "ping"], "--test 'ping'");
    ok(&[
        "export",
        "--db",
        &db,
        "--sweep",
        "second",
        "--csv",
        &d("e.csv"),
        "--json",
        &d("e.json"),
    ]);
    let csv = std::fs::read_to_string(d("e.csv")).unwrap();
    assert_eq!(csv.lines().count(), 3);
    assert!(csv.starts_with("binding,transport,test,size,"));
    let e: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d("e.json")).unwrap()).unwrap();
    assert_eq!(e["runs"].as_array().unwrap().len(), 2);
    assert_eq!(e["runs"][0]["latency_ns"], b["runs"][0]["latency_ns"]);
    let o = ok(&["compare", "--db", &db, l1, "db:sweep=second"]);
    assert!(
        text(&o.stdout).contains("2 cell(s) matched"),
        "{}",
        text(&o.stdout)
    );
    usage_error(
        &[
            "export",
            "--db",
            &db,
            "--binding",
            "nope",
            "--csv",
            &d("n.csv"),
        ],
        "no runs match",
    );
    ok(&["report", "--db", &db, "--out", &d("db.html")]);
}

/// A topology over the mock, whose virtual clock makes every figure exact:
/// each send takes 500 + 10 × (k mod 50) ns, so of each 50 samples the hop
/// of `a` is late (over 800 ns, up to 950 ns) 15 times and too late (over
/// 950 ns) 4 times: 60 and 16 of 200.
const MOCK_TOPOLOGY: &str = r#"
name = "mockchain"
binding = "mock"
duration = "200ms"
warmup = "10ms"

[topics.a]
size = 64
rate = "1k"
deadline = "800ns"
too_late = "950ns"

[topics.b]
size = 128

[nodes.src]
publish = ["a"]

[nodes.mid]
relay = [{ from = "a", to = "b" }]

[nodes.sink1]
subscribe = ["b"]

[nodes.sink2]
subscribe = ["b"]
"#;

/// Issue 47 item 4: `topology` saves its run like `latency` does (not with
/// `--no-save`); `history` lists it, `export --json` and `report` carry it,
/// `compare` matches its paths and topics and `--fail-if` on them exits 3.
#[test]
fn topology_runs_are_saved_listed_reported_and_compared() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    std::fs::write(d("mock.toml"), MOCK_TOPOLOGY).unwrap();
    let default_db = d("default.sqlite");
    let topology = |json: &str, more: &[&str]| {
        let o = bin()
            .env("PUBSUBPERF_DB", &default_db)
            .args(["topology", &d("mock.toml"), "--json", &d(json)])
            .args([
                "--opt",
                "delay-ns=500",
                "--opt",
                "step-ns=10",
                "--opt",
                "period=50",
            ])
            .args(more)
            .output()
            .expect("runs");
        assert!(o.status.success(), "{}", text(&o.stderr));
        o
    };
    let o = topology("a.json", &[]);
    assert!(
        text(&o.stderr).contains("saved as run group"),
        "{}",
        text(&o.stderr)
    );
    let o = topology("b.json", &["--no-save"]);
    assert!(!text(&o.stderr).contains("saved"), "{}", text(&o.stderr));
    // One topology run stored: history lists it after its heading.
    let o = ok(&["history", "--db", &default_db]);
    let h = text(&o.stdout);
    let lines: Vec<&str> = h.lines().collect();
    assert_eq!(lines.len(), 3, "{h}");
    assert!(lines[0].starts_with("Topology runs"), "{h}");
    for col in [
        "TOPOLOGY",
        "PATHS",
        "worst p50 µs",
        "worst p99 µs",
        "too late",
    ] {
        assert!(lines[1].contains(col), "{col}: {h}");
    }
    let row: Vec<&str> = lines[2].split_whitespace().collect();
    // ID, time, name, binding, nodes, paths, p50, p99, lost, late, too late.
    assert_eq!(row[2..6], ["mockchain", "mock", "4", "2"], "{h}");
    assert_eq!(row[8..11], ["0", "60", "16"], "{h}");
    assert!(
        text(&o.stderr).contains("0 of 0 run(s) and 1 of 1 topology run(s)"),
        "{}",
        text(&o.stderr)
    );
    for (filter, n) in [
        (&["--name", "mockchain"][..], 3),
        (&["--test", "topology"][..], 3),
        (&["--name", "other"][..], 1),
        (&["--test", "latency"][..], 1),
    ] {
        let o = ok(&[&["history", "--db", &default_db][..], filter].concat());
        assert_eq!(text(&o.stdout).lines().count(), n, "{filter:?}");
    }
    // export --json carries it as saved.
    ok(&["export", "--db", &default_db, "--json", &d("e.json")]);
    let read = |f: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(d(f)).unwrap()).unwrap()
    };
    assert_eq!(read("e.json")["graphs"], read("a.json")["graphs"]);
    // merge keeps topology runs as they are.
    let o = ok(&["merge", &d("a.json"), &d("b.json"), "--out", &d("m.json")]);
    assert!(
        text(&o.stdout).contains("(2 topology run(s) kept as they are)"),
        "{}",
        text(&o.stdout)
    );
    assert_eq!(read("m.json")["graphs"].as_array().unwrap().len(), 2);
    // The report draws it.
    let o = ok(&["report", "--db", &default_db, "--out", &d("r.html")]);
    assert!(
        text(&o.stdout).contains("(1 plot(s)"),
        "{}",
        text(&o.stdout)
    );
    let html = std::fs::read_to_string(d("r.html")).unwrap();
    assert!(html.contains("<section id=\"topologies\">"));
    assert!(html.contains("class=\"topology\" id=\"topology-1-mockchain\""));
    // compare: the mock's figures are exact, so the two runs are alike.
    let o = ok(&[
        "compare",
        &d("a.json"),
        &d("b.json"),
        "--fail-if",
        "path_p99>+1%",
        "--fail-if",
        "late>+0",
    ]);
    let out = text(&o.stdout);
    assert!(out.contains("1 topology matched"), "{out}");
    assert!(
        out.contains("mockchain mock  src -a-> mid -b-> sink1"),
        "{out}"
    );
    assert!(!out.contains("FAILED"), "{out}");
    assert!(!text(&o.stderr).contains("no cell"), "{}", text(&o.stderr));
    let o = run(&[
        "compare",
        "--db",
        &default_db,
        "db:name=mockchain",
        &d("b.json"),
        "--fail-if",
        "too_late>0",
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("too_late>0: mockchain mock topic a: too_late is 16"),
        "{}",
        text(&o.stdout)
    );
    usage_error(
        &[
            "compare",
            &d("a.json"),
            &d("b.json"),
            "--fail-if",
            "late>1ms",
        ],
        "unknown unit 'ms' for late",
    );
    usage_error(
        &["history", "--db", &default_db, "--test", "graph"],
        "--test 'graph': expected latency, throughput or topology",
    );
}

// A hostile results file imported into the database (issue 65): its
// labels, binding names, hosts, versions and conditions carry escape
// sequences, a bell, a forged line and a spreadsheet formula. `history`,
// `compare` and `export --csv` print none of it raw: control characters
// come out escaped, and every CSV field stays one column, kept from being
// read as a formula.

/// The text that forges a table row on the next line, recolours the
/// terminal, rings its bell and retitles its window.
const FORGED: &str = "mock\u{1b}[31m\u{7}\nforged 99 row\r\u{1b}]0;owned\u{7}";
/// A formula a spreadsheet would run, and a field that would split in two.
const FORMULA: &str = "=HYPERLINK(\"http://x\",\"y\")";

/// No byte a terminal acts on: nothing below a space but the line feed,
/// no DEL, no C1 control; and no line the file forged.
fn assert_inert(what: &str, out: &[u8]) {
    let s = text(out);
    for c in s.chars() {
        assert!(
            c == '\n' || !c.is_control(),
            "{what}: a raw {:?} in:\n{s}",
            c
        );
    }
    assert!(
        !s.lines()
            .any(|l| l.trim_start().starts_with("forged 99 row")),
        "{what}: a forged line in:\n{s}"
    );
}

/// A mock latency run's results file, then its hostile copy.
fn hostile_files(dir: &Path) -> (String, String) {
    let base = dir.join("base.json");
    let b = base.to_str().unwrap();
    ok(&[
        "latency",
        "-b",
        "mock",
        "-n",
        "200",
        "--warmup",
        "0s",
        "--no-save",
        "-q",
        "--json",
        b,
    ]);
    let mut f: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&base).unwrap()).unwrap();
    for r in f["runs"].as_array_mut().unwrap() {
        r["binding"] = FORGED.into();
        r["transport"] = FORGED.into();
        r["data_type"] = FORGED.into();
        r["hosts"] = serde_json::json!({"publisher": FORMULA, "subscriber": "a,b"});
        r["conditions"] = serde_json::json!([FORGED]);
        r["config"]["deviations"] = serde_json::json!([FORGED]);
    }
    f["environment"]["hostname"] = FORGED.into();
    f["environment"]["pubsubperf"] = FORGED.into();
    let hostile = dir.join("hostile.json");
    std::fs::write(&hostile, serde_json::to_string(&f).unwrap()).unwrap();
    (b.to_string(), hostile.to_str().unwrap().to_string())
}

#[test]
fn an_imported_hostile_file_prints_no_control_characters_and_no_formula() {
    let dir = tempfile::tempdir().unwrap();
    let (base, hostile) = hostile_files(dir.path());
    let db = dir.path().join("r.sqlite");
    let db = db.to_str().unwrap();
    ok(&["import", &hostile, "--db", db]);

    let o = ok(&["history", "--db", db]);
    assert_inert("history", &o.stdout);
    assert!(
        text(&o.stdout).contains("mock\\u{1b}[31m\\u{7}\\nforged 99 row"),
        "{}",
        text(&o.stdout)
    );

    // Refused as not run as planned: the refusal names the conditions,
    // escaped; allowed, the tables and the lists of unmatched cells.
    let o = run(&["compare", &hostile, &base]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert_inert("compare (refused)", &o.stderr);
    for (a, b) in [(&hostile, &hostile), (&hostile, &base)] {
        let o = ok(&["compare", a, b, "--allow-not-as-planned"]);
        assert_inert("compare", &o.stdout);
        assert_inert("compare", &o.stderr);
        if a != b {
            // Unmatched cells and the environment listed, escaped.
            assert!(text(&o.stdout).contains("\\u{1b}"), "{}", text(&o.stdout));
        }
    }
    let o = ok(&[
        "compare",
        "--db",
        db,
        &hostile,
        "db:limit=5",
        "--allow-not-as-planned",
    ]);
    assert_inert("compare db:", &o.stdout);

    let csv_path = dir.path().join("e.csv");
    let o = ok(&["export", "--db", db, "--csv", csv_path.to_str().unwrap()]);
    assert_inert("export", &o.stderr);
    let written = std::fs::read(&csv_path).unwrap();
    assert_inert("export --csv", &written);
    let mut reader = csv::Reader::from_reader(&written[..]);
    let header = reader.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let runs: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&hostile).unwrap()).unwrap();
    assert_eq!(
        records.len(),
        runs["runs"].as_array().unwrap().len(),
        "{}",
        text(&written)
    );
    for r in &records {
        assert_eq!(r.len(), header.len(), "{r:?}");
        assert_eq!(&r[col("publisher_host")], "'=HYPERLINK(\"http://x\",\"y\")");
        assert_eq!(&r[col("subscriber_host")], "a,b");
        assert_eq!(
            &r[col("binding")],
            "mock\\u{1b}[31m\\u{7}\\nforged 99 row\\r\\u{1b}]0;owned\\u{7}"
        );
        // Numbers stay numbers.
        assert!(r[col("latency_count")].parse::<u64>().is_ok(), "{r:?}");
    }
}
