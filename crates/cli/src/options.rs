//! From parsed arguments to the harness's plain types. Every error is one
//! line naming the flag and how to fix it (the binary exits with code 2).

use crate::cli::{ClockArg, DataTypeArg, DurabilityArg, TestArgs, WaitArg};
use pubsubperf_core::result::TestKind;
use pubsubperf_core::size::{parse_size, parse_size_list};
use pubsubperf_core::{
    CancelToken, DataType, Durability, EndpointConfig, History, Reliability, WaitMode,
};
use pubsubperf_harness::registry;
use pubsubperf_harness::spec::{RoundTripClock, RunSpec};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

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
    /// One spec per size, in order.
    pub specs: Vec<RunSpec>,
    /// Remote subscribers, if any.
    pub connect: Vec<String>,
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
}

/// Parses a duration: `10`, `10s`, `500ms`, `250us`, `2m`, `1.5s`.
pub fn parse_duration(flag: &str, s: &str) -> Result<Duration, UsageError> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().map_err(|_| {
        UsageError(format!(
            "{flag} '{s}': expected a time like 10s, 500ms or 2m"
        ))
    })?;
    let secs = match unit {
        "" | "s" => n,
        "ms" => n / 1e3,
        "us" | "µs" => n / 1e6,
        "ns" => n / 1e9,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        _ => {
            return Err(UsageError(format!(
                "{flag} '{s}': unknown unit '{unit}' (use ns, us, ms, s, m or h)"
            )));
        }
    };
    if !secs.is_finite() || !(0.0..=366.0 * 86400.0).contains(&secs) {
        return Err(UsageError(format!("{flag} '{s}': out of range")));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Parses `--cpu PUB,SUB` (or `none`).
pub fn parse_cpu(
    s: Option<&str>,
    cores: usize,
) -> Result<(Option<usize>, Option<usize>), UsageError> {
    match s {
        None if cores >= 2 => Ok((Some(0), Some(1))),
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
                if c >= cores {
                    return Err(UsageError(format!(
                        "--cpu '{v}': core {c} does not exist (this machine has cores 0-{})",
                        cores - 1
                    )));
                }
            }
            Ok((Some(p), Some(q)))
        }
    }
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

impl TestArgs {
    /// Validates everything and builds one spec per size.
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
        if self.find_max && self.rate.is_some() {
            return Err(UsageError(
                "--find-max: searches the rate itself; drop --rate".into(),
            ));
        }
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
        if let Some(r) = self.rate
            && !(r > 0.0 && r.is_finite())
        {
            return Err(UsageError(format!(
                "--rate {r}: must be a positive number of samples per second"
            )));
        }
        if self.subscribers == 0 || self.subscribers > 64 {
            return Err(UsageError("--subscribers: must be between 1 and 64".into()));
        }
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
        if self.clock != ClockArg::Auto && test == TestKind::Throughput {
            return Err(UsageError("--clock: only for 'latency'".into()));
        }
        if self.clock == ClockArg::Tsc {
            if self.wait != WaitArg::Busy {
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
                "--connect: expected HOST:PORT of a 'pubsubperf sub --listen'".into(),
            ));
        }
        let subscribers = if connect.is_empty() {
            self.subscribers
        } else {
            connect.len()
        };
        if !connect.is_empty() && self.subscribers != 1 && self.subscribers != connect.len() {
            return Err(UsageError(format!(
                "--subscribers {}: with --connect, the number of addresses ({}) is the number of subscribers",
                self.subscribers,
                connect.len()
            )));
        }
        if self.one_way && !connect.is_empty() {
            return Err(UsageError(
                "--one-way: needs both sides on one host (one clock); drop --connect".into(),
            ));
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
        let publishers = if connect_publishers.is_empty() {
            self.publishers
        } else {
            connect_publishers.len() + 1
        };
        if publishers == 0 || publishers > 64 {
            return Err(UsageError("--publishers: must be between 1 and 64".into()));
        }
        if !connect_publishers.is_empty() && self.publishers != 1 && self.publishers != publishers {
            return Err(UsageError(format!(
                "--publishers {}: with --connect-publishers, this process plus the addresses ({publishers}) are the publishers",
                self.publishers
            )));
        }
        if publishers > 1 && test != TestKind::Throughput {
            return Err(UsageError(
                "--publishers: only for 'throughput' (the latency test is one ping-pong)".into(),
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
        let (pub_cpu, sub_cpu) = parse_cpu(self.cpu.as_deref(), pubsubperf_core::sys::cores())?;
        // Remote subscribers run on another host: no pinning is sent unless asked.
        let sub_cpu = if connect.is_empty() || self.cpu.is_some() {
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
            .unwrap_or_else(|| caps.transports[0].to_string());
        let data_type = match self.data_type {
            None => caps.data_types[0],
            Some(DataTypeArg::Bytes) => DataType::Bytes,
            Some(DataTypeArg::Flat) => DataType::Flat,
        };
        let history: Option<History> = self
            .history
            .as_deref()
            .map(|h| h.parse().map_err(|e| UsageError(format!("--history {e}"))))
            .transpose()?;
        let durability = self.durability.map(|d| match d {
            DurabilityArg::Volatile => Durability::Volatile,
            DurabilityArg::TransientLocal => Durability::TransientLocal,
        });
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
                Some(abs.to_string_lossy().into_owned())
            }
        };
        if let Some(n) = self.instances
            && !(1..=100_000).contains(&n)
        {
            return Err(UsageError(format!(
                "--instances {n}: must be between 1 and 100000"
            )));
        }
        let run_base = new_run_id();
        let mut specs = Vec::new();
        for (i, &size) in sizes.iter().enumerate() {
            let endpoint = EndpointConfig {
                run_id: format!("{run_base}s{i}"),
                transport: transport.clone(),
                reliability,
                wait: match self.wait {
                    WaitArg::Busy => WaitMode::Busy,
                    WaitArg::Block => WaitMode::Block,
                },
                data_type,
                zero_copy: self.zero_copy,
                max_sample_size: size,
                subscribers,
                publishers,
                batch_bytes: bytes_opt("--batch", &self.batch)?,
                multicast: self.multicast,
                ipv6: self.ipv6,
                bind_ip: "127.0.0.1".into(),
                socket_buffer: bytes_opt("--socket-buffer", &self.socket_buffer)?,
                send_queue: self.send_queue.unwrap_or(0),
                receive_queue: self.receive_queue.unwrap_or(0),
                reliable_block_timeout_ms: 10_000,
                history,
                durability,
                async_publish: self.async_publish,
                domain: self.domain,
                qos_file: qos_file.clone(),
                instances: self.instances.unwrap_or(0),
                options: options.clone(),
                cancel: CancelToken::new(),
            };
            let spec = RunSpec {
                binding: self.binding.clone(),
                peer_binding: peer.clone(),
                test,
                size,
                endpoint,
                warmup_ns: warmup.as_nanos() as u64,
                duration_ns: duration.map_or(0, |d| d.as_nanos() as u64),
                count: self.count.unwrap_or(0),
                rate: self.rate.unwrap_or(0.0),
                latency_every: self.latency_every.unwrap_or(0),
                check: self.check,
                pub_cpu,
                sub_cpu,
                rt_priority: self.rt_priority,
                mlock: self.mlock,
                subscribers,
                publishers,
                subscriber_index: 0,
                echo_timeout_ms: echo_timeout.as_millis() as u64,
                interval_ms: 1000,
                one_way: self.one_way,
                clock: match self.clock {
                    ClockArg::Auto => RoundTripClock::Auto,
                    ClockArg::Monotonic => RoundTripClock::Monotonic,
                    ClockArg::Tsc => RoundTripClock::Tsc,
                },
            };
            registry::validate(&spec, !connect.is_empty()).map_err(UsageError)?;
            specs.push(spec);
        }
        Ok(TestPlan {
            specs,
            connect,
            connect_publishers,
            connect_timeout,
            json: self.json.clone(),
            csv: self.csv.clone(),
            quiet: self.quiet,
            find_max: self.find_max.then(|| self.max_loss.unwrap_or(0.0)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn plan(args: &str) -> Result<TestPlan, UsageError> {
        let cli =
            Cli::try_parse_from(format!("pubsubperf {args}").split_whitespace()).expect("parses");
        match cli.command {
            Some(Command::Latency(a)) => a.plan(TestKind::Latency),
            Some(Command::Throughput(a)) => a.plan(TestKind::Throughput),
            _ => panic!("not a test"),
        }
    }

    fn err(args: &str) -> String {
        plan(args).expect_err("should fail").0
    }

    #[test]
    fn durations() {
        assert_eq!(
            parse_duration("--d", "10").unwrap(),
            Duration::from_secs(10)
        );
        assert_eq!(
            parse_duration("--d", "500ms").unwrap(),
            Duration::from_millis(500)
        );
        assert_eq!(
            parse_duration("--d", "2m").unwrap(),
            Duration::from_secs(120)
        );
        assert_eq!(
            parse_duration("--d", "1.5s").unwrap(),
            Duration::from_millis(1500)
        );
        assert!(parse_duration("--d", "5 parsecs").is_err());
        assert!(parse_duration("--d", "").is_err());
    }

    #[test]
    fn cpu() {
        assert_eq!(parse_cpu(None, 2).unwrap(), (Some(0), Some(1)));
        assert_eq!(parse_cpu(None, 1).unwrap(), (None, None));
        assert_eq!(parse_cpu(Some("1,0"), 2).unwrap(), (Some(1), Some(0)));
        assert_eq!(parse_cpu(Some("none"), 2).unwrap(), (None, None));
        assert!(
            parse_cpu(Some("0,5"), 2)
                .unwrap_err()
                .0
                .contains("does not exist")
        );
        assert!(parse_cpu(Some("x"), 2).is_err());
    }

    #[test]
    fn sizes_become_runs() {
        let p = plan("latency --size 32,64,1KiB").unwrap();
        let sizes: Vec<usize> = p.specs.iter().map(|s| s.size).collect();
        assert_eq!(sizes, vec![32, 64, 1024]);
        // Each run gets its own id (unique names for segments, ports, topics).
        assert_ne!(p.specs[0].endpoint.run_id, p.specs[1].endpoint.run_id);
    }

    #[test]
    fn udp_limit_is_checked_before_running() {
        let e = err("latency --binding udp --size 64,100KiB");
        assert!(
            e.starts_with("--size 102400: exceeds udp's limit of 65507 bytes"),
            "{e}"
        );
    }

    #[test]
    fn unknown_binding_lists_known() {
        let e = err("latency --binding nope");
        assert!(
            e.contains("unknown binding 'nope'") && e.contains("udp") && e.contains("tcp"),
            "{e}"
        );
    }

    #[test]
    fn capability_errors_name_the_flag() {
        assert!(err("latency --binding udp --reliable").starts_with("--reliable"));
        assert!(err("latency --binding tcp --best-effort").starts_with("--best-effort"));
        assert!(err("latency --binding tcp --multicast").starts_with("--multicast"));
        assert!(err("latency --binding udp --zero-copy").starts_with("--zero-copy"));
        assert!(err("latency --binding udp --transport tcp").starts_with("--transport"));
        assert!(err("latency --binding uds --connect 10.0.0.1:1").starts_with("--connect"));
        assert!(err("latency --size 8").starts_with("--size 8"));
        assert!(err("latency --latency-every 10").starts_with("--latency-every"));
        assert!(err("latency --rate=-5").starts_with("--rate"));
        assert!(err("latency --duration 0").starts_with("--duration"));
        assert!(err("latency --size 1XB").starts_with("--size"));
        assert!(err("latency --opt foo").starts_with("--opt"));
    }

    #[test]
    fn defaults() {
        let p = plan("throughput --binding tcp").unwrap();
        let s = &p.specs[0];
        assert_eq!(s.endpoint.reliability, Reliability::Reliable);
        assert_eq!(s.endpoint.transport, "tcp");
        assert_eq!(s.duration_ns, 5_000_000_000);
        assert_eq!(s.warmup_ns, 1_000_000_000);
        let p = plan("latency --binding udp -n 100").unwrap();
        assert_eq!(p.specs[0].endpoint.reliability, Reliability::BestEffort);
        assert_eq!((p.specs[0].count, p.specs[0].duration_ns), (100, 0));
    }
}
