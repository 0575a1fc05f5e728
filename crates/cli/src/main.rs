//! pubsubperf: the command-line front end. The command line is parsed in
//! `cli/` (the only module that uses clap); `pubsubperf_runner::plan`
//! validates a test and builds its run specs from plain values (the command
//! line, sweep cells and the quick job all go through it); the results
//! files are written by `output.rs`, the tables printed by
//! `pubsubperf_report::live`. The work is done by the library crates
//! (pubsubperf-runner, pubsubperf-harness, pubsubperf-core and the
//! bindings).

mod agent;
mod analysis;
mod calibrate;
mod cli;
mod doctor;
mod interrupt;
mod perftest;
mod quick;
mod relay;
mod rti_default;
mod side_print;
mod sweep;
mod throughput_example;
mod topology;
mod topology_print;

use anyhow::Context;
use cli::{Cli, Command};
use plan::UsageError;
use pubsubperf_core::environment::Environment;
use pubsubperf_core::result::{Run, TestKind};
use pubsubperf_harness::{Fault, registry};
use pubsubperf_runner::environment::bindings_env;
use pubsubperf_runner::{RunnerError, execute as executor, plan};
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
                agent::run(agent::Mode::Listen { addr, once: true }, &a.host, None)?
            };
            serve_exit(r)
        }
        Some(Command::Agent(a)) => {
            if a.new_token {
                agent::new_token(&a.host)?;
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
            serve_exit(agent::run(mode, &a.host, None)?)
        }
    }
}

/// The exit code of a subscriber host's process.
fn serve_exit(r: Result<(), Fault>) -> anyhow::Result<ExitCode> {
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
