//! The main job: a quick latency and throughput comparison of every binding
//! that can run on this machine, printed as one table
//! ([`pubsubperf_runner::quick`] measures it,
//! [`pubsubperf_report::live::quick`] prints it), saved, and reported.

use crate::cli::QuickArgs;
use crate::plan::parse_duration;
use pubsubperf_harness::INTERRUPTED;
use pubsubperf_report::live::quick::table;
use pubsubperf_runner::quick::{BEST_EFFORT_MAX_LOSS, Event, SEARCH_TRIALS, compare, selected};
use std::process::ExitCode;
use std::sync::atomic::Ordering;

/// Runs the comparison.
pub fn run(q: &QuickArgs) -> anyhow::Result<ExitCode> {
    let d = parse_duration("--duration", &q.duration)?;
    let dur = format!("{}ms", d.as_millis().max(100));
    let mut sink = pubsubperf_runner::sink::Sink::new(
        pubsubperf_core::environment::Environment::detect(),
        q.json.as_deref(),
        None,
    );
    // The quick comparison pins as a test does by default.
    let (a, b) = crate::plan::parse_cpu(None, pubsubperf_core::sys::cpus())?;
    sink.file.environment.calibration = pubsubperf_runner::calibration::load();
    sink.file.environment.doctor =
        pubsubperf_doctor::examine_here(&[a, b].into_iter().flatten().collect::<Vec<_>>(), None);
    println!(
        "pubsubperf {}: quick comparison, {} per test, latency at 64 B and 4 KiB, throughput at 1 KiB (best effort: the highest rate with loss ≤ {BEST_EFFORT_MAX_LOSS} %, at most {SEARCH_TRIALS} trials)",
        env!("CARGO_PKG_VERSION"),
        dur
    );
    let bindings = selected(q.bindings.as_deref())?;
    compare(&bindings, &dur, &mut sink, &mut |e| match e {
        Event::Skipped { binding, why } => println!("  {binding:<10} skipped: {why}"),
        Event::Failed {
            binding,
            test,
            size,
            why,
        } => match size {
            Some(size) => println!("  {binding:<10} {test} {size}: {why}"),
            None => println!("  {binding:<10} {test}: {why}"),
        },
    })
    .map_err(pubsubperf_frontend::lifted)?;
    let runs = &sink.file.runs;
    print!("{}", table(runs));
    if let Some(line) = crate::doctor::flag_line(&sink.file.environment.doctor) {
        println!("{line}");
    }
    if let Some(p) = &q.json {
        println!("results: {}", p.display());
    }
    if !runs.is_empty() {
        let meta = crate::analysis::SaveMeta {
            sweep: Some("main-job".into()),
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
        pubsubperf_report::write_atomic(&q.out, report.html.as_bytes())
            .map_err(|e| anyhow::anyhow!("--out {}: {e}", q.out.display()))?;
        println!("report: {}", q.out.display());
    }
    Ok(if INTERRUPTED.load(Ordering::Relaxed) {
        ExitCode::from(130)
    } else {
        ExitCode::SUCCESS
    })
}
