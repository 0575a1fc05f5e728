//! Running a plan as a front end does: each run's progress line on
//! standard error, the tables of its runs, and the exit code of how it
//! ended.

use pubsubperf_core::environment::Environment;
use pubsubperf_core::result::{Run, TestKind};
use pubsubperf_harness::Fault;
use pubsubperf_runner::plan::{self, UsageError};
use pubsubperf_runner::{RunnerError, execute as executor};
use std::process::ExitCode;

/// The exit code of a subscriber host's process.
pub fn serve_exit(r: Result<(), Fault>) -> anyhow::Result<ExitCode> {
    match r {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(Fault::Config(m)) => Err(UsageError(m).into()),
        Err(Fault::Interrupted) => Ok(ExitCode::from(130)),
        Err(e) => Err(anyhow::anyhow!("{e}")),
    }
}

/// Runs every spec of a plan, on one session per number of subscribers
/// and publishers (one session for most plans), pushing each finished run into
/// `sink` (which rewrites the output files at once). Returns why it stopped
/// early, if it did; set-up failures are returned the same way.
pub fn execute(
    plan: &plan::TestPlan,
    sink: &mut pubsubperf_runner::sink::Sink,
    pool: Option<&std::sync::Arc<pubsubperf_harness::ssh::Pool>>,
) -> anyhow::Result<Option<Fault>> {
    let quiet = plan.quiet;
    // The live lines say the rate, subscribers and publishers of their
    // run where the plan's runs differ in them.
    let differ = |f: fn(&pubsubperf_harness::spec::RunSpec) -> u64| {
        plan.specs.iter().any(|s| f(s) != f(&plan.specs[0]))
    };
    let (rates, subs, pubs) = (
        differ(|s| s.rate.to_bits()),
        differ(|s| s.subscribers as u64),
        differ(|s| s.publishers as u64),
    );
    executor::execute(plan, sink, pool, &mut |spec, i| {
        if !quiet {
            let mut point = String::new();
            if rates {
                point += &format!(", rate {}", pubsubperf_core::rate::format_rate(spec.rate));
            }
            if subs {
                point += &format!(", {} subscribers", spec.subscribers);
            }
            if pubs {
                point += &format!(", {} publishers", spec.publishers);
            }
            eprintln!(
                "{}",
                pubsubperf_report::live::interval_line(spec.test, spec.size, &point, i)
            );
        }
    })
    .map_err(lifted)
}

/// A runner's error as the binary reports it: a usage error stays one
/// (exit code 2).
pub fn lifted(e: RunnerError) -> anyhow::Error {
    match e {
        RunnerError::Usage(u) => u.into(),
        e => e.into(),
    }
}

/// Prints the tables of a test's runs.
pub fn print_tables(runs: &[Run], env: &Environment) {
    if let Some(r) = runs.first() {
        let refs: Vec<&Run> = runs.iter().collect();
        println!("{}", pubsubperf_report::live::run_banner(&refs));
        match r.test {
            TestKind::Latency => {
                print!("{}", pubsubperf_report::live::latency_table(&refs));
                print!("{}", pubsubperf_report::live::per_subscriber::lines(&refs));
                print!("{}", pubsubperf_report::live::fan_out::lines(&refs));
                print!("{}", pubsubperf_report::live::topics::lines(&refs));
                print!("{}", pubsubperf_report::live::one_way::lines(&refs));
                print!("{}", pubsubperf_report::live::limit::lines(&refs));
                print!("{}", pubsubperf_report::live::discovery::lines(&refs));
            }
            TestKind::Throughput if pubsubperf_report::live::ramp::demand_of(r).is_some() => {
                print!("{}", pubsubperf_report::live::ramp::table(&refs));
                print!("{}", pubsubperf_report::live::loss_lines(&refs));
            }
            TestKind::Throughput => {
                print!("{}", pubsubperf_report::live::throughput_table(&refs));
                print!("{}", pubsubperf_report::live::fan_out::lines(&refs));
                print!("{}", pubsubperf_report::live::topics::lines(&refs));
                print!("{}", pubsubperf_report::live::limit::lines(&refs));
                print!("{}", pubsubperf_report::live::discovery::lines(&refs));
            }
        }
        for r in runs {
            print!("{}", pubsubperf_report::profile::text(r));
            print!("{}", pubsubperf_report::explanation::text(r));
        }
        if let Some(how) = &env.emulated {
            println!(
                "emulated: {how}; these figures are the emulator's, not {}'s",
                env.arch
            );
        }
    }
}

/// The exit of a test that stopped with `failure` (None: it finished);
/// `measured`: some runs' results were written.
pub fn failure_exit(failure: Option<Fault>, measured: bool) -> anyhow::Result<ExitCode> {
    match failure {
        None => Ok(ExitCode::SUCCESS),
        Some(Fault::Interrupted) => {
            eprintln!("pubsubperf: interrupted; results so far are written");
            Ok(ExitCode::from(130))
        }
        Some(Fault::Config(m)) => Err(UsageError(m).into()),
        Some(f) => {
            let saved = if measured {
                " (results measured so far are written)"
            } else {
                ""
            };
            anyhow::bail!("{f}{saved}")
        }
    }
}
