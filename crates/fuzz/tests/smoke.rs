//! The fuzz targets on stable Rust: a bounded, deterministic run of each
//! target over generated inputs (seeds and their mutations). No input may
//! make a target panic. `PUBSUBPERF_FUZZ_SECONDS` (default 3) bounds each
//! target's time; `scripts/fuzz.sh` runs the real fuzzer on nightly.

use std::time::Duration;

fn budget() -> Duration {
    Duration::from_secs_f64(
        std::env::var("PUBSUBPERF_FUZZ_SECONDS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(3.0),
    )
}

#[test]
fn every_target_survives_generated_inputs() {
    for (name, target) in pubsubperf_fuzz::TARGETS {
        let n = pubsubperf_fuzz::smoke(name, *target, u64::MAX, budget());
        eprintln!("fuzz smoke {name}: {n} inputs, no panic");
        assert!(n > 0, "{name}: no input ran");
    }
}

#[test]
fn every_seed_is_accepted_where_it_should_be() {
    // The seeds are valid inputs: they reach past the first error.
    assert!(
        pubsubperf_harness::protocol::decode(&pubsubperf_fuzz::seeds("control_decode")[0]).is_ok()
    );
    let f = &pubsubperf_fuzz::seeds("results_file")[0];
    let v: pubsubperf_core::result::ResultsFile = serde_json::from_slice(f).expect("seed parses");
    let s = v.runs[0].latency_ns.as_ref().unwrap();
    assert!(pubsubperf_core::stats::LatencyRecorder::from_summary(s).is_ok());
    let sw = &pubsubperf_fuzz::seeds("sweep")[0];
    assert!(pubsubperf_report::sweep::parse(std::str::from_utf8(sw).unwrap(), "x").is_ok());
}
