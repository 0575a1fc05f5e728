//! `pubsubperf topology FILE`: plans the run
//! ([`pubsubperf_runner::topology`]), runs its graph over one binding
//! ([`pubsubperf_harness::graph`]) and prints its paths, hops, topics and
//! nodes; `--json` writes the result, and the run is saved in the results
//! database unless `--no-save`.

use crate::cli::{TopologyArgs, WaitArg};
use crate::plan::{UsageError, parse_duration};
use pubsubperf_core::WaitMode;
use pubsubperf_harness::graph::Placement;
use pubsubperf_runner::sink::Sink;
use pubsubperf_runner::topology::{TopologyPlan, TopologyRequest};
use std::process::ExitCode;

/// The plan of the command line's topology run.
pub fn plan(args: &TopologyArgs) -> Result<TopologyPlan, UsageError> {
    pubsubperf_runner::topology::plan(&TopologyRequest {
        file: args.file.clone(),
        binding: args.binding.clone(),
        transport: args.transport.clone(),
        duration: args.duration.clone(),
        warmup: args.warmup.clone(),
        reliable: args.reliable,
        best_effort: args.best_effort,
        wait: args.wait.map(|w| match w {
            WaitArg::Busy => WaitMode::Busy,
            WaitArg::Block => WaitMode::Block,
        }),
        opts: args.opts.clone(),
        connect_timeout: args.connect_timeout.clone(),
    })
}

/// Runs the topology and prints and writes what it measured.
pub fn run(args: &TopologyArgs) -> anyhow::Result<ExitCode> {
    let p = plan(args)?;
    let t = &p.topology;
    let timeout = parse_duration("--connect-timeout", &args.connect_timeout)?;
    let spec = p.spec.clone();
    let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    println!(
        "topology {}: {}, {}, {}; {} ({}), {} s measured after {} s warm-up",
        t.name,
        plural(t.nodes.len(), "node"),
        plural(t.topics.len(), "topic"),
        plural(t.paths.len(), "path"),
        spec.binding,
        spec.endpoint.transport,
        spec.duration_ns as f64 / 1e9,
        spec.warmup_ns as f64 / 1e9
    );
    let here = t.nodes.iter().filter(|n| n.host.is_none()).count();
    let placement = Placement {
        local: pubsubperf_runner::access::peers_for(&spec.binding, &[], Default::default(), here)?,
        access: pubsubperf_runner::access::access_to(
            t.nodes.iter().filter_map(|n| n.host.as_deref()),
            args.token_file.as_deref(),
            args.insecure,
            args.remote_path.clone(),
        )?,
        connect_timeout: timeout,
    };
    let graph = pubsubperf_harness::graph::run_topology(t, &spec, placement)
        .map_err(|f| anyhow::anyhow!("{f}"))?;
    crate::topology_print::print(&graph);
    let mut sink = Sink::new(
        pubsubperf_runner::environment::bindings_env(std::slice::from_ref(&spec)),
        args.json.as_deref(),
        None,
    );
    sink.file.graphs.push(graph);
    sink.write()?;
    let meta = crate::analysis::SaveMeta {
        command: Some(crate::test::command_line()),
        ..Default::default()
    };
    if let Some((path, group)) = crate::analysis::save_results(&args.save, &sink.file, &meta)? {
        eprintln!(
            "pubsubperf: saved as run group {group} in {}",
            path.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
