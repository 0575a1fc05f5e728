//! Peers started over SSH (`--connect ssh://[user@]host[:port]`): the
//! system's OpenSSH client (`ssh`, with the user's `~/.ssh/config`, keys and
//! agent; never a password prompt of ours) starts `pubsubperf agent
//! --stdio` on the remote host, and the control channel runs through the
//! SSH connection: the ssh process's standard input and output, joined to a
//! loopback TCP connection here so that the rest of the harness sees a
//! socket. The data does not go through SSH: it flows between the two
//! hosts' addresses as the SSH connection found them (`SSH_CONNECTION` on
//! the remote side).
//!
//! No token is needed: only whoever can log in over SSH reaches an agent on
//! its standard input. Ending the ssh process (at the end of the session,
//! on a failure, on Ctrl-C) closes the remote agent's standard input, and
//! the remote agent then stops its session and exits.
//!
//! `$PUBSUBPERF_SSH` replaces the `ssh` command and its leading options
//! (words split on white space), for example `ssh -F lab/ssh_config`.

use crate::Fault;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The environment variable that replaces the `ssh` command.
pub const ENV: &str = "PUBSUBPERF_SSH";
/// How long the remote's stderr lines are kept for an error message.
const KEEP_LINES: usize = 8;

/// Where to log in: `ssh://[user@]host[:port][?data=ADDR|NIC&path=PATH]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Login name (None: ssh's choice, from `~/.ssh/config` or the user).
    pub user: Option<String>,
    /// Host name, an alias of `~/.ssh/config`, or an address.
    pub host: String,
    /// Port (None: ssh's choice).
    pub port: Option<u16>,
    /// The remote agent's `--data-address` (`?data=`).
    pub data_address: Option<String>,
    /// The remote pubsubperf binary (`?path=`; else `--remote-path`).
    pub path: Option<String>,
}

impl Target {
    /// Parses `ssh://[user@]host[:port]` (an IPv6 address in brackets);
    /// `None` when `s` is not an `ssh://` address.
    pub fn parse(s: &str) -> Option<Result<Target, String>> {
        let rest = s.strip_prefix("ssh://")?;
        Some(Self::parse_rest(s, rest))
    }

    fn parse_rest(whole: &str, rest: &str) -> Result<Target, String> {
        let bad = |why: &str| {
            format!(
                "--connect {whole}: {why} (expected ssh://[user@]host[:port][?data=ADDR|NIC&path=PATH])"
            )
        };
        let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (mut data_address, mut path) = (None, None);
        for kv in query.split('&').filter(|kv| !kv.is_empty()) {
            match kv.split_once('=') {
                Some(("data", v)) if !v.is_empty() => data_address = Some(v.to_string()),
                Some(("path", v)) if !v.is_empty() => path = Some(v.to_string()),
                _ => return Err(bad(&format!("unknown parameter '{kv}'"))),
            }
        }
        let (user, hostport) = match rest.rsplit_once('@') {
            Some((u, h)) if !u.is_empty() => (Some(u.to_string()), h),
            Some(_) => return Err(bad("empty user name")),
            None => (None, rest),
        };
        let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
            let (h, after) = v6.split_once(']').ok_or_else(|| bad("unclosed '['"))?;
            (h, after.strip_prefix(':'))
        } else {
            match hostport.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (hostport, None),
            }
        };
        if host.is_empty() || host.contains(['/', ' ']) || host.starts_with('-') {
            return Err(bad("no host name"));
        }
        let port = port
            .map(|p| p.parse::<u16>().map_err(|_| bad("bad port")))
            .transpose()?;
        Ok(Target {
            user,
            host: host.to_string(),
            port,
            data_address,
            path,
        })
    }

    /// The address as the user wrote it, for messages.
    pub fn display(&self) -> String {
        let user = self
            .user
            .as_deref()
            .map(|u| format!("{u}@"))
            .unwrap_or_default();
        let port = self.port.map(|p| format!(":{p}")).unwrap_or_default();
        format!("ssh://{user}{}{port}", self.host)
    }
}

/// A remote agent started over SSH. Each session gets a control
/// connection of its own ([`Remote::open`]), joined to the ssh process's
/// standard input and output until [`Remote::close`]; the agent serves the
/// sessions one after another, so one ssh process and one agent serve
/// every cell of a sweep ([`Pool`]). Dropping it ends the ssh process (and
/// with it the remote agent).
pub struct Remote {
    child: Child,
    /// The ssh process's standard input and output while no session holds
    /// them.
    pipes: Option<(ChildStdin, ChildStdout)>,
    channel: Option<Channel>,
    stderr: Arc<Mutex<Vec<String>>>,
    stderr_pump: Option<std::thread::JoinHandle<()>>,
    target: Target,
}

/// One session's connection through the ssh process: the far end of a
/// loopback pair, and the two threads that copy between it and the pipes.
struct Channel {
    theirs: TcpStream,
    stop: Arc<AtomicBool>,
    to_ssh: std::thread::JoinHandle<Option<ChildStdin>>,
    from_ssh: std::thread::JoinHandle<Option<ChildStdout>>,
}

impl Remote {
    /// Starts `agent --stdio` on `target` (the binary at the target's
    /// `path`, else `remote_path`).
    pub fn start(target: &Target, remote_path: &str) -> Result<Remote, Fault> {
        let mut child = spawn(ssh_command(target, remote_path), target)?;
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let stderr_pump = keep_stderr(
            child.stderr.take().expect("piped"),
            target.display(),
            stderr.clone(),
        );
        let pipes = (
            child.stdin.take().expect("piped"),
            child.stdout.take().expect("piped"),
        );
        Ok(Remote {
            child,
            pipes: Some(pipes),
            channel: None,
            stderr,
            stderr_pump: Some(stderr_pump),
            target: target.clone(),
        })
    }

    /// A control connection for one session, through the ssh process.
    pub fn open(&mut self) -> Result<TcpStream, Fault> {
        self.close();
        let (mut to, mut from) = self.pipes.take().ok_or_else(|| {
            Fault::Peer(format!(
                "{}: the ssh connection was lost",
                self.target.display()
            ))
        })?;
        let (ours, theirs) = loopback_pair()?;
        let stop = Arc::new(AtomicBool::new(false));
        let (mut a, mut b) = (
            theirs.try_clone().map_err(io_fault)?,
            theirs.try_clone().map_err(io_fault)?,
        );
        let to_ssh = std::thread::spawn(move || pump(&mut a, &mut to).then_some(to));
        let halt = stop.clone();
        let from_ssh = std::thread::spawn(move || {
            let kept = pump_until(&mut from, &mut b, &halt).then_some(from);
            if kept.is_none() {
                // ssh ended: so does the session's connection.
                let _ = b.shutdown(Shutdown::Both);
            }
            kept
        });
        self.channel = Some(Channel {
            theirs,
            stop,
            to_ssh,
            from_ssh,
        });
        Ok(ours)
    }

    /// Ends the current session's connection (after its goodbye has been
    /// sent); the ssh process and the remote agent stay for the next.
    pub fn close(&mut self) {
        let Some(c) = self.channel.take() else { return };
        let _ = c.theirs.shutdown(Shutdown::Read);
        c.stop.store(true, Ordering::Release);
        let to = c.to_ssh.join().ok().flatten();
        let from = c.from_ssh.join().ok().flatten();
        self.pipes = to.zip(from);
    }

    /// True while the ssh process runs and its pipes are intact.
    pub fn usable(&mut self) -> bool {
        (self.pipes.is_some() || self.channel.is_some())
            && matches!(self.child.try_wait(), Ok(None))
    }

    /// Why the remote side failed, from ssh's exit status and the remote's
    /// last lines on stderr, with the fix; used when its agent never
    /// answered or went away.
    pub fn explain(&mut self, what: &str) -> Fault {
        let deadline = Instant::now() + Duration::from_secs(2);
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(s)) => break s.code(),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                _ => break None,
            }
        };
        // ssh has exited: its stderr ends, and the pump's last lines (the
        // ones that say why) may still be on their way.
        while status.is_some()
            && self.stderr_pump.as_ref().is_some_and(|p| !p.is_finished())
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        let lines = self.stderr.lock().map(|l| l.clone()).unwrap_or_default();
        let last = lines.last().cloned().unwrap_or_default();
        let t = self.target.display();
        let text = lines.join(" | ");
        Fault::Peer(match status {
            Some(127) => format!(
                "{t}: pubsubperf is not installed on the remote host ({last}); install it there, or name its path with --remote-path PATH"
            ),
            Some(126) => format!(
                "{t}: the remote pubsubperf cannot be run ({last}); check --remote-path and its mode"
            ),
            Some(2) if text.contains("unrecognized") || text.contains("unexpected argument") => {
                format!(
                    "{t}: the remote pubsubperf does not know 'agent --stdio' (an older version?): {last}; install this version ({}) there",
                    crate::VERSION
                )
            }
            Some(255) => format!(
                "{t}: ssh failed: {last} (ssh runs in batch mode: use a key or ssh-agent, and accept the host key once by hand)"
            ),
            Some(code) => {
                format!("{t}: {what}; the remote agent exited with status {code}: {last}")
            }
            None => format!("{t}: {what}: {last}"),
        })
    }
}

impl Drop for Remote {
    fn drop(&mut self) {
        self.close();
        // Closing its input ends the remote agent; ssh then exits.
        self.pipes = None;
        let deadline = Instant::now() + Duration::from_secs(3);
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                _ => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    break;
                }
            }
        }
        if let Some(p) = self.stderr_pump.take() {
            let _ = p.join();
        }
    }
}

/// Agents started over SSH, kept between sessions (the cells of a sweep)
/// by address; dropping the pool ends them.
#[derive(Default)]
pub struct Pool(Mutex<Vec<(String, Remote)>>);

impl Pool {
    /// A pool with no agents.
    pub fn new() -> Pool {
        Pool::default()
    }

    /// The agent started for `addr`, if one is kept and still usable.
    pub fn take(&self, addr: &str) -> Option<Remote> {
        let mut v = self.0.lock().ok()?;
        let i = v.iter().position(|(a, _)| a == addr)?;
        let (_, mut r) = v.swap_remove(i);
        r.usable().then_some(r)
    }

    /// Keeps `remote` for the next session with `addr`.
    pub fn give(&self, addr: String, remote: Remote) {
        if let Ok(mut v) = self.0.lock() {
            v.push((addr, remote));
        }
    }
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.0.lock().map_or(0, |v| v.len());
        write!(f, "Pool({n} agents)")
    }
}

/// Starts an ssh command with its standard streams piped; it ends with
/// this process, whatever ends this process (the remote side then sees its
/// input end).
fn spawn(mut cmd: Command, target: &Target) -> Result<Child, Fault> {
    use std::os::unix::process::CommandExt;
    // SAFETY: only an async-signal-safe call between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        });
    }
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            Fault::Config(format!(
                "--connect {}: cannot run ssh: {e} (install OpenSSH's client, Debian package openssh-client, or set {ENV})",
                target.display()
            ))
        })
}

/// `ssh [options] [-p port] [-l user] host -- 'remote' agent --stdio
/// [--data-address X]`.
fn ssh_command(target: &Target, remote_path: &str) -> Command {
    let mut cmd = base_command(target);
    cmd.arg(remote_command(target, remote_path));
    cmd
}

/// `ssh [options] [-p port] [-l user] host --`, the remote command to add.
fn base_command(target: &Target) -> Command {
    let custom = std::env::var(ENV).ok().filter(|s| !s.trim().is_empty());
    let words: Vec<String> = custom
        .as_deref()
        .unwrap_or("ssh")
        .split_whitespace()
        .map(String::from)
        .collect();
    let mut cmd = Command::new(&words[0]);
    cmd.args(&words[1..]).args([
        "-T",
        "-o",
        "BatchMode=yes",
        "-o",
        "ServerAliveInterval=2",
        "-o",
        "ServerAliveCountMax=3",
    ]);
    if let Some(p) = target.port {
        cmd.arg("-p").arg(p.to_string());
    }
    if let Some(u) = &target.user {
        cmd.arg("-l").arg(u);
    }
    cmd.arg(&target.host).arg("--");
    cmd
}

/// The command the remote user's shell runs.
fn remote_command(target: &Target, remote_path: &str) -> String {
    let path = target.path.as_deref().unwrap_or(remote_path);
    let mut c = format!("{} agent --stdio", shell_quote(path));
    if let Some(d) = &target.data_address {
        c.push_str(" --data-address ");
        c.push_str(&shell_quote(d));
    }
    c
}

/// Quotes a word for the remote user's shell.
fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+~".contains(c))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Copies the remote's stderr to ours, each line prefixed with where it
/// comes from, keeping the last lines for error messages.
fn keep_stderr(
    err: ChildStderr,
    from: String,
    keep: Arc<Mutex<Vec<String>>>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            eprintln!("{from}: {line}");
            if let Ok(mut k) = keep.lock() {
                if k.len() == KEEP_LINES {
                    k.remove(0);
                }
                k.push(line);
            }
        }
    })
}

/// Two ends of a loopback TCP connection.
pub fn loopback_pair() -> Result<(TcpStream, TcpStream), Fault> {
    let l = TcpListener::bind("127.0.0.1:0").map_err(io_fault)?;
    let a = TcpStream::connect(l.local_addr().map_err(io_fault)?).map_err(io_fault)?;
    let (b, _) = l.accept().map_err(io_fault)?;
    let _ = a.set_nodelay(true);
    let _ = b.set_nodelay(true);
    Ok((a, b))
}

fn io_fault(e: std::io::Error) -> Fault {
    Fault::Peer(format!("loopback control connection: {e}"))
}

/// Joins this process's standard input and output to a loopback TCP
/// connection (the remote agent's side of an SSH session); returns the
/// agent's end. When standard input ends, the agent's end is shut down.
pub fn stdio_pair() -> Result<TcpStream, Fault> {
    let (ours, theirs) = loopback_pair()?;
    let mut a = theirs.try_clone().map_err(io_fault)?;
    let mut b = theirs;
    std::thread::spawn(move || {
        pump(&mut std::io::stdin().lock(), &mut a);
        let _ = a.shutdown(Shutdown::Both);
    });
    std::thread::spawn(move || pump(&mut b, &mut std::io::stdout().lock()));
    Ok(ours)
}

/// Copies `from` to `to` until `from` ends (true: `to` is still good) or
/// writing fails (false), passing on each read at once. (Not
/// `std::io::copy`: between a pipe and a socket it splices, and a splice
/// from a pipe into a socket may wait for more input than a control
/// message, here until the peer gives up.)
fn pump(from: &mut impl Read, to: &mut impl Write) -> bool {
    let mut buf = [0u8; 64 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) => return true,
            Ok(n) => {
                if to.write_all(&buf[..n]).and_then(|()| to.flush()).is_err() {
                    return false;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return true,
        }
    }
}

/// Copies the ssh process's output to `to` until `stop` (true: the pipe
/// is kept for the next session) or the output ends or fails (false).
fn pump_until(from: &mut ChildStdout, to: &mut impl Write, stop: &AtomicBool) -> bool {
    use std::os::fd::AsRawFd;
    let mut buf = [0u8; 64 * 1024];
    loop {
        if stop.load(Ordering::Acquire) {
            return true;
        }
        let mut fd = libc::pollfd {
            fd: from.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd for the duration of the call.
        let ready = unsafe { libc::poll(&mut fd, 1, 100) };
        if ready <= 0 {
            continue;
        }
        match from.read(&mut buf) {
            Ok(0) => return false,
            Ok(n) => {
                if to.write_all(&buf[..n]).is_err() {
                    // What was read is lost: the pipe cannot serve another
                    // session in step.
                    return false;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
}

/// The two addresses of the SSH connection this process was started over
/// (`SSH_CONNECTION`: client address, client port, server address, server
/// port): (the publisher's address, this host's address).
pub fn connection_addresses() -> Option<(String, String)> {
    let v = std::env::var("SSH_CONNECTION").ok()?;
    let w: Vec<&str> = v.split_whitespace().collect();
    (w.len() == 4).then(|| (w[0].to_string(), w[2].to_string()))
}

/// What a publisher run on another host over SSH left: its results file
/// (JSON; empty when it wrote none) and how it ended.
#[derive(Debug)]
pub struct RemoteRun {
    /// The results file it wrote.
    pub json: String,
    /// Its exit code (None: ssh or the remote shell failed).
    pub code: Option<i32>,
    /// Its last line on stderr.
    pub last_line: String,
}

/// Runs `pubsubperf ARGS --json FILE -q --no-save` on `target` over SSH (a
/// sweep cell whose publisher is another host) and brings its results file
/// back. When ssh ends early (Ctrl-C here, the connection lost), the remote
/// publisher gets SIGTERM, writes what it measured and exits.
pub fn run_publisher(
    target: &Target,
    remote_path: &str,
    args: &[String],
) -> Result<RemoteRun, Fault> {
    let path = target.path.as_deref().unwrap_or(remote_path);
    let words: Vec<String> = std::iter::once(path.to_string())
        .chain(args.iter().cloned())
        .map(|w| shell_quote(&w))
        .collect();
    // The publisher runs in the background so that a watcher can stop it
    // when ssh's input ends; its results file is printed afterwards.
    let script = format!(
        "exec 3<&0; f=$(mktemp) || exit 1; {} --json \"$f\" -q --no-save </dev/null >/dev/null & p=$!; (cat <&3 >/dev/null; kill -TERM $p) >/dev/null 2>&1 & wait $p; rc=$?; cat \"$f\"; rm -f \"$f\"; exit $rc",
        words.join(" ")
    );
    let mut cmd = base_command(target);
    cmd.arg(format!("sh -c {}", shell_quote(&script)));
    let mut child = spawn(cmd, target)?;
    let keep = Arc::new(Mutex::new(Vec::new()));
    let err = keep_stderr(
        child.stderr.take().expect("piped"),
        target.display(),
        keep.clone(),
    );
    let stdin = child.stdin.take();
    let mut json = String::new();
    let read = child
        .stdout
        .take()
        .expect("piped")
        .read_to_string(&mut json);
    drop(stdin);
    let status = child.wait().map_err(|e| Fault::Peer(e.to_string()))?;
    let _ = err.join();
    read.map_err(|e| Fault::Peer(format!("{}: {e}", target.display())))?;
    let last_line = keep
        .lock()
        .ok()
        .and_then(|l| l.last().cloned())
        .unwrap_or_default();
    Ok(RemoteRun {
        json,
        code: status.code(),
        last_line,
    })
}
