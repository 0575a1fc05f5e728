//! The agent (`pubsubperf agent`): sessions one after another, each in a
//! process of its own that leaves nothing behind; a second publisher told
//! it is busy; the token; the limits; a killed publisher; SIGTERM; vendor
//! files only by name from its --qos-dir. Runs the real binary on loopback. No test asserts a latency or throughput figure.

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

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// A publisher's command against this agent, presenting its token.
    fn publisher(&self, test: &str, binding: &str, extra: &[&str]) -> Command {
        let mut c = bin();
        c.args([test, "-b", binding, "--connect", &self.addr, "--token-file"])
            .arg(&self.token_file)
            .args([
                "--warmup",
                "0s",
                "-q",
                "--no-save",
                "--connect-timeout",
                "5s",
            ])
            .args(extra);
        c
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
        for c in children(self.pid()) {
            kill9(c);
        }
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
            .publisher(test, b, &["-s", "256", "-n", "200", "--rate", "20000"])
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
    assert!(
        stderr(&o).contains("refused: wrong token"),
        "{}",
        stderr(&o)
    );
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
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    let body = hello.to_string();
    s.write_all(&(body.len() as u32).to_le_bytes()).unwrap();
    s.write_all(body.as_bytes()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut len = [0u8; 4];
    s.read_exact(&mut len).unwrap();
    let mut reply = vec![0u8; u32::from_le_bytes(len) as usize];
    s.read_exact(&mut reply).unwrap();
    serde_json::from_slice(&reply).unwrap()
}

#[test]
fn another_version_is_refused_naming_both() {
    let agent = Agent::start(&[]);
    let token = std::fs::read_to_string(&agent.token_file).unwrap();
    let reply = hello_by_hand(
        &agent.addr,
        serde_json::json!({"type": "hello", "version": "0.0.1", "protocol": 1, "token": token.trim()}),
    );
    let m = reply["message"].as_str().unwrap_or_default();
    assert_eq!(reply["type"], "error", "{reply}");
    assert!(
        m.contains("0.0.1") && m.contains(env!("CARGO_PKG_VERSION")),
        "{m}"
    );
    // The token is checked before the version: a stranger learns nothing.
    let reply = hello_by_hand(
        &agent.addr,
        serde_json::json!({"type": "hello", "version": "0.0.1", "protocol": 1}),
    );
    let m = reply["message"].as_str().unwrap_or_default();
    assert!(m.contains("no token") && !m.contains("0.0.1"), "{m}");
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
    let o = agent
        .publisher("latency", "tcp", &["-n", "100"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
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
fn an_insecure_agent_on_a_network_address_warns() {
    let mut c = bin()
        .args(["agent", "--listen", "0.0.0.0:0", "--insecure"])
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
    use pubsubperf_harness::protocol::{self, PROTOCOL};
    let mut s = std::net::TcpStream::connect(&agent.addr).unwrap();
    let token = std::fs::read_to_string(&agent.token_file).unwrap();
    let hello = Msg::Hello {
        version: pubsubperf_harness::VERSION.into(),
        protocol: PROTOCOL,
        token: Some(token.trim().to_string()),
    };
    protocol::send(&mut s, &hello).unwrap();
    let welcome = protocol::recv(&mut s, Some(Duration::from_secs(10))).unwrap();
    assert!(matches!(welcome, Msg::Welcome { .. }), "{welcome:?}");
    let answers = specs
        .into_iter()
        .map(|spec| {
            let setup = Msg::Setup {
                spec: Box::new(spec),
            };
            protocol::send(&mut s, &setup).unwrap();
            protocol::recv(&mut s, Some(Duration::from_secs(10))).unwrap()
        })
        .collect();
    protocol::send(&mut s, &Msg::Bye).unwrap();
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
            let mut spec = RunSpec::for_test("cyclonedds", "ppqosdirx1s0");
            spec.endpoint.transport = "udp".into();
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
