//! The subscriber's side of a session: serves a publisher's session on one
//! control connection (runs as subscriber or extra publisher, one after
//! another): a session process an agent started ([`crate::agent`]), a
//! process or thread that connects back to the publisher that started it.

use crate::channel::{Ctl, SessionKeys};
use crate::destinations::Destinations;
use crate::protocol::{ControlError, Msg};
use crate::registry::with_binding;
use crate::spec::RunSpec;
use crate::{Fault, INTERRUPTED, VERSION};
use pubsubperf_core::EndpointConfig;
use pubsubperf_core::environment::Environment;
use serde::{Deserialize, Serialize};
use std::net::{IpAddr, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// What an agent lets a publisher ask of its host. A run that exceeds them
/// is refused with a line naming the flag and the limit, before anything
/// of it is allocated; a run that outlives its own length is ended by the
/// session's watchdog ([`Limits::watchdog`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// Longest run (warm-up and measurement), ns (`--max-duration`).
    pub max_duration_ns: Option<u64>,
    /// Largest sample, bytes (`--max-size`).
    pub max_size: Option<usize>,
    /// `--rt-priority` allowed (`--allow-rt-priority`).
    pub rt_priority: bool,
    /// `--mlock` allowed (`--allow-mlock`).
    pub mlock: bool,
    /// Longest silence of a publisher between runs, ns (`--idle-timeout`;
    /// None: none).
    #[serde(default)]
    pub idle_timeout_ns: Option<u64>,
    /// The session came over the network from an agent at HOST:PORT (not
    /// over SSH, not the publisher's own subscribers): every number of a
    /// run is held to [`Bounds`], its data goes only to its publisher, a
    /// run that outlives its length is ended, and what it names is checked
    /// as a stranger's ([`SessionSettings::trusted`]).
    #[serde(default)]
    pub network: bool,
    /// Addresses a session from the network may send data to besides its
    /// publisher's (`--allow-destination`, [`crate::destinations`]).
    #[serde(default)]
    pub destinations: Vec<IpAddr>,
    /// Time a run from the network may take beyond its warm-up and
    /// measurement before its watchdog ends it, ns (`--run-grace`; None:
    /// [`Bounds::GRACE`]).
    #[serde(default)]
    pub grace_ns: Option<u64>,
    /// The largest multicast TTL a session from the network may ask
    /// (`--allow-multicast-ttl`; None: [`crate::multicast::DEFAULT_TTL`]).
    #[serde(default)]
    pub multicast_ttl: Option<u8>,
}

/// The bounds every run from the network is held to, besides the agent's
/// own limits: far above what a benchmark asks, far below what hurts a host.
pub struct Bounds;

impl Bounds {
    /// Writer and reader queues, samples.
    pub const QUEUE: usize = 1_000_000;
    /// Kernel socket buffers, bytes.
    pub const SOCKET_BUFFER: usize = 256 << 20;
    /// Keyed instances.
    pub const INSTANCES: u32 = 100_000;
    /// Subscribers or publishers of one run.
    pub const ENDPOINTS: usize = 64;
    /// Sending rate, samples/s.
    pub const RATE: f64 = 1e9;
    /// Shortest reporting interval, ms.
    pub const MIN_INTERVAL_MS: u64 = 10;
    /// Longest echo timeout, sleep after a write, and recovery pause, ms.
    pub const PAUSE_MS: u64 = 60_000;
    /// Time a run may take beyond its warm-up and measurement (setting up,
    /// matching, draining, reporting) before its watchdog ends it, unless
    /// the agent says otherwise (`--run-grace`).
    pub const GRACE: Duration = Duration::from_secs(60);
}

impl Limits {
    /// No limit: the subscribers a publisher starts on its own host.
    pub fn unlimited() -> Limits {
        Limits {
            max_duration_ns: None,
            max_size: None,
            rt_priority: true,
            mlock: true,
            idle_timeout_ns: None,
            network: false,
            destinations: Vec::new(),
            grace_ns: None,
            multicast_ttl: None,
        }
    }

    /// Where a session whose publisher is at `publisher` may send data.
    pub fn destinations(&self, publisher: Option<IpAddr>) -> Destinations {
        if !self.network {
            return Destinations::anywhere();
        }
        let mut ips = self.destinations.clone();
        ips.extend(publisher);
        Destinations::only(ips)
    }

    /// The silence allowed between runs.
    pub fn idle(&self) -> Option<Duration> {
        self.idle_timeout_ns.map(Duration::from_nanos)
    }

    /// Refuses a run that exceeds the limits; the message names the
    /// publisher's flag and the agent's.
    pub fn check(&self, spec: &RunSpec) -> Result<(), Fault> {
        let refuse = |m: String| Err(Fault::Config(format!("refused by the agent: {m}")));
        let largest = spec.size.max(spec.endpoint.max_sample_size);
        if let Some(max) = self.max_size
            && largest > max
        {
            return refuse(format!("--size {largest} exceeds its --max-size {max}"));
        }
        // A run bounded by its --count alone has no length to check: the
        // watchdog holds it to --max-duration.
        if let Some(max) = self.max_duration_ns
            && let Some(d) = spec.measured_ns()
            && d.saturating_add(spec.warmup_ns) > max
        {
            let secs = |ns: u64| ns as f64 / 1e9;
            return refuse(format!(
                "a run of {:.1} s (warm-up included) exceeds its --max-duration {:.1}s",
                secs(d.saturating_add(spec.warmup_ns)),
                secs(max)
            ));
        }
        if spec.rt_priority.is_some() && !self.rt_priority {
            return refuse(
                "--rt-priority is not allowed (start the agent with --allow-rt-priority)".into(),
            );
        }
        if spec.mlock && !self.mlock {
            return refuse("--mlock is not allowed (start the agent with --allow-mlock)".into());
        }
        own_core("--cpu", spec.sub_cpu).or_else(refuse)?;
        if self.network {
            bounded(spec).or_else(refuse)?;
        }
        Ok(())
    }

    /// Refuses a topology node's real-time priority (its `priority` in the
    /// topology file) unless `--allow-rt-priority` allows it, as a run's
    /// `--rt-priority` is: a node's busy wait at SCHED_FIFO would starve a
    /// core of this host. Its `cpu` is held to this process's cores as a
    /// run's is ([`own_core`]).
    pub fn check_node(&self, plan: &crate::graph::NodePlan) -> Result<(), Fault> {
        let refuse = |m: String| Err(Fault::Config(format!("refused by the agent: {m}")));
        if let Some(p) = plan.priority
            && !self.rt_priority
        {
            return refuse(format!(
                "a topology node's priority = {p} is not allowed (start the agent with --allow-rt-priority)"
            ));
        }
        own_core("a topology node's cpu =", plan.cpu).or_else(refuse)
    }

    /// For a run from the network: a watchdog that ends this session
    /// process if the run outlives its warm-up, measurement (a run bounded
    /// by its count alone: `--max-duration`) and [`Bounds::GRACE`] (a
    /// publisher that never says Stop, a wedged middleware). First it asks the run to stop as Ctrl-C would
    /// ([`INTERRUPTED`]: what was measured is reported, what the binding
    /// holds is released), and 10 s later it exits. Disarmed when dropped.
    pub fn watchdog(&self, spec: &RunSpec) -> Option<Watchdog> {
        if !self.network {
            return None;
        }
        let span = spec
            .measured_ns()
            .or(self.max_duration_ns)
            .unwrap_or(u64::MAX)
            .saturating_add(spec.warmup_ns)
            .saturating_add(self.grace_ns.unwrap_or(Bounds::GRACE.as_nanos() as u64));
        Some(Watchdog::arm(Duration::from_nanos(span)))
    }
}

/// A core a publisher names for this host's side must be one this process
/// may use (its affinity when it started, [`pubsubperf_core::sys::cpus`]):
/// an agent started under `taskset -c 2,3` keeps every session off the
/// other cores. Pinning outside that set would succeed within the cpuset.
fn own_core(what: &str, cpu: Option<usize>) -> Result<(), String> {
    match cpu {
        Some(c) if !pubsubperf_core::sys::cpus().contains(&c) => Err(format!(
            "{what} {c} is not one of the cores this agent may use ({}; start the agent under taskset -c to choose them)",
            pubsubperf_core::cpus::cpus_text()
        )),
        _ => Ok(()),
    }
}

/// Ends this process's run, then the process, when it outlives its time
/// ([`Limits::watchdog`]).
pub struct Watchdog {
    done: std::sync::mpsc::Sender<()>,
}

impl Watchdog {
    fn arm(span: Duration) -> Watchdog {
        let (done, rx) = std::sync::mpsc::channel::<()>();
        std::thread::spawn(move || {
            if rx.recv_timeout(span) != Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
                return;
            }
            eprintln!(
                "pubsubperf session: the run outlived its length and the agent's grace ({:.0} s in all); stopping it",
                span.as_secs_f64()
            );
            INTERRUPTED.store(true, Ordering::Relaxed);
            if rx.recv_timeout(Duration::from_secs(10))
                == Err(std::sync::mpsc::RecvTimeoutError::Timeout)
            {
                eprintln!("pubsubperf session: the run did not stop within 10 s; exiting");
                std::process::exit(1);
            }
        });
        Watchdog { done }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        let _ = self.done.send(());
    }
}

/// Holds a run from the network to [`Bounds`]: no number reserves more than
/// a benchmark needs (what it names, bindings included, is checked by
/// [`crate::remote_check`] first).
fn bounded(spec: &RunSpec) -> Result<(), String> {
    let ep = &spec.endpoint;
    let over = |flag: &str, v: u64, max: u64| {
        if v > max {
            Err(format!("{flag} {v} exceeds the agent's bound {max}"))
        } else {
            Ok(())
        }
    };
    over("--send-queue", ep.send_queue as u64, Bounds::QUEUE as u64)?;
    over(
        "--receive-queue",
        ep.receive_queue as u64,
        Bounds::QUEUE as u64,
    )?;
    over(
        "--socket-buffer",
        ep.socket_buffer as u64,
        Bounds::SOCKET_BUFFER as u64,
    )?;
    over(
        "--batch",
        ep.batch_bytes as u64,
        ep.max_sample_size.max(64 << 10) as u64,
    )?;
    over("--instances", ep.instances.into(), Bounds::INSTANCES.into())?;
    over(
        "--subscribers",
        spec.subscribers as u64,
        Bounds::ENDPOINTS as u64,
    )?;
    over(
        "--publishers",
        spec.publishers as u64,
        Bounds::ENDPOINTS as u64,
    )?;
    over(
        "--echo-timeout (ms)",
        spec.echo_timeout_ms,
        Bounds::PAUSE_MS,
    )?;
    over("--recovery-time (ms)", spec.recovery_ms, Bounds::PAUSE_MS)?;
    over("--sleep (ms)", spec.sleep_ns / 1_000_000, Bounds::PAUSE_MS)?;
    if spec.subscriber_index >= spec.subscribers.max(1) {
        return Err(format!(
            "subscriber index {} of {} subscribers",
            spec.subscriber_index, spec.subscribers
        ));
    }
    if !(spec.rate.is_finite() && (0.0..=Bounds::RATE).contains(&spec.rate)) {
        return Err(format!(
            "--rate {}: give a rate between 0 and {} samples/s",
            spec.rate,
            Bounds::RATE
        ));
    }
    if spec.interval_ms < Bounds::MIN_INTERVAL_MS {
        return Err(format!(
            "an interval of {} ms: reports come at most every {} ms",
            spec.interval_ms,
            Bounds::MIN_INTERVAL_MS
        ));
    }
    Ok(())
}

/// What an agent tells the process that serves one session.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SessionSettings {
    /// What runs may ask of this host.
    pub limits: Limits,
    /// The address this host's endpoints use for data (None: the address
    /// the publisher's control connection arrived at).
    pub data_address: Option<String>,
    /// The multicast group this host's readers join in multicast runs
    /// (the agent's `--multicast-address`; None: the run's).
    #[serde(default)]
    pub multicast_address: Option<String>,
    /// What the session process prints of each run it serves on its
    /// standard output, as the command line that started the agent asked
    /// (`perftest -sub`: Perftest's output options). The harness only
    /// carries it: the binary reads it and gives [`serve_stdin`] its
    /// [`Watch`]. None: nothing, and standard output is closed.
    #[serde(default)]
    pub print: Option<String>,
    /// The publisher's address as this host sees it, told to the publisher
    /// in the Welcome (an agent over SSH, whose control connection is a
    /// loopback one).
    pub seen_from: Option<String>,
    /// The directory whose files a run's `--qos-file` may name (the
    /// agent's `--qos-dir`; None: none may); see [`crate::qos_dir`].
    #[serde(default)]
    pub qos_dir: Option<PathBuf>,
    /// The publisher's own subscribers, on its host: a run's endpoints
    /// bind the publisher's `--data-address` (its [`RunSpec::data_address`],
    /// an address of this host), else loopback.
    #[serde(default)]
    pub same_host: bool,
    /// The publisher of this session is on this host (by a loopback
    /// address or one of this host's own): what works within one host
    /// only (shared memory) is its to use ([`crate::one_host`]). Found by
    /// the session from its connection, never taken from a message.
    #[serde(skip)]
    pub publisher_here: bool,
}

impl SessionSettings {
    /// The subscribers a publisher starts itself: no limits, addresses from
    /// the connection.
    pub fn local() -> SessionSettings {
        SessionSettings {
            limits: Limits::unlimited(),
            data_address: None,
            multicast_address: None,
            seen_from: None,
            print: None,
            qos_dir: None,
            same_host: true,
            publisher_here: true,
        }
    }

    /// The publisher may do what this host's user may (its limits are not
    /// a network session's, [`Limits::network`]): the publisher's own
    /// subscribers, and an agent over SSH (the SSH user could run anything
    /// there anyway); never an agent at HOST:PORT. A trusted run's
    /// `--qos-file` may be an absolute path of this host, and its binding
    /// one that works within one host ([`crate::remote_check`]).
    pub fn trusted(&self) -> bool {
        !self.limits.network
    }
}

/// What a session process is shown of each run it serves, besides what it
/// sends the publisher: every [`Msg::Interval`] and the [`Msg::Result`],
/// as they are sent (`perftest -sub` prints its own subscriber's lines,
/// as Perftest's subscriber does).
pub type Watch<'a> = &'a mut dyn FnMut(&RunSpec, &Msg);

/// How long a publisher has to say Hello, and a subscriber to set up.
const SETUP_TIMEOUT: Duration = Duration::from_secs(30);

/// Subscriber side: serves one publisher's session on `stream` until it
/// says goodbye or goes away (the subscribers a publisher starts itself:
/// no token, no limits).
pub fn serve_session(stream: TcpStream) -> Result<(), Fault> {
    let ctl = Ctl::stranger(stream);
    crate::auth::admit(&ctl, None, Instant::now() + SETUP_TIMEOUT)
        .map_err(|r| Fault::Peer(r.why))?;
    serve_admitted(ctl, &SessionSettings::local(), &mut |_, _| {})
}

/// Serves an admitted publisher's session: says Welcome, then serves its
/// runs one after another, refusing any that exceed the limits.
/// Each run's intervals and result go to `watch` too.
pub fn serve_admitted(ctl: Ctl, settings: &SessionSettings, watch: Watch) -> Result<(), Fault> {
    let setup_timeout = SETUP_TIMEOUT;
    let limits = &settings.limits;
    let data_ip = match &settings.data_address {
        Some(a) => a.clone(),
        None => ctl
            .stream()
            .local_addr()
            .map(|a| a.ip().to_string())
            .unwrap_or_else(|_| "127.0.0.1".into()),
    };
    let settings = &SessionSettings {
        publisher_here: publisher_is_here(&ctl, settings),
        ..settings.clone()
    };
    ctl.send(&Msg::Welcome {
        version: VERSION.into(),
        environment: Box::new(Environment {
            data_address: Some(data_ip.clone()),
            // The checks of this host for a run across hosts: its NIC under
            // the data address and its clock (the cores are the
            // publisher's to choose: every core's).
            doctor: pubsubperf_core::environment::interface_holding(&data_ip)
                .map(|nic| pubsubperf_core::doctor::examine_here(&[], Some(&nic)))
                .unwrap_or_default(),
            ..Environment::detect()
        }),
        seen_from: settings.seen_from.clone(),
    })
    .map_err(|e| Fault::Peer(e.to_string()))?;
    // Over SSH the control connection is a loopback one: the publisher is
    // where the SSH connection comes from.
    let publisher = settings
        .seen_from
        .as_deref()
        .and_then(|a| a.parse().ok())
        .or_else(|| ctl.stream().peer_addr().ok().map(|a| a.ip()));
    // The agent's own multicast group (`--multicast-address`) is one it
    // allows.
    let destinations = limits.destinations(publisher).also(
        settings
            .multicast_address
            .as_deref()
            .and_then(|g| g.parse().ok()),
    );
    let mut heard = Instant::now();
    loop {
        let msg = match ctl.recv(Some(Duration::from_millis(200))) {
            Ok(m) => m,
            Err(ControlError::Timeout(_)) => {
                if INTERRUPTED.load(Ordering::Relaxed) {
                    return Err(Fault::Interrupted);
                }
                if let Some(idle) = limits.idle()
                    && heard.elapsed() > idle
                {
                    let message = format!(
                        "the publisher sent nothing for {} s between runs (the agent's --idle-timeout); the session ends",
                        idle.as_secs()
                    );
                    let _ = ctl.send(&Msg::Error {
                        message: message.clone(),
                    });
                    return Err(Fault::Peer(message));
                }
                continue;
            }
            Err(ControlError::Closed) => return Ok(()),
            Err(e) => return Err(Fault::Peer(format!("publisher: {e}"))),
        };
        if let Err(e) = settings.limits.check_counts(&msg) {
            let _ = ctl.send(&Msg::Error {
                message: e.to_string(),
            });
            heard = Instant::now();
            continue;
        }
        // A run pins and prioritises this thread as its spec says; the
        // next one starts from the state the session began with.
        let _state = pubsubperf_core::sys::ThreadState::save();
        let r = match msg {
            Msg::Setup { mut spec } => {
                let name = spec.peer_binding.clone();
                own_group(&mut spec.endpoint, settings)
                    .and_then(|()| accept_run(&mut spec, settings, &data_ip, &destinations))
                    .and_then(|_armed| {
                        with_binding!(name.as_str(), B => crate::subscriber::serve_run::<B>(&ctl, &spec, setup_timeout, &destinations, &mut *watch),
                        unknown => Err(Fault::Config(crate::registry::unknown_binding("--peer-binding", &name))))
                    })
            }
            Msg::PubSetup {
                mut spec,
                publisher,
                data,
            } => {
                let name = spec.binding.clone();
                data.iter()
                    .try_for_each(|l| destinations.check("a subscriber's data locator", l))
                    .and_then(|()| accept_run(&mut spec, settings, &data_ip, &destinations))
                    .and_then(|_armed| {
                        with_binding!(name.as_str(), B => crate::extra::serve_publisher::<B>(&ctl, &spec, publisher, &data, setup_timeout),
                        unknown => Err(Fault::Config(crate::registry::unknown_binding("--binding", &name))))
                    })
            }
            Msg::NodeSetup {
                mut spec,
                plan,
                bind_ip,
            } => {
                let name = spec.binding.clone();
                settings
                    .limits
                    .check_node(&plan)
                    .and_then(|()| accept_run(&mut spec, settings, &data_ip, &destinations))
                    .and_then(|_armed| {
                    if let Some(ip) = bind_ip.filter(|_| settings.trusted()) {
                        spec.endpoint.bind_ip = ip;
                    }
                    with_binding!(name.as_str(), B => crate::graph::node::serve_node::<B>(&ctl, &spec, &plan, setup_timeout, &destinations),
                    unknown => Err(Fault::Config(crate::registry::unknown_binding("--binding", &name))))
                })
            }
            // A clock probe is answered but is no run: it does not hold
            // the session past the idle timeout (a probe every few seconds
            // kept a session alive while others were told "busy").
            Msg::ClockProbe { t1 } => {
                let t2 = pubsubperf_core::clock::now_ns();
                ctl.send(&Msg::ClockEcho {
                    t1,
                    t2,
                    t3: pubsubperf_core::clock::now_ns(),
                    t4: 0,
                })
                .map_err(|e| Fault::Peer(format!("publisher: {e}")))?;
                continue;
            }
            Msg::Bye => return Ok(()),
            // Anything else outside a run (late Stop, Start) is stale.
            _ => continue,
        };
        heard = Instant::now();
        if let Err(e) = r {
            let _ = ctl.send(&Msg::Error {
                message: e.to_string(),
            });
            if matches!(e, Fault::Interrupted | Fault::Gone(_)) {
                return Err(e);
            }
        }
    }
}

/// The publisher is on this host: the address it is seen from (over SSH,
/// the SSH client's; else its control connection's) is a loopback address
/// or one of this host's.
fn publisher_is_here(ctl: &Ctl, settings: &SessionSettings) -> bool {
    let seen = settings
        .seen_from
        .as_deref()
        .and_then(|a| a.parse::<IpAddr>().ok())
        .or_else(|| ctl.stream().peer_addr().ok().map(|a| a.ip()));
    seen.is_some_and(|ip| {
        ip.is_loopback()
            || pubsubperf_core::sys::interface_addresses()
                .iter()
                .any(|(_, own)| *own == ip)
    })
}

/// The address a served run's endpoints bind: the publisher's
/// `--data-address` for its own subscribers (same host), else `data_ip`.
fn bind_ip(spec: &RunSpec, settings: &SessionSettings, data_ip: &str) -> String {
    match &spec.data_address {
        Some(a) if settings.same_host => a.clone(),
        _ => data_ip.to_string(),
    }
}

/// Takes a run this session was asked for: its endpoints bind `data_ip`,
/// what it names passes [`crate::remote_check`] and its numbers the
/// limits; the watchdog it returns is armed while the run is served.
fn accept_run(
    spec: &mut RunSpec,
    settings: &SessionSettings,
    data_ip: &str,
    destinations: &Destinations,
) -> Result<Option<Watchdog>, Fault> {
    spec.endpoint.bind_ip = bind_ip(spec, settings, data_ip);
    crate::remote_check::check_setup(spec, settings)?;
    // Every address an option names (discovery peers, `--opt peers=`,
    // `fastdds.peers=`; a multicast group; an interface) is a destination
    // too: the middleware sends to it or from it. This host's own
    // addresses and loopback pass.
    let own: Vec<IpAddr> = pubsubperf_core::sys::interface_addresses()
        .into_iter()
        .map(|(_, ip)| ip)
        .collect();
    for (k, v) in &spec.endpoint.options {
        destinations.check_peers(&format!("--opt {k}="), v, &own)?;
    }
    if settings.limits.network {
        crate::multicast::hold(spec, destinations, settings.limits.multicast_ttl)?;
        // Discovery too goes only where data may: by unicast to the
        // publisher (and the agent's allowed addresses), never to the
        // middleware's default multicast group with its default TTL.
        spec.endpoint.held_discovery = destinations.unicast();
    }
    settings.limits.check(spec)?;
    Ok(settings.limits.watchdog(spec))
}

/// This host's multicast group, when it has one, for a multicast run's
/// readers; a unicast run cannot honour it and is refused.
fn own_group(ep: &mut EndpointConfig, settings: &SessionSettings) -> Result<(), Fault> {
    let Some(g) = &settings.multicast_address else {
        return Ok(());
    };
    if !ep.multicast {
        return Err(Fault::Config(format!(
            "--multicast-address {g}: this subscriber receives on a multicast group, and the publisher's run is unicast; add --multicast (Perftest -multicast, the example's -multicast_ttl) on the publisher"
        )));
    }
    ep.multicast_address = Some(g.clone());
    Ok(())
}

/// A session process started by an agent ([`crate::agent`]): the admitted
/// publisher's connection is this process's standard input; each run's
/// intervals and result go to `watch` too.
pub fn serve_stdin(
    settings: &SessionSettings,
    keys: Option<&SessionKeys>,
    watch: Watch,
) -> Result<(), Fault> {
    use std::os::fd::{FromRawFd, OwnedFd};
    // SAFETY: fd 0 is this process's to take: nothing else in it reads
    // standard input (a closed fd 0 fails the check below).
    let stream = TcpStream::from(unsafe { OwnedFd::from_raw_fd(0) });
    if stream.peer_addr().is_err() {
        return Err(Fault::Config(
            "sub --session-stdin: standard input is not a TCP connection (this mode is started by 'pubsubperf agent')".into(),
        ));
    }
    stream
        .set_nonblocking(false)
        .map_err(|e| Fault::Peer(e.to_string()))?;
    let ctl = match keys {
        Some(k) => Ctl::keyed(stream, k),
        None => Ctl::plain(stream),
    };
    serve_admitted(ctl, settings, watch).map_err(printable)
}

/// A session's fault as the agent's log may show it: what a publisher
/// sent (its Error's text, a binding or file it named) can be part of it,
/// and must not forge a log line or drive the terminal.
fn printable(f: Fault) -> Fault {
    let p = |m: String| crate::escape::printable(&m, 1000);
    match f {
        Fault::Config(m) => Fault::Config(p(m)),
        Fault::Binding(m) => Fault::Binding(p(m)),
        Fault::Peer(m) => Fault::Peer(p(m)),
        Fault::Gone(m) => Fault::Gone(p(m)),
        Fault::Interrupted => Fault::Interrupted,
    }
}

/// `pubsubperf sub --connect-back ADDR`: a subscriber child process.
pub fn connect_back(addr: &str) -> Result<(), Fault> {
    let s =
        TcpStream::connect(addr).map_err(|e| Fault::Peer(format!("--connect-back {addr}: {e}")))?;
    serve_session(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pubsubperf_core::result::TestKind;

    fn network() -> Limits {
        Limits {
            max_duration_ns: Some(3_600_000_000_000),
            max_size: Some(64 << 20),
            idle_timeout_ns: Some(60_000_000_000),
            network: true,
            ..Limits::default()
        }
    }

    fn refusal(spec: &RunSpec) -> String {
        network().check(spec).unwrap_err().to_string()
    }

    fn node(cpu: Option<usize>, priority: Option<i32>) -> crate::graph::NodePlan {
        crate::graph::NodePlan {
            node: 0,
            cpu,
            priority,
            readers: Vec::new(),
            writers: Vec::new(),
            clock_deltas_ns: Vec::new(),
        }
    }

    /// A topology node's priority is held to `--allow-rt-priority` as a
    /// run's `--rt-priority` is (it bypassed the limit before).
    #[test]
    fn a_nodes_priority_needs_allow_rt_priority() {
        let closed = Limits::default();
        let e = closed
            .check_node(&node(None, Some(99)))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("priority = 99 is not allowed") && e.contains("--allow-rt-priority"),
            "{e}"
        );
        assert!(closed.check_node(&node(None, None)).is_ok());
        let open = Limits {
            rt_priority: true,
            ..Limits::default()
        };
        assert!(open.check_node(&node(None, Some(99))).is_ok());
    }

    /// A node's `cpu` and a run's subscriber core are held to the cores
    /// this process may use (a node pinned itself to any core before).
    #[test]
    fn cores_outside_the_agents_own_are_refused() {
        let cores = pubsubperf_core::sys::cpus();
        let outside = cores.iter().max().unwrap() + 1;
        let e = Limits::default()
            .check_node(&node(Some(outside), None))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("cpu = {outside} is not one of the cores"))
                && e.contains("taskset"),
            "{e}"
        );
        assert!(
            Limits::default()
                .check_node(&node(Some(cores[0]), None))
                .is_ok()
        );
        let mut s = RunSpec::for_test("t", TestKind::Latency);
        s.sub_cpu = Some(outside);
        let e = refusal(&s);
        assert!(
            e.contains(&format!("--cpu {outside} is not one of the cores")),
            "{e}"
        );
        s.sub_cpu = Some(cores[0]);
        network().check(&s).unwrap();
    }

    #[test]
    fn a_plain_run_passes_and_every_bound_is_named() {
        let base = RunSpec::for_test("t", TestKind::Latency);
        network().check(&base).unwrap();
        type Change = fn(&mut RunSpec);
        let cases: Vec<(Change, &str)> = vec![
            (|s| s.endpoint.max_sample_size = 1 << 30, "--max-size"),
            (|s| s.duration_ns = 7_200_000_000_000, "--max-duration"),
            (|s| s.endpoint.send_queue = 10_000_000, "--send-queue"),
            (|s| s.endpoint.receive_queue = 10_000_000, "--receive-queue"),
            (|s| s.endpoint.socket_buffer = 1 << 30, "--socket-buffer"),
            (|s| s.endpoint.batch_bytes = 1 << 30, "--batch"),
            (|s| s.endpoint.instances = 1_000_000, "--instances"),
            (|s| s.subscribers = 1000, "--subscribers"),
            (|s| s.publishers = 1000, "--publishers"),
            (|s| s.rate = 1e18, "--rate"),
            (|s| s.rate = f64::NAN, "--rate"),
            (|s| s.interval_ms = 0, "interval"),
            (|s| s.echo_timeout_ms = u64::MAX, "--echo-timeout"),
            (|s| s.subscriber_index = 5, "subscriber index"),
        ];
        for (change, needle) in cases {
            let mut s = base.clone();
            change(&mut s);
            let e = refusal(&s);
            assert!(e.starts_with("refused by the agent: "), "{e}");
            assert!(e.contains(needle), "{needle}: {e}");
        }
    }

    #[test]
    fn a_count_run_is_bounded_by_the_watchdog_not_refused() {
        let mut s = RunSpec::for_test("t", TestKind::Latency);
        s.duration_ns = 0;
        s.count = 1_000_000_000_000;
        network().check(&s).unwrap();
        assert!(network().watchdog(&s).is_some());
        // The subscribers a publisher starts itself have none.
        assert!(Limits::unlimited().watchdog(&s).is_none());
        Limits::unlimited().check(&s).unwrap();
    }

    #[test]
    fn own_subscribers_bind_the_publishers_data_address_an_agent_its_own() {
        let mut s = RunSpec::for_test("t", TestKind::Latency);
        let local = SessionSettings::local();
        let agent = SessionSettings {
            same_host: false,
            ..SessionSettings::local()
        };
        assert_eq!(bind_ip(&s, &local, "127.0.0.1"), "127.0.0.1");
        s.data_address = Some("192.0.2.2".into());
        assert_eq!(bind_ip(&s, &local, "127.0.0.1"), "192.0.2.2");
        // An agent's endpoints bind its own address, never the publisher's.
        assert_eq!(bind_ip(&s, &agent, "10.0.0.7"), "10.0.0.7");
    }
}
