//! `pubsubperf latency` and `pubsubperf throughput`: a test's plan run
//! with its progress lines and tables, its results written and saved.

use crate::cli::SaveArgs;
use crate::{analysis, plan};
use pubsubperf_frontend::{execute, failure_exit, interrupt, print_tables};
use pubsubperf_runner::environment::bindings_env;
use std::process::ExitCode;

/// Runs `plan`, recording `command` as how it was asked for.
pub fn run(
    plan: Result<plan::TestPlan, plan::UsageError>,
    save: &SaveArgs,
) -> anyhow::Result<ExitCode> {
    interrupt::install(interrupt::Notice::Say);
    let plan = plan?;
    let command = command_line();
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
            command: Some(command),
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

/// This process's command line, for the record.
pub fn command_line() -> String {
    std::env::args().collect::<Vec<_>>().join(" ")
}
