//! `PUBSUBPERF_CHECK_ONLY=1 pubsubperf ...`: the command line parsed and
//! validated, nothing run (the docs test checks every documented command
//! this way).

use crate::cli::{Cli, Command};
use crate::{sweep, topology};
use pubsubperf_core::result::TestKind;
use pubsubperf_rti::{perftest, throughput_example};
use std::process::ExitCode;

/// With this variable set, the command line is parsed and validated (a
/// test's plan built, a sweep's cells checked) and nothing runs: exit 0 when
/// the command would start, 2 with the one-line error otherwise. The docs
/// test checks every command of README.md and docs/ this way.
pub const CHECK_ONLY: &str = "PUBSUBPERF_CHECK_ONLY";

pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
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
