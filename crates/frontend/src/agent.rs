//! `pubsubperf agent` and `sub --listen` (and the RTI front ends'
//! subscribing sides): the front end's side of the harness's agent (token,
//! limits, what it prints).

use pubsubperf_core::size::parse_size;
use pubsubperf_harness::Fault;
use pubsubperf_harness::agent::{self, AgentConfig, Event};
use pubsubperf_harness::serve::{Limits, SessionSettings};
use pubsubperf_harness::token;
use pubsubperf_runner::plan::{UsageError, parse_duration};
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;

/// Who may start runs on an agent's host, what a run may ask of it, and
/// which address its data uses: the values of `pubsubperf agent`'s options
/// (their meaning is in its help).
#[derive(Debug, Clone)]
pub struct HostSettings {
    pub data_address: Option<String>,
    pub multicast_address: Option<String>,
    pub token_file: Option<PathBuf>,
    pub insecure: bool,
    pub insecure_network: bool,
    pub max_duration: String,
    pub max_size: String,
    pub allow_destination: Vec<String>,
    pub allow_multicast_ttl: Option<u8>,
    pub run_grace: String,
    pub idle_timeout: String,
    pub allow_rt_priority: bool,
    pub allow_mlock: bool,
    pub qos_dir: Option<PathBuf>,
}

/// How the agent is reached.
pub enum Mode<'a> {
    /// `agent --listen ADDR`, or `sub --listen ADDR` (one session).
    Listen { addr: &'a str, once: bool },
    /// `agent --stdio` (started over SSH).
    Stdio,
}

/// Serves sessions until stopped (one with `sub --listen`); each session
/// process prints what `print` asks ([`SessionSettings::print`]). The
/// outer error is bad input (exit 2); the inner result is the agent's.
pub fn run(
    mode: Mode,
    host: &HostSettings,
    print: Option<String>,
) -> anyhow::Result<Result<(), Fault>> {
    let (listen, once) = match mode {
        Mode::Listen { addr, once } => (addr, once),
        Mode::Stdio => ("", false),
    };
    let name = if once { "sub" } else { "agent" };
    let limits = limits(host)?;
    let data_address = host
        .data_address
        .as_deref()
        .map(|a| {
            pubsubperf_core::sys::data_address(a)
                .map_err(|e| UsageError(format!("--data-address {a}: {e}")))
        })
        .transpose()?;
    let multicast_address = host
        .multicast_address
        .as_deref()
        .map(|a| match a.parse::<std::net::IpAddr>() {
            Ok(ip) if ip.is_multicast() => Ok(ip.to_string()),
            _ => Err(UsageError(format!(
                "--multicast-address {a}: not a multicast address; give one in 224.0.0.0/4 (IPv4, e.g. 239.255.0.2) or ff00::/8 (IPv6)"
            ))),
        })
        .transpose()?;
    let qos_dir = host
        .qos_dir
        .as_deref()
        .map(|d| match std::fs::canonicalize(d) {
            Ok(abs) if abs.is_dir() => Ok(abs),
            _ => Err(UsageError(format!(
                "--qos-dir {}: not a directory; create it and put the vendor files publishers may name there",
                d.display()
            ))),
        })
        .transpose()?;
    let stdio = matches!(mode, Mode::Stdio);
    let token = if stdio {
        None
    } else if host.insecure {
        if !loopback_only(listen) {
            if !host.insecure_network {
                return Err(UsageError(format!(
                    "--insecure: {listen} is not a loopback address, and without a token anyone who can reach it can run benchmarks on this host and read or change every session; keep the token (drop --insecure), listen on 127.0.0.1, or add --insecure-network"
                ))
                .into());
            }
            eprintln!(
                "pubsubperf {name}: warning: --insecure --insecure-network: anyone who can reach {listen} can run benchmarks on this host"
            );
        }
        None
    } else {
        let path = token::path(host.token_file.as_deref())
            .map_err(|e| UsageError(format!("--token-file: {e}")))?;
        let t =
            token::load_or_create(&path).map_err(|e| UsageError(format!("--token-file: {e}")))?;
        eprintln!(
            "pubsubperf {name}: publishers must present the token in {} (copy it to their host, or pass --insecure)",
            path.display()
        );
        Some(t)
    };
    let exe = std::env::current_exe()
        .map_err(|e| anyhow::anyhow!("cannot find the pubsubperf binary to serve sessions: {e}"))?;
    let cfg = AgentConfig {
        listen: listen.to_string(),
        token,
        limits,
        data_address,
        multicast_address,
        once,
        exe,
        print,
        qos_dir,
    };
    let mut report = |event| match event {
        Event::Ready(local) => eprintln!("pubsubperf {name}: listening on {local}"),
        Event::Started { id, peer } => eprintln!("pubsubperf {name}: session {id} from {peer}"),
        Event::Ended { id, status } => {
            eprintln!("pubsubperf {name}: session {id} ended ({status})")
        }
        Event::Refused { peer, why } => eprintln!("pubsubperf {name}: refused {peer}: {why}"),
        Event::Suppressed { count } => {
            eprintln!("pubsubperf {name}: ({count} more refusals not shown)")
        }
        Event::AcceptFailed { why, backoff } => eprintln!(
            "pubsubperf {name}: cannot accept a connection ({why}); trying again in {} ms",
            backoff.as_millis()
        ),
    };
    Ok(if stdio {
        agent::run_stdio(&cfg, &mut report)
    } else {
        agent::run(&cfg, &mut report)
    })
}

/// `agent --new-token`: a fresh token in the token file, which must not
/// exist yet.
pub fn new_token(host: &HostSettings) -> anyhow::Result<()> {
    let path = token::path(host.token_file.as_deref())
        .map_err(|e| UsageError(format!("--token-file: {e}")))?;
    token::create_new(&path).map_err(|e| UsageError(format!("--new-token: {e}")))?;
    eprintln!(
        "pubsubperf agent: a new token ({} random bits) is in {}; copy it to the publishers' hosts",
        token::NEW_BITS,
        path.display()
    );
    Ok(())
}

/// What a session process's agent told it.
pub fn session_settings(json: Option<&str>) -> anyhow::Result<SessionSettings> {
    match json {
        None => Ok(SessionSettings::local()),
        Some(j) => Ok(serde_json::from_str(j)
            .map_err(|e| UsageError(format!("--session: {e} (this option is the agent's)")))?),
    }
}

fn limits(a: &HostSettings) -> Result<Limits, UsageError> {
    let ns = |flag, d: &str| parse_duration(flag, d).map(|d| d.as_nanos() as u64);
    let max_size = parse_size(&a.max_size).map_err(|e| UsageError(format!("--max-size: {e}")))?;
    let destinations = a
        .allow_destination
        .iter()
        .map(|d| {
            d.parse().map_err(|_| {
                UsageError(format!(
                    "--allow-destination {d}: not an IP address; give addresses such as 198.18.0.3,fd00::3"
                ))
            })
        })
        .collect::<Result<_, _>>()?;
    Ok(Limits {
        max_duration_ns: Some(ns("--max-duration", &a.max_duration)?),
        max_size: Some(max_size),
        rt_priority: a.allow_rt_priority,
        mlock: a.allow_mlock,
        idle_timeout_ns: Some(ns("--idle-timeout", &a.idle_timeout)?),
        network: true,
        destinations,
        grace_ns: Some(ns("--run-grace", &a.run_grace)?),
        multicast_ttl: a.allow_multicast_ttl,
    })
}

/// True when every address `listen` resolves to is a loopback address.
fn loopback_only(listen: &str) -> bool {
    listen
        .to_socket_addrs()
        .map(|addrs| {
            let v: Vec<SocketAddr> = addrs.collect();
            !v.is_empty() && v.iter().all(|a| a.ip().is_loopback())
        })
        .unwrap_or(false)
}
