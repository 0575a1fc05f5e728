//! `pubsubperf topology FILE`: reads and checks a topology file, runs its
//! graph over one binding ([`pubsubperf_harness::graph`]) and prints its
//! paths, hops, topics and nodes; `--json` writes the result.

use crate::cli::{TopologyArgs, WaitArg};
use crate::output::Sink;
use crate::plan::{TestRequest, UsageError, parse_duration};
use anyhow::Context;
use pubsubperf_core::result::TestKind;
use pubsubperf_core::{WaitMode, sys};
use pubsubperf_harness::registry;
use pubsubperf_harness::spec::RunSpec;
use pubsubperf_topology::Topology;
use std::process::ExitCode;

/// The checked topology and the run's settings.
pub struct TopologyPlan {
    /// The graph.
    pub topology: Topology,
    /// The settings every node runs with.
    pub spec: RunSpec,
}

/// Reads the file and checks it and the flags against the binding.
pub fn plan(args: &TopologyArgs) -> Result<TopologyPlan, UsageError> {
    let t =
        pubsubperf_topology::read(&args.file).map_err(|e| UsageError(format!("topology {e}")))?;
    let binding = args.binding.clone().or_else(|| t.binding.clone()).ok_or_else(|| {
        UsageError(format!(
            "--binding: {} names no binding; give --binding NAME (or binding = \"NAME\" in the file)",
            args.file.display()
        ))
    })?;
    if let Some(n) = t.nodes.iter().find(|n| n.host.is_some()) {
        return Err(UsageError(format!(
            "topology {}: nodes.{}.host: nodes on agent hosts are not supported yet; remove host (every node runs on this host)",
            args.file.display(),
            n.name
        )));
    }
    let cores = sys::cores();
    if let Some(n) = t.nodes.iter().find(|n| n.cpu.is_some_and(|c| c >= cores)) {
        return Err(UsageError(format!(
            "topology {}: nodes.{}.cpu = {}: this host has {cores} cores (0-{})",
            args.file.display(),
            n.name,
            n.cpu.unwrap_or(0),
            cores - 1
        )));
    }
    let (readers, writers) = t.fan();
    let req = TestRequest {
        binding: binding.clone(),
        transport: args.transport.clone(),
        size: t.max_size().to_string(),
        duration: Some(
            args.duration
                .clone()
                .unwrap_or_else(|| format!("{}ns", t.duration.as_nanos())),
        ),
        warmup: args
            .warmup
            .clone()
            .unwrap_or_else(|| format!("{}ns", t.warmup.as_nanos())),
        reliable: args.reliable,
        best_effort: args.best_effort,
        // A graph has more threads than cores: readers block unless told.
        wait: Some(match args.wait {
            Some(WaitArg::Busy) => WaitMode::Busy,
            _ => WaitMode::Block,
        }),
        opts: args.opts.clone(),
        subscribers: readers.to_string(),
        connect_timeout: args.connect_timeout.clone(),
        cpu: Some("none".into()),
        quiet: true,
        ..TestRequest::default()
    };
    let largest = t
        .topics
        .iter()
        .max_by_key(|x| x.size)
        .map_or("", |x| x.name.as_str());
    let mut spec = req
        .plan(TestKind::Latency)
        .map_err(|e| match e.0.strip_prefix("--size ") {
            Some(rest) => UsageError(format!(
                "topology {}: topics.{largest}.size {rest}",
                args.file.display()
            )),
            None => e,
        })?
        .specs
        .into_iter()
        .next()
        .context("a plan without a run")
        .map_err(|e| UsageError(e.to_string()))?;
    if writers > 1 && !registry::multiple_publishers(&binding) {
        let topic = (0..t.topics.len())
            .find(|&i| t.writers_of(i).count() > 1)
            .map_or("", |i| t.topics[i].name.as_str());
        return Err(UsageError(format!(
            "--binding {binding}: topics.{topic} has {writers} writers, and a {binding} reader takes samples from one writer; give each topic one writer or use a binding with several publishers (udp, zenoh, iceoryx2, connext)"
        )));
    }
    spec.endpoint.publishers = writers;
    parse_duration("--connect-timeout", &args.connect_timeout)?;
    Ok(TopologyPlan { topology: t, spec })
}

/// Runs the topology and prints and writes what it measured.
pub fn run(args: &TopologyArgs) -> anyhow::Result<ExitCode> {
    let p = plan(args)?;
    let t = &p.topology;
    let timeout = parse_duration("--connect-timeout", &args.connect_timeout)?;
    let mut spec = p.spec.clone();
    spec.echo_timeout_ms = timeout.as_millis() as u64;
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
    let peers = crate::peers_for(&spec.binding, &[], Default::default(), t.nodes.len())?;
    let graph = pubsubperf_harness::graph::run_topology(t, &spec, peers)
        .map_err(|f| anyhow::anyhow!("{f}"))?;
    crate::topology_print::print(&graph);
    let mut sink = Sink::new(
        crate::bindings_env(std::slice::from_ref(&spec)),
        args.json.as_deref(),
        None,
    );
    sink.file.graphs.push(graph);
    sink.write()?;
    Ok(ExitCode::SUCCESS)
}
