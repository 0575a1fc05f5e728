//! The `--profile` tables of a run (printed under the result and in the
//! HTML report): per side, figures per sample that side handled in its
//! window, and its most frequent system calls.

use crate::svg::esc;
use pubsubperf_core::profile::SideProfile;
use pubsubperf_core::result::Run;
use std::fmt::Write;

/// System calls listed per side.
pub const TOP: usize = 5;

/// Each side of a profiled run with its label.
fn sides(run: &Run) -> Vec<(String, &SideProfile)> {
    let Some(p) = &run.profile else {
        return Vec::new();
    };
    let mut v = vec![("publisher".to_string(), &p.publisher)];
    for (i, s) in p.subscribers.iter().enumerate() {
        v.push((format!("subscriber {i}"), s));
    }
    v
}

/// A side's summary cells: samples, system calls, µs in system calls,
/// voluntary and involuntary context switches, futex calls, user and
/// system CPU µs, all per sample but the first.
/// Without a tracer the system-call cells are `n/a`.
fn summary(p: &SideProfile) -> [String; 8] {
    let time_us = p.syscalls.iter().fold(0.0, |t, s| t + s.time_us);
    let traced = !p.syscalls.is_empty();
    let or_na = |v: String| if traced { v } else { "n/a".to_string() };
    [
        p.samples.to_string(),
        or_na(format!("{:.2}", p.per_sample(p.total_calls() as f64))),
        or_na(format!("{:.3}", p.per_sample(time_us))),
        format!("{:.2}", p.per_sample(p.voluntary_cs as f64)),
        format!("{:.2}", p.per_sample(p.involuntary_cs as f64)),
        or_na(format!("{:.2}", p.per_sample(p.futex_calls() as f64))),
        format!("{:.3}", p.per_sample(p.user_ms * 1000.0)),
        format!("{:.3}", p.per_sample(p.system_ms * 1000.0)),
    ]
}

const SUMMARY_HEAD: [&str; 10] = [
    "SIDE",
    "METHOD",
    "SAMPLES",
    "SYSCALLS",
    "SYSCALL µs",
    "CS VOL",
    "CS INVOL",
    "FUTEX",
    "USER µs",
    "SYS µs",
];

const TOP_HEAD: [&str; 5] = ["SIDE", "SYSCALL", "CALLS", "µs/CALL", "ERRORS"];

/// A side's top system calls: name, calls per sample, µs per call, errors.
fn top(p: &SideProfile) -> impl Iterator<Item = [String; 4]> + '_ {
    p.syscalls.iter().take(TOP).map(|c| {
        [
            c.name.clone(),
            format!("{:.2}", p.per_sample(c.calls as f64)),
            format!("{:.3}", c.time_us / c.calls.max(1) as f64),
            c.errors.to_string(),
        ]
    })
}

const THREAD_HEAD: [&str; 7] = [
    "SIDE", "THREAD", "TID", "USER µs", "SYS µs", "CS VOL", "CS INVOL",
];

/// The busiest threads' rows (the kernel's per-thread counters), per
/// sample of their side.
fn thread_rows(sides: &[(String, &SideProfile)]) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for (label, p) in sides {
        for t in &p.threads {
            rows.push(vec![
                label.clone(),
                t.name.clone(),
                t.tid.to_string(),
                format!("{:.3}", p.per_sample(t.user_ms * 1000.0)),
                format!("{:.3}", p.per_sample(t.system_ms * 1000.0)),
                format!("{:.2}", p.per_sample(t.voluntary_cs as f64)),
                format!("{:.2}", p.per_sample(t.involuntary_cs as f64)),
            ]);
        }
    }
    rows
}

/// The summary table's rows, one per side.
fn summary_rows(sides: &[(String, &SideProfile)]) -> Vec<Vec<String>> {
    sides
        .iter()
        .map(|(label, p)| {
            let mut r = vec![label.clone(), p.method.clone()];
            r.extend(summary(p));
            r
        })
        .collect()
}

/// The top system calls' rows, [`TOP`] per side.
fn top_rows(sides: &[(String, &SideProfile)]) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for (label, p) in sides {
        for t in top(p) {
            let mut r = vec![label.clone()];
            r.extend(t);
            rows.push(r);
        }
    }
    rows
}

/// The lines under the tables: what each side's samples are, the
/// tracer's cost, and why a side has no system calls.
fn notes(run: &Run) -> Vec<String> {
    let sides = sides(run);
    let mut out = Vec::new();
    for (label, p) in &sides {
        out.push(format!(
            "{label}: samples = {}; window {:.2} s",
            p.samples_are, p.window_s
        ));
    }
    let costs: Vec<String> = sides
        .iter()
        .filter_map(|(l, p)| p.tracer_cost_ns.map(|c| format!("{:.1} µs ({l})", c / 1e3)))
        .collect();
    if let Some((_, p)) = sides.iter().find(|(_, p)| p.tracer_cost_ns.is_some()) {
        out.push(format!(
            "measured under {}, which added {} to each system call: the latency, rates and CPU of this run are not those of an unprofiled run; compare the counts, not the times",
            p.method,
            costs.join(", ")
        ));
    }
    out.extend(unprofiled_line(run));
    // One line per note, naming every side it is about.
    let mut said: Vec<(&str, Vec<&str>)> = Vec::new();
    for (label, p) in &sides {
        if let Some(n) = &p.note {
            match said.iter_mut().find(|(m, _)| m == n) {
                Some((_, who)) => who.push(label),
                None => said.push((n, vec![label])),
            }
        }
    }
    for (n, who) in said {
        out.push(format!("{}: {n}", who.join(", ")));
    }
    out
}

/// The unprofiled run of the same cell beside this one: its p50 or rate,
/// this run's, and their ratio.
fn unprofiled_line(run: &Run) -> Option<String> {
    let u = run.profile.as_ref()?.unprofiled.as_ref()?;
    let head = "the same cell without --profile, run just before";
    if let (Some(base), Some(l)) = (u.p50_ns, &run.latency_ns) {
        return Some(format!(
            "{head}: p50 {} µs; under the tracer {} µs ({:.1}× as long)",
            crate::text::us(base),
            crate::text::us(l.p50),
            l.p50 as f64 / base.max(1) as f64
        ));
    }
    let (base, t) = (u.samples_per_s?, run.throughput.as_ref()?);
    Some(format!(
        "{head}: {base:.1} samples/s; under the tracer {:.1} samples/s ({:.2}× the rate)",
        t.samples_per_s,
        t.samples_per_s / base.max(1e-9)
    ))
}

/// Columns padded to their widest cell, the first two left-aligned.
fn columns(rows: &[Vec<String>]) -> String {
    let n = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..n)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut s = String::new();
    for r in rows {
        let cells: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i < 2 {
                    format!("{c:<w$}", w = widths[i])
                } else {
                    format!("{c:>w$}", w = widths[i])
                }
            })
            .collect();
        let _ = writeln!(s, "{}", cells.join("  ").trim_end());
    }
    s
}

/// The text tables of a profiled run (empty for a run without a profile).
pub fn text(run: &Run) -> String {
    let sides = sides(run);
    if sides.is_empty() {
        return String::new();
    }
    let head = |h: &[&str]| h.iter().map(|c| c.to_string()).collect::<Vec<_>>();
    let mut rows = vec![head(&SUMMARY_HEAD)];
    rows.extend(summary_rows(&sides));
    let mut top_rows = vec![head(&TOP_HEAD)];
    top_rows.extend(self::top_rows(&sides));
    let mut s = format!(
        "Profile of {} B, per sample each side handled in its window:\n",
        run.size
    );
    s.push_str(&columns(&rows));
    if top_rows.len() > 1 {
        let _ = writeln!(s, "Top {TOP} system calls of each side, per sample:");
        s.push_str(&columns(&top_rows));
    }
    let threads = thread_rows(&sides);
    if !threads.is_empty() {
        let _ = writeln!(
            s,
            "Busiest threads of each side (the kernel's counters), per sample:"
        );
        let mut rows = vec![head(&THREAD_HEAD)];
        rows.extend(threads);
        s.push_str(&columns(&rows));
    }
    for n in notes(run) {
        let _ = writeln!(s, "{n}");
    }
    s
}

/// The HTML tables of a profiled run, captioned with `label` (empty for a
/// run without a profile).
pub fn html(run: &Run, label: &str) -> String {
    let sides = sides(run);
    if sides.is_empty() {
        return String::new();
    }
    let head = |cols: &[&str]| {
        cols.iter()
            .map(|c| format!("<th>{}</th>", esc(c)))
            .collect::<String>()
    };
    let cells = |cols: &[String]| {
        cols.iter()
            .map(|c| format!("<td>{}</td>", esc(c)))
            .collect::<String>()
    };
    let mut h = format!(
        "<table class=\"num\">\n<caption>{}: per sample each side handled</caption>\n<thead><tr>{}</tr></thead>\n<tbody>\n",
        esc(label),
        head(&SUMMARY_HEAD)
    );
    for r in summary_rows(&sides) {
        let _ = writeln!(h, "<tr>{}</tr>", cells(&r));
    }
    h.push_str("</tbody>\n</table>\n");
    let rows: String = top_rows(&sides)
        .iter()
        .map(|r| format!("<tr>{}</tr>\n", cells(r)))
        .collect();
    if !rows.is_empty() {
        let _ = write!(
            h,
            "<table class=\"num\">\n<caption>{}: top {TOP} system calls, per sample</caption>\n<thead><tr>{}</tr></thead>\n<tbody>\n{rows}</tbody>\n</table>\n",
            esc(label),
            head(&TOP_HEAD)
        );
    }
    let rows: String = thread_rows(&sides)
        .iter()
        .map(|r| format!("<tr>{}</tr>\n", cells(r)))
        .collect();
    if !rows.is_empty() {
        let _ = write!(
            h,
            "<table class=\"num\">\n<caption>{}: busiest threads, per sample</caption>\n<thead><tr>{}</tr></thead>\n<tbody>\n{rows}</tbody>\n</table>\n",
            esc(label),
            head(&THREAD_HEAD)
        );
    }
    for n in notes(run) {
        let _ = writeln!(h, "<p>{}</p>", esc(&n));
    }
    h
}
