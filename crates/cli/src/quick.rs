//! The main job: a quick latency and throughput comparison of every binding
//! that can run on this machine, printed as one table.

use crate::cli::QuickArgs;
use crate::output;
use crate::plan::{TestRequest, UsageError, parse_duration};
use pubsubperf_core::binding::BindingInfo;
use pubsubperf_core::result::{Run, TestKind};
use pubsubperf_harness::registry;
use pubsubperf_harness::session::Session;
use pubsubperf_harness::{Fault, INTERRUPTED};
use std::process::ExitCode;
use std::sync::atomic::Ordering;

fn request(binding: &str, size: &str, duration: &str) -> TestRequest {
    TestRequest {
        binding: binding.into(),
        size: size.into(),
        duration: Some(duration.into()),
        warmup: "200ms".into(),
        quiet: true,
        ..TestRequest::default()
    }
}

/// The bindings to compare: the ones named by `--bindings` (in that order),
/// else every binding compiled in except synthetic ones (a virtual clock's
/// figures, the mock binding's, are not part of a comparison).
fn selected(list: Option<&str>) -> Result<Vec<BindingInfo>, UsageError> {
    let Some(list) = list else {
        return Ok(registry::infos()
            .into_iter()
            .filter(|i| !registry::synthetic(i.name))
            .collect());
    };
    let mut out: Vec<BindingInfo> = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let info = registry::info(name)
            .ok_or_else(|| UsageError(registry::unknown_binding("--bindings", name)))?;
        if !out.iter().any(|i| i.name == info.name) {
            out.push(info);
        }
    }
    if out.is_empty() {
        return Err(UsageError(
            "--bindings: name at least one binding (see 'pubsubperf bindings')".into(),
        ));
    }
    Ok(out)
}

/// Runs the comparison.
pub fn run(q: &QuickArgs) -> anyhow::Result<ExitCode> {
    let d = parse_duration("--duration", &q.duration)?;
    let dur = format!("{}ms", d.as_millis().max(100));
    let mut runs: Vec<Run> = Vec::new();
    let mut sink = output::Sink::new(
        pubsubperf_core::environment::Environment::detect(),
        q.json.as_deref(),
        None,
    );
    println!(
        "pubsubperf {}: quick comparison, {} per test, latency at 64 B and 4 KiB, throughput at 1 KiB",
        env!("CARGO_PKG_VERSION"),
        dur
    );
    for info in selected(q.bindings.as_deref())? {
        if let Err(why) = &info.available {
            println!("  {:<10} skipped: {why}", info.name);
            continue;
        }
        sink.file
            .environment
            .bindings
            .insert(info.name.to_string(), info.version.clone());
        for (test, size) in [
            (TestKind::Latency, "64,4KiB"),
            (TestKind::Throughput, "1KiB"),
        ] {
            if INTERRUPTED.load(Ordering::Relaxed) {
                break;
            }
            let plan = request(info.name, size, &dur).plan(test)?;
            let peers = crate::peers_for(info.name, &[], Default::default(), 1)?;
            let mut session = match Session::start(peers, plan.connect_timeout) {
                Ok(s) => s,
                Err(e) => {
                    println!("  {:<10} {test}: {e}", info.name);
                    continue;
                }
            };
            for spec in &plan.specs {
                let o = pubsubperf_harness::run::run(&mut session, spec, &mut |_| {});
                if let Some(r) = o.run {
                    sink.push(r.clone())?;
                    runs.push(r);
                }
                if let Some(f) = o.fault {
                    if matches!(f, Fault::Interrupted) {
                        break;
                    }
                    println!("  {:<10} {test} {}: {f}", info.name, spec.size);
                    break;
                }
            }
            session.close();
        }
    }
    print!("{}", table(&runs));
    if let Some(p) = &q.json {
        println!("results: {}", p.display());
    }
    if !runs.is_empty() {
        let meta = crate::analysis::SaveMeta {
            sweep: Some("quick".into()),
            command: Some("pubsubperf (quick comparison)".into()),
            ..Default::default()
        };
        if let Some((path, group)) = crate::analysis::save_results(&q.save, &sink.file, &meta)? {
            println!("database: run group {group} in {}", path.display());
        }
    }
    if !q.no_report && !runs.is_empty() {
        use pubsubperf_report::html::{Options, Source, build};
        let report = build(
            &[Source {
                name: "quick comparison".into(),
                file: sink.file.clone(),
            }],
            &Options {
                title: "pubsubperf quick comparison".into(),
                generated_at: pubsubperf_report::time::rfc3339_now(),
            },
        )
        .map_err(|e| anyhow::anyhow!("report: {e}"))?;
        std::fs::write(&q.out, report.html.as_bytes())
            .map_err(|e| anyhow::anyhow!("--out {}: {e}", q.out.display()))?;
        println!("report: {}", q.out.display());
    }
    Ok(if INTERRUPTED.load(Ordering::Relaxed) {
        ExitCode::from(130)
    } else {
        ExitCode::SUCCESS
    })
}

/// One row per binding: latency p50/p99 at each size, throughput at 1 KiB.
pub fn table(runs: &[Run]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\n{:<10} {:<12} {:>12} {:>12} {:>12} {:>12} {:>14} {:>10} {:>8}",
        "BINDING",
        "RELIABILITY",
        "p50 64B µs",
        "p99 64B µs",
        "p50 4KiB µs",
        "p99 4KiB µs",
        "1KiB samples/s",
        "Mbps",
        "lost %"
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
                .map(|l| (output::us(l.p50), output::us(l.p99)))
                .unwrap_or(("-".into(), "-".into()))
        };
        let tp = runs
            .iter()
            .find(|r| r.binding == n && r.test == TestKind::Throughput)
            .and_then(|r| r.throughput.as_ref());
        let reliable = runs
            .iter()
            .find(|r| r.binding == n)
            .is_some_and(|r| r.reliable);
        let (a, b) = lat(64);
        let (c, d) = lat(4096);
        let _ = writeln!(
            s,
            "{:<10} {:<12} {:>12} {:>12} {:>12} {:>12} {:>14} {:>10} {:>8}",
            n,
            if reliable { "reliable" } else { "best effort" },
            a,
            b,
            c,
            d,
            tp.map_or("-".into(), |t| format!("{:.0}", t.samples_per_s)),
            tp.map_or("-".into(), |t| format!("{:.1}", t.mbps)),
            tp.map_or("-".into(), |t| format!("{:.3}", t.lost_percent)),
        );
    }
    let throughput: Vec<&Run> = runs
        .iter()
        .filter(|r| r.test == TestKind::Throughput)
        .collect();
    s.push_str(&output::loss_lines(&throughput));
    s
}
