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
mod endpoint;
mod host_address;
mod peers;
mod times;

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
        let peer = self.peer().to_string();
        if registry::info(&peer).is_none() {
            return Err(UsageError(registry::unknown_binding(
                "--peer-binding",
                &peer,
            )));
        }
        let caps = &info.capabilities;
        let data_address = self.data_address(caps)?;
        let sizes = parse_size_list(&self.size).map_err(|e| UsageError(format!("--size: {e}")))?;
        let times = self.times(test, caps)?;
        let rates = axes::rates(self.rate.as_deref())?;
        let subscriber_counts = axes::counts("--subscribers", &self.subscribers)?;
        self.check_test_kind(test)?;
        let (connect, subscriber_counts) = self.subscribers_at(subscriber_counts)?;
        let (connect_publishers, publisher_counts) = self.publishers_at(test)?;
        let cores = self.cores(&connect)?;
        let hosts = peers::Hosts {
            connect,
            connect_publishers,
        };
        let endpoints = self.endpoint(test, caps, &peer, &rates, &hosts, data_address)?;
        let points = axes::points(
            &self.topic_counts(&hosts.connect, test)?,
            &subscriber_counts,
            &publisher_counts,
            &sizes,
            &rates,
            times.demands.as_deref().unwrap_or(&[0]),
        );
        let shared = endpoint::Shared {
            test,
            peer: &peer,
            times: &times,
            endpoints: &endpoints,
            cores,
            remote_subscribers: !hosts.connect.is_empty(),
        };
        let specs = self.specs(&shared, &points)?;
        self.check_access(&hosts)?;
        Ok(TestPlan {
            load: self.load()?,
            specs,
            connect: hosts.connect,
            token_file: self.token_file.clone(),
            insecure: self.insecure,
            remote_path: self.remote_path.clone(),
            connect_publishers: hosts.connect_publishers,
            connect_timeout: times.connect_timeout,
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
