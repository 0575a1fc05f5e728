//! `--find-max` (and the quick comparison's best-effort throughput): the
//! search of [`pubsubperf_harness::search`] run trial by trial over a
//! session, its best trial kept as the run.

use pubsubperf_core::result::{Run, SearchRecord};
use pubsubperf_harness::run::RunOutcome;
use pubsubperf_harness::search::{self, SearchParams};
use pubsubperf_harness::session::Session;
use pubsubperf_harness::spec::RunSpec;

/// Runs the maximum throughput search for one size; the result is the run of
/// the best trial, with every trial recorded in its `config.find_max`.
pub fn find_max(
    session: &mut Session,
    spec: &RunSpec,
    params: SearchParams,
    quiet: bool,
) -> RunOutcome {
    let max_loss = params.max_loss_percent;
    let mut runs: Vec<Run> = Vec::new();
    let mut fault = None;
    let (trials, best) = search::find_max(params, |rate| {
        let mut s = spec.clone();
        s.rate = rate;
        s.endpoint.run_id = crate::plan::new_run_id();
        s.endpoint.cancel = pubsubperf_core::CancelToken::new();
        let o = pubsubperf_harness::run::run(session, &s, &mut |_| {});
        if let Some(f) = o.fault {
            fault = Some(f);
            if let Some(r) = o.run {
                runs.push(r);
            }
            return None;
        }
        let r = o.run?;
        let t = r.throughput.clone()?;
        if !quiet {
            eprintln!(
                "  find-max size {}: target {} -> sent {:.0}/s, received {:.0}/s, lost {:.4}%",
                spec.size,
                if rate == 0.0 {
                    "max".to_string()
                } else {
                    format!("{rate:.0}/s")
                },
                t.sent_per_s,
                t.samples_per_s,
                t.lost_percent
            );
        }
        runs.push(r);
        Some((t.sent_per_s, t.samples_per_s, t.lost_percent))
    });
    let pick = best.or(if runs.is_empty() {
        None
    } else {
        Some(runs.len() - 1)
    });
    let run = pick.and_then(|i| runs.get(i).cloned()).map(|mut r| {
        let record = SearchRecord {
            max_loss_percent: max_loss,
            max_trials: params.max_trials,
            found: best.is_some(),
            trials,
        };
        if let (Some(o), Ok(v)) = (r.config.as_object_mut(), serde_json::to_value(record)) {
            o.insert("find_max".into(), v);
        }
        if best.is_none() && fault.is_none() {
            r.error = Some(format!("no trial had loss at or under {max_loss}%"));
        }
        r
    });
    RunOutcome { run, fault }
}

/// The search's record in a run found by [`find_max`] (`config.find_max`).
pub fn record(run: &Run) -> Option<&serde_json::Value> {
    run.config.get("find_max")
}
