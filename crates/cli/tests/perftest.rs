//! `pubsubperf perftest` as Perftest's users run it: the seed documents'
//! `perftest_cpp` pairs as two processes on this host (a `-sub`, then a
//! `-pub`), with the default middleware (RTI Connext, as RTI's Perftest:
//! scripts/test.sh installs it) and, for the lines that need what
//! Connext's dynamic types have not (FlatData, Zero Copy), CycloneDDS;
//! and our output against Perftest's
//! documented formats (golden: CSV column names, legacy line shapes, JSON
//! keys). No figure is asserted, only shapes and that runs finish.
//!
//! The seed lines run as written except: `$DATALEN` is one value of the
//! users' loop, `-exec 23`/`-exec 20` are `-exec 1` (a test, not a study),
//! `-nic eth0` is `-nic 127.0.0.1` and the `-pub`'s `-peer` is 127.0.0.1
//! (both processes on this host).

mod pair;

use pair::{Pair, exits_within, words};
use std::time::Duration;

/// Runs a seed's pair: the `-sub` first, then the `-pub`, which finds it
/// waiting on this host (or reaches it through `-peer`); the `-sub` serves
/// that one run and exits. Returns the `-pub`'s standard output, then the
/// `-sub`'s.
fn pair(sub: &str, publisher: &str) -> (String, String) {
    let p = Pair::new("perftest");
    let (mut child, lines) = p.sub(sub);
    let out = p.run(publisher);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let status = exits_within(&mut child, Duration::from_secs(15), sub);
    let said = pair::rest(&lines);
    assert!(
        out.status.success(),
        "perftest {publisher}: {:?}\n{stdout}\n{stderr}",
        out.status
    );
    assert!(status.success(), "perftest {sub}: {status:?}: {said:?}");
    assert!(
        said.iter().any(|l| l.contains("session 1 ended")),
        "the -sub served no run: {said:?}"
    );
    if !publisher.contains("-peer") {
        assert!(
            stderr.contains("a -sub waits on this host"),
            "the -pub ran alone: {stderr}"
        );
    }
    (stdout, p.sub_stdout())
}

/// A `-sub` prints its own subscriber's throughput summary, as Perftest's
/// does (the seeds read throughput there), in a latency test too (the
/// pings it echoed).
fn sub_summary(sub_out: &str, size: usize) {
    assert!(
        sub_out.starts_with("Sample Size (Bytes), Total Samples,"),
        "{sub_out}"
    );
    parse_default_build(sub_out);
    summary(sub_out, size);
}

/// The summary line of a CSV output printed with `-noPrint` (its header,
/// then one line per size).
fn summary(stdout: &str, size: usize) -> Vec<String> {
    let mut lines = stdout.lines().filter(|l| !l.trim().is_empty());
    let header = lines.next().unwrap_or_default();
    assert!(header.starts_with("Sample Size (Bytes),"), "{stdout}");
    let row: Vec<String> = lines
        .next()
        .unwrap_or_default()
        .split(',')
        .map(|f| f.trim().to_string())
        .collect();
    assert_eq!(row[0], size.to_string(), "{stdout}");
    row
}

/// Whether RTI Connext runs here (the default middleware then, as in RTI's
/// Perftest). scripts/test.sh installs it: without it this fails, naming
/// the command that does.
fn connext_runs() {
    let o = pair::bin().args(["bindings", "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ok = v
        .as_array()
        .unwrap()
        .iter()
        .any(|b| b["name"] == "connext" && b["available"].get("Ok").is_some());
    assert!(
        ok,
        "prerequisite missing: RTI Connext's libraries (scripts/setup.sh --with-connext)"
    );
}

/// The seed's -flatData and -zeroCopy lines on the default middleware,
/// Connext: refused, one line naming the flag and why (FlatData and Zero
/// Copy need rtiddsgen's generated types), and which middleware have them.
#[test]
fn seed_000_flat_data_and_zero_copy_are_refused_on_connext() {
    connext_runs();
    let p = Pair::new("perftest");
    for (flag, line) in [
        (
            "-flatData",
            "-pub -nic 127.0.0.1 -noPrint -exec 1 -flatData -datalen 63001 -sendqueuesize 5",
        ),
        (
            "-zerocopy",
            "-pub -noPrint -transport SHMEM -exec 1 -zerocopy -datalen 63001 -sendqueuesize 5  -receivequeue 1",
        ),
    ] {
        let out = p.run(line);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{line}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        // The flag as Perftest spells it (`-zeroCopy`), whatever the case typed.
        assert!(
            err.to_lowercase()
                .starts_with(&format!("pubsubperf: {}:", flag.to_lowercase())),
            "{err}"
        );
        assert!(
            err.contains("connext") && err.contains("rtiddsgen"),
            "{err}"
        );
    }
}

/// Seed 000, "Throughput Test" and "Latency Test" over UDPv4, regular data
/// (the seed's comparison for FlatData: its lines without -flatData) on
/// the default middleware, Connext.
#[test]
fn seed_000_regular_data_pairs_on_connext() {
    connext_runs();
    let sub = "-sub -nic 127.0.0.1 -noPrint -datalen 63001 -sendqueuesize 5";
    let publisher = "-pub -nic 127.0.0.1 -noPrint -exec 1 -datalen 63001 -sendqueuesize 5";
    let (tp, sub_tp) = pair(sub, publisher);
    summary(&tp, 63001);
    sub_summary(&sub_tp, 63001);
    let (lat, _) = pair(sub, &format!("{publisher} -latencyTest"));
    assert!(lat.starts_with("Sample Size (Bytes), Ave (μs),"), "{lat}");
    summary(&lat, 63001);
    // Over SHMEM, as the seed's Zero Copy lines without -zerocopy.
    let sub = "-sub -noPrint -transport SHMEM -datalen 63001 -sendqueuesize 1  -receivequeue 5";
    let publisher =
        "-pub -noPrint -transport SHMEM -exec 1 -datalen 63001 -sendqueuesize 5  -receivequeue 1";
    summary(&pair(sub, &format!("{publisher} -latencytest")).0, 63001);
}

/// Seed 000's lines as written, FlatData and Zero Copy included, with
/// `-middleware cyclonedds` (which has a flat type and loans): UDPv4.
#[test]
fn seed_000_udp_pairs_on_cyclonedds() {
    let sub = "-sub -nic 127.0.0.1 -noPrint -flatData -datalen 63001 -sendqueuesize 5 -middleware cyclonedds";
    let publisher = "-pub -nic 127.0.0.1 -noPrint -exec 1 -flatData -datalen 63001 -sendqueuesize 5 -middleware cyclonedds";
    let (tp, sub_tp) = pair(sub, publisher);
    // Perftest's publisher prints the latency of one sample in 10000.
    assert!(tp.starts_with("Sample Size (Bytes), Ave (μs),"), "{tp}");
    summary(&tp, 63001);
    sub_summary(&sub_tp, 63001);
    let (lat, sub_lat) = pair(sub, &format!("{publisher} -latencyTest"));
    assert!(lat.starts_with("Sample Size (Bytes), Ave (μs),"), "{lat}");
    summary(&lat, 63001);
    sub_summary(&sub_lat, 63001);
}

/// Seed 000 over SHMEM with Zero Copy (FlatData implied, as Perftest), on
/// cyclonedds.
#[test]
fn seed_000_shmem_zero_copy_pairs_on_cyclonedds() {
    let sub = "-sub -noPrint -transport SHMEM -zerocopy -datalen 63001 -sendqueuesize 1  -receivequeue 5 -middleware cyclonedds";
    let publisher = "-pub -noPrint -transport SHMEM -exec 1 -zerocopy -datalen 63001 -sendqueuesize 5  -receivequeue 1 -middleware cyclonedds";
    let (tp, sub_tp) = pair(sub, publisher);
    summary(&tp, 63001);
    sub_summary(&sub_tp, 63001);
    summary(&pair(sub, &format!("{publisher} -latencytest")).0, 63001);
}

/// Seed 001 (raw transport, the `-pub` naming its `-sub` with `-peer`):
/// pubsubperf's udp baseline.
#[test]
fn seed_001_raw_pairs() {
    let sub = "-sub -peer 10.45.3.120 -nic 127.0.0.1 -raw -noPrint -datalen 1024";
    let (tp, sub_tp) = pair(
        sub,
        "-pub -peer 127.0.0.1 -nic 127.0.0.1 -raw -pub -noPrint -exec 1 -datalen 1024 -batchSize 0",
    );
    summary(&tp, 1024);
    sub_summary(&sub_tp, 1024);
    let (lat, _) = pair(
        sub,
        "-pub -peer 127.0.0.1 -nic 127.0.0.1 -raw -pub -noPrint -exec 1 -datalen 1024 -latencyTest",
    );
    summary(&lat, 1024);
}

/// A `-pub` alone on this host runs both sides itself; a refused option
/// exits 2 with one line.
#[test]
fn pub_alone_and_refusals() {
    let p = Pair::new("perftest");
    let out = p.run("-pub -raw -latencyTest -dataLen 64 -exec 1 -noPrint");
    assert!(out.status.success(), "{out:?}");
    summary(&String::from_utf8_lossy(&out.stdout), 64);
    let out = p.run("-pub -raw -keepDurationUsec 5");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("pubsubperf: -keepDurationUsec: not supported:"),
        "{err}"
    );
}

/// `-qosFile` on both sides (issue 50): the `-pub` applies its own file
/// and sends the `-sub` the file's name, and the `-sub` applies the file of
/// that name beside its own `-qosFile`. Each side's file traces its
/// CycloneDDS configuration into a log of its own.
#[test]
fn qos_files_apply_on_each_side_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let side = |name: &str| {
        let d = dir.path().join(name);
        std::fs::create_dir(&d).unwrap();
        let log = dir.path().join(format!("{name}.log"));
        let xml = format!(
            "<CycloneDDS><Domain id=\"any\"><Tracing><Verbosity>config</Verbosity><OutputFile>{}</OutputFile></Tracing></Domain></CycloneDDS>",
            log.display()
        );
        std::fs::write(d.join("trace.xml"), xml).unwrap();
        (d.join("trace.xml").display().to_string(), log)
    };
    let ((sub_xml, sub_log), (pub_xml, pub_log)) = (side("sub"), side("pub"));
    pair(
        &format!("-sub -nic 127.0.0.1 -noPrint -middleware cyclonedds -qosFile {sub_xml}"),
        &format!(
            "-pub -nic 127.0.0.1 -noPrint -exec 1 -dataLen 64 -middleware cyclonedds -qosFile {pub_xml}"
        ),
    );
    for (side, log) in [("-sub", sub_log), ("-pub", pub_log)] {
        let traced = std::fs::metadata(&log).map_or(0, |m| m.len());
        assert!(traced > 0, "the {side} did not apply its own -qosFile");
    }
}

// ---- Golden format: Perftest's output, as its users' parsers read it. ----
// (The lines' exact bytes are checked against Perftest's own printf
// formats in the unit tests of src/perftest/formats.rs.)

/// Does `line` have the shape of `pattern`? Both are split at whitespace;
/// a pattern word equals the line's word, or has a `#` standing for a
/// number between the same prefix and suffix.
fn shaped(line: &str, pattern: &str) -> bool {
    let (l, p): (Vec<&str>, Vec<&str>) = (words(line), words(pattern));
    l.len() == p.len()
        && l.iter().zip(&p).all(|(w, pw)| match pw.split_once('#') {
            None => w == pw,
            Some((pre, post)) => w
                .strip_prefix(pre)
                .and_then(|r| r.strip_suffix(post))
                .is_some_and(is_number),
        })
}

fn is_number(s: &str) -> bool {
    s.parse::<f64>().is_ok_and(f64::is_finite)
}

/// A CSV header's columns and a row of numbers of the same width.
fn csv_columns(line: &str) -> Vec<String> {
    line.split(',').map(|c| c.trim().to_string()).collect()
}

fn csv_row(line: &str, width: usize) {
    let fields = csv_columns(line);
    assert_eq!(fields.len(), width, "{line}");
    assert!(fields.iter().all(|f| is_number(f)), "{line}");
}

/// The columns RTI's default build prints as whole numbers, by header name.
const WHOLE: &[&str] = &[
    "Length (Bytes)",
    "Sample Size (Bytes)",
    "Latency (μs)",
    "Ave (μs)",
    "Min (μs)",
    "Max (μs)",
    "50% (μs)",
    "90% (μs)",
    "99% (μs)",
    "99.99% (μs)",
    "99.9999% (μs)",
    "Total Samples",
    "Samples/s",
    "Avg Samples/s",
    "Lost Samples",
];

/// Reads a CSV output as a user's parser of the default build does: find
/// each header (a line whose first column is a length), split the rows
/// under it on commas, read the columns by name, and take the whole-number
/// columns as integers (`int()`), the rest as floats. Returns the rows
/// read.
fn parse_default_build(text: &str) -> usize {
    let mut header: Option<Vec<String>> = None;
    let mut rows = 0;
    for line in text.lines() {
        let cols = csv_columns(line);
        if matches!(cols[0].as_str(), "Length (Bytes)" | "Sample Size (Bytes)") {
            header = Some(cols);
            continue;
        }
        let Some(h) = &header else { continue };
        if line.trim().is_empty() || !line.contains(',') {
            header = None;
            continue;
        }
        assert_eq!(cols.len(), h.len(), "{line} under {h:?}");
        for (name, v) in h.iter().zip(&cols) {
            if WHOLE.contains(&name.as_str()) {
                assert!(v.parse::<u64>().is_ok(), "int({v:?}) of {name} in {line:?}");
            } else {
                assert!(is_number(v), "float({v:?}) of {name} in {line:?}");
            }
        }
        rows += 1;
    }
    rows
}

/// A `-pub` alone: its standard output, then its standard error (where
/// the subscriber's lines go when the `-pub` started it itself).
fn outputs_of(line: &str) -> (String, String) {
    let out = Pair::new("perftest").run(line);
    assert!(out.status.success(), "perftest {line}: {out:?}");
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn stdout_of(line: &str) -> String {
    outputs_of(line).0
}

const LATENCY_INTERVAL_COLUMNS: [&str; 7] = [
    "Length (Bytes)",
    "Latency (μs)",
    "Ave (μs)",
    "Std (μs)",
    "Min (μs)",
    "Max (μs)",
    "CPU (%)",
];

const LATENCY_SUMMARY_COLUMNS: [&str; 11] = [
    "Sample Size (Bytes)",
    "Ave (μs)",
    "Std (μs)",
    "Min (μs)",
    "Max (μs)",
    "50% (μs)",
    "90% (μs)",
    "99% (μs)",
    "99.99% (μs)",
    "99.9999% (μs)",
    "CPU (%)",
];

/// A titled latency table: the interval rows, then the summary; returns
/// how many interval rows.
fn latency_block(lat: &str) -> usize {
    let l: Vec<&str> = lat.lines().collect();
    assert_eq!(l[0], "", "{lat}");
    assert_eq!(l[1], "Intervals One-Way Latency for 64 Bytes:", "{lat}");
    assert_eq!(csv_columns(l[2]), LATENCY_INTERVAL_COLUMNS);
    let summary_at = l
        .iter()
        .position(|x| *x == "One-way Latency Summary:")
        .expect(lat);
    for row in &l[3..summary_at - 1] {
        csv_row(row, LATENCY_INTERVAL_COLUMNS.len());
    }
    assert_eq!(l[summary_at - 1], "");
    assert_eq!(csv_columns(l[summary_at + 1]), LATENCY_SUMMARY_COLUMNS);
    csv_row(l[summary_at + 2], LATENCY_SUMMARY_COLUMNS.len());
    assert_eq!(parse_default_build(lat), summary_at - 4 + 1);
    summary_at - 4
}

/// Perftest's CSV with intervals and `-cpu`: the publisher's latency table
/// (a latency test's every round trip, a throughput test's one sample in
/// 10000), the subscriber's throughput table (here on the `-pub`'s
/// standard error: it started its subscriber itself).
#[test]
fn golden_csv() {
    let lat = stdout_of("-pub -raw -latencyTest -dataLen 64 -exec 2 -cpu");
    assert!(latency_block(&lat) > 0, "no interval row: {lat}");

    let (tp, sub) = outputs_of("-pub -raw -dataLen 64 -exec 2 -cpu");
    assert!(latency_block(&tp) > 0, "no interval row: {tp}");
    let at = sub
        .find("\nInterval Throughput for 64 Bytes:\n")
        .expect(&sub);
    let l: Vec<&str> = sub[at + 1..].lines().collect();
    let cols = [
        "Length (Bytes)",
        "Total Samples",
        "Samples/s",
        "Avg Samples/s",
        "Mbps",
        "Avg Mbps",
        "Lost Samples",
        "Lost Samples (%)",
        "CPU (%)",
    ];
    assert_eq!(csv_columns(l[1]), cols);
    let summary_at = l
        .iter()
        .position(|x| *x == "Throughput Summary:")
        .expect(&sub);
    assert!(summary_at > 3, "no interval row: {sub}");
    for row in &l[2..summary_at - 1] {
        csv_row(row, cols.len());
    }
    assert_eq!(
        csv_columns(l[summary_at + 1]),
        [
            "Sample Size (Bytes)",
            "Total Samples",
            "Avg Samples/s",
            "Avg Mbps",
            "Lost Samples",
            "Lost Samples (%)",
            "CPU (%)"
        ]
    );
    csv_row(l[summary_at + 2], 7);
    assert_eq!(parse_default_build(&sub[at..]), summary_at - 3 + 1);

    // -noOutputHeaders: rows only.
    let bare = stdout_of("-pub -raw -latencyTest -dataLen 64 -exec 1 -noPrint -noOutputHeaders");
    let rows: Vec<&str> = bare.lines().filter(|x| !x.is_empty()).collect();
    assert_eq!(rows.len(), 1, "{bare}");
    csv_row(rows[0], 10);
    // -noPrint in a throughput test: the latency header once, its row.
    let quiet = stdout_of("-pub -raw -dataLen 64 -exec 1 -noPrint");
    let rows: Vec<&str> = quiet.lines().collect();
    assert_eq!(rows.len(), 2, "{quiet}");
    assert_eq!(csv_columns(rows[0]), LATENCY_SUMMARY_COLUMNS[..10]);
    assert_eq!(parse_default_build(&quiet), 1);
    // -latencyHighResolution: three decimals, as the high-resolution build.
    let fine =
        stdout_of("-pub -raw -latencyTest -dataLen 64 -exec 1 -noPrint -latencyHighResolution");
    let row = csv_columns(fine.lines().nth(1).expect(&fine));
    assert!(
        row[1..]
            .iter()
            .all(|v| v.split_once('.').is_some_and(|(_, d)| d.len() == 3)),
        "{fine}"
    );
}

/// Perftest 4.0/4.1's `-scan`: each size's block whole (its intervals,
/// then its summary) before the next size's.
#[test]
fn scan_prints_each_size_whole() {
    let out = stdout_of("-pub -raw -latencyTest -exec 1 -pubsubperfVersion 4.1 -scan 32:64");
    let titles: Vec<&str> = out.lines().filter(|l| l.ends_with(':')).collect();
    assert_eq!(
        titles,
        [
            "Intervals One-Way Latency for 32 Bytes:",
            "One-way Latency Summary:",
            "Intervals One-Way Latency for 64 Bytes:",
            "One-way Latency Summary:"
        ],
        "{out}"
    );
    let p = Pair::new("perftest");
    let started = std::time::Instant::now();
    let out = p.run("-scan");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

/// Perftest's legacy lines.
#[test]
fn golden_legacy() {
    let (tp, sub) = outputs_of("-pub -raw -dataLen 64 -exec 2 -cpu -outputFormat legacy");
    let l: Vec<&str> = tp.lines().collect();
    assert_eq!(
        &l[..3],
        ["", "", "********** New data length is 64"],
        "{tp}"
    );
    assert!(
        shaped(
            l.last().unwrap(),
            "Length: # Latency: Ave # μs Std # μs Min # μs Max # μs 50% # μs 90% # μs 99% # μs 99.99% # μs 99.9999% # μs CPU # (%)"
        ),
        "{tp}"
    );
    let at = sub.find("********** New data length is 64").expect(&sub);
    let l: Vec<&str> = sub[at..].lines().filter(|x| !x.is_empty()).collect();
    let (last, intervals) = l[1..].split_last().expect(&sub);
    assert!(!intervals.is_empty(), "{sub}");
    for x in intervals {
        assert!(
            shaped(
                x,
                "Packets: # Packets/s: # Packets/s(ave): # Mbps: # Mbps(ave): # Lost: # (#%) CPU # (%)"
            ),
            "{x}"
        );
    }
    assert!(
        shaped(
            last,
            "Length: # Packets: # Packets/s(ave): # Mbps(ave): # Lost: # (#%) CPU # (%)"
        ),
        "{last}"
    );
    let lat = stdout_of("-pub -raw -latencyTest -dataLen 64 -exec 2 -cpu -outputFormat legacy");
    let l: Vec<&str> = lat.lines().collect();
    let (last, intervals) = l[3..].split_last().expect(&lat);
    assert!(!intervals.is_empty(), "{lat}");
    for x in intervals {
        assert!(
            shaped(
                x,
                "One-Way Latency: # μs Ave # μs Std # μs Min # μs Max # μs CPU # (%)"
            ),
            "{x}"
        );
        // The default build's whole microseconds.
        let w = words(x);
        for i in [2, 5, 11, 14] {
            assert!(w[i].parse::<u64>().is_ok(), "{x}");
        }
    }
    assert!(
        shaped(
            last,
            "Length: # Latency: Ave # μs Std # μs Min # μs Max # μs 50% # μs 90% # μs 99% # μs 99.99% # μs 99.9999% # μs CPU # (%)"
        ),
        "{last}"
    );
}

/// Perftest's JSON document: its tabs and key order, whole numbers where
/// Perftest writes integers (a typed decoder reads them as such).
#[test]
fn golden_json() {
    let lat = stdout_of("-pub -raw -latencyTest -dataLen 64 -exec 2 -cpu -outputFormat json");
    assert!(lat.starts_with("{\"perftest\":\n\t[\n\t\t{\n\t\t\t\"length\":64,\n\t\t\t\"intervals\":[\n\n\t\t\t\t{\n\t\t\t\t\t\"latency\": "), "{lat}");
    assert!(lat.ends_with("\n\t\t\t}\n\t\t}\n\t]\n}\n"), "{lat}");
    let v: serde_json::Value = serde_json::from_str(&lat).expect(&lat);
    let run = &v["perftest"][0];
    assert_eq!(run["length"], 64);
    let i = &run["intervals"][0];
    let keys: Vec<&String> = i.as_object().unwrap().keys().collect();
    for k in ["latency", "latency_min", "latency_max"] {
        assert!(i[k].is_u64(), "{k}: {i}");
    }
    for k in ["latency_ave", "latency_std", "CPU"] {
        assert!(i[k].is_number(), "{k}: {i}");
    }
    for k in [
        "latency_min",
        "latency_max",
        "latency_50",
        "latency_90",
        "latency_99",
        "latency_99.99",
        "latency_99.9999",
    ] {
        assert!(run["summary"][k].is_u64(), "{k}: {run}");
    }
    // Perftest's key order, kept (serde_json's map keeps insertion order
    // only with its preserve_order feature: compare the text instead).
    let at = |k: &str| lat.find(&format!("\"{k}\"")).expect(k);
    assert!(
        at("latency") < at("latency_ave")
            && at("latency_ave") < at("latency_std")
            && at("latency_std") < at("latency_min"),
        "{keys:?}"
    );

    let (tp, sub) = outputs_of("-pub -raw -dataLen 64 -exec 2 -cpu -outputFormat json");
    let v: serde_json::Value = serde_json::from_str(&tp).expect(&tp);
    assert!(v["perftest"][0]["summary"]["latency_50"].is_u64(), "{tp}");
    let doc = &sub[sub.find("{\"perftest\":").expect(&sub)..];
    let v: serde_json::Value = serde_json::from_str(doc).expect(doc);
    let run = &v["perftest"][0];
    let i = &run["intervals"][0];
    for k in ["length", "packets", "packets/s", "lost"] {
        assert!(i[k].is_u64(), "{k}: {i}");
    }
    for k in ["packets/s_ave", "mbps", "mbps_ave", "lost_percent", "CPU"] {
        assert!(i[k].is_number(), "{k}: {i}");
    }
    for k in ["packets", "packets/sAve", "lost"] {
        assert!(run["summary"][k].is_u64(), "{k}: {run}");
    }
    for k in ["mbpsAve", "lostPercent", "CPU"] {
        assert!(run["summary"][k].is_number(), "{k}: {run}");
    }
}
