//! pubsubperf: the command-line front end. The command line is parsed in
//! `cli/` (the only module that uses clap); `pubsubperf_runner::plan`
//! validates a test and builds its run specs from plain values (the command
//! line, sweep cells and the quick job all go through it), and
//! `pubsubperf_frontend` runs them with their progress lines and tables;
//! the RTI tools' front ends are `pubsubperf_rti`. The work is done by the
//! library crates (pubsubperf-runner, pubsubperf-harness, pubsubperf-core
//! and the bindings).

mod agent;
mod analysis;
mod calibrate;
mod check_only;
mod cli;
mod doctor;
mod man;
mod quick;
mod relay;
mod sub;
mod sweep;
mod test;
mod topology;
mod topology_print;

use cli::{Cli, Command};
use plan::UsageError;
use pubsubperf_core::result::TestKind;
use pubsubperf_frontend::{execute, interrupt};
use pubsubperf_harness::registry;
use pubsubperf_rti::{perftest, throughput_example};
use pubsubperf_runner::{RunnerError, plan};
use std::process::ExitCode;

/// The exit code of `compare` when a `--fail-if` condition holds: distinct
/// from 1 (a run or the comparison failed) so CI can tell a regression
/// from an error.
pub const EXIT_FAIL_IF: u8 = 3;

/// Exit codes: 0 success, 1 a run failed (peer died, binding error),
/// 2 bad input, 3 a `compare --fail-if` condition held (a regression),
/// 130 interrupted.
fn main() -> ExitCode {
    // The cores runs are planned on, read before any run pins a thread.
    pubsubperf_core::sys::cpus();
    let cli = match cli::parse() {
        Ok(c) => c,
        Err(code) => return code,
    };
    let outcome = if std::env::var_os(check_only::CHECK_ONLY).is_some() {
        check_only::run(cli)
    } else {
        run(cli)
    };
    match outcome {
        Ok(code) => code,
        Err(e) => {
            if let Some(u) = e.downcast_ref::<UsageError>() {
                eprintln!("pubsubperf: {u}");
                return ExitCode::from(2);
            }
            if let Some(RunnerError::Usage(u)) = e.downcast_ref::<RunnerError>() {
                eprintln!("pubsubperf: {u}");
                return ExitCode::from(2);
            }
            eprintln!("pubsubperf: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        None => {
            interrupt::install(interrupt::Notice::Say);
            // The main job is `pubsubperf quick` with its defaults.
            quick::run(&cli::QuickArgs::default())
        }
        Some(Command::Quick(a)) => {
            interrupt::install(interrupt::Notice::Say);
            quick::run(&a)
        }
        Some(Command::Latency(a)) => test::run(a.plan(TestKind::Latency), &a.save),
        Some(Command::Throughput(a)) => test::run(a.plan(TestKind::Throughput), &a.save),
        Some(Command::Perftest(a)) => perftest::run(&a.args),
        Some(Command::ThroughputExample(a)) => throughput_example::run(&a.args),
        Some(Command::Sweep(a)) => {
            interrupt::install(interrupt::Notice::Say);
            sweep::run(&a)
        }
        Some(Command::Topology(a)) => {
            interrupt::install(interrupt::Notice::Say);
            topology::run(&a)
        }
        Some(Command::Calibrate(a)) => calibrate::run(&a),
        Some(Command::Doctor(a)) => doctor::run(&a),
        Some(Command::Bindings(a)) => bindings(a.json),
        Some(Command::Report(a)) => analysis::report(&a),
        Some(Command::Merge(a)) => analysis::merge(&a),
        Some(Command::Compare(a)) => analysis::compare(&a),
        Some(Command::History(a)) => analysis::history(&a),
        Some(Command::Export(a)) => analysis::export(&a),
        Some(Command::Import(a)) => analysis::import(&a),
        Some(Command::Completions(a)) => man::completions(&a),
        Some(Command::Man(a)) => man::run(&a),
        Some(Command::Relay(a)) => {
            interrupt::install(interrupt::Notice::Say);
            relay::run(&a)
        }
        Some(Command::Sub(a)) => sub::run(&a),
        Some(Command::Agent(a)) => agent::run(&a),
    }
}

/// `pubsubperf bindings`: the binding table, as a table or JSON.
fn bindings(json: bool) -> anyhow::Result<ExitCode> {
    let infos = registry::infos();
    if json {
        println!("{}", serde_json::to_string_pretty(&infos)?);
    } else {
        print!("{}", pubsubperf_report::live::bindings_table(&infos));
    }
    Ok(ExitCode::SUCCESS)
}
