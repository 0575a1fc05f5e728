//! pubsubperf: the command-line front end. Parsing lives in `cli.rs` and
//! `options.rs`, output in `output.rs`; the work is done by the library
//! crates (pubsubperf-harness, pubsubperf-core and the bindings).

mod analysis;
mod cli;
mod options;
mod output;
mod quick;
mod relay;

use anyhow::Context;
use clap::Parser;
use cli::{Cli, Command};
use options::UsageError;
use pubsubperf_core::environment::Environment;
use pubsubperf_core::result::{Run, TestKind};
use pubsubperf_harness::session::{Peers, Session};
use pubsubperf_harness::{Fault, INTERRUPTED, registry};
use std::process::ExitCode;
use std::sync::atomic::Ordering;

/// Exit codes: 0 success, 1 a run failed (peer died, binding error),
/// 2 bad input, 130 interrupted.
fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                let _ = e.print();
                return ExitCode::from(2);
            }
            // One line: clap's first line, and where to read more.
            let text = e.render().to_string();
            let first = text
                .lines()
                .next()
                .unwrap_or("error")
                .trim_start_matches("error: ");
            eprintln!(
                "pubsubperf: {first} (see 'pubsubperf --help' or 'pubsubperf COMMAND --help')"
            );
            return ExitCode::from(2);
        }
    };
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            if let Some(u) = e.downcast_ref::<UsageError>() {
                eprintln!("pubsubperf: {u}");
                return ExitCode::from(2);
            }
            eprintln!("pubsubperf: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn install_ctrlc() {
    let _ = ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            // Second Ctrl-C: leave now.
            std::process::exit(130);
        }
        eprintln!(
            "pubsubperf: interrupted; writing what was measured (Ctrl-C again to quit at once)"
        );
    });
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        None => {
            install_ctrlc();
            quick::run(&cli::QuickArgs {
                duration: "1s".into(),
                json: None,
            })
        }
        Some(Command::Quick(a)) => {
            install_ctrlc();
            quick::run(&a)
        }
        Some(Command::Latency(a)) => {
            install_ctrlc();
            test(a.plan(TestKind::Latency)?)
        }
        Some(Command::Throughput(a)) => {
            install_ctrlc();
            test(a.plan(TestKind::Throughput)?)
        }
        Some(Command::Bindings(a)) => {
            let infos = registry::infos();
            if a.json {
                println!("{}", serde_json::to_string_pretty(&infos)?);
            } else {
                print!("{}", output::bindings_table(&infos));
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Relay(a)) => {
            install_ctrlc();
            relay::run(&a)
        }
        Some(Command::Report(a)) => analysis::report(&a),
        Some(Command::Merge(a)) => analysis::merge(&a),
        Some(Command::Compare(a)) => analysis::compare(&a),
        Some(Command::History(a)) => analysis::history(&a),
        Some(Command::Export(a)) => analysis::export(&a),
        Some(Command::Import(a)) => analysis::import(&a),
        Some(Command::Sub(a)) => {
            let r = if let Some(addr) = &a.connect_back {
                // Started by a publisher: it handles Ctrl-C and stops us.
                pubsubperf_harness::session::connect_back(addr)
            } else {
                install_ctrlc();
                let addr = a.listen.as_deref().unwrap_or("0.0.0.0:7400");
                pubsubperf_harness::session::listen(addr, &mut |local| {
                    eprintln!("pubsubperf sub: listening on {local}");
                })
            };
            match r {
                Ok(()) => Ok(ExitCode::SUCCESS),
                Err(Fault::Config(m)) => Err(UsageError(m).into()),
                Err(Fault::Interrupted) => Ok(ExitCode::from(130)),
                Err(e) => Err(anyhow::anyhow!("{e}")),
            }
        }
    }
}

/// Chooses where the subscribers run.
pub fn peers_for(binding: &str, connect: &[String], n: usize) -> anyhow::Result<Peers> {
    if !connect.is_empty() {
        return Ok(Peers::Remote {
            addrs: connect.to_vec(),
        });
    }
    let in_process = registry::info(binding).is_some_and(|i| i.capabilities.in_process);
    if in_process {
        return Ok(Peers::Threads { n });
    }
    let exe = std::env::current_exe()
        .context("cannot find the pubsubperf binary to start subscribers")?;
    Ok(Peers::Local { n, exe })
}

fn bindings_env(specs: &[pubsubperf_harness::spec::RunSpec]) -> Environment {
    let mut env = Environment::detect();
    for s in specs {
        for b in [&s.binding, &s.peer_binding] {
            if let Some(i) = registry::info(b) {
                env.bindings.insert(b.clone(), i.version);
            }
        }
    }
    env
}

fn test(plan: options::TestPlan) -> anyhow::Result<ExitCode> {
    let first = plan.specs.first().context("no run")?;
    let mut sink = output::Sink::new(
        bindings_env(&plan.specs),
        plan.json.as_deref(),
        plan.csv.as_deref(),
    );
    let peers = peers_for(&first.peer_binding, &plan.connect, first.subscribers)?;
    let mut session = match Session::start(peers, plan.connect_timeout) {
        Ok(s) => s,
        Err(Fault::Interrupted) => return Ok(ExitCode::from(130)),
        Err(Fault::Config(m)) => return Err(UsageError(m).into()),
        Err(e) => anyhow::bail!("{e}"),
    };
    if !plan.connect.is_empty()
        && let Some(s) = session.subs.first()
    {
        sink.file.environment.subscriber_host = Some(Box::new(s.environment.clone()));
    }
    let quiet = plan.quiet;
    let mut runs: Vec<Run> = Vec::new();
    let mut failure: Option<Fault> = None;
    for spec in &plan.specs {
        let (test, size) = (spec.test, spec.size);
        let mut on_interval = |i: &pubsubperf_core::result::Interval| {
            if !quiet {
                eprintln!("{}", output::interval_line(test, size, i));
            }
        };
        let outcome = session.run(spec, &mut on_interval);
        if let Some(run) = outcome.run {
            sink.push(run.clone())?;
            runs.push(run);
        }
        if let Some(f) = outcome.fault {
            failure = Some(f);
            break;
        }
    }
    if failure.is_none() {
        session.close();
    } else {
        drop(session);
    }
    if let Some(r) = runs.first() {
        println!("{}", output::run_banner(r));
        let refs: Vec<&Run> = runs.iter().collect();
        match r.test {
            TestKind::Latency => print!("{}", output::latency_table(&refs)),
            TestKind::Throughput => print!("{}", output::throughput_table(&refs)),
        }
    }
    sink.write()?;
    match failure {
        None => Ok(ExitCode::SUCCESS),
        Some(Fault::Interrupted) => {
            eprintln!("pubsubperf: interrupted; results so far are written");
            Ok(ExitCode::from(130))
        }
        Some(Fault::Config(m)) => Err(UsageError(m).into()),
        Some(f) => {
            let saved = match (&plan.json, &plan.csv) {
                (None, None) => String::new(),
                _ => " (results measured so far are written)".into(),
            };
            anyhow::bail!("{f}{saved}")
        }
    }
}
