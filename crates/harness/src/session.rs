//! Sessions: the publisher's control connections to its subscribers and
//! extra publishers, wherever they run (child processes it started, threads
//! of its own, or a remote `pubsubperf sub --listen`). A session knows
//! nothing of runs: [`crate::run`] runs a test over one, and
//! [`crate::serve`] is the other end of its connections.

use crate::channel::Ctl;
use crate::protocol::{ControlError, Msg};
use crate::{Fault, INTERRUPTED};
use pubsubperf_core::CancelToken;
use pubsubperf_core::environment::Environment;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a subscriber may stay silent during a run before it counts as
/// hung. Subscribers report every interval (1 s); 5 s lets a run survive a
/// subscriber stalled for 2 s (its silence then lasts up to 3 s) or a link
/// down for 2 s (TCP's retransmission backoff resumes the control
/// connection up to ~1 s after the link), and reports the gap instead.
pub const PEER_SILENCE: Duration = Duration::from_secs(5);
/// How often the publisher tells each subscriber it is alive during a run
/// (a Heartbeat, sent by the connection's reader thread while a run is
/// watched, and by the liveness checks between samples), so that a
/// subscriber whose publisher went silent for [`PEER_SILENCE`] ends its
/// run and its session (an agent is then free for the next publisher). A
/// writer blocked on a full queue for up to its `--max-blocking-time` is
/// not silent: the reader thread speaks for it.
pub const HEARTBEAT: Duration = Duration::from_secs(1);

/// Sends a Heartbeat on `ctl` if none went for [`HEARTBEAT`] (`told`:
/// when the last did).
fn tell_alive(ctl: &Ctl, told: &AtomicU64, now_ns: u64) {
    let last = told.load(Ordering::Relaxed);
    if now_ns.saturating_sub(last) > HEARTBEAT.as_nanos() as u64
        && told
            .compare_exchange(last, now_ns, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    {
        // A failed send shows as the connection's end, soon.
        let _ = ctl.send(&Msg::Heartbeat);
    }
}

/// The publisher's connection to one subscriber.
pub struct SubConn {
    /// Subscriber index (an extra publisher's id).
    pub index: usize,
    /// "subscriber", or "publisher" for an extra publisher (messages).
    role: &'static str,
    ctl: Ctl,
    rx: Receiver<Msg>,
    alive: Arc<AtomicBool>,
    last_heard_ns: Arc<AtomicU64>,
    /// When this side last sent a [`HEARTBEAT`] (the reader thread's and
    /// the measuring thread's).
    last_told_ns: Arc<AtomicU64>,
    /// The running run's cancel token, which the reader thread cancels when
    /// the subscriber has been silent for [`PEER_SILENCE`]: a writer
    /// blocked on a full link wakes then, not after its own timeout.
    running: Arc<Mutex<Option<CancelToken>>>,
    /// Why the reader thread stopped, when the connection failed rather
    /// than ended (a read error), for the message that says it is gone.
    failed: Arc<std::sync::OnceLock<String>>,
    /// The subscriber host's environment.
    pub environment: Environment,
    /// Where it is (for messages).
    pub peer: String,
    /// This host's address as the subscriber's host sees it (from its
    /// Welcome; an agent over SSH).
    seen_from: Option<String>,
    /// An agent at HOST:PORT: a `--qos-file` goes to it by name, for its
    /// `--qos-dir` ([`crate::qos_dir`]), not as a path of this host.
    pub(crate) qos_by_name: bool,
    /// An agent (`HOST:PORT` or `ssh://`): another host, whose clock is
    /// its own ([`crate::clock_offset`]); false for the processes and
    /// threads this host starts.
    pub(crate) own_clock: bool,
}

impl SubConn {
    fn new(
        index: usize,
        stream: TcpStream,
        peer: String,
        token: Option<&str>,
        timeout: Duration,
    ) -> Result<SubConn, Fault> {
        let s = Ctl::plain(stream);
        crate::auth::greet(&s, &peer, token, Instant::now() + timeout)?;
        let (environment, seen_from) = match s.recv(Some(timeout)) {
            Ok(Msg::Welcome {
                environment,
                seen_from,
                ..
            }) => (*environment, seen_from),
            Ok(Msg::Error { message }) => {
                return Err(Fault::Peer(format!(
                    "subscriber {peer} refused: {}",
                    crate::escape::printable(&message, 400)
                )));
            }
            Ok(other) => {
                return Err(Fault::Peer(format!(
                    "subscriber {peer}: unexpected {other:?}"
                )));
            }
            Err(e) => return Err(Fault::Peer(format!("subscriber {peer}: {e}"))),
        };
        let (tx, rx) = channel();
        let alive = Arc::new(AtomicBool::new(true));
        let last = Arc::new(AtomicU64::new(pubsubperf_core::clock::now_ns()));
        let rd = s.try_clone().map_err(|e| Fault::Peer(e.to_string()))?;
        let running: Arc<Mutex<Option<CancelToken>>> = Arc::default();
        let failed: Arc<std::sync::OnceLock<String>> = Arc::default();
        let told = Arc::new(AtomicU64::new(0));
        let (a, l, r, why) = (alive.clone(), last.clone(), running.clone(), failed.clone());
        let t = told.clone();
        pubsubperf_core::helper::spawn_helper(rd, move |rd| {
            loop {
                if r.lock().unwrap_or_else(|p| p.into_inner()).is_some() {
                    tell_alive(&rd, &t, pubsubperf_core::clock::now_ns());
                }
                match rd.recv(Some(HEARTBEAT / 2)) {
                    Ok(m) => {
                        let now = pubsubperf_core::clock::now_ns();
                        l.store(now, Ordering::Release);
                        // A clock probe's answer is stamped as it arrives.
                        let m = match m {
                            Msg::ClockEcho { t1, t2, t3, .. } => Msg::ClockEcho {
                                t1,
                                t2,
                                t3,
                                t4: now,
                            },
                            m => m,
                        };
                        if tx.send(m).is_err() {
                            break;
                        }
                    }
                    Err(ControlError::Timeout(_)) => {
                        let silent = pubsubperf_core::clock::now_ns()
                            .saturating_sub(l.load(Ordering::Acquire));
                        if silent > PEER_SILENCE.as_nanos() as u64
                            && let Some(c) = r.lock().unwrap_or_else(|p| p.into_inner()).as_ref()
                        {
                            c.cancel();
                        }
                    }
                    Err(ControlError::Closed) => break,
                    Err(e) => {
                        let _ = why.set(e.to_string());
                        break;
                    }
                }
            }
            a.store(false, Ordering::Release);
        });
        Ok(SubConn {
            index,
            role: "subscriber",
            ctl: s,
            rx,
            alive,
            last_heard_ns: last,
            last_told_ns: told,
            running,
            failed,
            environment,
            peer,
            seen_from,
            qos_by_name: false,
            own_clock: false,
        })
    }

    /// Sends a message.
    pub fn send(&mut self, msg: &Msg) -> Result<(), Fault> {
        self.ctl.send(msg).map_err(|e| self.dead(&e.to_string()))
    }

    /// The fault for a subscriber that went away.
    pub fn dead(&self, why: &str) -> Fault {
        Fault::Peer(format!(
            "{} {} ({}) is gone: {why}",
            self.role, self.index, self.peer
        ))
    }

    /// The fault for a control connection that ended: closed by the other
    /// side, or failed here (the error said).
    fn gone(&self) -> Fault {
        match self.failed.get() {
            Some(e) => self.dead(&format!("its control connection failed here ({e})")),
            None => self.dead("it closed the control connection (process died?)"),
        }
    }

    /// Receives the next message within `timeout`.
    pub fn recv(&self, timeout: Duration) -> Result<Msg, Fault> {
        self.recv_until(timeout, false)
    }

    /// [`SubConn::recv`], giving up early once the subscriber has been
    /// silent for [`PEER_SILENCE`] (waiting for the results of a run: a
    /// draining subscriber keeps reporting, a gone one is given up).
    pub fn recv_heard(&self, timeout: Duration) -> Result<Msg, Fault> {
        self.recv_until(timeout, true)
    }

    fn recv_until(&self, timeout: Duration, heard: bool) -> Result<Msg, Fault> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left.min(Duration::from_millis(100))) {
                Ok(Msg::Error { message }) => {
                    return Err(Fault::Peer(format!("subscriber {}: {message}", self.index)));
                }
                Ok(m) => return Ok(m),
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(self.gone());
                }
                Err(RecvTimeoutError::Timeout) => {
                    if INTERRUPTED.load(Ordering::Relaxed) {
                        return Err(Fault::Interrupted);
                    }
                    if heard {
                        self.check_heard(pubsubperf_core::clock::now_ns())?;
                    }
                    if Instant::now() >= deadline {
                        return Err(Fault::Peer(format!(
                            "subscriber {} ({}) did not answer within {:.1} s",
                            self.index,
                            self.peer,
                            timeout.as_secs_f64()
                        )));
                    }
                }
            }
        }
    }

    /// A message if one is waiting.
    pub fn try_recv(&self) -> Option<Msg> {
        self.rx.try_recv().ok()
    }

    /// Checks that the subscriber is alive and has spoken recently, and
    /// tells it this side is alive, once per [`HEARTBEAT`].
    #[inline]
    pub fn check(&self, now_ns: u64) -> Result<(), Fault> {
        tell_alive(&self.ctl, &self.last_told_ns, now_ns);
        self.check_heard(now_ns)
    }

    /// Checks that the subscriber is alive and has spoken recently.
    fn check_heard(&self, now_ns: u64) -> Result<(), Fault> {
        if !self.alive.load(Ordering::Acquire) {
            return Err(self.gone());
        }
        let last = self.last_heard_ns.load(Ordering::Acquire);
        if now_ns.saturating_sub(last) > PEER_SILENCE.as_nanos() as u64 {
            return Err(Fault::Peer(format!(
                "{} {} ({}) has been silent for {:.1} s (hung or unreachable)",
                self.role,
                self.index,
                self.peer,
                (now_ns - last) as f64 / 1e9
            )));
        }
        Ok(())
    }

    /// Resets the silence clock (before a phase in which it must speak).
    pub fn touch(&self) {
        self.last_heard_ns
            .store(pubsubperf_core::clock::now_ns(), Ordering::Release);
    }

    /// This host's address towards the subscriber (where this side's
    /// endpoints bind): as the subscriber's host saw it, else the local
    /// address of the control connection.
    pub fn local_ip(&self) -> String {
        self.seen_from.clone().unwrap_or_else(|| {
            self.ctl
                .stream()
                .local_addr()
                .map(|a| a.ip().to_string())
                .unwrap_or_else(|_| "127.0.0.1".into())
        })
    }
}

/// Where the subscribers of a session come from.
pub enum Peers {
    /// Start `n` child processes of `exe` on this host.
    Local {
        /// Number of subscribers.
        n: usize,
        /// The pubsubperf binary to start (normally the current one).
        exe: std::path::PathBuf,
    },
    /// Run `n` subscribers as threads of this process (in-process bindings).
    Threads {
        /// Number of subscribers.
        n: usize,
    },
    /// Connect to agents: `HOST:PORT` of a `pubsubperf agent` (or `sub
    /// --listen`), or `ssh://[user@]host[:port]` to start one over SSH.
    Remote {
        /// Their addresses.
        addrs: Vec<String>,
        /// How to reach them.
        access: RemoteAccess,
    },
}

/// What a publisher needs to reach remote agents.
#[derive(Debug, Clone, Default)]
pub struct RemoteAccess {
    /// The agents' token ([`crate::token`]), if this host has one (not
    /// needed over SSH).
    pub token: Option<String>,
    /// The pubsubperf binary on `ssh://` hosts (default `pubsubperf`, found
    /// on the remote user's PATH).
    pub remote_path: Option<String>,
    /// Agents started over SSH by earlier sessions, kept for the next (a
    /// sweep's cells); None: each session starts its own.
    pub pool: Option<Arc<crate::ssh::Pool>>,
}

/// The publisher's session: subscribers connected, ready for runs.
pub struct Session {
    /// Connections, one per subscriber.
    pub subs: Vec<SubConn>,
    /// Connections to extra publishers (publisher ids 1..), `--publishers`.
    pub pubs: Vec<SubConn>,
    children: Vec<Child>,
    threads: Vec<std::thread::JoinHandle<()>>,
    /// Agents started over SSH, by address; after the goodbyes they go
    /// back to the pool (a clean end) or are dropped, which ends them.
    remotes: Vec<(String, crate::ssh::Remote)>,
    pool: Option<Arc<crate::ssh::Pool>>,
    /// Time allowed for set-up steps (connect, match).
    pub connect_timeout: Duration,
    /// `--topics N`: the gate this session's next run passes between its
    /// set-up and its start, with the other topics' runs.
    pub gate: Option<Arc<crate::start_gate::StartGate>>,
}

impl Session {
    /// Starts or connects the subscribers.
    pub fn start(peers: Peers, connect_timeout: Duration) -> Result<Session, Fault> {
        let mut session = Session {
            subs: Vec::new(),
            pubs: Vec::new(),
            children: Vec::new(),
            threads: Vec::new(),
            remotes: Vec::new(),
            pool: None,
            connect_timeout,
            gate: None,
        };
        match peers {
            Peers::Remote { addrs, access } => {
                for (i, a) in addrs.iter().enumerate() {
                    let conn = session.connect_remote(i, a, &access)?;
                    session.subs.push(conn);
                }
            }
            Peers::Local { n, exe } => {
                let l = TcpListener::bind("127.0.0.1:0")
                    .map_err(|e| Fault::Peer(format!("control listener: {e}")))?;
                let addr = l.local_addr().map_err(|e| Fault::Peer(e.to_string()))?;
                for _ in 0..n {
                    let child = spawn_child(&exe, addr)?;
                    session.children.push(child);
                }
                for i in 0..n {
                    let stream = accept(&l, connect_timeout, &mut session.children)?;
                    session.subs.push(SubConn::new(
                        i,
                        stream,
                        format!("local process {i}"),
                        None,
                        connect_timeout,
                    )?);
                }
            }
            Peers::Threads { n } => {
                let l = TcpListener::bind("127.0.0.1:0")
                    .map_err(|e| Fault::Peer(format!("control listener: {e}")))?;
                let addr = l.local_addr().map_err(|e| Fault::Peer(e.to_string()))?;
                for _ in 0..n {
                    session.threads.push(std::thread::spawn(move || {
                        if let Ok(s) = TcpStream::connect(addr) {
                            let _ = crate::serve::serve_session(s);
                        }
                    }));
                }
                for i in 0..n {
                    let stream = accept(&l, connect_timeout, &mut session.children)?;
                    session.subs.push(SubConn::new(
                        i,
                        stream,
                        format!("thread {i}"),
                        None,
                        connect_timeout,
                    )?);
                }
            }
        }
        Ok(session)
    }

    /// Adds extra publishers (ids 1..) from `peers` (threads are not
    /// offered: extra publishers are separate processes).
    pub fn add_publishers(&mut self, peers: Peers) -> Result<(), Fault> {
        let timeout = self.connect_timeout;
        match peers {
            Peers::Remote { addrs, access } => {
                for a in &addrs {
                    let mut conn = self.connect_remote(self.pubs.len() + 1, a, &access)?;
                    conn.role = "publisher";
                    self.pubs.push(conn);
                }
            }
            Peers::Local { n, exe } => {
                let l = TcpListener::bind("127.0.0.1:0")
                    .map_err(|e| Fault::Peer(format!("control listener: {e}")))?;
                let addr = l.local_addr().map_err(|e| Fault::Peer(e.to_string()))?;
                for _ in 0..n {
                    let child = spawn_child(&exe, addr)?;
                    self.children.push(child);
                }
                for _ in 0..n {
                    let stream = accept(&l, timeout, &mut self.children)?;
                    let i = self.pubs.len() + 1;
                    let mut conn = SubConn::new(
                        i,
                        stream,
                        format!("local publisher process {i}"),
                        None,
                        timeout,
                    )?;
                    conn.role = "publisher";
                    self.pubs.push(conn);
                }
            }
            Peers::Threads { .. } => {
                return Err(Fault::Config("--publishers: this binding runs in one process; extra publishers need separate processes".into()));
            }
        }
        Ok(())
    }

    /// Connects to the agent at `addr`, starting it over SSH for an
    /// `ssh://` address.
    fn connect_remote(
        &mut self,
        index: usize,
        addr: &str,
        access: &RemoteAccess,
    ) -> Result<SubConn, Fault> {
        let timeout = self.connect_timeout;
        let Some(target) = crate::ssh::Target::parse(addr) else {
            let stream = connect(addr, timeout)?;
            let mut c = SubConn::new(index, stream, addr.into(), access.token.as_deref(), timeout)?;
            c.qos_by_name = true;
            c.own_clock = true;
            return Ok(c);
        };
        let target = target.map_err(Fault::Config)?;
        self.pool = access.pool.clone();
        let kept = access.pool.as_ref().and_then(|p| p.take(addr));
        let mut remote = match kept {
            Some(r) => r,
            None => crate::ssh::Remote::start(
                &target,
                access.remote_path.as_deref().unwrap_or("pubsubperf"),
            )?,
        };
        let stream = remote.open()?;
        match SubConn::new(index, stream, target.display(), None, timeout) {
            Ok(mut conn) => {
                conn.own_clock = true;
                self.remotes.push((addr.to_string(), remote));
                Ok(conn)
            }
            // The agent answered and refused (another version): as it said.
            Err(f @ Fault::Peer(_)) if f.to_string().contains(" refused: ") => Err(f),
            Err(f) => Err(remote.explain(&f.to_string())),
        }
    }

    /// Whether a subscriber is on another host (an agent), whose clock and
    /// link are its own.
    pub fn across_hosts(&self) -> bool {
        self.subs.iter().any(|s| s.own_clock)
    }

    /// The address this side's endpoints bind for data: the run's
    /// `--data-address`, else this host's address towards the first
    /// subscriber.
    pub fn data_ip(&self, data_address: Option<&str>) -> String {
        match data_address {
            Some(a) => a.to_string(),
            None => self
                .subs
                .first()
                .map_or_else(|| "127.0.0.1".into(), |c| c.local_ip()),
        }
    }

    /// Cancels `cancel` (a run's) when a subscriber goes silent for
    /// [`PEER_SILENCE`] while it runs; None once the run is over.
    pub fn watch_run(&self, cancel: Option<&CancelToken>) {
        for s in &self.subs {
            *s.running.lock().unwrap_or_else(|p| p.into_inner()) = cancel.cloned();
        }
    }

    /// True while every subscriber is connected.
    pub fn healthy(&self) -> bool {
        self.subs
            .iter()
            .chain(self.pubs.iter())
            .all(|s| s.alive.load(Ordering::Acquire))
    }

    /// The subscribers' processes when each is a process this one started
    /// on this host (`--explain`); None when any side is elsewhere or a
    /// thread of this process.
    pub fn local_subscriber_pids(&self) -> Option<Vec<u32>> {
        (self.pubs.is_empty() && self.threads.is_empty() && self.children.len() == self.subs.len())
            .then(|| self.children.iter().map(|c| c.id()).collect())
    }

    /// Ends the session: says goodbye, waits briefly, reaps every child;
    /// agents started over SSH go back to the pool, if there is one.
    pub fn close(mut self) {
        self.shutdown(true);
    }

    /// Ends the session; `clean` when every run ended as planned (a remote
    /// agent's connection is then quiet and can serve another session).
    fn shutdown(&mut self, clean: bool) {
        for s in self.subs.iter_mut().chain(self.pubs.iter_mut()) {
            let _ = s.ctl.send(&Msg::Bye);
            let _ = s.ctl.stream().shutdown(std::net::Shutdown::Write);
        }
        let deadline = Instant::now() + Duration::from_secs(2);
        for c in &mut self.children {
            loop {
                match c.try_wait() {
                    Ok(Some(_)) => break,
                    Ok(None) if Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(10))
                    }
                    _ => {
                        let _ = c.kill();
                        let _ = c.wait();
                        break;
                    }
                }
            }
        }
        self.children.clear();
        for s in self.subs.iter().chain(self.pubs.iter()) {
            let _ = s.ctl.stream().shutdown(std::net::Shutdown::Both);
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        for (addr, mut r) in self.remotes.drain(..) {
            r.close();
            if let (true, Some(p)) = (clean, &self.pool) {
                p.give(addr, r);
            }
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.shutdown(false);
    }
}

fn connect(addr: &str, timeout: Duration) -> Result<TcpStream, Fault> {
    use std::net::ToSocketAddrs;
    let targets: Vec<SocketAddr> = addr
        .to_socket_addrs()
        .map_err(|e| Fault::Config(format!("--connect {addr}: {e} (expected HOST:PORT)")))?
        .collect();
    let deadline = Instant::now() + timeout;
    let mut last = String::from("no address");
    // Retry until the deadline: the subscriber may still be starting.
    while Instant::now() < deadline {
        for t in &targets {
            let left = deadline
                .saturating_duration_since(Instant::now())
                .max(Duration::from_millis(10));
            match TcpStream::connect_timeout(t, left.min(Duration::from_secs(1))) {
                Ok(s) => return Ok(s),
                Err(e) => last = e.to_string(),
            }
        }
        if INTERRUPTED.load(Ordering::Relaxed) {
            return Err(Fault::Interrupted);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(Fault::Peer(format!(
        "no subscriber at {addr} within --connect-timeout {:.1} s ({last}); start 'pubsubperf agent --listen {addr}' there first",
        timeout.as_secs_f64()
    )))
}

fn spawn_child(exe: &std::path::Path, addr: SocketAddr) -> Result<Child, Fault> {
    use std::os::unix::process::CommandExt;
    let mut cmd = Command::new(exe);
    cmd.arg("sub")
        .arg("--connect-back")
        .arg(addr.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            // Die with the publisher, whatever kills it.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            // Ctrl-C goes to the publisher, which stops the subscriber
            // through the control channel after collecting its results.
            libc::signal(libc::SIGINT, libc::SIG_IGN);
            Ok(())
        });
    }
    cmd.spawn().map_err(|e| {
        Fault::Peer(format!(
            "cannot start subscriber process {}: {e}",
            exe.display()
        ))
    })
}

fn accept(l: &TcpListener, timeout: Duration, children: &mut [Child]) -> Result<TcpStream, Fault> {
    l.set_nonblocking(true)
        .map_err(|e| Fault::Peer(e.to_string()))?;
    let deadline = Instant::now() + timeout;
    loop {
        match l.accept() {
            Ok((s, _)) => {
                s.set_nonblocking(false)
                    .map_err(|e| Fault::Peer(e.to_string()))?;
                return Ok(s);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(Fault::Peer(format!("control accept: {e}"))),
        }
        for c in children.iter_mut() {
            if let Ok(Some(status)) = c.try_wait() {
                return Err(Fault::Peer(format!(
                    "subscriber process exited before connecting ({status})"
                )));
            }
        }
        if INTERRUPTED.load(Ordering::Relaxed) {
            return Err(Fault::Interrupted);
        }
        if Instant::now() >= deadline {
            return Err(Fault::Peer(format!(
                "subscriber did not connect within --connect-timeout {:.1} s",
                timeout.as_secs_f64()
            )));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}
