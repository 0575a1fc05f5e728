//! The main job's comparison (`pubsubperf`, `pubsubperf quick`): every
//! binding that can run here, latency at 64 B and 4 KiB and throughput at
//! 1 KiB, each test on a session of its own.
//!
//! Throughput at 1 KiB is measured two ways: a reliable binding sends as
//! fast as it accepts (flow control sets the pace, nothing is lost); a
//! best-effort one would only measure how far its sender outruns the
//! receiver that way (tens of percent lost), so its figure is the highest
//! rate whose loss stays at or under [`BEST_EFFORT_MAX_LOSS`] %, found by
//! the `--find-max` search in at most [`SEARCH_TRIALS`] trials of half the
//! per-test duration each.

use crate::find_max;
use crate::plan::{TestRequest, UsageError};
use crate::sink::Sink;
use pubsubperf_core::Reliability;
use pubsubperf_core::binding::BindingInfo;
use pubsubperf_core::result::TestKind;
use pubsubperf_harness::registry;
use pubsubperf_harness::run::RunOutcome;
use pubsubperf_harness::search::SearchParams;
use pubsubperf_harness::session::Session;
use pubsubperf_harness::spec::RunSpec;
use pubsubperf_harness::{Fault, INTERRUPTED};
use std::sync::atomic::Ordering;

/// Best-effort throughput: the highest rate with at most this loss, percent.
pub const BEST_EFFORT_MAX_LOSS: f64 = 0.1;
/// Best-effort throughput: at most this many trials of the search.
pub const SEARCH_TRIALS: usize = 6;

/// What the comparison tells as it goes.
#[derive(Debug)]
pub enum Event<'a> {
    /// A binding that cannot run here, and why.
    Skipped { binding: &'a str, why: &'a str },
    /// A test (at a size, once it ran) that failed, and why; the
    /// comparison goes on with the next test.
    Failed {
        binding: &'a str,
        test: TestKind,
        size: Option<usize>,
        why: String,
    },
}

/// The bindings to compare: the ones named by `--bindings` (in that order),
/// else every binding compiled in except synthetic ones (a virtual clock's
/// figures, the mock binding's, are not part of a comparison).
pub fn selected(list: Option<&str>) -> Result<Vec<BindingInfo>, UsageError> {
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

/// One run of the comparison: best-effort throughput through the search
/// (trials of half the per-test duration), everything else as planned.
fn measure(session: &mut Session, spec: &RunSpec) -> RunOutcome {
    if spec.test != TestKind::Throughput || spec.endpoint.reliability != Reliability::BestEffort {
        return pubsubperf_harness::run::run(session, spec, &mut |_| {});
    }
    let mut trial = spec.clone();
    trial.duration_ns = (spec.duration_ns / 2).max(100_000_000);
    let params = SearchParams {
        max_loss_percent: BEST_EFFORT_MAX_LOSS,
        max_trials: SEARCH_TRIALS,
        ..Default::default()
    };
    find_max::find_max(session, &trial, params, true)
}

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

/// Runs the comparison of `bindings` (see [`selected`]), each test
/// measured for `duration` (`"500ms"`), pushing each run into `sink` as it
/// ends (its limit line added); stops early when interrupted.
pub fn compare(
    bindings: &[BindingInfo],
    duration: &str,
    sink: &mut Sink,
    on: &mut dyn FnMut(Event),
) -> crate::Result<()> {
    for info in bindings {
        if let Err(why) = &info.available {
            on(Event::Skipped {
                binding: info.name,
                why,
            });
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
                return Ok(());
            }
            let plan = request(info.name, size, duration).plan(test)?;
            let peers = crate::access::peers_for(info.name, &[], Default::default(), 1)?;
            let mut session = match Session::start(peers, plan.connect_timeout) {
                Ok(s) => s,
                Err(e) => {
                    on(Event::Failed {
                        binding: info.name,
                        test,
                        size: None,
                        why: e.to_string(),
                    });
                    continue;
                }
            };
            for spec in &plan.specs {
                let o = measure(&mut session, spec);
                if let Some(mut r) = o.run {
                    r.limit = crate::limit::of(&r, &sink.file.environment, None);
                    sink.push(r)?;
                }
                if let Some(f) = o.fault {
                    if !matches!(f, Fault::Interrupted) {
                        on(Event::Failed {
                            binding: info.name,
                            test,
                            size: Some(spec.size),
                            why: f.to_string(),
                        });
                    }
                    break;
                }
            }
            session.close();
        }
    }
    Ok(())
}
