//! The agent (`pubsubperf agent`): sessions one after another, each in a
//! process of its own that leaves nothing behind; a second publisher told
//! it is busy; the token; the limits; a killed publisher; SIGTERM; vendor
//! files only by name from its --qos-dir; attacks of strangers and of
//! publishers that hold the token. Runs the real binary on loopback. No
//! test asserts a latency or throughput figure.

use pubsubperf_core::result::TestKind;
use pubsubperf_harness::auth;
use pubsubperf_harness::channel::Ctl;
use pubsubperf_harness::protocol::Msg;
use pubsubperf_harness::spec::RunSpec;
use pubsubperf_testkit::process::{children, kill9, wait_gone_within};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pubsubperf"))
}

/// A running agent, its stderr lines, and where its token is.
struct Agent {
    child: Child,
    addr: String,
    lines: Receiver<String>,
    token_file: PathBuf,
    /// Started by `unshare` in a time namespace ([`Agent::start_ahead`]).
    ahead: bool,
    _dir: tempfile::TempDir,
}

impl Agent {
    /// `pubsubperf agent --listen 127.0.0.1:0` with a token file of its own
    /// and `extra` arguments; returns once it listens.
    fn start(extra: &[&str]) -> Agent {
        let dir = tempfile::tempdir().unwrap();
        let token_file = dir.path().join("agent.token");
        let mut cmd = bin();
        cmd.args(["agent", "--listen", "127.0.0.1:0", "--token-file"])
            .arg(&token_file)
            .args(extra);
        Agent::launch(cmd, token_file, dir)
    }

    /// [`Agent::start`] in a time namespace of its own (`unshare --time
    /// --monotonic SECONDS`): its `CLOCK_MONOTONIC` is `seconds` ahead of
    /// ours, a clock offset known exactly (root).
    fn start_ahead(seconds: u64) -> Agent {
        pubsubperf_testkit::require::root("a time namespace (unshare --time)");
        pubsubperf_testkit::require::command("unshare", "util-linux");
        let dir = tempfile::tempdir().unwrap();
        let token_file = dir.path().join("agent.token");
        let mut cmd = Command::new("unshare");
        cmd.args(["--time", "--fork", "--kill-child", "--monotonic"])
            .arg(seconds.to_string())
            .arg(env!("CARGO_BIN_EXE_pubsubperf"))
            .args(["agent", "--listen", "127.0.0.1:0", "--token-file"])
            .arg(&token_file);
        let mut agent = Agent::launch(cmd, token_file, dir);
        agent.ahead = true;
        agent
    }

    /// An agent whose token file is `path`, named by the environment.
    fn start_with_token(path: &Path) -> Agent {
        let mut cmd = bin();
        cmd.args(["agent", "--listen", "127.0.0.1:0"])
            .env("PUBSUBPERF_TOKEN_FILE", path);
        Agent::launch(cmd, path.to_path_buf(), tempfile::tempdir().unwrap())
    }

    fn launch(mut cmd: Command, token_file: PathBuf, dir: tempfile::TempDir) -> Agent {
        let mut child = cmd.stderr(Stdio::piped()).spawn().unwrap();
        let (tx, lines) = channel();
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for l in BufReader::new(err).lines().map_while(Result::ok) {
                eprintln!("agent: {l}");
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        let mut agent = Agent {
            child,
            addr: String::new(),
            lines,
            token_file,
            ahead: false,
            _dir: dir,
        };
        let line = agent.expect("listening on", Duration::from_secs(10));
        agent.addr = line.rsplit(' ').next().unwrap().to_string();
        agent
    }

    /// Waits for a line containing `needle`; fails after `within`.
    fn expect(&self, needle: &str, within: Duration) -> String {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) if l.contains(needle) => return l,
                Ok(_) => {}
                Err(_) => panic!("the agent did not print '{needle}' within {within:?}"),
            }
        }
    }

    /// The agent's process (under `unshare`, the one it started).
    fn pid(&self) -> u32 {
        if self.ahead
            && let Some(&agent) = children(self.child.id()).first()
        {
            return agent;
        }
        self.child.id()
    }

    fn child_alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// A publisher's command against this agent, presenting its token.
    fn publisher(&self, test: &str, binding: &str, extra: &[&str]) -> Command {
        let mut c = bin();
        c.args([test, "-b", binding, "--connect", &self.addr, "--token-file"])
            .arg(&self.token_file)
            .args(["--warmup", "0s", "-q", "--no-save"]);
        // Faults are told within seconds: a set-up half the default's
        // (10 s), unless the test gives its own.
        if !extra.contains(&"--connect-timeout") {
            c.args(["--connect-timeout", "5s"]);
        }
        c.args(extra);
        c
    }

    /// Checks that a short latency run over `binding` passes (`when` says
    /// at which point of the test).
    fn assert_serves(&self, binding: &str, when: &str) {
        let o = self
            .publisher("latency", binding, &["-n", "100"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{when}: {}", stderr(&o));
    }

    /// Waits until the agent has no session process.
    fn wait_idle(&self, within: Duration) {
        let start = Instant::now();
        while !children(self.pid()).is_empty() {
            assert!(
                start.elapsed() < within,
                "the agent's session process still runs after {within:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        // Its sessions, then the agent (and `unshare`, which started it).
        for c in children(self.pid()) {
            kill9(c);
        }
        kill9(self.pid());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Resident memory of `pid`, KiB.
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap()
}

/// Names in /dev/shm now.
fn shm_files() -> std::collections::BTreeSet<String> {
    std::fs::read_dir("/dev/shm")
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// The bindings compiled in that can reach a subscriber on another host.
fn remote_bindings() -> Vec<String> {
    let o = bin().args(["bindings", "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .filter(|b| b["capabilities"]["remote"] == true && b["available"].get("Ok").is_some())
        .map(|b| b["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn fifty_sessions_of_mixed_bindings_each_start_clean_and_leave_nothing() {
    let bindings = remote_bindings();
    for needed in ["udp", "tcp", "cyclonedds", "fastdds", "zenoh"] {
        assert!(
            bindings.iter().any(|b| b == needed),
            "prerequisite missing: binding {needed} (compiled in and available; scripts/setup.sh installs its libraries)"
        );
    }
    let agent = Agent::start(&[]);
    let shm_before = shm_files();
    let mut rss_first = 0;
    for i in 0..50 {
        let b = &bindings[i % bindings.len()];
        let test = if i % 2 == 0 { "latency" } else { "throughput" };
        let o = agent
            .publisher(
                test,
                b,
                // The default set-up time: a binding that opens slowly on a
                // loaded machine (Connext's participant, several seconds
                // while other tests run) is not what this test is about.
                &[
                    "-s",
                    "256",
                    "-n",
                    "200",
                    "--rate",
                    "20000",
                    "--connect-timeout",
                    "10s",
                ],
            )
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "session {} ({test} {b}): {}",
            i + 1,
            stderr(&o)
        );
        agent.expect(&format!("session {} ended", i + 1), Duration::from_secs(10));
        agent.wait_idle(Duration::from_secs(5));
        let left: Vec<_> = shm_files().difference(&shm_before).cloned().collect();
        assert!(
            left.is_empty(),
            "session {} ({b}) left in /dev/shm: {left:?}",
            i + 1
        );
        let rss = rss_kib(agent.pid());
        if i == 0 {
            rss_first = rss;
        }
        assert!(
            rss <= rss_first + 1024,
            "the agent grew from {rss_first} KiB to {rss} KiB by session {}",
            i + 1
        );
    }
}

#[test]
fn a_second_publisher_is_told_the_agent_is_busy() {
    let agent = Agent::start(&[]);
    let mut first = agent
        .publisher(
            "throughput",
            "udp",
            &["-s", "64", "--duration", "4s", "--rate", "1000"],
        )
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    agent.expect("session 1 from", Duration::from_secs(10));
    let o = agent
        .publisher("latency", "udp", &["-n", "10"])
        .output()
        .unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("busy, running session 1 from 127.0.0.1:"), "{e}");
    agent.expect("refused 127.0.0.1:", Duration::from_secs(5));
    let status = first.wait().unwrap();
    let mut err = String::new();
    first
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(status.success(), "the first session was disturbed: {err}");
}

/// A short latency run against `agent` that presents the token in `file`.
fn latency_with_token_file(agent: &Agent, file: &Path) -> Output {
    bin()
        .args(["latency", "-n", "10", "--no-save", "--connect", &agent.addr])
        .arg("--token-file")
        .arg(file)
        .output()
        .unwrap()
}

#[test]
fn a_wrong_or_missing_token_is_refused_and_logged() {
    let agent = Agent::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let wrong = dir.path().join("wrong.token");
    std::fs::write(&wrong, "0123456789abcdef\n").unwrap();
    std::fs::set_permissions(&wrong, std::fs::Permissions::from_mode(0o600)).unwrap();
    let o = latency_with_token_file(&agent, &wrong);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("wrong token"), "{}", stderr(&o));
    agent.expect("wrong token", Duration::from_secs(5));

    // No token file at the default place: no token is presented.
    let o = bin()
        .args(["latency", "-n", "10", "--no-save", "--connect", &agent.addr])
        .env("PUBSUBPERF_TOKEN_FILE", dir.path().join("absent"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("refused: no token"), "{}", stderr(&o));
    agent.expect("no token", Duration::from_secs(5));

    // A token file others can read is refused before connecting.
    std::fs::set_permissions(&wrong, std::fs::Permissions::from_mode(0o644)).unwrap();
    let o = latency_with_token_file(&agent, &wrong);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("chmod 600"), "{}", stderr(&o));

    // The agent made its own token file private.
    let mode = std::fs::metadata(&agent.token_file)
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

/// Speaks the control protocol by hand: a frame is a little-endian u32
/// length and a JSON message.
fn hello_by_hand(addr: &str, hello: serde_json::Value) -> serde_json::Value {
    hello_on(std::net::TcpStream::connect(addr).unwrap(), hello)
}

/// [`hello_by_hand`] on a connection of the caller's; Null when the agent
/// closed it without an answer.
fn hello_on(mut s: std::net::TcpStream, hello: serde_json::Value) -> serde_json::Value {
    let body = hello.to_string();
    s.write_all(&(body.len() as u32).to_le_bytes()).unwrap();
    s.write_all(body.as_bytes()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut len = [0u8; 4];
    if s.read_exact(&mut len).is_err() {
        return serde_json::Value::Null;
    }
    let mut reply = vec![0u8; u32::from_le_bytes(len) as usize];
    s.read_exact(&mut reply).unwrap();
    serde_json::from_slice(&reply).unwrap()
}

/// A control connection to `agent` whose handshake, as pubsubperf
/// `version` with the agent's token, is done.
fn greeted(agent: &Agent, version: &str) -> Ctl {
    let token = std::fs::read_to_string(&agent.token_file).unwrap();
    let ctl = Ctl::plain(std::net::TcpStream::connect(&agent.addr).unwrap());
    let deadline = Instant::now() + Duration::from_secs(5);
    auth::greet_as(&ctl, "agent", Some(token.trim()), version, deadline).unwrap();
    ctl
}

#[test]
fn another_version_is_refused_naming_both() {
    let agent = Agent::start(&[]);
    let ctl = greeted(&agent, "0.0.1");
    match ctl.recv(Some(Duration::from_secs(5))).unwrap() {
        Msg::Error { message: m } => assert!(
            m.contains("0.0.1") && m.contains(env!("CARGO_PKG_VERSION")),
            "{m}"
        ),
        other => panic!("{other:?}"),
    }
    // The token is proven before the version is looked at: a stranger
    // learns nothing.
    let reply = hello_by_hand(
        &agent.addr,
        serde_json::json!({"type": "hello", "version": "0.0.1", "protocol": 3}),
    );
    let m = reply["message"].as_str().unwrap_or_default();
    assert!(m.contains("no token") && !m.contains("0.0.1"), "{m}");
    // A publisher of protocol 2 sent its token in the Hello: it is ignored.
    let token = std::fs::read_to_string(&agent.token_file).unwrap();
    let reply = hello_by_hand(
        &agent.addr,
        serde_json::json!({"type": "hello", "version": "0.0.1", "protocol": 2, "token": token.trim()}),
    );
    let m = reply["message"].as_str().unwrap_or_default();
    assert!(m.contains("no token"), "{m}");
}

/// A proxy between publishers and `to` that records what publishers send;
/// returns its address and the record.
fn recording_proxy(to: &str) -> (String, std::sync::Arc<std::sync::Mutex<Vec<u8>>>) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    let record = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let (to, rec) = (to.to_string(), record.clone());
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(mut from_pub) = c else { return };
            let mut to_agent = std::net::TcpStream::connect(&to).unwrap();
            let (mut a, mut b) = (to_agent.try_clone().unwrap(), from_pub.try_clone().unwrap());
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut a, &mut b);
                let _ = b.shutdown(std::net::Shutdown::Both);
            });
            let rec = rec.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n @ 1..) = from_pub.read(&mut buf) {
                    rec.lock().unwrap().extend_from_slice(&buf[..n]);
                    if to_agent.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
                let _ = to_agent.shutdown(std::net::Shutdown::Both);
            });
        }
    });
    (addr, record)
}

#[test]
fn the_token_never_crosses_the_wire_and_a_recorded_session_does_not_replay() {
    let agent = Agent::start(&[]);
    let token = std::fs::read_to_string(&agent.token_file).unwrap();
    let (proxy, record) = recording_proxy(&agent.addr);
    let o = bin()
        .args([
            "latency",
            "-b",
            "udp",
            "-n",
            "100",
            "--warmup",
            "0s",
            "-q",
            "--no-save",
        ])
        .args(["--connect", &proxy, "--token-file"])
        .arg(&agent.token_file)
        .output()
        .unwrap();
    assert!(o.status.success(), "through the proxy: {}", stderr(&o));
    agent.expect("session 1 ended", Duration::from_secs(10));
    let sent = record.lock().unwrap().clone();
    let text = String::from_utf8_lossy(&sent);
    assert!(
        text.contains("\"type\":\"setup\""),
        "the record holds the session"
    );
    assert!(
        !text.contains(token.trim()) && !text.contains(&token.trim()[..16]),
        "the token crossed the wire"
    );
    // The same bytes again, from a new connection: the agent's fresh
    // nonce makes the recorded proof wrong, and no session starts.
    let mut s = std::net::TcpStream::connect(&agent.addr).unwrap();
    s.write_all(&sent).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut reply = Vec::new();
    let _ = s.read_to_end(&mut reply);
    let reply = String::from_utf8_lossy(&reply);
    assert!(reply.contains("wrong token"), "{reply}");
    assert!(!reply.contains("welcome"), "{reply}");
    agent.expect("refused 127.0.0.1:", Duration::from_secs(5));
    assert!(
        children(agent.pid()).is_empty(),
        "a replayed session started"
    );
}

#[test]
fn a_fake_agent_learns_nothing_and_is_found_out() {
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("agent.token");
    std::fs::write(&token_file, format!("{}\n", "ab".repeat(32))).unwrap();
    std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    let fake = std::thread::spawn(move || {
        let (s, _) = l.accept().unwrap();
        let ctl = Ctl::stranger(s);
        let hello = ctl.recv(Some(Duration::from_secs(10))).unwrap();
        ctl.send(&Msg::Challenge {
            nonce: "cd".repeat(32),
            proof: "ef".repeat(32),
        })
        .unwrap();
        let after = ctl.recv(Some(Duration::from_secs(10)));
        (hello, after)
    });
    let o = bin()
        .args([
            "latency",
            "-b",
            "udp",
            "-n",
            "10",
            "--no-save",
            "--connect",
            &addr,
        ])
        .arg("--token-file")
        .arg(&token_file)
        .output()
        .unwrap();
    let (hello, after) = fake.join().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("wrong token: the agent's proof does not match"),
        "{}",
        stderr(&o)
    );
    assert!(
        matches!(hello, Msg::Hello { nonce: Some(_), .. }),
        "{hello:?}"
    );
    // The publisher said why and sent no proof of its own.
    assert!(matches!(after, Ok(Msg::Error { .. })), "{after:?}");
}

/// A TCP connection to `to` from the loopback address `from` (127.0.0.0/8
/// is all this host's).
fn connect_from(from: &str, to: &str) -> std::net::TcpStream {
    try_connect_from(from, to).unwrap_or_else(|e| panic!("connect from {from} to {to}: {e}"))
}

/// [`connect_from`] that says why it could not (within 2 s).
fn try_connect_from(from: &str, to: &str) -> std::io::Result<std::net::TcpStream> {
    use socket2::{Domain, Socket, Type};
    let s = Socket::new(Domain::IPV4, Type::STREAM, None)?;
    let src: std::net::SocketAddr = format!("{from}:0").parse().unwrap();
    s.bind(&src.into())?;
    let dst: std::net::SocketAddr = to.parse().unwrap();
    s.connect_timeout(&dst.into(), Duration::from_secs(2))?;
    Ok(s.into())
}

/// Threads of `pid`.
fn threads(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .count()
}

/// Sets the agent's descriptor limit before it starts.
fn with_nofile(cmd: &mut Command, n: u64) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit(2) between fork and exec is async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            let l = libc::rlimit {
                rlim_cur: n,
                rlim_max: n,
            };
            libc::setrlimit(libc::RLIMIT_NOFILE, &l);
            Ok(())
        });
    }
}

#[test]
fn strangers_cannot_exhaust_the_agent_or_hold_it_up() {
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("agent.token");
    let mut cmd = bin();
    cmd.args(["agent", "--listen", "127.0.0.1:0", "--token-file"])
        .arg(&token_file);
    with_nofile(&mut cmd, 30);
    let mut agent = Agent::launch(cmd, token_file, dir);
    let (rss0, threads0) = (rss_kib(agent.pid()), threads(agent.pid()));
    // 90 idle connections from 30 addresses, more than the descriptor
    // limit: some wait for their handshake (within the caps), the others
    // are closed at once or wait in the backlog while accept fails.
    let mut idle = Vec::new();
    for i in 0..90 {
        idle.push(connect_from(
            &format!("127.0.1.{}", i % 30 + 1),
            &agent.addr,
        ));
    }
    // Announcing a huge message reserves nothing.
    for s in idle.iter_mut().take(10) {
        let _ = s.write_all(&(16u32 << 20).to_le_bytes());
    }
    std::thread::sleep(Duration::from_secs(1));
    assert!(
        agent.child_alive(),
        "the agent exited under 90 idle connections"
    );
    let (rss, t) = (rss_kib(agent.pid()), threads(agent.pid()));
    eprintln!("with 90 strangers: RSS {rss0} -> {rss} KiB, threads {threads0} -> {t}");
    assert!(rss < rss0 + 16 * 1024, "RSS {rss0} -> {rss} KiB");
    assert!(t <= threads0 + 32, "threads {threads0} -> {t}");
    // The strangers go. Those still in the backlog are taken once the
    // agent's back-off (at most 2 s) is over, each seen closed at once,
    // and a publisher is served again.
    drop(idle);
    std::thread::sleep(Duration::from_secs(3));
    agent.assert_serves("udp", "once the strangers left");
    // One byte every 2 s does not keep a connection past the handshake's
    // one deadline (10 s from its accept, which the publisher just served
    // shows is not held up): the agent closes it, it does not wait for
    // more.
    let mut slow = connect_from("127.0.2.1", &agent.addr);
    slow.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    // A frame of 200 bytes is announced, then its body comes a byte at a time.
    slow.write_all(&200u32.to_le_bytes()).unwrap();
    let start = Instant::now();
    let closed = loop {
        let _ = slow.write_all(b"{");
        let mut b = [0u8; 64];
        match slow.read(&mut b) {
            Ok(_) => break start.elapsed(),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(_) => break start.elapsed(),
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "still open after 20 s"
        );
    };
    eprintln!("the trickling stranger was closed after {closed:?}");
    assert!(
        (Duration::from_secs(9)..Duration::from_secs(14)).contains(&closed),
        "a trickling stranger was closed after {closed:?}, not at the 10 s deadline"
    );
    // The agent serves a publisher as before.
    agent.assert_serves("udp", "after the strangers");
    assert!(agent.child_alive());
}

#[test]
fn strangers_waiting_on_other_addresses_do_not_hold_up_a_publisher() {
    let agent = Agent::start(&[]);
    // 28 = 7 addresses at their cap of 4, under the total cap of 64.
    let idle: Vec<_> = (0..28)
        .map(|i| connect_from(&format!("127.0.3.{}", i % 7 + 1), &agent.addr))
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    agent.assert_serves("udp", "beside 28 idle strangers");
    drop(idle);
}

/// Strangers who hold `per_address` idle connections open from each of
/// their addresses and open a new one whenever the agent closes one, each
/// address on a thread of its own, until [`Flood::stop`] (or drop).
struct Flood {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    threads: Vec<std::thread::JoinHandle<u64>>,
}

impl Flood {
    fn start(addresses: &[String], per_address: usize, to: &str) -> Flood {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let threads = addresses
            .iter()
            .map(|from| {
                let (from, to, stop) = (from.clone(), to.to_string(), stop.clone());
                std::thread::spawn(move || {
                    let mut held: Vec<Option<std::net::TcpStream>> =
                        (0..per_address).map(|_| None).collect();
                    let mut opened = 0u64;
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        for c in held.iter_mut() {
                            if c.as_ref().is_none_or(closed_by_agent) {
                                *c = try_connect_from(&from, &to).ok();
                                opened += u64::from(c.is_some());
                            }
                        }
                        std::thread::sleep(Duration::from_millis(100));
                    }
                    opened
                })
            })
            .collect();
        Flood { stop, threads }
    }

    /// Stops the strangers, closes their connections; how many they opened.
    fn stop(mut self) -> u64 {
        self.end()
    }

    fn end(&mut self) -> u64 {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.threads.drain(..).map(|t| t.join().unwrap_or(0)).sum()
    }
}

impl Drop for Flood {
    fn drop(&mut self) {
        self.end();
    }
}

/// True when the agent closed `s` or said something on it (its reason
/// for closing it): an idle stranger opens another.
fn closed_by_agent(s: &std::net::TcpStream) -> bool {
    let _ = s.set_nonblocking(true);
    match s.peek(&mut [0u8; 1]) {
        Err(e) => e.kind() != std::io::ErrorKind::WouldBlock,
        Ok(_) => true,
    }
}

/// The attack of issue 65 made larger: idle strangers on 20 addresses, each
/// at its cap of 4 and reopening what the agent closes, 80 together, more
/// than the 64 that may wait at once. Every publisher is admitted: it
/// takes the place of a stranger's oldest connection.
#[test]
fn publishers_are_admitted_while_80_idle_strangers_keep_reconnecting() {
    let agent = Agent::start(&[]);
    let addresses: Vec<String> = (1..=20).map(|i| format!("127.0.6.{i}")).collect();
    let flood = Flood::start(&addresses, 4, &agent.addr);
    std::thread::sleep(Duration::from_secs(2));
    for i in 0..5 {
        let started = Instant::now();
        let o = agent
            .publisher("latency", "udp", &["-n", "100"])
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "publisher {i} under the flood: {}",
            stderr(&o)
        );
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "publisher {i} took {:?} under the flood",
            started.elapsed()
        );
    }
    // The strangers had filled the door: the agent closed theirs to make
    // room.
    agent.expect(
        "agent full of unauthenticated connections",
        Duration::from_secs(5),
    );
    let opened = flood.stop();
    assert!(
        opened > 80,
        "the strangers opened {opened} connections, no more than their first: the door never closed one"
    );
}

/// A stranger's connection closed to make room is told why.
#[test]
fn the_connection_closed_to_make_room_is_told_the_agent_is_full() {
    let agent = Agent::start(&[]);
    let oldest = Ctl::plain(connect_from("127.0.7.1", &agent.addr));
    std::thread::sleep(Duration::from_millis(300));
    // 64 more, one per address: the door is full, and the oldest of the
    // addresses with the most waiting (all have one) is the first one.
    let others: Vec<_> = (1..=64)
        .map(|i| connect_from(&format!("127.0.8.{i}"), &agent.addr))
        .collect();
    match oldest.recv(Some(Duration::from_secs(5))) {
        Ok(Msg::Error { message }) => assert!(
            message.starts_with(
                "the agent turned this connection away: agent full of unauthenticated connections"
            ),
            "{message}"
        ),
        other => panic!("{other:?}"),
    }
    agent.expect("closed to make room", Duration::from_secs(5));
    drop(others);
}

/// A publisher whose address already has 4 connections waiting says the
/// agent is full, not that the connection closed.
#[test]
fn a_publisher_turned_away_at_a_full_door_says_so() {
    let agent = Agent::start(&[]);
    let idle: Vec<_> = (0..4)
        .map(|_| connect_from("127.0.0.1", &agent.addr))
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let o = agent
        .publisher("latency", "udp", &["-n", "100"])
        .output()
        .unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("agent full of unauthenticated connections"),
        "{e}"
    );
    assert!(!e.contains("closed the control connection"), "{e}");
    drop(idle);
}

/// A handshake from `from` with a made-up proof; the agent's answer.
fn wrong_proof_from(from: &str, agent: &Agent) -> Result<Msg, String> {
    let ctl = Ctl::plain(connect_from(from, &agent.addr));
    ctl.send(&Msg::Hello {
        version: env!("CARGO_PKG_VERSION").into(),
        protocol: pubsubperf_harness::protocol::PROTOCOL,
        nonce: Some("12".repeat(32)),
    })
    .map_err(|e| e.to_string())?;
    match ctl.recv(Some(Duration::from_secs(5))) {
        Ok(Msg::Challenge { .. }) => {}
        other => return Err(format!("{other:?}")),
    }
    ctl.send(&Msg::Proof {
        proof: "34".repeat(32),
    })
    .map_err(|e| e.to_string())?;
    ctl.recv(Some(Duration::from_secs(5)))
        .map_err(|e| e.to_string())
}

#[test]
fn wrong_proofs_are_turned_away_and_their_log_lines_limited() {
    let agent = Agent::start(&[]);
    for i in 0..5 {
        match wrong_proof_from("127.0.4.1", &agent) {
            Ok(Msg::Error { message }) => assert!(message.starts_with("wrong token"), "{message}"),
            other => panic!("attempt {i}: {other:?}"),
        }
    }
    // The sixth from that address is told why and closed before its
    // challenge (once the agent has counted the fifth).
    std::thread::sleep(Duration::from_millis(200));
    // (wrong_proof_from returns what came instead of the challenge as its
    // error.)
    let e = wrong_proof_from("127.0.4.1", &agent).unwrap_err();
    assert!(
        e.contains("the agent turned this connection away: closed: 5 failed proofs"),
        "{e}"
    );
    agent.expect("failed proofs from this address", Duration::from_secs(5));
    // Another address is not affected, and the log shows at most ten
    // refusals in ten seconds.
    let mut lines = 0;
    for i in 0..20 {
        let _ = hello_on(
            connect_from(&format!("127.0.5.{}", i % 4 + 1), &agent.addr),
            serde_json::json!({"type": "x\u{1b}[31m\nforged", "version": "1", "protocol": 3}),
        );
    }
    std::thread::sleep(Duration::from_millis(300));
    while let Ok(l) = agent.lines.try_recv() {
        assert!(!l.contains('\u{1b}'), "an escape reached the log: {l:?}");
        if l.contains("refused") {
            lines += 1;
        }
    }
    assert!(lines <= 10, "{lines} refusal lines");
    agent.assert_serves("udp", "from another address");
}

#[test]
fn a_session_idle_after_its_hello_is_ended() {
    let agent = Agent::start(&["--idle-timeout", "1s"]);
    let ctl = greeted(&agent, env!("CARGO_PKG_VERSION"));
    assert!(matches!(
        ctl.recv(Some(Duration::from_secs(10))),
        Ok(Msg::Welcome { .. })
    ));
    match ctl.recv(Some(Duration::from_secs(10))) {
        Ok(Msg::Error { message }) => assert!(message.contains("--idle-timeout"), "{message}"),
        other => panic!("{other:?}"),
    }
    agent.expect("session 1 ended", Duration::from_secs(5));
}

/// Clock probes are answered but do not hold a session past its idle
/// timeout: one every 300 ms for longer than the timeout still ends it.
#[test]
fn clock_probes_do_not_hold_an_idle_session() {
    let agent = Agent::start(&["--idle-timeout", "1s"]);
    let ctl = greeted(&agent, env!("CARGO_PKG_VERSION"));
    assert!(matches!(
        ctl.recv(Some(Duration::from_secs(10))),
        Ok(Msg::Welcome { .. })
    ));
    let started = std::time::Instant::now();
    let ended = loop {
        assert!(
            started.elapsed() < Duration::from_secs(8),
            "probes held the session 8 s past a 1 s idle timeout"
        );
        if ctl.send(&Msg::ClockProbe { t1: 1 }).is_err() {
            break None;
        }
        match ctl.recv(Some(Duration::from_millis(300))) {
            Ok(Msg::ClockEcho { .. }) => {}
            Ok(Msg::Error { message }) => break Some(message),
            Err(_) => {}
            Ok(other) => panic!("{other:?}"),
        }
        std::thread::sleep(Duration::from_millis(300));
    };
    if let Some(m) = ended {
        assert!(m.contains("--idle-timeout"), "{m}");
    }
    agent.expect("session 1 ended", Duration::from_secs(5));
}

#[test]
fn runs_beyond_the_agents_limits_are_refused() {
    let agent = Agent::start(&["--max-size", "1KiB", "--max-duration", "2s"]);
    for (args, needle) in [
        (&["-s", "4KiB", "-n", "10"][..], "--max-size"),
        (&["--duration", "5s"][..], "--max-duration"),
        (
            &["--duration", "1s", "--rt-priority", "10"][..],
            "--allow-rt-priority",
        ),
        (&["--duration", "1s", "--mlock"][..], "--allow-mlock"),
    ] {
        let o = agent.publisher("latency", "udp", args).output().unwrap();
        assert!(!o.status.success(), "{args:?} ran");
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
        agent.wait_idle(Duration::from_secs(5));
    }
    let o = agent
        .publisher("latency", "udp", &["-s", "1KiB", "--duration", "1s"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn a_publisher_killed_mid_session_frees_the_agent_within_seconds() {
    let agent = Agent::start(&[]);
    let mut p = agent
        .publisher(
            "throughput",
            "udp",
            &["--duration", "30s", "--rate", "5000"],
        )
        .spawn()
        .unwrap();
    agent.expect("session 1 from", Duration::from_secs(10));
    std::thread::sleep(Duration::from_secs(1));
    p.kill().unwrap();
    let _ = p.wait();
    let killed = Instant::now();
    agent.expect("session 1 ended", Duration::from_secs(5));
    eprintln!(
        "session ended {:.2} s after the kill",
        killed.elapsed().as_secs_f64()
    );
    agent.wait_idle(Duration::from_secs(5));
    agent.assert_serves("tcp", "the next session");
}

#[test]
fn sigterm_ends_the_agent_and_its_session_cleanly() {
    let mut agent = Agent::start(&[]);
    let mut p = agent
        .publisher(
            "throughput",
            "udp",
            &["--duration", "30s", "--rate", "5000"],
        )
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    agent.expect("session 1 from", Duration::from_secs(10));
    let session: Vec<u32> = children(agent.pid());
    assert_eq!(session.len(), 1, "one session process: {session:?}");
    // SAFETY: a signal to the agent this test started.
    unsafe { libc::kill(agent.pid() as i32, libc::SIGTERM) };
    let start = Instant::now();
    let status = loop {
        if let Some(s) = agent.child.try_wait().unwrap() {
            break s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(8),
            "the agent still runs 8 s after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "agent exit: {status}");
    wait_gone_within(session[0], "the session process", Duration::from_secs(1));
    // The publisher is told its subscriber went away.
    let status = p.wait().unwrap();
    assert_eq!(status.code(), Some(1));
}

#[test]
fn an_insecure_agent_on_a_network_address_needs_a_second_flag() {
    let o = bin()
        .args(["agent", "--listen", "0.0.0.0:0", "--insecure"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--insecure-network"), "{}", stderr(&o));
    let mut c = bin()
        .args([
            "agent",
            "--listen",
            "0.0.0.0:0",
            "--insecure",
            "--insecure-network",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut r = BufReader::new(c.stderr.take().unwrap());
    let mut first = String::new();
    r.read_line(&mut first).unwrap();
    let _ = c.kill();
    let _ = c.wait();
    assert!(first.contains("warning: --insecure"), "{first}");
}

#[test]
fn the_token_file_is_created_private_and_reused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub").join("agent.token");
    for _ in 0..2 {
        let a = Agent::start_with_token(&path);
        drop(a);
    }
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let dmode = std::fs::metadata(path.parent().unwrap())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(dmode & 0o777, 0o700);
    let t = std::fs::read_to_string(&path).unwrap();
    assert_eq!(t.trim().len(), 64, "{t}");
}

/// A hand-written token of fewer than 128 bits is refused by the agent,
/// naming the fix; `agent --new-token` makes one of 256 bits, private, and
/// never replaces a token.
#[test]
fn a_short_token_is_refused_and_new_token_makes_a_strong_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agent.token");
    std::fs::write(&path, "hunter2\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let o = bin()
        .args(["agent", "--listen", "127.0.0.1:0", "--token-file"])
        .arg(&path)
        .output()
        .unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains(&format!("token file {}: the token has ", path.display()))
            && e.contains("at least 128 are needed")
            && e.contains("pubsubperf agent --new-token")
            && e.lines().count() == 1,
        "{e}"
    );
    let new_token = || {
        bin()
            .args(["agent", "--new-token", "--token-file"])
            .arg(&path)
            .output()
            .unwrap()
    };
    let o = new_token();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("rm {}", path.display())),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "hunter2\n");
    std::fs::remove_file(&path).unwrap();
    let o = new_token();
    assert!(o.status.success(), "{}", stderr(&o));
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let t = std::fs::read_to_string(&path).unwrap();
    assert!(
        t.trim().len() == 64 && t.trim().chars().all(|c| c.is_ascii_hexdigit()),
        "{t}"
    );
    // The agent takes it.
    drop(Agent::start_with_token(&path));
}

/// The session process of an agent (it has one at a time).
fn session_of(agent: &Agent) -> u32 {
    let start = Instant::now();
    loop {
        if let Some(&pid) = children(agent.pid()).first() {
            return pid;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the agent started no session process"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Every run of at least `n` hex digits in `text`.
fn hex_runs(text: &str, n: usize) -> Vec<&str> {
    text.split(|c: char| !c.is_ascii_hexdigit())
        .filter(|r| r.len() >= n)
        .collect()
}

/// The session's keys reach its process on a pipe it closes once read:
/// neither its environment nor its command line (both readable in /proc)
/// holds them or the token, and the keyed session works.
#[test]
fn the_session_keys_are_in_neither_the_environment_nor_the_command_line() {
    let agent = Agent::start(&[]);
    let ctl = welcomed(&agent);
    let pid = session_of(&agent);
    let proc_text = |what: &str| {
        let b = std::fs::read(format!("/proc/{pid}/{what}")).unwrap();
        String::from_utf8_lossy(&b).replace('\0', " ")
    };
    let (environ, cmdline) = (proc_text("environ"), proc_text("cmdline"));
    let own = String::from_utf8_lossy(&std::fs::read("/proc/self/environ").unwrap()).into_owned();
    let token = std::fs::read_to_string(&agent.token_file).unwrap();
    for (what, text) in [("environment", &environ), ("command line", &cmdline)] {
        assert!(
            !text.contains("PUBSUBPERF_SESSION_KEYS") && !text.contains(token.trim()),
            "the session's {what} holds its keys or the token: {text}"
        );
        // A key is 64 hex digits; the test's own environment is no key.
        for run in hex_runs(text, 64) {
            assert!(
                own.contains(run),
                "key material in the session's {what}: {run}"
            );
        }
    }
    // The pipe it read them from is closed.
    let fd = cmdline
        .split(' ')
        .skip_while(|a| *a != "--session-keys-fd")
        .nth(1)
        .unwrap_or_else(|| panic!("no --session-keys-fd: {cmdline}"));
    let link = std::fs::read_link(format!("/proc/{pid}/fd/{fd}"));
    assert!(
        !link
            .as_ref()
            .is_ok_and(|l| l.to_string_lossy().starts_with("pipe:")),
        "the keys' pipe is still open: {link:?}"
    );
    // The keys arrived: the session answers a keyed probe.
    ctl.send(&Msg::ClockProbe { t1: 1 }).unwrap();
    assert!(matches!(
        ctl.recv(Some(Duration::from_secs(10))),
        Ok(Msg::ClockEcho { t1: 1, .. })
    ));
}

/// After the handshake, a message of an unknown type, whose name is ESC,
/// BEL, a newline and a forged agent line, reaches the agent's log escaped:
/// no control character, no line of its own.
#[test]
fn an_unknown_message_after_the_handshake_is_logged_escaped() {
    let agent = Agent::start(&[]);
    let ctl = welcomed(&agent);
    let forged = "\u{1b}[2J\u{7}\npubsubperf agent: session 99 from 6.6.6.6:1";
    let body = serde_json::json!({ "type": forged }).to_string();
    ctl.send_body(body.as_bytes()).unwrap();
    let mut log = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !log
        .last()
        .is_some_and(|l: &String| l.contains("session 1 ended"))
    {
        let left = deadline.saturating_duration_since(Instant::now());
        match agent.lines.recv_timeout(left) {
            Ok(l) => log.push(l),
            Err(_) => panic!("the session did not end: {log:?}"),
        }
    }
    for l in &log {
        assert!(
            !l.contains(['\u{1b}', '\u{7}']) && !l.starts_with("pubsubperf agent: session 99"),
            "a raw or forged line in the agent's log: {l:?}"
        );
    }
    assert!(
        log.iter()
            .any(|l| l.contains("\\u{1b}[2J\\u{7}\\npubsubperf agent: session 99 from 6.6.6.6:1")),
        "the unknown type is not in the log, escaped: {log:?}"
    );
}

/// A session greeted with this version's Hello, past its Welcome.
fn welcomed(agent: &Agent) -> Ctl {
    let ctl = greeted(agent, env!("CARGO_PKG_VERSION"));
    assert!(matches!(
        ctl.recv(Some(Duration::from_secs(10))),
        Ok(Msg::Welcome { .. })
    ));
    ctl
}

/// A welcomed session with `spec` set up.
fn set_up(agent: &Agent, spec: RunSpec) -> Ctl {
    let ctl = welcomed(agent);
    ctl.send(&Msg::Setup {
        spec: Box::new(spec),
    })
    .unwrap();
    ctl
}

/// Takes the subscriber's Locators and tells it where the echoes go.
fn tell_echo(ctl: &Ctl, echo: &str) {
    assert!(matches!(
        ctl.recv(Some(Duration::from_secs(10))),
        Ok(Msg::Locators { .. })
    ));
    ctl.send(&Msg::Peer { echo: echo.into() }).unwrap();
}

/// The next message, which must be an Error; its text.
fn error_of(ctl: &Ctl) -> String {
    match ctl.recv(Some(Duration::from_secs(10))) {
        Ok(Msg::Error { message }) => message,
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
fn setups_beyond_the_bounds_or_for_one_host_are_refused_before_anything_is_made() {
    let agent = Agent::start(&[]);
    let mut huge = RunSpec::for_test("h1", TestKind::Throughput);
    huge.endpoint.max_sample_size = 1 << 30;
    let mut shm = RunSpec::for_test("h2", TestKind::Latency);
    (shm.binding, shm.peer_binding) = ("shm".into(), "shm".into());
    let mut flood = RunSpec::for_test("h3", TestKind::Throughput);
    (flood.count, flood.rate, flood.duration_ns) = (1_000_000_000_000, 1e18, 0);
    for (spec, needle) in [
        (huge, "exceeds its --max-size 67108864"),
        (shm, "--binding shm: it works within one host only"),
        (flood, "--rate"),
    ] {
        let rss = rss_kib(agent.pid());
        let ctl = set_up(&agent, spec);
        let e = error_of(&ctl);
        assert!(e.contains(needle), "{needle}: {e}");
        drop(ctl);
        agent.wait_idle(Duration::from_secs(5));
        assert!(rss_kib(agent.pid()) < rss + 4096);
    }
}

/// Issue 65: counts the command line bounds (1 to 64) are bounded for a
/// token holder's Setup too, each refused naming its field and the bound,
/// and the session goes on.
#[test]
fn counts_of_a_trillion_in_a_setup_are_refused_naming_the_field_and_bound() {
    let agent = Agent::start(&[]);
    let trillion = 1_000_000_000_000usize;
    type Set = fn(&mut RunSpec, usize);
    let sets: [(&str, Set); 3] = [
        ("endpoint.subscribers", |s, n| s.endpoint.subscribers = n),
        ("endpoint.publishers", |s, n| s.endpoint.publishers = n),
        ("topics", |s, n| s.topics = n),
    ];
    for (field, set) in sets {
        let mut spec = RunSpec::for_test("t1", TestKind::Throughput);
        set(&mut spec, trillion);
        let ctl = set_up(&agent, spec);
        let e = error_of(&ctl);
        assert_eq!(
            e,
            format!("refused by the agent: {field} {trillion} exceeds the agent's bound 64")
        );
        // Still served: a clock probe is answered.
        ctl.send(&Msg::ClockProbe { t1: 1 }).unwrap();
        assert!(
            matches!(
                ctl.recv(Some(Duration::from_secs(10))),
                Ok(Msg::ClockEcho { t1: 1, .. })
            ),
            "{field}"
        );
        drop(ctl);
        agent.wait_idle(Duration::from_secs(5));
    }
}

#[test]
fn echoes_go_only_to_the_publishers_address() {
    let agent = Agent::start(&[]);
    let ctl = set_up(&agent, RunSpec::for_test("d1", TestKind::Latency));
    tell_echo(&ctl, "192.0.2.77:9");
    let e = error_of(&ctl);
    assert!(
        e.contains("192.0.2.77:9 is not the publisher's address (127.0.0.1)"),
        "{e}"
    );
}

/// A UDP socket on `port` of every address, joined to `group` on
/// loopback: it sees what a session sends to the group.
fn sniffer(group: &str, port: u16) -> std::net::UdpSocket {
    use socket2::{Domain, Socket, Type};
    let s = Socket::new(Domain::IPV4, Type::DGRAM, None).unwrap();
    s.set_reuse_address(true).unwrap();
    s.bind(&std::net::SocketAddr::from(([0, 0, 0, 0], port)).into())
        .unwrap();
    s.join_multicast_v4(&group.parse().unwrap(), &std::net::Ipv4Addr::LOCALHOST)
        .unwrap();
    let u: std::net::UdpSocket = s.into();
    u.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    u
}

/// Datagrams `s` receives within `within`.
fn datagrams(s: &std::net::UdpSocket, within: Duration) -> usize {
    let (start, mut n, mut buf) = (Instant::now(), 0, vec![0u8; 70_000]);
    while start.elapsed() < within {
        if s.recv(&mut buf).is_ok() {
            n += 1;
        }
    }
    n
}

/// A greeted session's Welcome, then a PubSetup of `spec` writing to `data`.
fn pub_set_up(agent: &Agent, spec: RunSpec, data: &str) -> Ctl {
    let ctl = welcomed(agent);
    ctl.send(&Msg::PubSetup {
        spec: Box::new(spec),
        publisher: 1,
        data: vec![data.into()],
    })
    .unwrap();
    ctl
}

/// A udp multicast run to `group` at `rate` samples/s of `size` bytes.
fn multicast_run(group: &str, ttl: Option<u8>, rate: f64, size: usize) -> RunSpec {
    let mut s = RunSpec::for_test("mc1", TestKind::Throughput);
    (s.binding, s.peer_binding) = ("udp".into(), "udp".into());
    (s.size, s.endpoint.max_sample_size, s.rate) = (size, size, rate);
    s.endpoint.multicast = true;
    s.endpoint.multicast_ttl = ttl;
    s.endpoint.multicast_address = Some(group.into());
    s
}

/// A token holder's PubSetup to 224.0.0.1 with TTL 255 at 10^9 samples/s
/// of 65 000 B was accepted and sent: now a group goes only where the
/// agent allows it (the sniffer sees nothing), a TTL above 1 only with
/// --allow-multicast-ttl, and an allowed group is sent to (the sniffer
/// sees it: it would have seen the attack).
#[test]
fn multicast_goes_only_to_groups_the_agent_allows() {
    let port = std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let all_hosts = sniffer("224.0.0.1", port);
    let agent = Agent::start(&[]);
    let flood = multicast_run("224.0.0.1", Some(255), 1e9, 65_000);
    let ctl = pub_set_up(&agent, flood, &format!("224.0.0.1:{port}"));
    let e = error_of(&ctl);
    assert!(
        e.contains("224.0.0.1:")
            && e.contains("is a multicast group this agent does not allow; start the agent with --allow-destination 224.0.0.1"),
        "{e}"
    );
    assert_eq!(datagrams(&all_hosts, Duration::from_secs(1)), 0);
    drop(ctl);
    drop(agent);

    let group = "239.255.65.1";
    let seen = sniffer(group, port);
    let agent = Agent::start(&["--allow-destination", group]);
    let ctl = pub_set_up(
        &agent,
        multicast_run(group, Some(255), 1000.0, 100),
        &format!("{group}:{port}"),
    );
    let e = error_of(&ctl);
    assert!(
        e.contains("--multicast-ttl 255 exceeds this agent's multicast TTL 1 (start the agent with --allow-multicast-ttl 255)"),
        "{e}"
    );
    assert_eq!(datagrams(&seen, Duration::from_millis(500)), 0);
    drop(ctl);
    agent.wait_idle(Duration::from_secs(5));
    let ctl = pub_set_up(
        &agent,
        multicast_run(group, None, 1000.0, 100),
        &format!("{group}:{port}"),
    );
    match ctl.recv(Some(Duration::from_secs(10))) {
        Ok(Msg::Ready { .. }) => {}
        other => panic!("an allowed group was refused: {other:?}"),
    }
    ctl.send(&Msg::Start).unwrap();
    assert!(datagrams(&seen, Duration::from_millis(500)) > 0);
    ctl.send(&Msg::Stop {
        sent: 0,
        sent_by: Vec::new(),
        rejected: 0,
    })
    .unwrap();
}

#[test]
fn a_run_whose_publisher_never_says_stop_is_ended_by_the_watchdog() {
    let agent = Agent::start(&["--run-grace", "1s"]);
    let ctl = set_up(&agent, RunSpec::for_test("w1", TestKind::Throughput));
    tell_echo(&ctl, "127.0.0.1:9");
    assert!(matches!(
        ctl.recv(Some(Duration::from_secs(10))),
        Ok(Msg::Ready { .. })
    ));
    ctl.send(&Msg::Start).unwrap();
    let started = Instant::now();
    // No Stop: the run's 1 s and the 1 s of grace pass, the watchdog stops
    // it and the session process ends, freeing the agent.
    agent.expect("outlived its length", Duration::from_secs(10));
    agent.expect("session 1 ended", Duration::from_secs(15));
    eprintln!("ended {:.1} s after Start", started.elapsed().as_secs_f64());
    agent.wait_idle(Duration::from_secs(5));
    agent.assert_serves("udp", "after the watchdog");
}

// A remote publisher's --qos-file (issue 50): an agent at HOST:PORT applies
// only a file its --qos-dir holds, named by the publisher; a path, or the
// value that once rewrote a file as root through CycloneDDS's
// configuration list, is refused with one line and writes nothing.

/// A latency run of cyclonedds against `agent` with `--qos-file file`.
fn qos_latency(agent: &Agent, file: &Path) -> Output {
    let extra = ["-s", "256", "-n", "100", "--rate", "1000", "--qos-file"];
    agent
        .publisher("latency", "cyclonedds", &extra)
        .arg(file)
        .output()
        .unwrap()
}

/// Fails unless cyclonedds is compiled in and can run here: without it the
/// attack would have nothing to reach, and the test would show nothing.
fn require_cyclonedds() {
    let o = bin().args(["bindings", "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ok = v
        .as_array()
        .unwrap()
        .iter()
        .any(|b| b["name"] == "cyclonedds" && b["available"].get("Ok").is_some());
    assert!(
        ok,
        "prerequisite missing: binding cyclonedds (compiled in and available; scripts/setup.sh installs cyclonedds-dev)"
    );
}

/// A CycloneDDS configuration that traces its configuration into `trace`.
fn tracing_config(trace: &Path) -> String {
    format!(
        "<CycloneDDS><Domain id=\"any\"><Tracing><Verbosity>config</Verbosity>\
         <OutputFile>{}</OutputFile></Tracing></Domain></CycloneDDS>",
        trace.display()
    )
}

/// Sets up each of `specs` on `agent` as a publisher would (Hello with
/// its token, then a Setup each, in one session) and returns its answers.
fn setup_by_hand(agent: &Agent, specs: Vec<RunSpec>) -> Vec<Msg> {
    let ctl = greeted(agent, env!("CARGO_PKG_VERSION"));
    let welcome = ctl.recv(Some(Duration::from_secs(10))).unwrap();
    assert!(matches!(welcome, Msg::Welcome { .. }), "{welcome:?}");
    let answers = specs
        .into_iter()
        .map(|spec| {
            ctl.send(&Msg::Setup {
                spec: Box::new(spec),
            })
            .unwrap();
            ctl.recv(Some(Duration::from_secs(10))).unwrap()
        })
        .collect();
    ctl.send(&Msg::Bye).unwrap();
    answers
}

#[test]
fn a_path_or_the_attack_string_is_refused_and_writes_nothing() {
    require_cyclonedds();
    let dir = tempfile::tempdir().unwrap();
    let qos_dir = dir.path().join("qos");
    std::fs::create_dir(&qos_dir).unwrap();
    let target = dir.path().join("target");
    let agent = Agent::start(&["--qos-dir", qos_dir.to_str().unwrap()]);
    // The attack of issue 50, its output file moved where the test looks.
    let attack = format!(
        "/dev/null,<Tracing><OutputFile>{}</OutputFile><Category>config</Category></Tracing><Discovery><Tag>x&#10;LINE&#10;y</Tag></Discovery>",
        target.display()
    );
    let real = dir.path().join("real.xml");
    std::fs::write(&real, tracing_config(&target)).unwrap();
    let not_a_path = |asked: &str| {
        format!(
            "refused by the agent: --qos-file {asked}: a remote agent takes a file name from its --qos-dir, not a path; put the file in the agent's --qos-dir and pass its name"
        )
    };
    let asked = [
        attack.clone(),
        real.display().to_string(),
        "../real.xml".to_string(),
    ];
    let specs = asked
        .iter()
        .map(|a| {
            let mut spec = RunSpec::for_test("ppqosdirx1s0", TestKind::Latency);
            (spec.binding, spec.peer_binding) = ("cyclonedds".into(), "cyclonedds".into());
            spec.endpoint.qos_file = Some(a.clone());
            spec
        })
        .collect();
    for (a, answer) in asked.iter().zip(setup_by_hand(&agent, specs)) {
        match answer {
            Msg::Error { message } => assert_eq!(message, not_a_path(a)),
            other => panic!("--qos-file {a}: the agent answered {other:?}"),
        }
    }
    agent.expect("session 1 ended", Duration::from_secs(10));
    assert!(!target.exists(), "the agent wrote {}", target.display());
    // A real publisher is sent the refusal of a name the agent lacks.
    let absent = dir.path().join("absent.xml");
    std::fs::write(&absent, tracing_config(&dir.path().join("publisher.log"))).unwrap();
    let o = qos_latency(&agent, &absent);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains(&format!(
            "refused by the agent: --qos-file absent.xml: no such file in the agent's --qos-dir {}; put it there",
            qos_dir.canonicalize().unwrap().display()
        )),
        "{e}"
    );
    assert!(!target.exists(), "the agent wrote {}", target.display());
}

#[test]
fn a_name_from_the_agents_qos_dir_is_applied_there() {
    require_cyclonedds();
    let dir = tempfile::tempdir().unwrap();
    let (qos_dir, mine) = (dir.path().join("qos"), dir.path().join("mine"));
    std::fs::create_dir(&qos_dir).unwrap();
    std::fs::create_dir(&mine).unwrap();
    // Two files of one name: the agent's traces to agent.log, the
    // publisher's own to publisher.log.
    let (agent_log, publisher_log) = (
        dir.path().join("agent.log"),
        dir.path().join("publisher.log"),
    );
    std::fs::write(qos_dir.join("trace.xml"), tracing_config(&agent_log)).unwrap();
    let local = mine.join("trace.xml");
    std::fs::write(&local, tracing_config(&publisher_log)).unwrap();
    let agent = Agent::start(&["--qos-dir", qos_dir.to_str().unwrap()]);
    let o = qos_latency(&agent, &local);
    assert!(o.status.success(), "{}", stderr(&o));
    let traced = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    assert!(
        traced(&agent_log) > 0,
        "the agent did not apply the trace.xml of its --qos-dir"
    );
    assert!(
        traced(&publisher_log) > 0,
        "the publisher did not apply its own --qos-file"
    );
    // A file name the agent would refuse is refused by the publisher first.
    let odd = mine.join("odd name.xml");
    std::fs::write(&odd, tracing_config(&publisher_log)).unwrap();
    let o = qos_latency(&agent, &odd);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "--qos-file {}: the agent at {} is sent the file's name, for its --qos-dir, and takes only letters",
            odd.display(),
            agent.addr
        )),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_missing_qos_dir_is_refused_by_the_agent() {
    let o = bin()
        .args([
            "agent",
            "--listen",
            "127.0.0.1:0",
            "--insecure",
            "--qos-dir",
        ])
        .arg("/nonexistent/pubsubperf-qos")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--qos-dir /nonexistent/pubsubperf-qos: not a directory"),
        "{}",
        stderr(&o)
    );
}

/// One-way latency across hosts: the agent's clock is 1000 s ahead of the
/// publisher's (a time namespace), a known offset that the estimate before
/// and after the run must hold within its bound; both directions are
/// recorded and add up to the round trip.
#[test]
fn one_way_across_hosts_recovers_a_known_clock_offset_within_its_bound() {
    const AHEAD_NS: i128 = 1_000_000_000_000;
    let agent = Agent::start_ahead(1000);
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("r.json");
    let o = agent
        .publisher(
            "latency",
            "udp",
            &["-s", "64", "-n", "2000", "--one-way", "--json"],
        )
        .arg(&j)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&j).unwrap()).unwrap();
    let r = &v["runs"][0];
    let ow = &r["one_way"];
    assert_eq!(ow["clocks"], "estimated", "{ow}");
    let off = &ow["offsets"][0];
    let within = |at: &str, bound: &str| {
        let err = (i128::from(off[at].as_i64().unwrap()) - AHEAD_NS).unsigned_abs();
        let b = u128::from(off[bound].as_u64().unwrap());
        assert!(err <= b, "{at}: off by {err} ns, bound {b} ns: {off}");
    };
    within("before_ns", "before_bound_ns");
    within("after_ns", "after_bound_ns");
    assert_eq!(off["probes"], 64);
    // The run's bound covers both estimates' and the drift's.
    assert!(ow["bound_ns"].as_u64().unwrap() >= 2 * off["before_bound_ns"].as_u64().unwrap());
    for d in ["forward", "back"] {
        assert_eq!(ow[d]["count"], 2000, "{d}: {ow}");
    }
    // The headline: forward where the bound is at most a tenth of its
    // p50, else round trip / 2, whose mean is then half the two
    // directions' (each round trip is forward + back; 1 ns for rounding).
    let (bound, fwd_p50) = (
        ow["bound_ns"].as_u64().unwrap(),
        ow["forward"]["p50"].as_u64().unwrap(),
    );
    let mean = |x: &serde_json::Value| x["mean"].as_f64().unwrap();
    if bound * 10 <= fwd_p50 {
        assert_eq!(ow["headline"], "forward");
        assert_eq!(r["latency_ns"], ow["forward"]);
    } else {
        assert_eq!(ow["headline"], "round trip / 2");
        if ow["below_zero"] == 0 {
            let sum = mean(&ow["forward"]) + mean(&ow["back"]);
            assert!((sum / 2.0 - mean(&r["latency_ns"])).abs() <= 1.0, "{ow}");
        }
    }
    assert!(r["latency_method"].as_str().unwrap().contains("+-"), "{r}");
    agent.wait_idle(Duration::from_secs(5));
}

/// A topology whose sink runs on an agent whose clock is 1000 s ahead
/// (a time namespace): the agent's clock offset is estimated before the
/// run and every reading of it corrected, so the hop into the agent and
/// the path stay within the estimate's bound of their true values (a
/// path is still exactly its hops and residence), and the figures carry
/// the bound.
#[test]
fn a_topology_node_on_an_agent_has_its_clock_corrected() {
    const AHEAD_NS: i128 = 1_000_000_000_000;
    let agent = Agent::start_ahead(1000);
    let dir = tempfile::tempdir().unwrap();
    let (f, j) = (dir.path().join("t.toml"), dir.path().join("t.json"));
    std::fs::write(
        &f,
        format!(
            "duration = \"1s\"\nwarmup = \"200ms\"\n[topics.in]\nsize = 256\nrate = 200\n[topics.out]\nsize = 1024\n\
             [nodes.a]\npublish = [\"in\"]\n[nodes.b]\nrelay = [{{ from = \"in\", to = \"out\" }}]\n\
             [nodes.c]\nsubscribe = [\"out\"]\nhost = \"{}\"\n",
            agent.addr
        ),
    )
    .unwrap();
    let o = bin()
        .arg("topology")
        .arg(&f)
        .args([
            "-b",
            "tcp",
            "--reliable",
            "--connect-timeout",
            "5s",
            "--token-file",
        ])
        .arg(&agent.token_file)
        .arg("--json")
        .arg(&j)
        // Tests never write the user's results database.
        .arg("--no-save")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("clock of c"));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&j).unwrap()).unwrap();
    let g = &v["graphs"][0];
    let node = |name: &str| {
        g["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["name"] == name)
            .unwrap()
            .clone()
    };
    let c = node("c");
    assert_eq!(c["place"], agent.addr.as_str());
    let bound = c["clock_bound_ns"].as_u64().unwrap();
    let err = (i128::from(c["clock_offset_ns"].as_i64().unwrap()) - AHEAD_NS).unsigned_abs();
    assert!(
        err <= u128::from(bound),
        "offset off by {err} ns, bound {bound} ns: {c}"
    );
    assert!(node("a")["clock_offset_ns"].is_null());
    let hop = |topic: &str| {
        g["hops"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["topic"] == topic)
            .unwrap()
            .clone()
    };
    let (local, far) = (hop("in"), hop("out"));
    assert!(local["clock_bound_ns"].is_null(), "{local}");
    assert_eq!(far["clock_bound_ns"], bound);
    let path = &g["paths"][0];
    assert_eq!(path["clock_bound_ns"], bound);
    // Uncorrected, the hop into the agent would read 1000 s.
    assert!(
        far["latency_ns"]["max"].as_u64().unwrap() < 1_000_000_000,
        "{far}"
    );
    let sum = |l: &serde_json::Value| l["sum"].as_str().unwrap().parse::<u128>().unwrap();
    let stay = &g["relays"][0]["residence_ns"];
    if far["below_zero"].is_null() && path["below_zero"].is_null() {
        assert_eq!(
            sum(&path["latency_ns"]),
            sum(&local["latency_ns"]) + sum(&far["latency_ns"]) + sum(stay)
        );
    }
    for t in g["topics"].as_array().unwrap() {
        assert_eq!(
            (t["sent"].as_u64(), t["lost"].as_u64()),
            (Some(200), Some(0)),
            "{t}"
        );
    }
    agent.wait_idle(Duration::from_secs(5));
}
