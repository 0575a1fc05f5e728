//! The network-namespace lab shared by the tests that need hosts: each
//! test builds namespaces joined by veth pairs and runs pubsubperf (and
//! sshd) in them. Hosts use 198.18.0.0/15 (reserved for benchmarking),
//! only inside namespaces the test created; a [`Lab`]'s Drop kills every
//! process it started and deletes its namespaces, also when the test fails.
//!
//! Each test binary that includes this module uses part of it.
#![allow(dead_code)]

use pubsubperf_testkit::require;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_pubsubperf");
/// The subscriber host's control port.
pub const CTRL: u16 = 7400;
/// The agents' token: every process of these tests finds it here, not in
/// the user's configuration.
pub const TOKEN_ENV: &str = "PUBSUBPERF_TOKEN_FILE";
pub const TOKEN_FILE: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/netns-agent.token");
/// Ephemeral ports of the subscriber namespace: where its data readers bind,
/// so a rule can match "the test's port".
pub const DATA_PORTS: &str = "40000-40999";

/// Fails the test, naming what is missing, unless this machine can build
/// namespaces: root (CAP_NET_ADMIN), `ip` (iproute2), `nft` (nftables) and
/// `sysctl` (procps, for each namespace's port range and forwarding).
/// `scripts/test.sh` installs both and runs as root, so CI runs these tests.
pub fn require_netns() {
    require::root("network namespaces and veth pairs (CAP_NET_ADMIN)");
    require::command("ip", "iproute2");
    require::command("nft", "nftables");
    require::command("sysctl", "procps");
}

pub fn sh(args: &[&str]) -> Output {
    let o = Command::new(args[0])
        .args(&args[1..])
        .output()
        .unwrap_or_else(|e| panic!("{args:?}: {e}"));
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

pub fn sh_in(stdin: &str, args: &[&str]) {
    use std::io::Write;
    let mut c = Command::new(args[0])
        .args(&args[1..])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    c.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let o = c.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Namespaces and processes of one test; Drop kills the processes and
/// deletes the namespaces (their veths go with them).
pub struct Lab {
    pub tag: String,
    pub spaces: Vec<String>,
    pub procs: Vec<Child>,
    /// The lab's own results store's directory (XDG_DATA_HOME of what it
    /// runs): a run it saves never lands in the user's store.
    pub data: tempfile::TempDir,
}

pub static LABS: AtomicU32 = AtomicU32::new(0);

impl Lab {
    pub fn new() -> Lab {
        Lab {
            tag: format!(
                "pp{}n{}",
                std::process::id(),
                LABS.fetch_add(1, Ordering::Relaxed)
            ),
            spaces: Vec::new(),
            procs: Vec::new(),
            data: tempfile::tempdir().expect("a temporary directory"),
        }
    }

    /// Adds a namespace `<tag><suffix>` with loopback up.
    pub fn ns(&mut self, suffix: &str) -> String {
        let n = format!("{}{suffix}", self.tag);
        sh(&["ip", "netns", "add", &n]);
        self.spaces.push(n.clone());
        sh(&["ip", "-n", &n, "link", "set", "lo", "up"]);
        n
    }

    /// A veth pair between namespaces `a` and `b` with addresses (CIDR).
    pub fn link(&self, a: &str, a_if: &str, a_ip: &str, b: &str, b_if: &str, b_ip: &str) {
        sh(&[
            "ip", "link", "add", a_if, "netns", a, "type", "veth", "peer", "name", b_if, "netns", b,
        ]);
        for (n, i, ip) in [(a, a_if, a_ip), (b, b_if, b_ip)] {
            sh(&["ip", "-n", n, "addr", "add", ip, "dev", i]);
            sh(&["ip", "-n", n, "link", "set", i, "up"]);
        }
    }

    /// Two hosts: pub 198.18.0.1 and sub 198.18.0.2 on one veth.
    pub fn two_hosts() -> (Lab, String, String) {
        let mut l = Lab::new();
        let a = l.ns("a");
        let b = l.ns("b");
        l.link(&a, "pp0", "198.18.0.1/24", &b, "pp1", "198.18.0.2/24");
        // Multicast (DDS discovery) goes out on the veth.
        for (n, i) in [(&a, "pp0"), (&b, "pp1")] {
            sh(&["ip", "-n", n, "route", "add", "224.0.0.0/4", "dev", i]);
        }
        sh(&[
            "ip",
            "netns",
            "exec",
            &b,
            "sysctl",
            "-qw",
            &format!(
                "net.ipv4.ip_local_port_range={}",
                DATA_PORTS.replace('-', " ")
            ),
        ]);
        (l, a, b)
    }

    /// Three hosts: pub 198.18.1.1 — relay 198.18.1.2 | 198.18.2.1 — sub
    /// 198.18.2.2. The relay namespace does not forward (ip_forward=0):
    /// an nftables tproxy rule hands every TCP and UDP packet that is not
    /// for the relay itself to `pubsubperf relay --transparent` on port
    /// 9999, the only path between the two hosts.
    pub fn three_hosts() -> (Lab, String, String, String) {
        let mut l = Lab::new();
        let a = l.ns("a");
        let r = l.ns("r");
        let b = l.ns("b");
        l.link(&a, "pp0", "198.18.1.1/24", &r, "pr0", "198.18.1.2/24");
        l.link(&b, "pp1", "198.18.2.2/24", &r, "pr1", "198.18.2.1/24");
        sh(&[
            "ip",
            "-n",
            &a,
            "route",
            "add",
            "198.18.2.0/24",
            "via",
            "198.18.1.2",
        ]);
        sh(&[
            "ip",
            "-n",
            &b,
            "route",
            "add",
            "198.18.1.0/24",
            "via",
            "198.18.2.1",
        ]);
        sh(&[
            "ip",
            "netns",
            "exec",
            &r,
            "sysctl",
            "-qw",
            "net.ipv4.ip_forward=0",
        ]);
        sh_in(
            "table ip pprelay {\n chain pre { type filter hook prerouting priority mangle; policy accept;\n  ip daddr { 198.18.1.2, 198.18.2.1 } accept\n  meta l4proto { tcp, udp } tproxy to :9999 meta mark set 1 accept\n }\n}\n",
            &["ip", "netns", "exec", &r, "nft", "-f", "-"],
        );
        sh(&[
            "ip", "-n", &r, "rule", "add", "fwmark", "1", "lookup", "100",
        ]);
        sh(&[
            "ip",
            "-n",
            &r,
            "route",
            "add",
            "local",
            "0.0.0.0/0",
            "dev",
            "lo",
            "table",
            "100",
        ]);
        (l, a, r, b)
    }

    /// Starts the transparent relay in `ns` with `delay`; waits until it listens.
    pub fn relay(&mut self, ns: &str, delay: &str) -> u32 {
        self.relay_with(ns, delay, &[])
    }

    /// [`Lab::relay`] with more arguments (`--delay-to NET`).
    pub fn relay_with(&mut self, ns: &str, delay: &str, extra: &[&str]) -> u32 {
        let mut args = vec![
            "relay",
            "--listen",
            "0.0.0.0:9999",
            "--transparent",
            "--delay",
            delay,
            "--rt-priority",
            "50",
        ];
        args.extend(extra);
        let c = self.spawn(ns, &args, Stdio::piped());
        let pid = c.id();
        let mut line = String::new();
        BufReader::new(c.stderr.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(line.contains("pubsubperf relay:"), "{line}");
        pid
    }

    /// Stops the relay with SIGTERM and returns how late, on average, it
    /// delivered what it delayed (ns beyond D, from its closing line; 0 when
    /// it delayed nothing). That lateness is part of the delay the network
    /// really added.
    pub fn stop_relay(&mut self, pid: u32) -> f64 {
        let i = self
            .procs
            .iter()
            .position(|c| c.id() == pid)
            .expect("relay of this lab");
        let mut c = self.procs.remove(i);
        signal(pid, libc::SIGTERM);
        let status = wait_exit(&mut c, Duration::from_secs(5), "relay after SIGTERM");
        let mut err = String::new();
        std::io::Read::read_to_string(c.stderr.as_mut().unwrap(), &mut err).unwrap();
        assert!(status.success(), "relay: {status}: {err}");
        let late_us = err
            .split("late by ")
            .nth(1)
            .and_then(|t| t.split(" us mean").next())
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or_else(|| panic!("no lateness in the relay's closing line: {err}"));
        late_us * 1e3
    }

    pub fn spawn(&mut self, ns: &str, args: &[&str], stderr: Stdio) -> &mut Child {
        self.spawn_under(ns, &[], args, stderr)
    }

    /// [`Lab::spawn`] under the command `wrap` (`unshare --time ...`).
    pub fn spawn_under(
        &mut self,
        ns: &str,
        wrap: &[&str],
        args: &[&str],
        stderr: Stdio,
    ) -> &mut Child {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", ns])
            .args(wrap)
            .arg(BIN)
            .args(args)
            .env(TOKEN_ENV, TOKEN_FILE)
            .env("XDG_DATA_HOME", self.data.path())
            .env_remove("PUBSUBPERF_DB")
            .stdout(Stdio::null())
            .stderr(stderr);
        self.start(c)
    }

    /// Starts another program (`args[0]`, a reference tool) in `ns`, its
    /// stdout piped; it is killed with the lab.
    pub fn spawn_program(&mut self, ns: &str, args: &[&str]) -> &mut Child {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", ns])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        self.start(c)
    }

    /// Spawns `c` (stdin closed) as one of the lab's processes.
    fn start(&mut self, mut c: Command) -> &mut Child {
        let child = c
            .stdin(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{c:?}: {e}"));
        self.procs.push(child);
        self.procs.last_mut().unwrap()
    }

    /// Starts `pubsubperf sub --listen ADDR` in `ns` and waits until it listens.
    pub fn sub(&mut self, ns: &str, addr: &str) -> u32 {
        self.sub_with(ns, addr, &[])
    }

    /// [`Lab::sub`] with more arguments. A `sub --listen` that served the
    /// previous command may still be on its way out, holding the port for
    /// a few milliseconds: a start that finds the address in use is retried
    /// (for 5 s).
    pub fn sub_with(&mut self, ns: &str, addr: &str, extra: &[&str]) -> u32 {
        let mut args = vec!["sub", "--listen", addr];
        args.extend(extra);
        self.serve(ns, &args)
    }

    /// Starts pubsubperf with `args` (a command that serves: `sub
    /// --listen`, `perftest -sub`) in `ns` and waits until it listens,
    /// retrying a start that finds the address in use (for 5 s).
    pub fn serve(&mut self, ns: &str, args: &[&str]) -> u32 {
        self.serve_under(ns, &[], args)
    }

    /// [`Lab::serve`] under the command `wrap` (`unshare --time ...`).
    pub fn serve_under(&mut self, ns: &str, wrap: &[&str], args: &[&str]) -> u32 {
        let start = Instant::now();
        loop {
            let c = self.spawn_under(ns, wrap, args, Stdio::piped());
            let pid = c.id();
            let mut r = BufReader::new(c.stderr.as_mut().unwrap());
            let mut said = String::new();
            let mut line = String::new();
            while r.read_line(&mut line).unwrap() > 0 {
                if line.contains("listening on") {
                    return pid;
                }
                said.push_str(&line);
                line.clear();
            }
            let _ = self.procs.pop().map(|mut c| c.wait());
            assert!(
                said.contains("in use") && start.elapsed() < Duration::from_secs(5),
                "{args:?} exited: {said}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Runs pubsubperf in `ns` to completion.
    pub fn run(&self, ns: &str, args: &[&str]) -> Output {
        Command::new("ip")
            .args(["netns", "exec", ns, BIN])
            .args(args)
            .env(TOKEN_ENV, TOKEN_FILE)
            .env("XDG_DATA_HOME", self.data.path())
            .env_remove("PUBSUBPERF_DB")
            .output()
            .expect("runs")
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for c in &mut self.procs {
            let _ = c.kill();
            let _ = c.wait();
        }
        // Anything else still inside (a publisher's children) dies with a kill of the namespace's pids.
        for n in &self.spaces {
            if let Ok(o) = Command::new("ip").args(["netns", "pids", n]).output() {
                for p in String::from_utf8_lossy(&o.stdout).split_whitespace() {
                    if let Ok(pid) = p.parse::<i32>() {
                        // SAFETY: plain kill of a pid inside our own namespace.
                        unsafe { libc::kill(pid, libc::SIGKILL) };
                    }
                }
            }
        }
        for n in &self.spaces {
            let _ = Command::new("ip").args(["netns", "del", n]).status();
        }
    }
}

static LABS_LOCK: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Namespace tests share the machine (as many at once as the test
/// threads), each in labs of its own: most of their time is waits, for
/// timeouts, silences and discovery. See [`alone`] for the one that may
/// not share it.
pub fn shared() -> std::sync::RwLockReadGuard<'static, ()> {
    LABS_LOCK.read().unwrap_or_else(|e| e.into_inner())
}

/// The delay known answer runs with no other namespace test beside it: its
/// spinning endpoints and relay need the two cores.
pub fn alone() -> std::sync::RwLockWriteGuard<'static, ()> {
    LABS_LOCK.write().unwrap_or_else(|e| e.into_inner())
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("json written")).expect("valid json")
}

pub fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// The bindings compiled in that can run between two hosts, with their
/// reliability support: (name, reliable, best_effort). Fails the test if one
/// of them cannot run on this machine.
pub fn networked_bindings() -> Vec<(String, bool, bool)> {
    let o = Command::new(BIN)
        .args(["bindings", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .filter(|b| {
            let c = &b["capabilities"];
            c["remote"] == true && c["in_process"] == false
        })
        // A networked binding this build has but that cannot run here is a
        // missing prerequisite, not one binding fewer to test.
        .inspect(|b| {
            assert!(
                b["available"].get("Ok").is_some(),
                "prerequisite missing: the binding {} cannot run here: {}",
                b["name"],
                b["available"]["Err"]
            )
        })
        .map(|b| {
            let c = &b["capabilities"];
            (
                b["name"].as_str().unwrap().to_string(),
                c["reliable"] == true,
                c["best_effort"] == true,
            )
        })
        .collect()
}

/// Bytes received on an interface of a namespace.
pub fn rx_bytes(ns: &str, ifname: &str) -> u64 {
    let o = sh(&[
        "ip",
        "netns",
        "exec",
        ns,
        "cat",
        &format!("/sys/class/net/{ifname}/statistics/rx_bytes"),
    ]);
    String::from_utf8_lossy(&o.stdout).trim().parse().unwrap()
}

pub fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("tempdir")
}

pub fn wait_exit(c: &mut Child, within: Duration, what: &str) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(s) = c.try_wait().unwrap() {
            return s;
        }
        assert!(
            start.elapsed() < within,
            "{what}: still running {within:?} after the fault (hang)"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub fn signal(pid: u32, sig: i32) {
    // SAFETY: a signal to a process this test started.
    unsafe { libc::kill(pid as i32, sig) };
}

/// Starts a publisher in `ns` (stderr kept) and returns its index in `lab.procs`.
pub fn publisher(lab: &mut Lab, ns: &str, args: &[&str]) -> usize {
    lab.spawn(ns, args, Stdio::piped());
    lab.procs.len() - 1
}
