//! The plan builder: from a [`TestRequest`] (plain values, no clap) to the
//! harness's run specs. The command line (the binary's `cli`), sweep cells, the
//! quick job and the check-only mode all build a request and call
//! [`TestRequest::plan`]; [`TestRequest::set`] is the one table of test
//! settings by name, which sweep files use. Every error is one line naming
//! the flag and how to fix it (the binary exits with code 2).

use crate::options;
use pubsubperf_core::result::TestKind;
use pubsubperf_core::size::{parse_size, parse_size_list};
use pubsubperf_core::{
    CancelToken, Capabilities, DataType, Durability, EndpointConfig, History, ReceiveMode,
    Reliability, WaitMode,
};
use pubsubperf_harness::registry;
use pubsubperf_harness::spec::{RoundTripClock, RunSpec};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

pub mod axes;
mod checks;
mod host_address;

/// An invalid option (exit code 2).
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// A validated test invocation.
#[derive(Debug)]
pub struct TestPlan {
    /// One spec per point of the axes, in [`axes`]'s order.
    pub specs: Vec<RunSpec>,
    /// Remote subscribers, if any.
    pub connect: Vec<String>,
    /// The agents' token file (`--token-file`; None: the default place).
    pub token_file: Option<PathBuf>,
    /// `--insecure`: present no token and take an agent that has none.
    pub insecure: bool,
    /// The pubsubperf binary on `ssh://` hosts (`--remote-path`).
    pub remote_path: Option<String>,
    /// Remote extra publishers, if any.
    pub connect_publishers: Vec<String>,
    /// Set-up timeout.
    pub connect_timeout: Duration,
    /// JSON output.
    pub json: Option<PathBuf>,
    /// CSV output.
    pub csv: Option<PathBuf>,
    /// No interval lines.
    pub quiet: bool,
    /// Maximum throughput search, with its loss bound in percent.
    pub find_max: Option<f64>,
    /// `--load`: the stressors run beside the measurement.
    pub load: Option<crate::load::Load>,
    /// Across hosts, measure a raw UDP ping-pong between the hosts before
    /// each latency size, the runs' floor ((the binary's `limit::Floors`)); off
    /// for a front end whose peer serves only the runs its tool would.
    pub link_floor: bool,
}

/// An error of a plan built from another tool's command line, reported
/// under that tool's flag: `applied` pairs each of its flags with the
/// setting (our long flag's name) it set; the last that set the setting
/// the error names wins.
pub fn explain_under(applied: &[(&'static str, &'static str)], e: UsageError) -> UsageError {
    let hit = applied
        .iter()
        .rev()
        .find(|(_, ours)| e.0.starts_with(&format!("--{ours}")));
    match hit {
        Some((theirs, _)) => UsageError(format!("{theirs}: {}", e.0)),
        None => e,
    }
}

/// Parses a duration: `10`, `10s`, `500ms`, `250us`, `2m`, `1.5s`
/// ([`pubsubperf_core::time::parse_duration`]); the error names `flag`.
pub fn parse_duration(flag: &str, s: &str) -> Result<Duration, UsageError> {
    pubsubperf_core::time::parse_duration(s).map_err(|e| UsageError(format!("{flag} {e}")))
}

/// Parses `--cpu PUB,SUB` (or `none`).
pub fn parse_cpu(
    s: Option<&str>,
    cpus: &[usize],
) -> Result<(Option<usize>, Option<usize>), UsageError> {
    match s {
        None if cpus.len() >= 2 => Ok((Some(cpus[0]), Some(cpus[1]))),
        None => Ok((None, None)),
        Some("none") => Ok((None, None)),
        Some(v) => {
            let parts: Vec<&str> = v.split(',').collect();
            let bad = || {
                UsageError(format!(
                    "--cpu '{v}': expected PUB,SUB core numbers like 0,1 (or 'none')"
                ))
            };
            if parts.len() != 2 {
                return Err(bad());
            }
            let p: usize = parts[0].trim().parse().map_err(|_| bad())?;
            let q: usize = parts[1].trim().parse().map_err(|_| bad())?;
            for c in [p, q] {
                if !cpus.contains(&c) {
                    return Err(UsageError(format!(
                        "--cpu '{v}': core {c} is not one this process may use (cores {})",
                        pubsubperf_doctor::cpu_list_text(cpus)
                    )));
                }
            }
            Ok((Some(p), Some(q)))
        }
    }
}

/// A `--connect` address on this host: a loopback address or
/// `localhost` (an `ssh://` one runs through SSH, counted as another host).
fn on_this_host(addr: &str) -> bool {
    if addr.contains("://") && !addr.starts_with("tcp://") {
        return false;
    }
    let a = addr.trim_start_matches("tcp://");
    let host = match a.rsplit_once(':') {
        Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h,
        _ => a,
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn bytes_opt(flag: &str, v: &Option<String>) -> Result<usize, UsageError> {
    match v {
        None => Ok(0),
        Some(s) => parse_size(s).map_err(|e| UsageError(format!("{flag}: {e}"))),
    }
}

/// A run id unique on this host: pid, time, and a counter.
pub fn new_run_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "pp{}x{:x}x{}",
        std::process::id(),
        pubsubperf_core::clock::now_ns() % 0xffff_ffff,
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// A latency or throughput test as asked for, before validation: each
/// field holds one option's value, set by that option's entry of the option
/// table ([`options::OPTIONS`], where its meaning and default are), but
/// `loopback_only`, the planner's own.
#[derive(Debug, Clone)]
pub struct TestRequest {
    pub binding: String,
    pub peer_binding: Option<String>,
    pub transport: Option<String>,
    pub size: String,
    pub duration: Option<String>,
    pub count: Option<u64>,
    pub warmup: String,
    /// `--rate`: a list of rates (`1,10,1k,max`); None: `max` alone.
    pub rate: Option<String>,
    pub demand: Option<String>,
    pub recovery_time: Option<String>,
    pub batch: Option<String>,
    pub latency_every: Option<u64>,
    pub reliable: bool,
    pub best_effort: bool,
    pub multicast: bool,
    pub ipv6: bool,
    /// `--zero-copy`; None: the binding's default ([`TestRequest::zero_copy`]).
    pub zero_copy: Option<bool>,
    pub data_type: Option<DataType>,
    /// `--subscribers`: a list of counts (`1,2,4,8`).
    pub subscribers: String,
    /// `--publishers`: a list of counts.
    pub publishers: String,
    /// `--topics`: a list of counts.
    pub topics: String,
    pub connect_publishers: Option<String>,
    pub cpu: Option<String>,
    pub rt_priority: Option<i32>,
    pub mlock: bool,
    /// `--wait`; None: the binding's default ([`TestRequest::wait`]).
    pub wait: Option<WaitMode>,
    /// `--receive`; None: the binding's default (its fastest).
    pub receive: Option<ReceiveMode>,
    pub check: bool,
    pub one_way: bool,
    pub profile: bool,
    pub explain: bool,
    pub clock: RoundTripClock,
    pub echo_timeout: String,
    pub socket_buffer: Option<String>,
    pub send_queue: Option<usize>,
    pub receive_queue: Option<usize>,
    pub history: Option<String>,
    pub durability: Option<Durability>,
    pub async_publish: bool,
    pub domain: Option<u32>,
    pub qos_file: Option<PathBuf>,
    pub instances: Option<u32>,
    pub max_blocking_time: Option<String>,
    pub no_positive_acks: bool,
    pub bandwidth_limit: Option<String>,
    pub no_push_on_write: bool,
    pub multicast_ttl: Option<u8>,
    pub multicast_address: Option<String>,
    pub sleep: Option<String>,
    pub pace: Option<String>,
    pub opts: Vec<String>,
    pub connect: Option<String>,
    pub token_file: Option<PathBuf>,
    pub insecure: bool,
    pub remote_path: Option<String>,
    pub data_address: Option<String>,
    pub connect_timeout: String,
    pub json: Option<PathBuf>,
    pub csv: Option<PathBuf>,
    pub quiet: bool,
    pub find_max: bool,
    pub max_loss: Option<f64>,
    pub load: Option<String>,
    pub load_cpu: Option<String>,
    /// Keep every side on 127.0.0.1 (a topology, whose nodes may be of
    /// several bindings); see `host_address`.
    pub loopback_only: bool,
}

impl Default for TestRequest {
    /// Every option at the table's default ([`options::OPTIONS`]), the
    /// others unset.
    fn default() -> Self {
        let mut r = TestRequest::unset();
        for o in options::OPTIONS {
            if let Some(d) = o.default {
                o.apply(&mut r, Some(d))
                    .expect("the option table's defaults are valid values");
            }
        }
        r
    }
}

impl TestRequest {
    /// No option given, not even by default.
    fn unset() -> Self {
        TestRequest {
            binding: String::new(),
            peer_binding: None,
            transport: None,
            size: String::new(),
            duration: None,
            count: None,
            warmup: String::new(),
            rate: None,
            demand: None,
            recovery_time: None,
            batch: None,
            latency_every: None,
            reliable: false,
            best_effort: false,
            multicast: false,
            ipv6: false,
            zero_copy: None,
            data_type: None,
            subscribers: String::new(),
            publishers: String::new(),
            topics: String::new(),
            connect_publishers: None,
            cpu: None,
            rt_priority: None,
            mlock: false,
            wait: None,
            receive: None,
            check: false,
            one_way: false,
            profile: false,
            explain: false,
            clock: RoundTripClock::Auto,
            echo_timeout: String::new(),
            socket_buffer: None,
            send_queue: None,
            receive_queue: None,
            history: None,
            durability: None,
            async_publish: false,
            domain: None,
            qos_file: None,
            instances: None,
            max_blocking_time: None,
            no_positive_acks: false,
            bandwidth_limit: None,
            no_push_on_write: false,
            multicast_ttl: None,
            multicast_address: None,
            sleep: None,
            pace: None,
            opts: Vec::new(),
            connect: None,
            token_file: None,
            insecure: false,
            remote_path: None,
            data_address: None,
            connect_timeout: String::new(),
            json: None,
            csv: None,
            quiet: false,
            find_max: false,
            max_loss: None,
            load: None,
            load_cpu: None,
            loopback_only: false,
        }
    }
}

/// `--recovery-time`'s default, ms. RTI's Throughput example documents
/// `-recoveryTime` without its default (the seed says the defaults are in
/// the example's source); each demand here is a run that ends only after
/// the subscribers have reported what they received, so no pause is added
/// unless asked for.
pub const DEFAULT_RECOVERY_MS: u64 = 0;

impl TestRequest {
    /// The subscribers' binding: `--peer-binding`, else `--binding`.
    fn peer(&self) -> &str {
        self.peer_binding.as_deref().unwrap_or(&self.binding)
    }

    /// `--wait`, else the binding's default for `test`
    /// ([`registry::default_wait`]: iceoryx2 and iceoryx busy-poll as their
    /// benchmarks do, the others block).
    pub fn wait(&self, test: TestKind) -> WaitMode {
        self.wait
            .unwrap_or_else(|| registry::default_wait(&self.binding, self.peer(), test))
    }

    /// `--zero-copy`, else the binding's default for `test`
    /// ([`registry::default_zero_copy`]: iceoryx2 and iceoryx loan).
    pub fn zero_copy(&self, test: TestKind) -> bool {
        self.zero_copy
            .unwrap_or_else(|| registry::default_zero_copy(&self.binding, self.peer(), test))
    }

    /// Sets `ours` for another tool's flag `flag` (a front end's): an error
    /// names `flag`, and the pair goes into `applied`, for the front end's
    /// account of what became what.
    pub fn set_for(
        &mut self,
        flag: &'static str,
        ours: &'static str,
        v: Option<&str>,
        applied: &mut Vec<(&'static str, &'static str)>,
    ) -> Result<(), UsageError> {
        // Lists of runs are our own flags' (`--rate 1,10`); the other
        // tools' flags take one value.
        if let Some(v) = v
            && ["rate", "subscribers", "publishers"].contains(&ours)
            && axes::is_list(v)
        {
            return Err(UsageError(format!(
                "{flag} '{v}': takes one value (for a run per value, use pubsubperf's own --{ours} LIST)"
            )));
        }
        self.set(ours, v)
            .map_err(|e| UsageError(format!("{flag}: {}", e.0)))?;
        applied.push((flag, ours));
        Ok(())
    }

    /// Sets one option by its long name (without the dashes; `opt` may
    /// repeat), as the option table says ([`options::OPTIONS`]): sweep cells
    /// and anything else that builds a request from names and values.
    pub fn set(&mut self, name: &str, v: Option<&str>) -> Result<(), UsageError> {
        match options::find(name) {
            Some(o) => o.apply(self, v),
            None => Err(UsageError(format!(
                "--{name}: not an option of 'latency' or 'throughput' (see 'pubsubperf latency --help')"
            ))),
        }
    }

    /// `--qos-file` with an agent at HOST:PORT: the agent is sent the
    /// file's name only, for its `--qos-dir`; refused here if the agent
    /// would refuse that name.
    fn qos_name_fits(
        &self,
        abs: &str,
        connect: &[String],
        connect_publishers: &[String],
    ) -> Result<(), UsageError> {
        use pubsubperf_harness::qos_dir;
        let Some(agent) = connect
            .iter()
            .chain(connect_publishers)
            .find(|a| !a.starts_with("ssh://"))
        else {
            return Ok(());
        };
        let name = qos_dir::name_of(abs).unwrap_or_default();
        if qos_dir::is_file_name(&name) {
            return Ok(());
        }
        Err(UsageError(format!(
            "--qos-file {abs}: the agent at {agent} is sent the file's name, for its --qos-dir, and takes only {}; rename the file",
            qos_dir::NAME_GRAMMAR
        )))
    }

    /// Validates everything and builds one spec per point of the axes
    /// (sizes, rates, subscribers, publishers; see [`axes`]).
    pub fn plan(&self, test: TestKind) -> Result<TestPlan, UsageError> {
        let info = registry::info(&self.binding)
            .ok_or_else(|| UsageError(registry::unknown_binding("--binding", &self.binding)))?;
        let peer = self
            .peer_binding
            .clone()
            .unwrap_or_else(|| self.binding.clone());
        if registry::info(&peer).is_none() {
            return Err(UsageError(registry::unknown_binding(
                "--peer-binding",
                &peer,
            )));
        }
        let caps = &info.capabilities;
        let data_address = self.data_address(caps)?;
        let sizes = parse_size_list(&self.size).map_err(|e| UsageError(format!("--size: {e}")))?;
        let duration = self
            .duration
            .as_deref()
            .map(|d| parse_duration("--duration", d))
            .transpose()?;
        if duration == Some(Duration::ZERO) {
            return Err(UsageError("--duration: must be more than 0".into()));
        }
        if self.count == Some(0) {
            return Err(UsageError("--count: must be at least 1".into()));
        }
        if self.find_max && test != TestKind::Throughput {
            return Err(UsageError("--find-max: only for 'throughput'".into()));
        }
        self.check_profile(caps)?;
        self.check_explain(caps, test)?;
        if self.find_max && self.rate.is_some() {
            return Err(UsageError(
                "--find-max: searches the rate itself; drop --rate".into(),
            ));
        }
        let demands = self.demands(test)?;
        let recovery_ms = match &self.recovery_time {
            None => DEFAULT_RECOVERY_MS,
            Some(_) if demands.is_none() => {
                return Err(UsageError(
                    "--recovery-time: the pause between demands of --demand; add --demand START:STEP:END or drop it".into(),
                ));
            }
            Some(v) => crate::demand::parse_recovery(v)?,
        };
        if let Some(l) = self.max_loss
            && !(0.0..100.0).contains(&l)
        {
            return Err(UsageError(format!(
                "--max-loss {l}: must be a percentage from 0 to below 100"
            )));
        }
        let duration = match (duration, self.count) {
            (None, None) if self.find_max => Some(Duration::from_secs(2)),
            (None, None) => Some(Duration::from_secs(5)),
            (d, _) => d,
        };
        let warmup = parse_duration("--warmup", &self.warmup)?;
        let echo_timeout = parse_duration("--echo-timeout", &self.echo_timeout)?;
        if echo_timeout < Duration::from_millis(1) {
            return Err(UsageError("--echo-timeout: must be at least 1ms".into()));
        }
        let connect_timeout = parse_duration("--connect-timeout", &self.connect_timeout)?;
        if connect_timeout < Duration::from_millis(100) {
            return Err(UsageError(
                "--connect-timeout: must be at least 100ms".into(),
            ));
        }
        let rates = axes::rates(self.rate.as_deref())?;
        let mut subscriber_counts = axes::counts("--subscribers", &self.subscribers)?;
        if self.latency_every.is_some() && test == TestKind::Latency {
            return Err(UsageError(
                "--latency-every: only for 'throughput' (the latency test echoes every sample)"
                    .into(),
            ));
        }
        if self.latency_every == Some(0) {
            return Err(UsageError("--latency-every: must be at least 1".into()));
        }
        if self.one_way && test == TestKind::Throughput {
            return Err(UsageError("--one-way: only for 'latency'".into()));
        }
        if self.clock != RoundTripClock::Auto && test == TestKind::Throughput {
            return Err(UsageError("--clock: only for 'latency'".into()));
        }
        if self.clock == RoundTripClock::Tsc {
            if self.wait(test) != WaitMode::Busy {
                return Err(UsageError(
                    "--clock tsc: needs --wait busy (across a sleep the TSC may count less than CLOCK_MONOTONIC); use --clock monotonic".into(),
                ));
            }
            if self.one_way {
                return Err(UsageError(
                    "--clock tsc: not with --one-way (both processes stamp with CLOCK_MONOTONIC)"
                        .into(),
                ));
            }
            if !cfg!(target_arch = "x86_64") {
                return Err(UsageError(format!(
                    "--clock tsc: the TSC is x86-64's; on {} every timestamp is CLOCK_MONOTONIC: use --clock auto or monotonic",
                    std::env::consts::ARCH
                )));
            }
            if !pubsubperf_core::clock::Tsc::usable() {
                return Err(UsageError(
                    "--clock tsc: this host's kernel does not keep time with the TSC; use --clock auto or monotonic".into(),
                ));
            }
        }
        if let Some(p) = self.rt_priority
            && !(1..=99).contains(&p)
        {
            return Err(UsageError(format!("--rt-priority {p}: must be 1-99")));
        }
        let connect: Vec<String> = self
            .connect
            .as_deref()
            .map(|c| {
                c.split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        if self.connect.is_some() && connect.is_empty() {
            return Err(UsageError(
                "--connect: expected HOST:PORT of a 'pubsubperf agent --listen'".into(),
            ));
        }
        if !connect.is_empty() {
            if subscriber_counts.len() > 1 {
                return Err(UsageError(format!(
                    "--subscribers {}: with --connect, the number of addresses ({}) is the number of subscribers; give one count or drop --subscribers",
                    self.subscribers,
                    connect.len()
                )));
            }
            let n = subscriber_counts[0];
            if n != 1 && n != connect.len() {
                return Err(UsageError(format!(
                    "--subscribers {n}: with --connect, the number of addresses ({}) is the number of subscribers",
                    connect.len()
                )));
            }
            subscriber_counts = vec![connect.len()];
        }
        let connect_publishers: Vec<String> = self
            .connect_publishers
            .as_deref()
            .map(|c| {
                c.split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        let mut publisher_counts = axes::counts("--publishers", &self.publishers)?;
        if !connect_publishers.is_empty() {
            let publishers = connect_publishers.len() + 1;
            if publishers > axes::MAX_PEERS {
                return Err(UsageError("--publishers: must be between 1 and 64".into()));
            }
            if publisher_counts.len() > 1 {
                return Err(UsageError(format!(
                    "--publishers {}: with --connect-publishers, this process plus the addresses ({publishers}) are the publishers; give one count or drop --publishers",
                    self.publishers
                )));
            }
            let n = publisher_counts[0];
            if n != 1 && n != publishers {
                return Err(UsageError(format!(
                    "--publishers {n}: with --connect-publishers, this process plus the addresses ({publishers}) are the publishers"
                )));
            }
            publisher_counts = vec![publishers];
        }
        // Each point is refused as a single count is.
        for &publishers in &publisher_counts {
            if publishers > 1 && test != TestKind::Throughput {
                return Err(UsageError(
                    "--publishers: only for 'throughput' (the latency test is one ping-pong)"
                        .into(),
                ));
            }
            if publishers > 1 && !registry::multiple_publishers(&self.binding) {
                return Err(UsageError(format!(
                    "--publishers {publishers}: {} readers take one writer (bindings with several publishers: {})",
                    self.binding,
                    registry::names()
                        .into_iter()
                        .filter(|n| registry::multiple_publishers(n))
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        }
        let (pub_cpu, sub_cpu) = parse_cpu(self.cpu.as_deref(), pubsubperf_core::sys::cpus())?;
        // Remote subscribers run on another host: no pinning is sent unless
        // asked. Subscribers at a loopback address share this host's cores,
        // so they are pinned as local ones are.
        let sub_cpu = if connect.iter().all(|c| on_this_host(c)) || self.cpu.is_some() {
            sub_cpu
        } else {
            None
        };
        let reliability = if self.reliable {
            Reliability::Reliable
        } else if self.best_effort {
            Reliability::BestEffort
        } else {
            caps.default_reliability
        };
        let mut options = BTreeMap::new();
        for o in &self.opts {
            let (k, v) = o
                .split_once('=')
                .ok_or_else(|| UsageError(format!("--opt '{o}': expected KEY=VALUE")))?;
            options.insert(k.trim().to_string(), v.trim().to_string());
        }
        let transport = self
            .transport
            .clone()
            .unwrap_or_else(|| registry::default_transport(&self.binding, &peer, self.multicast));
        let data_type = self.data_type.unwrap_or(caps.data_types[0]);
        let receive = self.receive_mode(caps, test)?;
        let history: Option<History> = self
            .history
            .as_deref()
            .map(|h| h.parse().map_err(|e| UsageError(format!("--history {e}"))))
            .transpose()?;
        let durability = self.durability;
        let qos_file = match &self.qos_file {
            None => None,
            Some(p) if peer != self.binding => {
                return Err(UsageError(format!(
                    "--qos-file {}: a vendor file fits one binding; drop it for a run across {} and {peer}",
                    p.display(),
                    self.binding
                )));
            }
            Some(p) => {
                if !p.is_file() {
                    return Err(UsageError(format!(
                        "--qos-file {}: no such file",
                        p.display()
                    )));
                }
                // Absolute: subscriber processes may run elsewhere.
                let abs = std::fs::canonicalize(p)
                    .map_err(|e| UsageError(format!("--qos-file {}: {e}", p.display())))?;
                let abs = abs.to_string_lossy().into_owned();
                self.qos_name_fits(&abs, &connect, &connect_publishers)?;
                Some(abs)
            }
        };
        if let Some(n) = self.instances
            && !(1..=100_000).contains(&n)
        {
            return Err(UsageError(format!(
                "--instances {n}: must be between 1 and 100000"
            )));
        }
        let knobs = self.knobs(test, reliability, &rates)?;
        // `--batch 0`: no batching, where the binding's default batches.
        let batch = match self.batch.as_deref() {
            None => None,
            Some("0") => Some(0),
            Some(_) => Some(bytes_opt("--batch", &self.batch)?),
        };
        let remote = !connect.is_empty() || !connect_publishers.is_empty();
        let data_address =
            self.one_host_address(&peer, &transport, remote, data_address, &mut options);
        let run_base = new_run_id();
        let mut specs = Vec::new();
        // One run per point of the axes (see `axes` for the order), and per
        // demand of a --demand ramp (0: none).
        let topic_counts = self.topic_counts(&connect, test)?;
        let points = axes::points(
            &topic_counts,
            &subscriber_counts,
            &publisher_counts,
            &sizes,
            &rates,
            &demands.unwrap_or_else(|| vec![0]),
        );
        for (i, p) in points.iter().enumerate() {
            let (size, demand, subscribers, publishers) =
                (p.size, p.demand, p.subscribers, p.publishers);
            let topics = p.topics;
            let mut endpoint = EndpointConfig {
                run_id: format!("{run_base}s{i}"),
                transport: transport.clone(),
                reliability,
                wait: self.wait(test),
                receive,
                data_type,
                zero_copy: self.zero_copy(test),
                max_sample_size: size,
                subscribers,
                publishers,
                batch_bytes: batch.unwrap_or(0),
                multicast: self.multicast,
                ipv6: self.ipv6,
                bind_ip: "127.0.0.1".into(),
                socket_buffer: bytes_opt("--socket-buffer", &self.socket_buffer)?,
                send_queue: self.send_queue.unwrap_or(0),
                receive_queue: self.receive_queue.unwrap_or(0),
                reliable_block_timeout_ms: knobs.block_ms,
                history,
                durability,
                async_publish: self.async_publish,
                domain: self.domain,
                qos_file: qos_file.clone(),
                instances: self.instances.unwrap_or(0),
                no_positive_acks: self.no_positive_acks,
                bandwidth_limit: knobs.bandwidth,
                no_push_on_write: self.no_push_on_write,
                multicast_ttl: self.multicast_ttl,
                multicast_address: knobs.multicast_address.clone(),
                options: options.clone(),
                cancel: CancelToken::new(),
                sample_key: None,
                held_discovery: None,
            };
            if batch.is_none() {
                endpoint.batch_bytes =
                    registry::default_batch(&self.binding, &peer, test, &endpoint);
            }
            let spec = RunSpec {
                binding: self.binding.clone(),
                peer_binding: peer.clone(),
                test,
                size,
                endpoint,
                warmup_ns: warmup.as_nanos() as u64,
                duration_ns: duration.map_or(0, |d| d.as_nanos() as u64),
                count: self.count.unwrap_or(0),
                rate: p.rate,
                sleep_ns: knobs.sleep_ns,
                pace_sleep: knobs.pace_sleep,
                demand,
                recovery_ms: if demand > 0 { recovery_ms } else { 0 },
                latency_every: self.latency_every.unwrap_or(0),
                check: self.check,
                pub_cpu,
                sub_cpu,
                rt_priority: self.rt_priority,
                mlock: self.mlock,
                subscribers,
                publishers,
                subscriber_index: 0,
                fan_out_every: 0,
                topics,
                echo_timeout_ms: echo_timeout.as_millis() as u64,
                interval_ms: 1000,
                one_way: self.one_way,
                profile: self.profile,
                explain: self.explain,
                clock: self.clock,
                data_address: data_address.clone(),
                run_key: 0,
            };
            registry::validate(&spec, !connect.is_empty()).map_err(UsageError)?;
            specs.push(spec);
        }
        for a in connect.iter().chain(&connect_publishers) {
            if let Some(Err(why)) = pubsubperf_harness::ssh::Target::parse(a) {
                return Err(UsageError(why));
            }
        }
        let over_ssh = connect
            .iter()
            .chain(&connect_publishers)
            .any(|a| a.starts_with("ssh://"));
        if self.remote_path.is_some() && !over_ssh {
            return Err(UsageError(
                "--remote-path: only with an ssh:// address in --connect or --connect-publishers"
                    .into(),
            ));
        }
        if self.token_file.is_some() && connect.is_empty() && connect_publishers.is_empty() {
            return Err(UsageError(
                "--token-file: only with --connect or --connect-publishers (local subscribers need no token)".into(),
            ));
        }
        if self.insecure && self.token_file.is_some() {
            return Err(UsageError(
                "--insecure: presents no token; drop --token-file, or --insecure".into(),
            ));
        }
        if self.load_cpu.is_some() && self.load.is_none() {
            return Err(UsageError("--load-cpu: only with --load PROFILE".into()));
        }
        let load = match &self.load {
            Some(p) => Some(crate::load::Load::plan(
                p,
                self.load_cpu.as_deref(),
                pubsubperf_core::sys::cpus(),
            )?),
            None => None,
        };
        Ok(TestPlan {
            load,
            specs,
            connect,
            token_file: self.token_file.clone(),
            insecure: self.insecure,
            remote_path: self.remote_path.clone(),
            connect_publishers,
            connect_timeout,
            json: self.json.clone(),
            csv: self.csv.clone(),
            quiet: self.quiet,
            find_max: self.find_max.then(|| self.max_loss.unwrap_or(0.0)),
            link_floor: true,
        })
    }
}

#[cfg(test)]
mod tests;
