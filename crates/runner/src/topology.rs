//! A topology run's plan (`pubsubperf topology FILE`): the file read and
//! checked against the binding and the run's settings, each node's own
//! binding and each topic's own QoS checked with them.

use crate::plan::{TestRequest, UsageError, parse_duration};
use pubsubperf_core::result::TestKind;
use pubsubperf_core::{WaitMode, WireProtocol, sys};
use pubsubperf_harness::registry;
use pubsubperf_harness::spec::RunSpec;
use pubsubperf_topology::Topology;
use std::path::PathBuf;

/// What a topology run is asked for: the file, and the settings that
/// override its own.
#[derive(Debug, Clone, Default)]
pub struct TopologyRequest {
    /// The topology file.
    pub file: PathBuf,
    /// The binding (else the file's).
    pub binding: Option<String>,
    /// The transport (else the binding's default; a cross-vendor one when
    /// nodes name other bindings).
    pub transport: Option<String>,
    /// Measurement time (else the file's).
    pub duration: Option<String>,
    /// Warm-up (else the file's).
    pub warmup: Option<String>,
    /// Reliable delivery.
    pub reliable: bool,
    /// Best-effort delivery.
    pub best_effort: bool,
    /// How readers wait (a graph has more threads than cores: they block
    /// unless told).
    pub wait: Option<WaitMode>,
    /// Binding options (`KEY=VALUE`).
    pub opts: Vec<String>,
    /// How long to wait for the nodes' sides.
    pub connect_timeout: String,
}

/// The checked topology and the run's settings.
pub struct TopologyPlan {
    /// The graph.
    pub topology: Topology,
    /// The settings every node runs with.
    pub spec: RunSpec,
}

/// Reads the file and checks it and the flags against the binding.
pub fn plan(args: &TopologyRequest) -> Result<TopologyPlan, UsageError> {
    let t =
        pubsubperf_topology::read(&args.file).map_err(|e| UsageError(format!("topology {e}")))?;
    let binding = args.binding.clone().or_else(|| t.binding.clone()).ok_or_else(|| {
        UsageError(format!(
            "--binding: {} names no binding; give --binding NAME (or binding = \"NAME\" in the file)",
            args.file.display()
        ))
    })?;
    let cpus = sys::cpus();
    if let Some(n) = t
        .nodes
        .iter()
        .find(|n| n.cpu.is_some_and(|c| !cpus.contains(&c)))
    {
        return Err(UsageError(format!(
            "topology {}: nodes.{}.cpu = {}: not a core this process may use (cores {})",
            args.file.display(),
            n.name,
            n.cpu.unwrap_or(0),
            pubsubperf_doctor::cpu_list_text(cpus)
        )));
    }
    let (readers, writers) = t.fan();
    // Nodes of other vendors meet over the transport a cross-vendor pair
    // takes (udp), not the run's binding's own default.
    let other = t
        .nodes
        .iter()
        .filter_map(|n| n.binding.as_deref())
        .find(|b| *b != binding);
    let transport = args
        .transport
        .clone()
        .or_else(|| other.map(|o| registry::default_transport(&binding, o, false)));
    let req = TestRequest {
        binding: binding.clone(),
        transport,
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
        wait: Some(args.wait.unwrap_or(WaitMode::Block)),
        opts: args.opts.clone(),
        subscribers: readers.to_string(),
        connect_timeout: args.connect_timeout.clone(),
        cpu: Some("none".into()),
        quiet: true,
        loopback_only: true,
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
        .ok_or_else(|| UsageError("a plan without a run".into()))?;
    if writers > 1 && !registry::multiple_publishers(&binding) {
        let topic = (0..t.topics.len())
            .find(|&i| t.writers_of(i).count() > 1)
            .map_or("", |i| t.topics[i].name.as_str());
        return Err(UsageError(format!(
            "--binding {binding}: topics.{topic} has {writers} writers, and a {binding} reader takes samples from one writer; give each topic one writer or use a binding with several publishers (udp, zenoh, iceoryx2, connext)"
        )));
    }
    spec.endpoint.publishers = writers;
    check_hosts(&t, &args.file, &binding)?;
    check_bindings(&t, &args.file, &spec)?;
    check_topic_qos(&t, &args.file, &spec)?;
    parse_duration("--connect-timeout", &args.connect_timeout)?;
    Ok(TopologyPlan { topology: t, spec })
}

/// Nodes on agents: a binding that can reach other hosts, one node per
/// agent (an agent serves one session at a time).
fn check_hosts(t: &Topology, file: &std::path::Path, binding: &str) -> Result<(), UsageError> {
    let far: Vec<&pubsubperf_topology::Node> =
        t.nodes.iter().filter(|n| n.host.is_some()).collect();
    let Some(first) = far.first() else {
        return Ok(());
    };
    let caps = registry::info(binding).map(|i| i.capabilities);
    if !caps.is_some_and(|c| c.remote && !c.in_process) {
        return Err(UsageError(format!(
            "topology {}: nodes.{}.host: {binding} cannot reach another host; run every node here (remove host) or use a networked binding",
            file.display(),
            first.name
        )));
    }
    for (i, a) in far.iter().enumerate() {
        if let Some(b) = far[..i].iter().find(|b| b.host == a.host) {
            return Err(UsageError(format!(
                "topology {}: nodes.{}.host: node {} runs on that agent already, and an agent serves one session at a time; start another agent there on another port (pubsubperf agent --listen HOST:PORT2)",
                file.display(),
                a.name,
                b.name
            )));
        }
    }
    Ok(())
}

/// `spec` with both sides on binding `b`.
fn on_binding(spec: &RunSpec, b: &str) -> RunSpec {
    let mut own = spec.clone();
    own.binding = b.to_string();
    own.peer_binding = b.to_string();
    own
}

/// Nodes with bindings of their own: bindings that meet (the DDS stacks),
/// each able to run the run's settings.
fn check_bindings(t: &Topology, file: &std::path::Path, spec: &RunSpec) -> Result<(), UsageError> {
    for n in &t.nodes {
        let Some(b) = n.binding.as_deref().filter(|b| *b != spec.binding) else {
            continue;
        };
        let at = format!(
            "topology {}: nodes.{}.binding = \"{b}\"",
            file.display(),
            n.name
        );
        if registry::info(b).is_none() {
            return Err(UsageError(format!(
                "{at}: {}",
                registry::unknown_binding("binding", b)
            )));
        }
        if !registry::meet_on_the_wire(b, &spec.binding) {
            let groups: Vec<String> = WireProtocol::ALL
                .iter()
                .map(|p| {
                    let names = registry::speaking(*p).join(", ");
                    format!("the {} bindings ({names})", p.family())
                })
                .collect();
            return Err(UsageError(format!(
                "{at}: only {} meet across vendors, and the run is {}; give every node the same binding",
                groups.join(" or "),
                spec.binding
            )));
        }
        registry::validate(&on_binding(spec, b), n.host.is_some())
            .map_err(|e| UsageError(format!("{at}: {e}")))?;
    }
    Ok(())
}

/// Topics with a history or durability of their own: every binding of the
/// run maps the setting, and takes it with the run's other settings.
fn check_topic_qos(t: &Topology, file: &std::path::Path, spec: &RunSpec) -> Result<(), UsageError> {
    let mut bindings = vec![spec.binding.clone()];
    bindings.extend(t.nodes.iter().filter_map(|n| n.binding.clone()));
    for topic in &t.topics {
        let set = [
            ("history", "--history", topic.history.is_some()),
            ("durability", "--durability", topic.durability.is_some()),
        ];
        for (key, flag, on) in set {
            if !on {
                continue;
            }
            if let Some(b) = bindings
                .iter()
                .find(|b| !registry::qos_flags(b).contains(&flag))
            {
                return Err(UsageError(format!(
                    "topology {}: topics.{}.{key}: {b} has no such setting (a DDS QoS); remove it or use a DDS binding",
                    file.display(),
                    topic.name
                )));
            }
        }
        for b in &bindings {
            let mut own = on_binding(spec, b);
            own.endpoint.history = topic.history.or(own.endpoint.history);
            own.endpoint.durability = topic.durability.or(own.endpoint.durability);
            registry::validate(&own, false).map_err(|e| {
                UsageError(format!(
                    "topology {}: topics.{}: {e}",
                    file.display(),
                    topic.name
                ))
            })?;
        }
    }
    Ok(())
}
