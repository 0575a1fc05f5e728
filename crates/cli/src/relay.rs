//! `pubsubperf relay`: the delaying forwarder (crate pubsubperf-relay) on the
//! command line. Its arguments live here, beside the one function that
//! turns them into the relay's plain configuration.

use crate::options::{UsageError, parse_duration};
use clap::{Args, ValueEnum};
use pubsubperf_harness::INTERRUPTED;
use pubsubperf_relay::{Config, Relay, Target};
use std::net::{SocketAddr, ToSocketAddrs};
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Which protocol to relay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProtoArg {
    /// UDP datagrams only.
    Udp,
    /// TCP connections only.
    Tcp,
}

/// `pubsubperf relay`: forward UDP and TCP with an added delay per direction.
///
/// A stand-in for `tc qdisc add dev IFACE root netem delay D` where the kernel
/// has no netem: put it between publisher and subscriber to add D to each
/// direction (one-way latency grows by D, round trip by 2 D).
#[derive(Debug, Args)]
pub struct RelayArgs {
    /// Where to listen, HOST:PORT (UDP and TCP on the same port).
    #[arg(long, value_name = "ADDR")]
    pub listen: String,
    /// Where to forward, HOST:PORT.
    #[arg(
        long,
        value_name = "ADDR",
        required_unless_present = "transparent",
        conflicts_with = "transparent"
    )]
    pub target: Option<String>,
    /// Forward each flow to its original destination, as redirected to
    /// --listen by an nftables tproxy rule (root; see the README, section "Across hosts and under faults").
    #[arg(long)]
    pub transparent: bool,
    /// Delay added to each direction (e.g. 1ms, 250us; 0 forwards at once).
    #[arg(long, default_value = "0", value_name = "TIME")]
    pub delay: String,
    /// Relay only this protocol (default: both).
    #[arg(long, value_enum, value_name = "PROTO")]
    pub proto: Option<ProtoArg>,
    /// Stop after this long (default: until Ctrl-C or SIGTERM).
    #[arg(long, value_name = "TIME")]
    pub duration: Option<String>,
    /// SCHED_FIFO priority (1-99) of the relay's threads, so that a busy
    /// machine does not stretch the delay (root).
    #[arg(long, value_name = "N")]
    pub rt_priority: Option<i32>,
}

fn addr(flag: &str, s: &str) -> Result<SocketAddr, UsageError> {
    s.to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| UsageError(format!("{flag} '{s}': expected HOST:PORT")))
}

impl RelayArgs {
    /// The relay's configuration, validated.
    pub fn config(&self) -> Result<(Config, Option<Duration>), UsageError> {
        let listen = addr("--listen", &self.listen)?;
        let target = match &self.target {
            Some(t) => Target::Fixed(addr("--target", t)?),
            None => Target::Transparent,
        };
        let delay = parse_duration("--delay", &self.delay)?;
        if delay > Duration::from_secs(10) {
            return Err(UsageError(format!("--delay {}: at most 10s", self.delay)));
        }
        if let Some(p) = self.rt_priority
            && !(1..=99).contains(&p)
        {
            return Err(UsageError(format!("--rt-priority {p}: must be 1-99")));
        }
        let duration = self
            .duration
            .as_deref()
            .map(|d| parse_duration("--duration", d))
            .transpose()?;
        Ok((
            Config {
                listen,
                target,
                delay,
                udp: self.proto != Some(ProtoArg::Tcp),
                tcp: self.proto != Some(ProtoArg::Udp),
                rt_priority: self.rt_priority,
            },
            duration,
        ))
    }
}

/// Runs the relay until Ctrl-C, SIGTERM or `--duration`.
pub fn run(a: &RelayArgs) -> anyhow::Result<ExitCode> {
    let (cfg, duration) = a.config()?;
    let relay = Relay::start(&cfg).map_err(|e| UsageError(format!("relay: {e}")))?;
    let at = relay.tcp_addr().or(relay.udp_addr()).unwrap_or(cfg.listen);
    let protos = match (cfg.udp, cfg.tcp) {
        (true, true) => "udp+tcp",
        (true, false) => "udp",
        _ => "tcp",
    };
    let to = match cfg.target {
        Target::Fixed(t) => t.to_string(),
        Target::Transparent => "original destinations (transparent)".into(),
    };
    eprintln!(
        "pubsubperf relay: {protos} on {at} -> {to}, delay {:?} each way",
        cfg.delay
    );
    let start = Instant::now();
    while !INTERRUPTED.load(Ordering::Relaxed) && duration.is_none_or(|d| start.elapsed() < d) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let totals = relay.totals();
    drop(relay);
    eprintln!("pubsubperf relay: {totals}");
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn parse(args: &str) -> Result<(Config, Option<Duration>), String> {
        let cli = Cli::try_parse_from(format!("pubsubperf relay {args}").split_whitespace())
            .map_err(|e| e.to_string())?;
        match cli.command {
            Some(Command::Relay(a)) => a.config().map_err(|e| e.0),
            _ => panic!("not relay"),
        }
    }

    #[test]
    fn relay_flags() {
        let (c, d) = parse("--listen 127.0.0.1:9000 --target 127.0.0.1:7400 --delay 1ms").unwrap();
        assert_eq!(c.delay, Duration::from_millis(1));
        assert_eq!(c.target, Target::Fixed("127.0.0.1:7400".parse().unwrap()));
        assert!(c.udp && c.tcp && d.is_none());
        let (c, d) = parse("--listen 0.0.0.0:9 --transparent --proto udp --duration 2s").unwrap();
        assert_eq!(c.target, Target::Transparent);
        assert!(c.udp && !c.tcp);
        assert_eq!(d, Some(Duration::from_secs(2)));
        assert!(
            parse("--listen 127.0.0.1:9").is_err(),
            "target or transparent"
        );
        assert!(
            parse("--listen x --target 127.0.0.1:1")
                .unwrap_err()
                .starts_with("--listen")
        );
        assert!(
            parse("--listen 127.0.0.1:9 --target 127.0.0.1:1 --delay soon")
                .unwrap_err()
                .starts_with("--delay")
        );
        assert!(
            parse("--listen 127.0.0.1:9 --target 127.0.0.1:1 --delay 1m")
                .unwrap_err()
                .starts_with("--delay")
        );
    }
}
