//! pubsubperf: the command-line front end. The command line is parsed in
//! `cli/` (the only module that uses clap); `pubsubperf_runner::plan`
//! validates a test and builds its run specs from plain values (the command
//! line, sweep cells and the quick job all go through it), and
//! `pubsubperf_frontend` runs them with their progress lines and tables;
//! the RTI tools' front ends are `pubsubperf_rti`. The work is done by the
//! library crates (pubsubperf-runner, pubsubperf-harness, pubsubperf-core
//! and the bindings).

mod analysis;
mod calibrate;
mod cli;
mod doctor;
mod quick;
mod relay;
mod sweep;
mod topology;
mod topology_print;

use anyhow::Context;
use cli::{Cli, Command};
use plan::UsageError;
use pubsubperf_core::result::TestKind;
use pubsubperf_frontend::{agent, execute, failure_exit, interrupt, print_tables, serve_exit};
use pubsubperf_harness::registry;
use pubsubperf_rti::{perftest, side_print, throughput_example};
use pubsubperf_runner::environment::bindings_env;
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
    let outcome = if std::env::var_os(CHECK_ONLY).is_some() {
        check_only(cli)
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

/// With this variable set, the command line is parsed and validated (a
/// test's plan built, a sweep's cells checked) and nothing runs: exit 0 when
/// the command would start, 2 with the one-line error otherwise. The docs
/// test checks every command of README.md and docs/ this way.
const CHECK_ONLY: &str = "PUBSUBPERF_CHECK_ONLY";

fn check_only(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Some(Command::Latency(a)) => drop(a.plan(TestKind::Latency)?),
        Some(Command::Throughput(a)) => drop(a.plan(TestKind::Throughput)?),
        Some(Command::Perftest(a)) => drop(perftest::plan(&perftest::read(&a.args)?)?),
        Some(Command::ThroughputExample(a)) => drop(throughput_example::plan(
            &throughput_example::read(&a.args)?,
        )?),
        Some(Command::Topology(a)) => drop(topology::plan(&a)?),
        Some(Command::Sweep(a)) => {
            let sweep = sweep::load(&a.file)?;
            for cell in &sweep.cells {
                if let Err(why) = sweep::check_cell(cell) {
                    eprintln!(
                        "pubsubperf: sweep {}: cell {} would be skipped: {why}",
                        a.file.display(),
                        cell.key
                    );
                }
            }
        }
        _ => {}
    }
    Ok(ExitCode::SUCCESS)
}

fn command_line() -> String {
    std::env::args().collect::<Vec<_>>().join(" ")
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
        Some(Command::Latency(a)) => {
            interrupt::install(interrupt::Notice::Say);
            test(a.plan(TestKind::Latency)?, &a.save, &command_line())
        }
        Some(Command::Throughput(a)) => {
            interrupt::install(interrupt::Notice::Say);
            test(a.plan(TestKind::Throughput)?, &a.save, &command_line())
        }
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
        Some(Command::Bindings(a)) => {
            let infos = registry::infos();
            if a.json {
                println!("{}", serde_json::to_string_pretty(&infos)?);
            } else {
                print!("{}", pubsubperf_report::live::bindings_table(&infos));
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Report(a)) => analysis::report(&a),
        Some(Command::Merge(a)) => analysis::merge(&a),
        Some(Command::Compare(a)) => analysis::compare(&a),
        Some(Command::History(a)) => analysis::history(&a),
        Some(Command::Export(a)) => analysis::export(&a),
        Some(Command::Import(a)) => analysis::import(&a),
        Some(Command::Completions(a)) => {
            cli::completions(a.shell, &mut std::io::stdout().lock());
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Man(a)) => {
            match &a.dir {
                Some(dir) => {
                    for page in cli::man_pages(dir)
                        .with_context(|| format!("man --dir {}", dir.display()))?
                    {
                        println!("{}", page.display());
                    }
                }
                None => cli::man_page(&mut std::io::stdout().lock())?,
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Relay(a)) => {
            interrupt::install(interrupt::Notice::Say);
            relay::run(&a)
        }
        Some(Command::Sub(a)) => {
            let r = if let Some(addr) = &a.connect_back {
                // Started by a publisher: it handles Ctrl-C and stops us.
                pubsubperf_harness::serve::connect_back(addr)
            } else if a.session_stdin {
                // Started by an agent: its keys first, before anything opens
                // a descriptor; SIGTERM (the agent stopping) ends the
                // session cleanly.
                let keys = a
                    .session_keys_fd
                    .map(pubsubperf_harness::key_pipe::take)
                    .transpose()
                    .map_err(|e| UsageError(e.to_string()))?;
                let keys = keys.as_ref();
                interrupt::install(interrupt::Notice::Quiet);
                let settings = agent::session_settings(a.session.as_deref())?;
                match settings.print.as_deref() {
                    None => pubsubperf_harness::serve::serve_stdin(&settings, keys, &mut |_, _| {}),
                    Some(p) => {
                        let mut sub = side_print::SidePrint::open(p)?;
                        let r = pubsubperf_harness::serve::serve_stdin(
                            &settings,
                            keys,
                            &mut |spec, msg| sub.show(spec, msg),
                        );
                        sub.finish(r.is_ok());
                        r
                    }
                }
            } else {
                interrupt::install(interrupt::Notice::Say);
                let addr = a.listen.as_deref().unwrap_or("0.0.0.0:7400");
                agent::run(
                    agent::Mode::Listen { addr, once: true },
                    &a.host.settings(),
                    None,
                )?
            };
            serve_exit(r)
        }
        Some(Command::Agent(a)) => {
            if a.new_token {
                agent::new_token(&a.host.settings())?;
                return Ok(ExitCode::SUCCESS);
            }
            interrupt::install(interrupt::Notice::Quiet);
            let mode = if a.stdio {
                agent::Mode::Stdio
            } else {
                agent::Mode::Listen {
                    addr: &a.listen,
                    once: false,
                }
            };
            serve_exit(agent::run(mode, &a.host.settings(), None)?)
        }
    }
}

fn test(plan: plan::TestPlan, save: &cli::SaveArgs, command: &str) -> anyhow::Result<ExitCode> {
    let mut sink = pubsubperf_runner::sink::Sink::new(
        bindings_env(&plan.specs),
        plan.json.as_deref(),
        plan.csv.as_deref(),
    );
    let failure = execute(&plan, &mut sink, None)?;
    print_tables(&sink.file.runs, &sink.file.environment);
    sink.write()?;
    if !sink.file.runs.is_empty() {
        let meta = analysis::SaveMeta {
            command: Some(command.to_string()),
            ..Default::default()
        };
        if let Some((path, group)) = analysis::save_results(save, &sink.file, &meta)? {
            eprintln!(
                "pubsubperf: saved as run group {group} in {}",
                path.display()
            );
        }
    }
    failure_exit(failure, !sink.file.runs.is_empty())
}
