//! The subscriber's side of a session: serves a publisher's session on one
//! control connection (runs as subscriber or extra publisher, one after
//! another): a session process an agent started ([`crate::agent`]), a
//! process or thread that connects back to the publisher that started it.

use crate::protocol::{self, ControlError, Msg};
use crate::registry::with_binding;
use crate::spec::RunSpec;
use crate::{Fault, INTERRUPTED, VERSION};
use pubsubperf_core::EndpointConfig;
use pubsubperf_core::environment::Environment;
use serde::{Deserialize, Serialize};
use std::net::TcpStream;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// What an agent lets a publisher ask of its host. A run that exceeds them
/// is refused with a line naming the flag and the limit.
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
}

impl Limits {
    /// No limit: the subscribers a publisher starts on its own host.
    pub fn unlimited() -> Limits {
        Limits {
            max_duration_ns: None,
            max_size: None,
            rt_priority: true,
            mlock: true,
        }
    }

    /// Refuses a run that exceeds the limits; the message names the
    /// publisher's flag and the agent's.
    pub fn check(&self, spec: &RunSpec) -> Result<(), Fault> {
        let refuse = |m: String| Err(Fault::Config(format!("refused by the agent: {m}")));
        if let Some(max) = self.max_size
            && spec.size > max
        {
            return refuse(format!("--size {} exceeds its --max-size {max}", spec.size));
        }
        if let Some(max) = self.max_duration_ns {
            let measured = spec.measured_ns();
            let secs = |ns: u64| ns as f64 / 1e9;
            match measured {
                None => {
                    return refuse(format!(
                        "--count without --rate or --duration has no time bound, and the agent has --max-duration {:.1}s",
                        secs(max)
                    ));
                }
                Some(d) if d.saturating_add(spec.warmup_ns) > max => {
                    return refuse(format!(
                        "a run of {:.1} s (warm-up included) exceeds its --max-duration {:.1}s",
                        secs(d.saturating_add(spec.warmup_ns)),
                        secs(max)
                    ));
                }
                Some(_) => {}
            }
        }
        if spec.rt_priority.is_some() && !self.rt_priority {
            return refuse(
                "--rt-priority is not allowed (start the agent with --allow-rt-priority)".into(),
            );
        }
        if spec.mlock && !self.mlock {
            return refuse("--mlock is not allowed (start the agent with --allow-mlock)".into());
        }
        Ok(())
    }
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
    /// The publisher may do what this host's user may: the publisher's own
    /// subscribers, and an agent over SSH (the SSH user could run anything
    /// there anyway); never an agent at HOST:PORT. A trusted run's
    /// `--qos-file` may be an absolute path of this host, and its binding
    /// one that works within one host ([`crate::remote_check`]).
    #[serde(default)]
    pub trusted: bool,
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
            trusted: true,
        }
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
pub fn serve_session(mut stream: TcpStream) -> Result<(), Fault> {
    admit(&mut stream, None, SETUP_TIMEOUT)?;
    serve_admitted(stream, &SessionSettings::local(), &mut |_, _| {})
}

/// Reads the publisher's Hello and checks it: the token first (when
/// `token` is set; nothing else of a stranger's session is read), then the
/// version. A refusal is sent to the publisher and returned.
pub fn admit(stream: &mut TcpStream, token: Option<&str>, timeout: Duration) -> Result<(), Fault> {
    let _ = stream.set_nodelay(true);
    let (version, p, presented) = match protocol::recv(stream, Some(timeout)) {
        Ok(Msg::Hello {
            version,
            protocol: p,
            token: presented,
        }) => (version, p, presented),
        Ok(_) => return Err(Fault::Peer("expected Hello, got another message".into())),
        Err(e) => return Err(Fault::Peer(format!("publisher: {e}"))),
    };
    let refusal = if token.is_some_and(|t| !crate::token::matches(t, presented.as_deref())) {
        Some(format!(
            "{} token: this agent takes only publishers that present its token; copy its token file to the publisher's host (~/.config/pubsubperf/agent.token, or --token-file) or start the agent over SSH (--connect ssh://HOST)",
            if presented.is_some() { "wrong" } else { "no" },
        ))
    } else if version != VERSION || p != protocol::PROTOCOL {
        Some(format!(
            "version mismatch: publisher runs pubsubperf {version} (protocol {p}), this subscriber runs {VERSION} (protocol {}); run the same version on both hosts",
            protocol::PROTOCOL
        ))
    } else {
        None
    };
    match refusal {
        Some(message) => {
            let _ = protocol::send(
                stream,
                &Msg::Error {
                    message: message.clone(),
                },
            );
            Err(Fault::Peer(message))
        }
        None => Ok(()),
    }
}

/// Serves an admitted publisher's session: says Welcome, then serves its
/// runs one after another, refusing any that exceed the limits.
/// Each run's intervals and result go to `watch` too.
pub fn serve_admitted(
    mut stream: TcpStream,
    settings: &SessionSettings,
    watch: Watch,
) -> Result<(), Fault> {
    let setup_timeout = SETUP_TIMEOUT;
    let limits = &settings.limits;
    let data_ip = match &settings.data_address {
        Some(a) => a.clone(),
        None => stream
            .local_addr()
            .map(|a| a.ip().to_string())
            .unwrap_or_else(|_| "127.0.0.1".into()),
    };
    protocol::send(
        &mut stream,
        &Msg::Welcome {
            version: VERSION.into(),
            environment: Box::new(Environment {
                data_address: Some(data_ip.clone()),
                ..Environment::detect()
            }),
            seen_from: settings.seen_from.clone(),
        },
    )
    .map_err(|e| Fault::Peer(e.to_string()))?;
    loop {
        let msg = match protocol::recv(&mut stream, Some(Duration::from_millis(200))) {
            Ok(m) => m,
            Err(ControlError::Timeout(_)) => {
                if INTERRUPTED.load(Ordering::Relaxed) {
                    return Err(Fault::Interrupted);
                }
                continue;
            }
            Err(ControlError::Closed) => return Ok(()),
            Err(e) => return Err(Fault::Peer(format!("publisher: {e}"))),
        };
        let r = match msg {
            Msg::Setup { mut spec } => {
                spec.endpoint.bind_ip = data_ip.clone();
                let name = spec.peer_binding.clone();
                crate::remote_check::check_setup(&mut spec, settings)
                    .and_then(|()| own_group(&mut spec.endpoint, settings))
                    .and_then(|()| limits.check(&spec))
                    .and_then(|()| with_binding!(name.as_str(), B => crate::subscriber::serve_run::<B>(&mut stream, &spec, setup_timeout, &mut *watch),
                    unknown => Err(Fault::Config(crate::registry::unknown_binding("--peer-binding", &name)))))
            }
            Msg::PubSetup {
                mut spec,
                publisher,
                data,
            } => {
                spec.endpoint.bind_ip = data_ip.clone();
                let name = spec.binding.clone();
                crate::remote_check::check_setup(&mut spec, settings)
                    .and_then(|()| limits.check(&spec)).and_then(|()| with_binding!(name.as_str(), B => crate::extra::serve_publisher::<B>(&mut stream, &spec, publisher, &data, setup_timeout),
                    unknown => Err(Fault::Config(crate::registry::unknown_binding("--binding", &name)))))
            }
            Msg::Bye => return Ok(()),
            // Anything else outside a run (late Stop, Start) is stale.
            _ => continue,
        };
        if let Err(e) = r {
            let _ = protocol::send(
                &mut stream,
                &Msg::Error {
                    message: e.to_string(),
                },
            );
            if matches!(e, Fault::Interrupted) {
                return Err(e);
            }
        }
    }
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
pub fn serve_stdin(settings: &SessionSettings, watch: Watch) -> Result<(), Fault> {
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
    serve_admitted(stream, settings, watch)
}

/// `pubsubperf sub --connect-back ADDR`: a subscriber child process.
pub fn connect_back(addr: &str) -> Result<(), Fault> {
    let s =
        TcpStream::connect(addr).map_err(|e| Fault::Peer(format!("--connect-back {addr}: {e}")))?;
    serve_session(s)
}
