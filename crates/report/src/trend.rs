//! Trends across versions and commits, and the change points in them.
//!
//! A series is one cell measured on one machine: binding, transport, test,
//! size, QoS, and the machine's fingerprint (host, CPU model, cores);
//! series of different machines are never mixed. Its points are the
//! revisions measured, in the order they were first measured: the commit
//! under test (the `commit` label) where given, else the middleware's
//! version. A revision's figure is the median of its runs (latency: p50;
//! throughput: samples/s), its spread their range.
//!
//! The machine's setup is followed along a series: its kernel, clock
//! source and the verdict of each of the doctor's checks recorded with
//! the runs ([`Setup`]). Where it changed between two revisions the trend
//! says so, and a change point at that boundary says the machine changed
//! there too: the step may be the machine's, not the revision's.
//!
//! Change points: a Mann-Whitney step test over windows (as asv and
//! conbench test steps), see [`detect`]. At each boundary between
//! revisions the runs of up to `window` revisions before are tested
//! against those of up to `window` after (two-sided Mann-Whitney U,
//! [`crate::mann_whitney`]); a boundary is a change point when its p-value
//! is below `alpha / K`, K the boundaries tested in the series (Bonferroni):
//! the chance that a series that never moved shows any change point is at
//! most `alpha` (the stated false-alarm rate, per series). Of boundaries
//! closer than a window, the one of the smallest p-value is kept. Each
//! change is given as a ratio: the Hodges-Lehmann shift of the figures'
//! logarithms, with its distribution-free confidence interval.

use crate::db::StoredRun;
use crate::mann_whitney::{shift, u_test};
use std::collections::BTreeMap;

/// The detector's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// Revisions on each side of a boundary that are tested.
    pub window: usize,
    /// Fewest runs on each side for a boundary to be tested.
    pub min_runs: usize,
    /// The false-alarm rate per series (family-wise, Bonferroni).
    pub alpha: f64,
    /// The confidence level of a change's interval.
    pub level: f64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            window: 10,
            min_runs: 5,
            alpha: 0.01,
            level: 0.95,
        }
    }
}

/// What identifies a series.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SeriesKey {
    /// Binding.
    pub binding: String,
    /// Transport.
    pub transport: String,
    /// `latency` or `throughput`.
    pub test: String,
    /// Sample size, bytes.
    pub size: usize,
    /// Reliable QoS.
    pub reliable: bool,
    /// The machine: host, CPU model and cores.
    pub machine: String,
}

/// The machine's setup as a run recorded it: `kernel`, `clocksource`,
/// and each doctor check by name with its (worst) verdict.
pub type Setup = BTreeMap<String, String>;

/// The setup recorded with a run's environment.
pub fn setup_of(env: &pubsubperf_core::environment::Environment) -> Setup {
    let mut s = Setup::new();
    if !env.kernel.is_empty() {
        s.insert("kernel".into(), env.kernel.clone());
    }
    if !env.clocksource.is_empty() {
        s.insert("clocksource".into(), env.clocksource.clone());
    }
    let mut worst: BTreeMap<&str, _> = BTreeMap::new();
    for f in &env.doctor {
        let v = worst.entry(&f.check).or_insert(f.verdict);
        *v = (*v).max(f.verdict);
    }
    for (check, v) in worst {
        s.insert(format!("doctor {check}"), v.to_string());
    }
    s
}

/// What differs between two setups, as `NAME: BEFORE → AFTER`: only what
/// both recorded (a run that kept no doctor findings changes nothing).
pub fn setup_changes(before: &Setup, after: &Setup) -> Vec<String> {
    before
        .iter()
        .filter_map(|(k, b)| {
            let a = after.get(k)?;
            (a != b).then(|| {
                format!(
                    "{k}: {} → {}",
                    pubsubperf_core::escape::printable_all(b),
                    pubsubperf_core::escape::printable_all(a)
                )
            })
        })
        .collect()
}

/// One run's figure in a series.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Its series.
    pub key: SeriesKey,
    /// The revision measured (commit, else the middleware's version).
    pub revision: String,
    /// The figure (latency: p50 ns; throughput: samples/s).
    pub value: f64,
    /// The machine's setup when it was measured.
    pub setup: Setup,
}

/// A revision of a series: its runs' figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Revision {
    /// Its name.
    pub name: String,
    /// The figures of its runs, as measured.
    pub values: Vec<f64>,
    /// The machine's setup at its first run.
    pub setup: Setup,
    /// What of the setup changed since the revision before (empty for the
    /// first), see [`setup_changes`].
    pub machine_changed: Vec<String>,
}

/// A change point.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// Index of the first revision after the step.
    pub index: usize,
    /// Its name.
    pub revision: String,
    /// The relative change (0.15: 15 % higher after), Hodges-Lehmann.
    pub change: f64,
    /// Its confidence interval, relative.
    pub low: f64,
    /// Upper end of the interval.
    pub high: f64,
    /// The boundary's p-value (to be compared with `alpha / tested`).
    pub p: f64,
    /// Boundaries tested in the series.
    pub tested: usize,
    /// True when the figure got worse (latency up, throughput down).
    pub worse: bool,
    /// What of the machine's setup changed at the same boundary.
    pub machine_changed: Vec<String>,
}

/// A series with its revisions and change points.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// What it is.
    pub key: SeriesKey,
    /// Its revisions in order.
    pub revisions: Vec<Revision>,
    /// Where it moved.
    pub changes: Vec<Change>,
}

/// The points of stored runs: complete latency and throughput runs with
/// their figure.
pub fn points(runs: &[StoredRun]) -> Vec<Point> {
    runs.iter()
        .filter(|r| r.run.complete)
        .filter_map(|r| {
            let run = &r.run;
            let test = run.test.to_string();
            let value = match test.as_str() {
                "latency" => run.latency_ns.as_ref()?.p50 as f64,
                "throughput" => run.throughput.as_ref()?.samples_per_s,
                _ => return None,
            };
            let env = &r.environment;
            let host = r.host.clone().unwrap_or_else(|| env.hostname.clone());
            let revision = r.labels.get("commit").cloned().unwrap_or_else(|| {
                env.bindings
                    .get(&run.binding)
                    .cloned()
                    .unwrap_or_else(|| format!("pubsubperf {}", r.tool_version))
            });
            Some(Point {
                key: SeriesKey {
                    binding: run.binding.clone(),
                    transport: run.transport.clone(),
                    test,
                    size: run.size,
                    reliable: run.reliable,
                    machine: format!("{host} ({}, {} cores)", env.cpu_model, env.cores),
                },
                revision,
                value,
                setup: setup_of(env),
            })
        })
        .collect()
}

/// The series of `points` (in measuring order), each with its change points.
pub fn series(points: &[Point], s: &Settings) -> Vec<Series> {
    let mut by_key: BTreeMap<&SeriesKey, Vec<Revision>> = BTreeMap::new();
    for p in points {
        let revs = by_key.entry(&p.key).or_default();
        match revs.iter_mut().find(|r| r.name == p.revision) {
            Some(r) => r.values.push(p.value),
            None => revs.push(Revision {
                name: p.revision.clone(),
                values: vec![p.value],
                setup: p.setup.clone(),
                machine_changed: Vec::new(),
            }),
        }
    }
    by_key
        .into_iter()
        .map(|(key, mut revisions)| {
            for i in 1..revisions.len() {
                revisions[i].machine_changed =
                    setup_changes(&revisions[i - 1].setup, &revisions[i].setup);
            }
            let higher_is_worse = key.test == "latency";
            let changes = detect(&revisions, s)
                .into_iter()
                .map(|mut c| {
                    c.worse = (c.change > 0.0) == higher_is_worse;
                    c.machine_changed = revisions[c.index].machine_changed.clone();
                    c
                })
                .collect();
            Series {
                key: key.clone(),
                revisions,
                changes,
            }
        })
        .collect()
}

pub(crate) fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The change points of revisions in order (see the module's text).
pub fn detect(revisions: &[Revision], s: &Settings) -> Vec<Change> {
    let side = |range: std::ops::Range<usize>| -> Vec<f64> {
        revisions[range]
            .iter()
            .flat_map(|r| r.values.iter().copied())
            .collect()
    };
    let n = revisions.len();
    let mut tested: Vec<(usize, f64)> = Vec::new();
    for k in 1..n {
        let before = side(k.saturating_sub(s.window)..k);
        let after = side(k..(k + s.window).min(n));
        if before.len() < s.min_runs || after.len() < s.min_runs {
            continue;
        }
        tested.push((k, u_test(&before, &after).p));
    }
    let threshold = s.alpha / tested.len().max(1) as f64;
    let mut candidates: Vec<(usize, f64)> = tested
        .iter()
        .copied()
        .filter(|&(_, p)| p < threshold)
        .collect();
    candidates.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    let mut kept: Vec<(usize, f64)> = Vec::new();
    for (k, p) in candidates {
        if kept.iter().all(|&(j, _)| j.abs_diff(k) >= s.window) {
            kept.push((k, p));
        }
    }
    kept.sort_by_key(|&(k, _)| k);
    kept.into_iter()
        .map(|(k, p)| {
            let before = side(k.saturating_sub(s.window)..k);
            let after = side(k..(k + s.window).min(n));
            // The shift of the logarithms: a ratio, with no base figure's
            // own noise in it (when every figure is positive).
            let (change, low, high) = if before.iter().chain(&after).all(|&v| v > 0.0) {
                let ln = |v: &[f64]| v.iter().map(|x| x.ln()).collect::<Vec<_>>();
                let (d, lo, hi) = shift(&ln(&before), &ln(&after), s.level);
                (d.exp_m1(), lo.exp_m1(), hi.exp_m1())
            } else {
                let base = median(&before);
                let (d, lo, hi) = shift(&before, &after, s.level);
                (d / base, lo / base, hi / base)
            };
            Change {
                index: k,
                revision: revisions[k].name.clone(),
                change,
                low,
                high,
                p,
                tested: tested.len(),
                worse: false,
                machine_changed: Vec::new(),
            }
        })
        .collect()
}

/// A change point in one line: where, by how much, its interval and its
/// test.
pub fn change_line(c: &Change, s: &Settings) -> String {
    format!(
        "change at {}: {:+.1} % ({:.0} % interval {:+.1} % .. {:+.1} %), p = {:.2e} < {:.2e} ({} boundaries, false-alarm rate {} per series){}{}",
        pubsubperf_core::escape::printable_all(&c.revision),
        c.change * 100.0,
        s.level * 100.0,
        c.low * 100.0,
        c.high * 100.0,
        c.p,
        s.alpha / c.tested as f64,
        c.tested,
        s.alpha,
        if c.worse { ", worse" } else { ", better" },
        if c.machine_changed.is_empty() {
            String::new()
        } else {
            format!(
                "; the machine changed here too ({}): the step may be the machine's",
                c.machine_changed.join(", ")
            )
        }
    )
}

/// A change of the machine's setup between two revisions, in one line.
pub fn machine_line(r: &Revision) -> String {
    format!(
        "the machine changed at {}: {}",
        pubsubperf_core::escape::printable_all(&r.name),
        r.machine_changed.join(", ")
    )
}

/// The trend as text: per series, its revisions (median and range of
/// their runs) and its change points.
pub fn text(series: &[Series], s: &Settings) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    for x in series {
        let k = &x.key;
        let (unit, scale) = match k.test.as_str() {
            "latency" => ("p50 µs", 1e-3),
            _ => ("samples/s", 1.0),
        };
        let _ = writeln!(
            out,
            "{}/{} {} {} B {} on {}: {} revision(s)",
            k.binding,
            k.transport,
            k.test,
            k.size,
            if k.reliable {
                "reliable"
            } else {
                "best-effort"
            },
            k.machine,
            x.revisions.len()
        );
        let _ = writeln!(
            out,
            "  {:<24} {:>5} {:>14} {:>27}",
            "REVISION", "RUNS", unit, "range"
        );
        for (i, r) in x.revisions.iter().enumerate() {
            let lo = r.values.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = r.values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let mark = if x.changes.iter().any(|c| c.index == i) {
                "*"
            } else {
                " "
            };
            let _ = writeln!(
                out,
                "{mark} {:<24} {:>5} {:>14.3} {:>27}",
                pubsubperf_core::escape::printable_all(&r.name),
                r.values.len(),
                median(&r.values) * scale,
                format!("{:.3} – {:.3}", lo * scale, hi * scale)
            );
        }
        for c in &x.changes {
            let _ = writeln!(out, "  {}", change_line(c, s));
        }
        for r in x.revisions.iter().filter(|r| !r.machine_changed.is_empty()) {
            if !x.changes.iter().any(|c| c.revision == r.name) {
                let _ = writeln!(out, "  {}", machine_line(r));
            }
        }
        out.push('\n');
    }
    out
}
