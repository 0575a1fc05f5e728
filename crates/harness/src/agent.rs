//! The agent: a long-lived subscriber host (`pubsubperf agent --listen`;
//! `sub --listen` is its one-session form) that serves publishers' sessions
//! one after another until it is stopped.
//!
//! Each admitted session runs in a process of its own (`pubsubperf sub
//! --session-stdin`, the connection as its standard input), so a session
//! starts clean and leaves nothing behind: whatever a binding kept (a
//! participant, a runtime's threads, shared memory, a RouDi) ends with that
//! process. The agent itself opens no binding; it accepts, admits (token,
//! then version), refuses a second publisher while a session runs ("busy"),
//! reaps the session process, and on SIGTERM or Ctrl-C stops it (SIGTERM,
//! then SIGKILL after [`STOP_GRACE`]) and exits.

use crate::protocol::{self, Msg};
use crate::serve::{Limits, SessionSettings};
use crate::{Fault, INTERRUPTED};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::{Duration, Instant};

/// How long a connection has to present its Hello before it is dropped.
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a session process has to end after SIGTERM before SIGKILL.
pub const STOP_GRACE: Duration = Duration::from_secs(5);

/// How an agent runs.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// Where to listen (HOST:PORT).
    pub listen: String,
    /// The token publishers must present (None: `--insecure`).
    pub token: Option<String>,
    /// What runs may ask of this host.
    pub limits: Limits,
    /// The address this host's readers and writers use for data
    /// (`--data-address`; None: the address the publisher reached).
    pub data_address: Option<String>,
    /// The multicast group this host's readers join in multicast runs
    /// (`--multicast-address`; None: the run's).
    pub multicast_address: Option<String>,
    /// Serve one session, then exit (`sub --listen`).
    pub once: bool,
    /// What session processes print on standard output
    /// ([`SessionSettings::print`]; None: nothing).
    pub print: Option<String>,
    /// The pubsubperf binary that serves a session (normally this one).
    pub exe: PathBuf,
    /// The vendor files a run's `--qos-file` may name (`--qos-dir`).
    pub qos_dir: Option<PathBuf>,
}

/// What the agent reports as it goes (printed by the CLI).
#[derive(Debug)]
pub enum Event {
    /// Listening.
    Ready(SocketAddr),
    /// A session process started.
    Started { id: u64, peer: SocketAddr },
    /// A session process ended.
    Ended { id: u64, status: String },
    /// A connection was refused (bad token, version, busy).
    Refused { peer: SocketAddr, why: String },
}

/// A connection whose Hello passed.
struct Admission {
    stream: TcpStream,
    peer: SocketAddr,
}

/// The session being served.
struct Running {
    id: u64,
    peer: SocketAddr,
    since: Instant,
    child: Child,
}

/// Serves sessions until SIGTERM/Ctrl-C ([`INTERRUPTED`]), or after one
/// session with [`AgentConfig::once`]; either way it returns `Ok`.
pub fn run(cfg: &AgentConfig, report: &mut dyn FnMut(Event)) -> Result<(), Fault> {
    let listener = TcpListener::bind(&cfg.listen)
        .map_err(|e| Fault::Config(format!("--listen {}: {e}", cfg.listen)))?;
    let local = listener
        .local_addr()
        .map_err(|e| Fault::Config(e.to_string()))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| Fault::Peer(e.to_string()))?;
    report(Event::Ready(local));
    let (tx, rx) = channel();
    let mut current: Option<Running> = None;
    let mut next_id = 1u64;
    loop {
        if INTERRUPTED.load(Ordering::Relaxed) {
            if let Some(r) = current.take() {
                report(stop(r));
            }
            // Being stopped is how an agent ends.
            return Ok(());
        }
        if let Some(r) = current.as_mut()
            && let Ok(Some(status)) = r.child.try_wait()
        {
            report(Event::Ended {
                id: r.id,
                status: status.to_string(),
            });
            current = None;
            if cfg.once {
                return Ok(());
            }
        }
        accept_all(&listener, cfg, &tx, report)?;
        while let Some(a) = next_admission(&rx, report) {
            match &current {
                Some(r) => refuse_busy(a, r, report),
                None => {
                    let id = next_id;
                    next_id += 1;
                    let peer = a.peer;
                    current = Some(Running {
                        id,
                        peer,
                        since: Instant::now(),
                        child: spawn_session(cfg, &settings(cfg, None), a.stream.into())?,
                    });
                    report(Event::Started { id, peer });
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Accepts every waiting connection and admits each on a thread of its own
/// (a stranger that never speaks holds up nobody).
fn accept_all(
    listener: &TcpListener,
    cfg: &AgentConfig,
    tx: &Sender<Result<Admission, (SocketAddr, String)>>,
    report: &mut dyn FnMut(Event),
) -> Result<(), Fault> {
    loop {
        match listener.accept() {
            Ok((mut stream, peer)) => {
                if let Err(e) = stream.set_nonblocking(false) {
                    report(Event::Refused {
                        peer,
                        why: e.to_string(),
                    });
                    continue;
                }
                let (tx, token) = (tx.clone(), cfg.token.clone());
                std::thread::spawn(move || {
                    let verdict = crate::serve::admit(&mut stream, token.as_deref(), HELLO_TIMEOUT)
                        .map(|()| Admission { stream, peer })
                        .map_err(|f| (peer, f.to_string()));
                    let _ = tx.send(verdict);
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Fault::Peer(format!("agent accept: {e}"))),
        }
    }
}

/// The next admitted connection; refusals are reported on the way.
fn next_admission(
    rx: &Receiver<Result<Admission, (SocketAddr, String)>>,
    report: &mut dyn FnMut(Event),
) -> Option<Admission> {
    loop {
        match rx.try_recv().ok()? {
            Ok(a) => return Some(a),
            Err((peer, why)) => report(Event::Refused { peer, why }),
        }
    }
}

fn refuse_busy(mut a: Admission, r: &Running, report: &mut dyn FnMut(Event)) {
    let why = format!(
        "busy, running session {} from {} (for {:.0} s); one session at a time: try again when it ends",
        r.id,
        r.peer,
        r.since.elapsed().as_secs_f64()
    );
    let _ = protocol::send(
        &mut a.stream,
        &Msg::Error {
            message: why.clone(),
        },
    );
    report(Event::Refused { peer: a.peer, why });
}

/// What a session process of this agent is told.
fn settings(cfg: &AgentConfig, seen_from: Option<String>) -> SessionSettings {
    SessionSettings {
        limits: cfg.limits.clone(),
        data_address: cfg.data_address.clone(),
        multicast_address: cfg.multicast_address.clone(),
        seen_from,
        print: cfg.print.clone(),
        qos_dir: cfg.qos_dir.clone(),
        trusted: false,
    }
}

/// Starts the process that serves one admitted session on `conn`.
fn spawn_session(
    cfg: &AgentConfig,
    settings: &SessionSettings,
    conn: std::os::fd::OwnedFd,
) -> Result<Child, Fault> {
    use std::os::unix::process::CommandExt;
    let prints = settings.print.is_some();
    let settings = serde_json::to_string(settings).expect("settings serialize");
    let mut cmd = Command::new(&cfg.exe);
    cmd.args(["sub", "--session-stdin", "--session", &settings])
        .stdin(Stdio::from(conn))
        .stdout(if prints {
            Stdio::inherit()
        } else {
            Stdio::null()
        })
        .stderr(Stdio::inherit());
    // SAFETY: only an async-signal-safe call between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            // A session ends with the agent, whatever ends the agent; SIGTERM
            // lets it release what its binding holds.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        });
    }
    cmd.spawn().map_err(|e| {
        Fault::Peer(format!(
            "cannot start a session process {}: {e}",
            cfg.exe.display()
        ))
    })
}

/// `agent --stdio` (started over SSH): serves sessions one after another
/// on standard input and output, until the input ends or SIGTERM. No token:
/// only the SSH user reaches it. The data address is this host's end of the
/// SSH connection unless `--data-address` says otherwise, and the publisher
/// is told its own address as seen from here (the loopback connection the
/// session runs on says neither).
pub fn run_stdio(cfg: &AgentConfig, report: &mut dyn FnMut(Event)) -> Result<(), Fault> {
    let stream = crate::ssh::stdio_pair()?;
    let ssh = crate::ssh::connection_addresses();
    let mut cfg = cfg.clone();
    if cfg.data_address.is_none() {
        cfg.data_address = ssh.as_ref().map(|(_, own)| own.clone());
    }
    let mut settings = settings(&cfg, ssh.map(|(publisher, _)| publisher));
    // The SSH user could run anything here: a --qos-file may be a path.
    settings.trusted = true;
    let peer = stream.peer_addr().map_err(|e| Fault::Peer(e.to_string()))?;
    let mut id = 1;
    loop {
        if !wait_readable(&stream)? {
            return Ok(());
        }
        let mut s = stream.try_clone().map_err(|e| Fault::Peer(e.to_string()))?;
        crate::serve::admit(&mut s, None, HELLO_TIMEOUT)?;
        let child = spawn_session(&cfg, &settings, s.into())?;
        report(Event::Started { id, peer });
        let mut r = Running {
            id,
            peer,
            since: Instant::now(),
            child,
        };
        loop {
            if INTERRUPTED.load(Ordering::Relaxed) {
                report(stop(r));
                return Ok(());
            }
            if let Ok(Some(status)) = r.child.try_wait() {
                report(Event::Ended {
                    id,
                    status: status.to_string(),
                });
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        id += 1;
    }
}

/// Waits until `stream` has data (true) or has ended (false), checking for
/// SIGTERM every 200 ms (then false).
fn wait_readable(stream: &TcpStream) -> Result<bool, Fault> {
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .map_err(|e| Fault::Peer(e.to_string()))?;
    loop {
        if INTERRUPTED.load(Ordering::Relaxed) {
            return Ok(false);
        }
        match stream.peek(&mut [0u8; 1]) {
            Ok(0) => return Ok(false),
            Ok(_) => return Ok(true),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) => {}
            Err(_) => return Ok(false),
        }
    }
}

/// Ends a session process: SIGTERM, then SIGKILL after [`STOP_GRACE`].
fn stop(mut r: Running) -> Event {
    // SAFETY: kill(2) on our own child's pid, which try_wait has not reaped.
    unsafe { libc::kill(r.child.id() as libc::pid_t, libc::SIGTERM) };
    let deadline = Instant::now() + STOP_GRACE;
    let status = loop {
        match r.child.try_wait() {
            Ok(Some(s)) => break s.to_string(),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = r.child.kill();
                break r
                    .child
                    .wait()
                    .map(|s| format!("{s} (killed after {} s)", STOP_GRACE.as_secs()))
                    .unwrap_or_else(|e| e.to_string());
            }
        }
    };
    Event::Ended { id: r.id, status }
}
