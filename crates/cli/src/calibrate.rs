//! `pubsubperf calibrate`: this machine's floors (clock cost, cross-core
//! cache-line round trip, memcpy bandwidth), measured by
//! `pubsubperf_core::calibrate` (its documentation has the method). The
//! result is printed, saved to the user's data directory and then travels
//! in the `environment.calibration` of every later result, so latencies
//! can be read as multiples of the floor.

use crate::cli::CalibrateArgs;
use anyhow::Context;
use pubsubperf_core::calibrate::{CacheLine, Calibration, cache_line, measure_on};

/// Runs `pubsubperf calibrate`.
pub fn run(a: &CalibrateArgs) -> anyhow::Result<std::process::ExitCode> {
    let cores = crate::plan::parse_cpu(Some(&a.cpu), pubsubperf_core::sys::cpus())?;
    let (p, q) = (cores.0.unwrap_or(0), cores.1.unwrap_or(1));
    if a.link_only {
        return link_only(a, [p, q]);
    }
    eprintln!("pubsubperf calibrate: measuring on cores {p},{q} (a few seconds)...");
    let c: Calibration = measure_on([p, q]);
    println!("clock_gettime(MONOTONIC): {:.1} ns per call", c.clock_ns);
    match &c.cache_line {
        Some(l) => print_cache_line(l),
        None => println!(
            "cache line: not measured ({})",
            c.cache_line_error.as_deref().unwrap_or("?")
        ),
    }
    for m in &c.memcpy {
        println!(
            "memcpy {:>6}: {:.2} GB/s",
            pubsubperf_core::size::format_size(m.size),
            m.gb_per_s
        );
    }
    let v = serde_json::to_value(&c)?;
    if let Some(f) = &a.json {
        pubsubperf_report::write_atomic(f, serde_json::to_string_pretty(&v)?.as_bytes())
            .with_context(|| format!("--json {}", f.display()))?;
    }
    if !a.no_save
        && let Some(p) = pubsubperf_runner::calibration::saved_path()
    {
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
        }
        pubsubperf_report::write_atomic(&p, serde_json::to_string_pretty(&v)?.as_bytes())
            .with_context(|| format!("saving {}", p.display()))?;
        println!(
            "saved to {} (included in later results' environment)",
            p.display()
        );
    }
    Ok(std::process::ExitCode::SUCCESS)
}

fn print_cache_line(l: &CacheLine) {
    println!(
        "cache line, cores {}->{}: round trip p50 {:.1} ns (min {:.1} ns), one-way = RTT/2 = {:.1} ns",
        l.cores[0], l.cores[1], l.rtt_p50_ns, l.rtt_min_ns, l.one_way_p50_ns
    );
}

/// `--link-only`: the cache-line round trip alone, printed and (with
/// `--json`) written as `{"cache_line": ...}`, never saved.
fn link_only(a: &CalibrateArgs, cores: [usize; 2]) -> anyhow::Result<std::process::ExitCode> {
    let l = cache_line(cores).map_err(|e| anyhow::anyhow!("cache line, cores {cores:?}: {e}"))?;
    print_cache_line(&l);
    if let Some(f) = &a.json {
        let v = serde_json::json!({ "cache_line": l });
        pubsubperf_report::write_atomic(f, serde_json::to_string_pretty(&v)?.as_bytes())
            .with_context(|| format!("--json {}", f.display()))?;
    }
    Ok(std::process::ExitCode::SUCCESS)
}
