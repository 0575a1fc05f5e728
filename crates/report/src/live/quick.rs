//! The main job's table (`pubsubperf` and `pubsubperf quick`): one row
//! per binding, latency at 64 B and 4 KiB, throughput at 1 KiB and how it
//! was measured (as fast as accepted, or a best-effort search's highest
//! rate within its loss), the settings unlike the middleware's defaults,
//! and the lines under it.

use pubsubperf_core::result::{Run, TestKind};

/// A best-effort search's record in a run (`config.find_max`), if any.
fn search(r: &Run) -> Option<&serde_json::Value> {
    r.config.get("find_max")
}

/// The search's loss bound, as recorded with it.
fn max_loss(record: &serde_json::Value) -> String {
    record["max_loss_percent"]
        .as_f64()
        .map_or("?".into(), |l| l.to_string())
}

/// What the throughput column of a run measured.
fn measured(r: &Run) -> String {
    if let Some(rec) = search(r) {
        format!("max rate, loss ≤ {} %", max_loss(rec))
    } else {
        "as fast as accepted".into()
    }
}

/// Under the table: what the batching some rows show does to their figures.
pub const BATCHED: &str = "AS RUN: the settings unlike the middleware's defaults (its vendor's tool sets them for that test, or a flag did). batched: the writer packs several samples into one packet, as the middleware's own throughput tool does (more samples/s, not one send per sample); --batch 0 (cyclonedds, connext) and --opt express=true (zenoh) turn it off.";

/// A binding's settings that are not its middleware's defaults, over its
/// runs: those of every run first, then each test's own (`throughput:
/// batched 14720 B`); `-` when none.
fn settings<'a>(runs: impl Iterator<Item = &'a Run>) -> String {
    let per_run: Vec<(TestKind, Vec<String>)> =
        runs.map(|r| (r.test, super::deviation_list(r))).collect();
    let common: Vec<String> = per_run
        .first()
        .map(|(_, d)| {
            d.iter()
                .filter(|x| per_run.iter().all(|(_, o)| o.contains(x)))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let mut parts = vec![common.join(", ")];
    for test in [TestKind::Latency, TestKind::Throughput] {
        let mut own: Vec<&str> = Vec::new();
        for (_, d) in per_run.iter().filter(|(t, _)| *t == test) {
            for x in d.iter().filter(|x| !common.contains(x)) {
                if !own.contains(&x.as_str()) {
                    own.push(x);
                }
            }
        }
        if !own.is_empty() {
            parts.push(format!("{test}: {}", own.join(", ")));
        }
    }
    parts.retain(|p| !p.is_empty());
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join("; ")
    }
}

/// The line under the table for a best-effort throughput search: what it
/// found, in how many trials of how long.
fn search_line(r: &Run) -> String {
    let rec = search(r);
    let bound = rec.map_or("?".into(), max_loss);
    let trials = rec
        .and_then(|v| v["trials"].as_array())
        .map_or(0, |t| t.len());
    let ns = r.config.get("duration_ns").and_then(|v| v.as_u64());
    let each = ns.map_or(String::new(), |n| format!(" of {} s", n as f64 / 1e9));
    match &r.throughput {
        Some(t) if r.error.is_none() => format!(
            "{}, {} B: best effort, the highest rate with loss ≤ {bound} % found in {trials} trials{each} (--find-max --max-loss {bound}): sent {:.0}/s, received {:.0}/s{}",
            r.binding,
            r.size,
            t.sent_per_s,
            t.samples_per_s,
            rec.map_or(String::new(), |v| missed_above(v, t.sent_per_s))
        ),
        _ => format!(
            "{}, {} B: best effort, no rate with loss ≤ {bound} % in {trials} trials{each}: no throughput figure",
            r.binding, r.size
        ),
    }
}

/// The lowest rate tried above `sent` that lost too much, as "; at X/s,
/// Y % lost": where the answer's bracket ends (empty when none was).
fn missed_above(record: &serde_json::Value, sent: f64) -> String {
    let missed = record["trials"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["ok"] == false)
        .filter_map(|t| {
            let target = t["target_rate"].as_f64()?;
            let rate = if target > 0.0 {
                target
            } else {
                t["sent_per_s"].as_f64()?
            };
            Some((rate, t["lost_percent"].as_f64()?))
        })
        .filter(|(rate, _)| *rate > sent)
        .min_by(|a, b| a.0.total_cmp(&b.0));
    missed.map_or(String::new(), |(rate, lost)| {
        format!("; at {rate:.0}/s, {lost:.2} % lost")
    })
}

/// How a binding's latency runs waited for the next sample (`busy`
/// polls, `block` sleeps in the kernel until woken): busy-polling rows
/// are not comparable with blocking ones without saying so.
fn wait_of(runs: &[Run], binding: &str) -> String {
    let mut waits: Vec<&str> = runs
        .iter()
        .filter(|r| r.binding == binding && r.test == TestKind::Latency)
        .filter_map(|r| r.config["endpoint"]["wait"].as_str())
        .collect();
    waits.dedup();
    match waits.as_slice() {
        [] => "-".into(),
        w => w.join(","),
    }
}

/// One row per binding: latency p50/p99 at each size, throughput at 1 KiB
/// (which way it was measured in the last column).
pub fn table(runs: &[Run]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\n{:<10} {:<12} {:<6} {:>12} {:>12} {:>12} {:>12} {:>14} {:>10} {:>8}  {:<22}  AS RUN",
        "BINDING",
        "RELIABILITY",
        "WAIT",
        "p50 64B µs",
        "p99 64B µs",
        "p50 4KiB µs",
        "p99 4KiB µs",
        "1KiB samples/s",
        "Mbps",
        "lost %",
        "1KiB MEASURED",
    );
    let mut names: Vec<&str> = Vec::new();
    for r in runs {
        if !names.contains(&r.binding.as_str()) {
            names.push(&r.binding);
        }
    }
    for n in names {
        let lat = |size: usize| {
            runs.iter()
                .find(|r| r.binding == n && r.test == TestKind::Latency && r.size == size)
                .and_then(|r| r.latency_ns.as_ref())
                .map(|l| (super::us(l.p50), super::us(l.p99)))
                .unwrap_or(("-".into(), "-".into()))
        };
        let tp_run = runs
            .iter()
            .find(|r| r.binding == n && r.test == TestKind::Throughput);
        // A search that found no rate within the bound has no figure.
        let tp = tp_run
            .filter(|r| r.error.is_none() || search(r).is_none())
            .and_then(|r| r.throughput.as_ref());
        let reliable = runs
            .iter()
            .find(|r| r.binding == n)
            .is_some_and(|r| r.reliable);
        let (a, b) = lat(64);
        let (c, d) = lat(4096);
        // A binding with a run not as planned is marked; the lines under
        // the table say which and why.
        let mark = if runs
            .iter()
            .any(|r| r.binding == n && !r.conditions.is_empty())
        {
            "!"
        } else {
            ""
        };
        let _ = writeln!(
            s,
            "{:<10} {:<12} {:<6} {:>12} {:>12} {:>12} {:>12} {:>14} {:>10} {:>8}  {:<22}  {}",
            format!("{n}{mark}"),
            if reliable { "reliable" } else { "best effort" },
            wait_of(runs, n),
            a,
            b,
            c,
            d,
            tp.map_or("-".into(), |t| format!("{:.0}", t.samples_per_s)),
            tp.map_or("-".into(), |t| format!("{:.1}", t.mbps)),
            tp.map_or("-".into(), |t| format!("{:.3}", t.lost_percent)),
            tp_run.map_or("-".into(), measured),
            settings(runs.iter().filter(|r| r.binding == n)),
        );
    }
    let _ = writeln!(s, "{BATCHED}");
    s.push_str(&super::condition_lines(&runs.iter().collect::<Vec<_>>()));
    // A search's runs were chosen for their loss: no "outran" line for them.
    let throughput: Vec<&Run> = runs
        .iter()
        .filter(|r| r.test == TestKind::Throughput && search(r).is_none())
        .collect();
    for r in runs.iter().filter(|r| search(r).is_some()) {
        let _ = writeln!(s, "{}", search_line(r));
    }
    s.push_str(&super::loss_lines(&throughput));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A throughput run at 1 KiB with these counts and `config`.
    fn run(binding: &str, reliable: bool, sent: u64, lost: u64, config: serde_json::Value) -> Run {
        let r = serde_json::json!({
            "binding": binding, "transport": binding, "test": "throughput", "size": 1024,
            "zero_copy": false, "data_type": "bytes", "reliable": reliable, "config": config,
            "throughput": {"sent": sent, "received": sent - lost, "bytes": (sent - lost) * 1024,
                "samples_per_s": (sent - lost) as f64, "mbps": 1.0, "lost": lost,
                "lost_percent": lost as f64 * 100.0 / sent as f64, "duplicates": 0,
                "out_of_order": 0, "sent_per_s": sent as f64},
            "resources": {"publisher": {"cpu_percent": 1.0, "max_rss_kib": 1, "voluntary_cs": 0, "involuntary_cs": 0},
                          "subscriber": {"cpu_percent": 1.0, "max_rss_kib": 1, "voluntary_cs": 0, "involuntary_cs": 0}}
        });
        serde_json::from_value(r).unwrap()
    }

    fn trial(target: f64, sent: f64, lost: f64, ok: bool) -> serde_json::Value {
        serde_json::json!({"target_rate": target, "sent_per_s": sent,
            "received_per_s": sent * (1.0 - lost / 100.0), "lost_percent": lost, "ok": ok})
    }

    #[test]
    fn the_table_says_what_each_throughput_measured() {
        let search = serde_json::json!({
            "rate": 20000.0, "duration_ns": 500_000_000u64,
            "find_max": {"max_loss_percent": 0.1, "max_trials": 6, "found": true, "trials": [
                trial(0.0, 100_000.0, 45.0, false),
                trial(55_000.0, 55_000.0, 10.0, false),
                trial(20_000.0, 20_000.0, 0.05, true),
                trial(37_500.0, 37_500.0, 3.0, false),
            ]}
        });
        let runs = [
            run("udp", false, 20_000, 10, search),
            run("tcp", true, 50_000, 0, serde_json::json!({"rate": 0.0})),
        ];
        let t = table(&runs);
        let line = |name: &str| {
            t.lines()
                .find(|l| l.starts_with(name))
                .unwrap_or_else(|| panic!("{t}"))
                .to_string()
        };
        assert!(line("udp ").contains("max rate, loss ≤ 0.1 %  "), "{t}");
        assert!(line("tcp ").contains("as fast as accepted  "), "{t}");
        assert!(
            t.contains(
                "udp, 1024 B: best effort, the highest rate with loss ≤ 0.1 % found in 4 trials of 0.5 s (--find-max --max-loss 0.1): sent 20000/s, received 19990/s; at 37500/s, 3.00 % lost"
            ),
            "{t}"
        );
        // The search's run was chosen for its loss: no "outran" line.
        assert!(!t.contains("outran"), "{t}");
    }

    #[test]
    fn the_settings_column_names_what_each_test_set() {
        let tp = |binding: &str, d: &[&str]| {
            run(binding, true, 1000, 0, serde_json::json!({"deviations": d}))
        };
        let mut lat = tp("zenoh", &["express"]);
        lat.test = TestKind::Latency;
        let mut cyc_lat = tp(
            "cyclonedds",
            &["unicast discovery", "max blocking time 10 s"],
        );
        cyc_lat.test = TestKind::Latency;
        let runs = [
            lat,
            tp("zenoh", &["batched"]),
            cyc_lat,
            tp(
                "cyclonedds",
                &[
                    "unicast discovery",
                    "batched 14720 B",
                    "max blocking time 10 s",
                ],
            ),
            tp("tcp", &[]),
        ];
        let t = table(&runs);
        let row = |name: &str| {
            t.lines()
                .find(|l| l.starts_with(name))
                .unwrap_or_else(|| panic!("{t}"))
                .to_string()
        };
        assert!(
            row("zenoh ").ends_with("  latency: express; throughput: batched"),
            "{t}"
        );
        assert!(
            row("cyclonedds ").ends_with(
                "  unicast discovery, max blocking time 10 s; throughput: batched 14720 B"
            ),
            "{t}"
        );
        assert!(row("tcp ").ends_with("  -"), "{t}");
        assert!(t.contains(BATCHED), "{t}");
    }

    #[test]
    fn a_search_without_an_answer_has_no_figure() {
        let search = serde_json::json!({
            "rate": 1000.0, "duration_ns": 500_000_000u64,
            "find_max": {"max_loss_percent": 0.1, "max_trials": 6, "found": false,
                "trials": [trial(0.0, 100_000.0, 45.0, false), trial(1000.0, 1000.0, 5.0, false)]}
        });
        let mut r = run("udp", false, 1000, 50, search);
        r.error = Some("no trial had loss at or under 0.1%".into());
        let t = table(&[r]);
        let row = t.lines().find(|l| l.starts_with("udp ")).unwrap();
        let cols: Vec<&str> = row.split_whitespace().collect();
        // samples/s, Mbps and lost % are "-".
        assert_eq!(&cols[6..9], ["-", "-", "-"], "{t}");
        assert!(
            t.contains("udp, 1024 B: best effort, no rate with loss ≤ 0.1 % in 2 trials of 0.5 s: no throughput figure"),
            "{t}"
        );
    }
}
