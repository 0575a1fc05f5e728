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
//!
//! Strangers cannot hurt it: at most [`PENDING_MAX`] connections (and
//! [`PENDING_PER_ADDRESS`] from one address) wait for their handshake at
//! once, each on a thread of its own, with one deadline for the whole
//! handshake ([`HELLO_TIMEOUT`]) and nothing larger than
//! [`crate::channel::PREAUTH_MESSAGE`] read. A waiting connection is cheap
//! to drop: when a new one arrives at the cap, the oldest connection of the
//! address with the most waiting is closed to make room (told [`FULL`]), so
//! strangers who keep idle connections open, however many addresses they
//! have, cannot keep a publisher out. A connection beyond its address's cap
//! is closed as it comes. An address whose proofs failed [`FAILURES_MAX`]
//! times within [`FAILURE_WINDOW`] is turned away for the rest of that
//! window. Running out of descriptors or memory on accept is logged and
//! waited out, never fatal; refusals are logged at most [`LOG_BURST`] per
//! [`LOG_WINDOW`], with a count of those not shown.

use crate::auth::Refusal;
use crate::channel::{Ctl, SessionKeys};
use crate::protocol::Msg;
use crate::serve::{Limits, SessionSettings};
use crate::{Fault, INTERRUPTED};
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::time::{Duration, Instant};

/// How long a connection has to complete its handshake (Hello, proofs,
/// version) before it is dropped: one deadline, however it trickles.
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a session process has to end after SIGTERM before SIGKILL.
pub const STOP_GRACE: Duration = Duration::from_secs(5);
/// Connections waiting for their handshake at once; a new one at the cap
/// closes the oldest of the address with the most waiting.
pub const PENDING_MAX: usize = 64;
/// Connections from one address waiting for their handshake at once.
pub const PENDING_PER_ADDRESS: usize = 4;
/// What a connection closed to make room, or beyond its address's cap, is
/// told (after "the agent turned this connection away: ").
pub const FULL: &str = "agent full of unauthenticated connections";
/// Failed proofs from one address within [`FAILURE_WINDOW`] before it is
/// turned away until the window ends.
pub const FAILURES_MAX: u32 = 5;
/// See [`FAILURES_MAX`].
pub const FAILURE_WINDOW: Duration = Duration::from_secs(60);
/// Refusal lines logged per [`LOG_WINDOW`] at most.
pub const LOG_BURST: u32 = 10;
/// See [`LOG_BURST`].
pub const LOG_WINDOW: Duration = Duration::from_secs(10);

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
    /// Refusals not reported (more than [`LOG_BURST`] in a [`LOG_WINDOW`]).
    Suppressed { count: u64 },
    /// Accepting failed for lack of descriptors or memory; the agent waits
    /// `backoff` before it accepts again.
    AcceptFailed { why: String, backoff: Duration },
}

/// A connection whose handshake passed.
struct Admission {
    ctl: Ctl,
    keys: Option<SessionKeys>,
    peer: SocketAddr,
}

/// What an admission thread reports: the connection's number at the door,
/// whether it was closed to make room, and how its handshake ended.
struct Verdict {
    id: u64,
    evicted: bool,
    admitted: Result<Admission, (SocketAddr, Refusal)>,
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
    let mut door = Door::default();
    let mut log = Throttle::default();
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
        // Verdicts first: a failed proof counts, and a finished handshake
        // leaves the door, before the next connections are taken.
        let mut admitted = Vec::new();
        for verdict in rx.try_iter() {
            match door.settle(verdict) {
                Ok(a) => admitted.push(a),
                Err((peer, why)) => log.pass(Event::Refused { peer, why }, report),
            }
        }
        door.accept_all(&listener, cfg, &tx, &mut |e| log.pass(e, report));
        for a in admitted {
            match &current {
                Some(r) => refuse_busy(a, r, report),
                None => {
                    let id = next_id;
                    next_id += 1;
                    let peer = a.peer;
                    let Some(child) = start(cfg, a, report)? else {
                        continue;
                    };
                    current = Some(Running {
                        id,
                        peer,
                        since: Instant::now(),
                        child,
                    });
                    report(Event::Started { id, peer });
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts the session process of an admitted connection; None (reported)
/// when the publisher sent more than its handshake before its Welcome.
fn start(
    cfg: &AgentConfig,
    a: Admission,
    report: &mut dyn FnMut(Event),
) -> Result<Option<Child>, Fault> {
    if a.ctl.pending() > 0 {
        report(Event::Refused {
            peer: a.peer,
            why: "sent more than its handshake before the agent's Welcome".into(),
        });
        return Ok(None);
    }
    let conn = a
        .ctl
        .stream()
        .try_clone()
        .map_err(|e| Fault::Peer(format!("agent: {e}")))?;
    spawn_session(cfg, &settings(cfg, None), conn.into(), a.keys.as_ref()).map(Some)
}

/// A connection waiting for its handshake.
struct Waiting {
    ip: IpAddr,
    since: Instant,
    /// Another descriptor of the connection, to close it early.
    stream: TcpStream,
    /// Set when it was closed to make room (its thread tells it why).
    evicted: Arc<AtomicBool>,
}

/// The agent's door: the connections waiting for their handshake, and the
/// addresses whose proofs failed.
#[derive(Default)]
struct Door {
    pending: HashMap<u64, Waiting>,
    next_id: u64,
    failures: HashMap<IpAddr, (u32, Instant)>,
    /// No accept before this (after running out of descriptors or memory).
    resume: Option<Instant>,
    backoff: Duration,
}

impl Door {
    fn waiting_from(&self, ip: IpAddr) -> usize {
        self.pending.values().filter(|w| w.ip == ip).count()
    }

    /// Why a new connection from `ip` is closed at once, if it is.
    fn turned_away(&mut self, ip: IpAddr) -> Option<String> {
        if let Some(&(n, since)) = self.failures.get(&ip) {
            if since.elapsed() >= FAILURE_WINDOW {
                self.failures.remove(&ip);
            } else if n >= FAILURES_MAX {
                return Some(format!(
                    "closed: {n} failed proofs from this address within {} s; it may try again after that",
                    FAILURE_WINDOW.as_secs()
                ));
            }
        }
        if self.waiting_from(ip) >= PENDING_PER_ADDRESS {
            return Some(format!(
                "{FULL}: {PENDING_PER_ADDRESS} from this address are already waiting for their handshake; try again in a few seconds"
            ));
        }
        None
    }

    /// At [`PENDING_MAX`], closes the oldest connection of the address with
    /// the most waiting: it no longer counts, and its thread, whose reads
    /// now end, tells it [`FULL`].
    fn make_room(&mut self) {
        if self.pending.len() < PENDING_MAX {
            return;
        }
        let mut per_address: HashMap<IpAddr, usize> = HashMap::new();
        for w in self.pending.values() {
            *per_address.entry(w.ip).or_default() += 1;
        }
        let victim = self
            .pending
            .iter()
            .max_by_key(|(_, w)| (per_address[&w.ip], std::cmp::Reverse(w.since)))
            .map(|(&id, _)| id);
        if let Some(w) = victim.and_then(|id| self.pending.remove(&id)) {
            w.evicted.store(true, Ordering::SeqCst);
            let _ = w.stream.shutdown(std::net::Shutdown::Read);
        }
    }

    /// Accepts every waiting connection and admits each on a thread of its
    /// own (a stranger that never speaks holds up nobody), within the caps.
    fn accept_all(
        &mut self,
        listener: &TcpListener,
        cfg: &AgentConfig,
        tx: &Sender<Verdict>,
        report: &mut dyn FnMut(Event),
    ) {
        if self.resume.is_some_and(|t| Instant::now() < t) {
            return;
        }
        self.resume = None;
        loop {
            let (stream, peer) = match listener.accept() {
                // Descriptors are back: the next shortage waits the
                // shortest time again.
                Ok(c) => {
                    self.backoff = Duration::ZERO;
                    c
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    self.backoff = Duration::ZERO;
                    return;
                }
                Err(e) if is_exhaustion(&e) => {
                    self.backoff = (self.backoff * 2)
                        .clamp(Duration::from_millis(100), Duration::from_secs(2));
                    self.resume = Some(Instant::now() + self.backoff);
                    report(Event::AcceptFailed {
                        why: e.to_string(),
                        backoff: self.backoff,
                    });
                    return;
                }
                // The connection went away before it was taken, or a signal.
                Err(_) => continue,
            };
            if let Some(why) = self.turned_away(peer.ip()) {
                // Said before closing, so that a publisher turned away
                // says why instead of "the peer closed the connection".
                let _ = Ctl::stranger(stream).send(&Msg::Error {
                    message: turned_away(&why),
                });
                report(Event::Refused { peer, why });
                continue;
            }
            let other = match stream
                .set_nonblocking(false)
                .and_then(|()| stream.try_clone())
            {
                Ok(s) => s,
                Err(e) => {
                    report(Event::Refused {
                        peer,
                        why: e.to_string(),
                    });
                    continue;
                }
            };
            self.make_room();
            let (id, evicted) = (self.next_id, Arc::new(AtomicBool::new(false)));
            self.next_id += 1;
            self.pending.insert(
                id,
                Waiting {
                    ip: peer.ip(),
                    since: Instant::now(),
                    stream: other,
                    evicted: evicted.clone(),
                },
            );
            let (tx, token) = (tx.clone(), cfg.token.clone());
            let deadline = Instant::now() + HELLO_TIMEOUT;
            std::thread::spawn(move || {
                let ctl = Ctl::stranger(stream);
                let admitted = crate::auth::admit(&ctl, token.as_deref(), deadline);
                let evicted = evicted.load(Ordering::SeqCst);
                if admitted.is_err() && evicted {
                    let _ = ctl.send(&Msg::Error {
                        message: turned_away(&evicted_why()),
                    });
                }
                let _ = tx.send(Verdict {
                    id,
                    evicted,
                    admitted: admitted
                        .map(|keys| Admission { ctl, keys, peer })
                        .map_err(|r| (peer, r)),
                });
            });
        }
    }

    /// Takes an admission thread's verdict: the connection no longer waits;
    /// a failed proof counts against its address, unless the agent closed
    /// the connection to make room. A connection that proved the token is
    /// admitted even so.
    fn settle(&mut self, verdict: Verdict) -> Result<Admission, (SocketAddr, String)> {
        self.pending.remove(&verdict.id);
        verdict.admitted.map_err(|(peer, r)| {
            if verdict.evicted {
                return (peer, evicted_why());
            }
            if r.failed_proof {
                let e = self
                    .failures
                    .entry(peer.ip())
                    .or_insert((0, Instant::now()));
                e.0 += 1;
            }
            (peer, crate::escape::printable(&r.why, 400))
        })
    }
}

/// Why a connection was closed to make room.
fn evicted_why() -> String {
    format!(
        "{FULL}: this one, the oldest of the address with the most waiting for their handshake, was closed to make room; try again"
    )
}

/// What a connection turned away at the door is told.
fn turned_away(why: &str) -> String {
    format!("the agent turned this connection away: {why}")
}

/// Running out of descriptors or memory: the agent waits, it does not end.
fn is_exhaustion(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::ENOMEM | libc::ENOBUFS)
    )
}

/// Lets at most [`LOG_BURST`] refusals through per [`LOG_WINDOW`]; the
/// next one after a quiet spell says how many were not shown.
#[derive(Default)]
struct Throttle {
    since: Option<Instant>,
    shown: u32,
    suppressed: u64,
}

impl Throttle {
    fn pass(&mut self, e: Event, report: &mut dyn FnMut(Event)) {
        if !matches!(e, Event::Refused { .. } | Event::AcceptFailed { .. }) {
            return report(e);
        }
        let now = Instant::now();
        if self
            .since
            .is_none_or(|t| now.duration_since(t) >= LOG_WINDOW)
        {
            self.since = Some(now);
            self.shown = 0;
            if self.suppressed > 0 {
                report(Event::Suppressed {
                    count: std::mem::take(&mut self.suppressed),
                });
            }
        }
        if self.shown < LOG_BURST {
            self.shown += 1;
            report(e);
        } else {
            self.suppressed += 1;
        }
    }
}

fn refuse_busy(a: Admission, r: &Running, report: &mut dyn FnMut(Event)) {
    let why = format!(
        "busy, running session {} from {} (for {:.0} s); one session at a time: try again when it ends",
        r.id,
        r.peer,
        r.since.elapsed().as_secs_f64()
    );
    let _ = a.ctl.send(&Msg::Error {
        message: why.clone(),
    });
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
        same_host: false,
        publisher_here: false,
    }
}

/// Starts the process that serves one admitted session on `conn`.
fn spawn_session(
    cfg: &AgentConfig,
    settings: &SessionSettings,
    conn: std::os::fd::OwnedFd,
    keys: Option<&SessionKeys>,
) -> Result<Child, Fault> {
    use std::os::fd::AsRawFd;
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
    // The keys go on a pipe the session process inherits, its number on
    // the command line: neither the environment nor the command line
    // (both readable in /proc) holds them.
    let pipe = keys
        .map(crate::key_pipe::hand)
        .transpose()
        .map_err(|e| Fault::Peer(format!("agent: cannot hand the session its keys: {e}")))?;
    let keys_fd = pipe.as_ref().map(|p| p.as_raw_fd());
    if let Some(fd) = keys_fd {
        cmd.args(["--session-keys-fd", &fd.to_string()]);
    }
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            // A session ends with the agent, whatever ends the agent; SIGTERM
            // lets it release what its binding holds.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            keys_fd.map_or(Ok(()), crate::key_pipe::inherit)
        });
    }
    // The agent's copy of the pipe closes when `pipe` is dropped, after
    // the spawn.
    let child = cmd.spawn().map_err(|e| {
        Fault::Peer(format!(
            "cannot start a session process {}: {e}",
            cfg.exe.display()
        ))
    });
    drop(pipe);
    child
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
    // The SSH user could run anything here: its sessions are trusted (a
    // --qos-file may be a path; no network bounds), the agent's own limits
    // still hold.
    cfg.limits.network = false;
    let settings = settings(&cfg, ssh.map(|(publisher, _)| publisher));
    let peer = stream.peer_addr().map_err(|e| Fault::Peer(e.to_string()))?;
    let mut id = 1;
    loop {
        if !wait_readable(&stream)? {
            return Ok(());
        }
        let s = stream.try_clone().map_err(|e| Fault::Peer(e.to_string()))?;
        let ctl = Ctl::stranger(s);
        crate::auth::admit(&ctl, None, Instant::now() + HELLO_TIMEOUT)
            .map_err(|r| Fault::Peer(r.why))?;
        let conn = ctl
            .stream()
            .try_clone()
            .map_err(|e| Fault::Peer(e.to_string()))?;
        drop(ctl);
        let child = spawn_session(&cfg, &settings, conn.into(), None)?;
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
