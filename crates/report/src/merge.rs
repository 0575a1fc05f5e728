//! Exact merging of runs: repetitions of one cell become one run whose
//! latency percentiles equal those of the pooled samples (histograms are
//! merged, never averaged) and whose throughput counters are summed.

use crate::error::{ReportError, Result};
use crate::key::CellKey;
use pubsubperf_core::result::{Interval, OneWay, ResultsFile, Run, Throughput};
use pubsubperf_core::stats::{LatencyRecorder, LatencySummary};
use pubsubperf_core::sys::Resources;
use std::collections::BTreeMap;

/// Merges repetitions of one cell into one run.
///
/// - Latency: the HDR histograms and exact sums are added
///   ([`LatencyRecorder::merge`]): every percentile, the mean, std, min and
///   max equal those of recording all samples in one run.
/// - Throughput: counters (sent, received, bytes, lost, duplicates,
///   out of order) are summed and rates recomputed over the summed
///   measured duration, so samples/s is total received / total time.
/// - Intervals are concatenated on one time line (each repetition's
///   intervals shifted by the measured time before it).
/// - Resources: CPU % weighted by duration, peak RSS the largest, context
///   switches summed.
/// - `config` is the first run's, with `merged: {"runs": N}` added.
/// - `--one-way`: each direction's histograms merged, and round trip / 2
///   (`latency_ns` or `one_way.round_trip_half`); the headline is forward
///   only where every run's was, the bound the widest, the offsets listed.
///
/// Every run must have the same [`CellKey`].
pub fn merge_runs(runs: &[&Run]) -> Result<Run> {
    let first = *runs
        .first()
        .ok_or_else(|| ReportError::Merge("no runs to merge".into()))?;
    if runs.len() == 1 {
        return Ok(first.clone());
    }
    let key = CellKey::of(first);
    for r in &runs[1..] {
        let k = CellKey::of(r);
        if k != key {
            return Err(ReportError::Merge(format!(
                "'{}' and '{}' are different measurements",
                key.label(),
                k.label()
            )));
        }
    }
    // Latency: exact histogram merge of the runs that measured latency.
    let mut latency = merge_summaries(
        &key,
        "latency",
        runs.iter().filter_map(|r| r.latency_ns.as_ref()),
    )?;
    let one_way = merge_one_way(runs, &key, &mut latency)?;
    let duration_s: f64 = runs.iter().map(|r| r.duration_s).sum();
    let throughput = sum_throughput(
        runs.iter().filter_map(|r| r.throughput.as_ref()),
        duration_s,
    );
    // Per-subscriber throughput, merged by index when every run has the same count.
    let nsubs = first.subscribers.len();
    let subscribers = if nsubs > 0 && runs.iter().all(|r| r.subscribers.len() == nsubs) {
        (0..nsubs)
            .map(|i| {
                sum_throughput(runs.iter().map(|r| &r.subscribers[i]), duration_s)
                    .unwrap_or_default()
            })
            .collect()
    } else {
        Vec::new()
    };
    let mut intervals: Vec<Interval> = Vec::new();
    let mut offset = 0.0;
    for r in runs {
        intervals.extend(r.intervals.iter().map(|i| Interval {
            t_s: i.t_s + offset,
            ..i.clone()
        }));
        offset += r.duration_s;
    }
    let mut config = first.config.clone();
    if let Some(o) = config.as_object_mut() {
        o.insert("merged".into(), serde_json::json!({ "runs": runs.len() }));
    }
    let errors: Vec<String> = runs.iter().filter_map(|r| r.error.clone()).collect();
    let mut out = first.clone();
    out.config = config;
    out.latency_ns = latency;
    out.one_way = one_way;
    out.throughput = throughput;
    out.subscribers = subscribers;
    out.intervals = intervals;
    out.resources.publisher =
        merge_resources(runs.iter().map(|r| (&r.resources.publisher, r.duration_s)));
    out.resources.subscriber =
        merge_resources(runs.iter().map(|r| (&r.resources.subscriber, r.duration_s)));
    out.bad_samples = runs.iter().map(|r| r.bad_samples).sum();
    out.foreign_samples = runs.iter().map(|r| r.foreign_samples).sum();
    out.complete = runs.iter().all(|r| r.complete);
    out.error = if errors.is_empty() {
        None
    } else {
        Some(errors.join("; "))
    };
    out.duration_s = duration_s;
    // Where each repetition ran, all of them: a merge of runs as planned
    // and runs not as planned is not as planned.
    out.placement = runs.iter().flat_map(|r| r.placement.clone()).collect();
    out.conditions = runs
        .iter()
        .enumerate()
        .flat_map(|(i, r)| {
            r.conditions
                .iter()
                .map(move |c| format!("repetition {}: {c}", i + 1))
        })
        .collect();
    merge_counter_lists(&mut out, runs, "publishers", duration_s);
    Ok(out)
}

/// The exact merge of latency summaries (their histograms).
fn merge_summaries<'a>(
    key: &CellKey,
    what: &str,
    it: impl Iterator<Item = &'a LatencySummary>,
) -> Result<Option<LatencySummary>> {
    let mut acc: Option<LatencyRecorder> = None;
    for (i, s) in it.enumerate() {
        let rec = LatencyRecorder::from_summary(s).map_err(|m| ReportError::Histogram {
            context: format!("run {} ({}, {what})", i + 1, key.label()),
            message: m,
        })?;
        match &mut acc {
            None => acc = Some(rec),
            Some(a) => a.merge(&rec),
        }
    }
    Ok(acc.map(|a| a.summary()))
}

/// `--one-way` runs' two directions merged; `latency` (the merged
/// headlines) becomes the merged forward or round trip / 2, as every run
/// allows. `None` unless every run has both directions.
fn merge_one_way(
    runs: &[&Run],
    key: &CellKey,
    latency: &mut Option<LatencySummary>,
) -> Result<Option<OneWay>> {
    let Some(all) = runs
        .iter()
        .map(|r| r.one_way.as_ref().map(|o| (o, r.latency_ns.as_ref())))
        .collect::<Option<Vec<_>>>()
    else {
        return Ok(None);
    };
    let forward = merge_summaries(key, "forward", all.iter().map(|(o, _)| &o.forward))?;
    let back = merge_summaries(key, "back", all.iter().map(|(o, _)| &o.back))?;
    let half = merge_summaries(
        key,
        "round trip / 2",
        all.iter().filter_map(|(o, l)| {
            if o.headline == "forward" {
                o.round_trip_half.as_ref()
            } else {
                *l
            }
        }),
    )?;
    let (Some(forward), Some(back)) = (forward, back) else {
        return Ok(None);
    };
    let every_forward = all.iter().all(|(o, _)| o.headline == "forward");
    let first = all[0].0;
    let merged = OneWay {
        forward: forward.clone(),
        back,
        clocks: first.clocks.clone(),
        offsets: all.iter().flat_map(|(o, _)| o.offsets.clone()).collect(),
        bound_ns: all.iter().map(|(o, _)| o.bound_ns).max().unwrap_or(0),
        below_zero: all.iter().map(|(o, _)| o.below_zero).sum(),
        headline: if every_forward {
            "forward".into()
        } else {
            "round trip / 2".into()
        },
        round_trip_half: None,
    };
    Ok(Some(if every_forward {
        *latency = Some(forward);
        OneWay {
            round_trip_half: half,
            ..merged
        }
    } else {
        *latency = half;
        merged
    }))
}

/// Merges a list of per-party [`Throughput`] counters (such as
/// `publishers`) by index, through the run's JSON, so that lists added to
/// the schema later are merged without this crate naming their field. A
/// list that is not present with the same length in every run is dropped
/// rather than left holding the first run's counts.
fn merge_counter_lists(out: &mut Run, runs: &[&Run], field: &str, seconds: f64) {
    let Ok(mut v) = serde_json::to_value(&*out) else {
        return;
    };
    let lists: Vec<Vec<Throughput>> = runs
        .iter()
        .filter_map(|r| {
            let rv = serde_json::to_value(r).ok()?;
            serde_json::from_value(rv.get(field)?.clone()).ok()
        })
        .collect();
    let Some(obj) = v.as_object_mut() else { return };
    if !obj.contains_key(field) {
        return;
    }
    let n = lists.first().map_or(0, Vec::len);
    if lists.len() == runs.len() && n > 0 && lists.iter().all(|l| l.len() == n) {
        let merged: Vec<Throughput> = (0..n)
            .map(|i| sum_throughput(lists.iter().map(|l| &l[i]), seconds).unwrap_or_default())
            .collect();
        obj.insert(
            field.into(),
            serde_json::to_value(merged).unwrap_or_default(),
        );
    } else {
        obj.insert(field.into(), serde_json::Value::Array(Vec::new()));
    }
    if let Ok(r) = serde_json::from_value(v) {
        *out = r;
    }
}

/// Sums throughput counters and recomputes the rates over `seconds`.
pub fn sum_throughput<'a>(
    it: impl Iterator<Item = &'a Throughput>,
    seconds: f64,
) -> Option<Throughput> {
    let mut acc: Option<Throughput> = None;
    for t in it {
        let a = acc.get_or_insert_with(Throughput::default);
        a.sent += t.sent;
        a.received += t.received;
        a.bytes += t.bytes;
        a.lost += t.lost;
        a.duplicates += t.duplicates;
        a.out_of_order += t.out_of_order;
        a.rejected += t.rejected;
    }
    if let Some(a) = &mut acc {
        a.finish(seconds);
    }
    acc
}

fn merge_resources<'a>(it: impl Iterator<Item = (&'a Resources, f64)>) -> Resources {
    let mut out = Resources::default();
    let mut total = 0.0;
    let mut n = 0usize;
    let (mut cpu, mut user, mut sys) = (0.0, 0.0, 0.0);
    let (mut ucpu, mut uuser, mut usys) = (0.0, 0.0, 0.0);
    for (r, d) in it {
        n += 1;
        total += d;
        cpu += r.cpu_percent * d;
        user += r.cpu_user_percent * d;
        sys += r.cpu_system_percent * d;
        ucpu += r.cpu_percent;
        uuser += r.cpu_user_percent;
        usys += r.cpu_system_percent;
        out.max_rss_kib = out.max_rss_kib.max(r.max_rss_kib);
        out.voluntary_cs += r.voluntary_cs;
        out.involuntary_cs += r.involuntary_cs;
    }
    if total > 0.0 {
        out.cpu_percent = cpu / total;
        out.cpu_user_percent = user / total;
        out.cpu_system_percent = sys / total;
    } else if n > 0 {
        // No durations recorded: plain mean.
        out.cpu_percent = ucpu / n as f64;
        out.cpu_user_percent = uuser / n as f64;
        out.cpu_system_percent = usys / n as f64;
    }
    out
}

/// Groups runs by cell, in order of first appearance.
pub fn group_by_cell<'a>(runs: impl IntoIterator<Item = &'a Run>) -> Vec<(CellKey, Vec<&'a Run>)> {
    let mut order: Vec<CellKey> = Vec::new();
    let mut groups: BTreeMap<CellKey, Vec<&Run>> = BTreeMap::new();
    for r in runs {
        let k = CellKey::of(r);
        if !groups.contains_key(&k) {
            order.push(k.clone());
        }
        groups.entry(k).or_default().push(r);
    }
    order
        .into_iter()
        .map(|k| {
            let v = groups.remove(&k).unwrap_or_default();
            (k, v)
        })
        .collect()
}

/// Merges results files: runs of the same cell (across all files and
/// within one) become one run; the others, and every topology run, are
/// kept as they are. The
/// environment is the first file's; `notes` lists what the caller should
/// tell the user (files measured on another machine).
pub fn merge_files(files: &[ResultsFile]) -> Result<(ResultsFile, Vec<String>)> {
    let first = files
        .first()
        .ok_or_else(|| ReportError::Empty("no results to merge".into()))?;
    let mut notes = Vec::new();
    let mut env = first.environment.clone();
    for (i, f) in files.iter().enumerate().skip(1) {
        let e = &f.environment;
        if e.cpu_model != env.cpu_model || e.kernel != env.kernel || e.hostname != env.hostname {
            notes.push(format!(
                "input {} was measured on another machine ({} on {}); the merged file keeps the environment of input 1",
                i + 1,
                e.cpu_model,
                e.hostname
            ));
        }
        for (b, v) in &e.bindings {
            env.bindings.entry(b.clone()).or_insert_with(|| v.clone());
        }
    }
    let all = files.iter().flat_map(|f| f.runs.iter());
    let mut runs = Vec::new();
    for (_, group) in group_by_cell(all) {
        runs.push(merge_runs(&group)?);
    }
    Ok((
        ResultsFile {
            tool: first.tool.clone(),
            environment: env,
            runs,
            // Topology runs are kept as they are, not merged.
            graphs: files.iter().flat_map(|f| f.graphs.clone()).collect(),
        },
        notes,
    ))
}
