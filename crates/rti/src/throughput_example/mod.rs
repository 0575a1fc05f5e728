//! `pubsubperf throughput-example ARGS...`: the command lines of RTI
//! Connext's Throughput example (its publishing and subscribing
//! applications) over pubsubperf's `throughput --demand` ramp. The flags
//! are read through one table (`options`) into a
//! [`TestRequest`](crate::plan::TestRequest); the publisher runs the ramp
//! and prints the example's two tables (`printer`); a subscriber
//! (`-participantId N`) serves the publisher's session as the Perftest
//! front end's `-sub` does, on port 7400 + N - 1.

pub mod options;
pub mod printer;

use crate::perftest::options::host_port;
use crate::perftest::{servable, serve_once, sub_port, sub_waiting};
use crate::plan::{TestPlan, UsageError};
use options::{Invocation, Role, SAME_HOST};
use pubsubperf_core::result::TestKind;
use std::process::ExitCode;

/// Reads an example command line into a finished invocation; without
/// `-middleware` it measures this machine's default
/// ([`crate::rti_default`]: Connext where it can run).
pub fn read(args: &[String]) -> Result<Invocation, UsageError> {
    read_with(args, crate::rti_default::middleware)
}

/// [`read`], the default middleware from `default` (asked only when the
/// line names none).
pub fn read_with(
    args: &[String],
    default: impl FnOnce() -> crate::rti_default::RtiDefault,
) -> Result<Invocation, UsageError> {
    let mut inv = options::parse(args)?;
    if !inv.applied.iter().any(|(flag, _)| *flag == "-middleware") {
        inv.default_middleware = default();
        inv.request.binding = inv.default_middleware.middleware.into();
    }
    inv.finish(sub_port())?;
    Ok(inv)
}

/// The plan of an invocation (a subscriber's too: its flags are checked
/// the same way).
pub fn plan(inv: &Invocation) -> Result<TestPlan, UsageError> {
    inv.request
        .plan(TestKind::Throughput)
        .map_err(|e| inv.explain(e))
}

/// Runs an example command line.
pub fn run(args: &[String]) -> anyhow::Result<ExitCode> {
    if options::parse(args)?.help {
        print!("{}", options::markdown_table());
        return Ok(ExitCode::SUCCESS);
    }
    let mut inv = read(args)?;
    match inv.role() {
        Role::Sub => subscribe(&inv),
        Role::Pub => {
            inv.default_middleware.say("throughput-example");
            let local = inv.peers.iter().all(|p| p == SAME_HOST);
            if local && servable(&inv.request.binding) && sub_waiting(sub_port()) {
                let n = crate::plan::axes::counts("-subscribers", &inv.request.subscribers)?[0];
                let connect: Vec<String> = (0..n)
                    .map(|i| host_port("127.0.0.1", u32::from(sub_port()) + i as u32))
                    .collect();
                eprintln!(
                    "pubsubperf throughput-example: subscribers wait on this host; running with them ({})",
                    connect.join(", ")
                );
                inv.request.connect = Some(connect.join(","));
            }
            publish(&inv)
        }
    }
}

/// A subscribing application: serves one publisher's session (every
/// demand of its ramp), which sends the test's settings.
fn subscribe(inv: &Invocation) -> anyhow::Result<ExitCode> {
    drop(plan(inv)?);
    if !servable(&inv.request.binding) {
        return Err(UsageError(format!(
            "-participantId: {} runs within one process or host only, so no subscriber process can serve it; run the publisher alone (it starts its own subscribers)",
            inv.request.binding
        ))
        .into());
    }
    let n = inv.participant.unwrap_or(1);
    let port = u16::try_from(u32::from(sub_port()) + n - 1).map_err(|_| {
        UsageError(format!(
            "-participantId {n}: its port ({} + {n} - 1) is past 65535",
            sub_port()
        ))
    })?;
    eprintln!(
        "pubsubperf throughput-example: subscriber {n} serving one publisher on port {port}; the publisher sends the test's settings, this process prints its own table (this side's flags are checked, not used, except -nic and -mcast_recv_addr)"
    );
    serve_once(
        inv.request.data_address.clone(),
        inv.request.multicast_address.clone(),
        None,
        port,
        Some(crate::side_print::Request::ThroughputExample.encode()),
    )
}

/// The publishing application: the ramp, then the example's tables.
fn publish(inv: &Invocation) -> anyhow::Result<ExitCode> {
    let mut plan = plan(inv)?;
    plan.quiet = true;
    crate::interrupt::install(crate::interrupt::Notice::Say);
    let mut sink = pubsubperf_runner::sink::Sink::new(
        pubsubperf_runner::environment::bindings_env(&plan.specs),
        None,
        None,
    );
    println!("Starting test...");
    let failure = crate::execute(&plan, &mut sink, None)?;
    let runs: Vec<&pubsubperf_core::result::Run> = sink.file.runs.iter().collect();
    print!("{}", printer::publisher_table(&runs));
    if failure.is_none() {
        println!("\nTest Completed.");
    }
    // Ours, not the example's: on standard error.
    eprint!("{}", printer::subscriber_tables(&runs));
    for run in &runs {
        eprint!("{}", pubsubperf_report::profile::text(run));
    }
    crate::failure_exit(failure, !runs.is_empty())
}

#[cfg(test)]
mod tests;
