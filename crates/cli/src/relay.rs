//! `pubsubperf relay`: the delaying forwarder (crate pubsubperf-relay) on the
//! command line. Its arguments live here, beside the one function that
//! turns them into the relay's plain configuration.

use crate::cli::{ProtoArg, RelayArgs};
use crate::plan::{UsageError, parse_duration};
use pubsubperf_harness::INTERRUPTED;
use pubsubperf_relay::{Config, Relay, Target};
use std::net::{SocketAddr, ToSocketAddrs};
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

fn addr(flag: &str, s: &str) -> Result<SocketAddr, UsageError> {
    s.to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| UsageError(format!("{flag} '{s}': expected HOST:PORT")))
}

/// `--delay-to`: a network, or one address as its own /32 or /128.
fn network(s: &str) -> Result<pubsubperf_relay::IpNetwork, UsageError> {
    s.parse().map_err(|_| {
        UsageError(format!(
            "--delay-to '{s}': expected a network ADDR/PREFIX (198.18.2.0/24) or one address"
        ))
    })
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
        let delay_to = self.delay_to.as_deref().map(network).transpose()?;
        if delay_to.is_some() && delay.is_zero() {
            return Err(UsageError(
                "--delay-to: needs --delay (what to add towards that network)".into(),
            ));
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
                delay_to,
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
        "pubsubperf relay: {protos} on {at} -> {to}, delay {:?} {}",
        cfg.delay,
        cfg.delay_to
            .map_or_else(|| "each way".into(), |n| format!("towards {n} only"))
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
