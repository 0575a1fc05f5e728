//! Peers started over SSH, with real parts: Debian's OpenSSH server in one
//! network namespace (a host key and a client key made by the test, its own
//! configuration), the publisher in another, `--connect ssh://...` starting
//! `pubsubperf agent --stdio` through the system's `ssh`. Checks a latency
//! and a throughput run, the failure messages (no remote binary, an older
//! one), `kill -9` of either side and Ctrl-C at the publisher, and that
//! nothing of pubsubperf is left in the subscriber's namespace afterwards.
//!
//! Needs root, iproute2, nftables, sshd (openssh-server) and ssh
//! (openssh-client); without them each test fails naming what is missing
//! (`scripts/setup.sh` installs them).

mod lab;

use lab::*;
use pubsubperf_testkit::require;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The SSH server of a lab: its files and the client configuration that
/// reaches it as host `sshlab`.
struct Sshd {
    dir: tempfile::TempDir,
    /// `ssh -F <dir>/ssh_config`, for `$PUBSUBPERF_SSH`.
    ssh: String,
    /// /run/sshd, created by this test (sshd's privilege separation
    /// directory), removed again on drop.
    made_run_dir: bool,
}

impl Drop for Sshd {
    fn drop(&mut self) {
        if self.made_run_dir {
            let _ = std::fs::remove_dir("/run/sshd");
        }
    }
}

fn keygen(path: &Path) {
    let o = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .output()
        .unwrap();
    assert!(o.status.success(), "ssh-keygen: {}", stderr(&o));
}

/// Starts sshd in `ns` on 198.18.0.2:22 for root with a key of the test's
/// own, and waits until `client_ns` can log in.
fn sshd(lab: &mut Lab, ns: &str, client_ns: &str) -> Sshd {
    require::command("sshd", "openssh-server");
    require::command("ssh", "openssh-client");
    require::command("ssh-keygen", "openssh-client");
    let sshd_bin = ["/usr/sbin/sshd", "/usr/bin/sshd"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("prerequisite missing: sshd at /usr/sbin/sshd (Debian package openssh-server)");
    let dir = tmp();
    let d = dir.path();
    keygen(&d.join("host_key"));
    keygen(&d.join("id"));
    std::fs::copy(d.join("id.pub"), d.join("authorized_keys")).unwrap();
    std::fs::write(
        d.join("sshd_config"),
        format!(
            "ListenAddress 198.18.0.2:22\nHostKey {d}/host_key\nAuthorizedKeysFile {d}/authorized_keys\nPidFile {d}/sshd.pid\nPermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n",
            d = d.display()
        ),
    )
    .unwrap();
    std::fs::write(
        d.join("ssh_config"),
        format!(
            "Host sshlab\n  HostName 198.18.0.2\n  User root\n  IdentityFile {d}/id\n  IdentitiesOnly yes\n  UserKnownHostsFile /dev/null\n  StrictHostKeyChecking no\n  LogLevel ERROR\n  ConnectTimeout 5\n",
            d = d.display()
        ),
    )
    .unwrap();
    let made_run_dir = !Path::new("/run/sshd").exists();
    if made_run_dir {
        std::fs::create_dir_all("/run/sshd").unwrap();
    }
    let cfg = d.join("sshd_config");
    let server = Sshd {
        ssh: format!("ssh -F {}", d.join("ssh_config").display()),
        dir,
        made_run_dir,
    };
    lab.procs.push(
        Command::new("ip")
            .args(["netns", "exec", ns, sshd_bin, "-D", "-e", "-f"])
            .arg(&cfg)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap(),
    );
    let start = Instant::now();
    loop {
        let o = Command::new("ip")
            .args(["netns", "exec", client_ns])
            .args(server.ssh.split_whitespace())
            .args(["-o", "BatchMode=yes", "sshlab", "true"])
            .output()
            .unwrap();
        if o.status.success() {
            break server;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "cannot log in to the lab's sshd: {}",
            stderr(&o)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

impl Sshd {
    /// A pubsubperf command in `ns` that reaches sshlab through this
    /// server's client configuration.
    fn command(&self, ns: &str, args: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", ns, BIN])
            .args(args)
            .env("PUBSUBPERF_SSH", &self.ssh);
        c
    }

    /// A script on the "remote" host (the same file system) standing in
    /// for another pubsubperf.
    fn script(&self, name: &str, body: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let p = self.dir.path().join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }
}

/// Two namespaces, sshd in `b`, the publisher's side `a`; one lab at a
/// time. Fields drop in order: the lab's processes (sshd) end before the
/// server's files go, and the lock is released last.
struct SshLab {
    lab: Lab,
    a: String,
    b: String,
    sshd: Sshd,
    _alone: std::sync::RwLockWriteGuard<'static, ()>,
}

impl SshLab {
    fn new() -> SshLab {
        require_netns();
        let alone = alone();
        let (mut lab, a, b) = Lab::two_hosts();
        let sshd = sshd(&mut lab, &b, &a);
        SshLab {
            lab,
            a,
            b,
            sshd,
            _alone: alone,
        }
    }
}

/// pubsubperf processes running in `ns`.
fn pubsubperf_in(ns: &str) -> Vec<u32> {
    let o = Command::new("ip")
        .args(["netns", "pids", ns])
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .filter_map(|p| p.parse::<u32>().ok())
        .filter(|p| {
            std::fs::read_link(format!("/proc/{p}/exe"))
                .is_ok_and(|e| e.to_string_lossy().contains("pubsubperf"))
        })
        .collect()
}

/// Fails unless no pubsubperf process is left in `ns` within `within`.
fn nothing_left_in(ns: &str, within: Duration) -> Duration {
    let start = Instant::now();
    loop {
        let left = pubsubperf_in(ns);
        if left.is_empty() {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < within,
            "pubsubperf still runs in the subscriber's namespace: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn latency_and_throughput_through_an_agent_started_over_ssh() {
    let l = SshLab::new();
    let (a, b) = (l.a.clone(), l.b.clone());
    let d = tmp();
    for (test, binding, extra) in [
        ("latency", "udp", &["-s", "64,1KiB", "-n", "2000"][..]),
        ("throughput", "tcp", &["-s", "1KiB", "--duration", "1s"][..]),
        ("latency", "cyclonedds", &["-s", "64", "-n", "1000"][..]),
    ] {
        let j = d.path().join(format!("{test}-{binding}.json"));
        let start = Instant::now();
        let o = l
            .sshd
            .command(
                &a,
                &[
                    test,
                    "-b",
                    binding,
                    "--connect",
                    "ssh://sshlab",
                    "--remote-path",
                    BIN,
                    "--warmup",
                    "0s",
                    "-q",
                    "--no-save",
                    "--json",
                    j.to_str().unwrap(),
                ],
            )
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{test} {binding}: {}", stderr(&o));
        eprintln!(
            "{test} {binding} over ssh://sshlab: {:.2} s from command to result",
            start.elapsed().as_secs_f64()
        );
        let v = json(&j);
        for r in v["runs"].as_array().unwrap() {
            assert_eq!(r["complete"], true, "{r}");
        }
        assert!(v["environment"]["subscriber_host"]["kernel"].is_string());
        let left = nothing_left_in(&b, Duration::from_secs(5));
        eprintln!(
            "  the remote side was gone {:.2} s after the run",
            left.as_secs_f64()
        );
    }
}

#[test]
fn a_missing_or_older_remote_pubsubperf_is_one_line_with_the_fix() {
    let l = SshLab::new();
    let a = l.a.clone();
    let older = l.sshd.script(
        "older-pubsubperf",
        "echo \"error: unrecognized subcommand 'agent'\" >&2; exit 2",
    );
    for (path, needle) in [
        (
            "/nonexistent/pubsubperf",
            "is not installed on the remote host",
        ),
        (
            older.to_str().unwrap(),
            "does not know 'agent --stdio' (an older version?)",
        ),
    ] {
        let start = Instant::now();
        let o = l
            .sshd
            .command(
                &a,
                &[
                    "latency",
                    "--connect",
                    "ssh://sshlab",
                    "--remote-path",
                    path,
                    "-n",
                    "10",
                    "--no-save",
                ],
            )
            .output()
            .unwrap();
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{e}");
        let last = e.trim_end().lines().last().unwrap_or_default();
        assert!(last.contains(needle), "{path}: {e}");
        assert!(
            start.elapsed() < Duration::from_secs(8),
            "{path}: took {:?}",
            start.elapsed()
        );
        eprintln!("{path}: {last}");
    }
    let o = l
        .sshd
        .command(
            &a,
            &[
                "latency",
                "--connect",
                "ssh://nosuchhost",
                "-n",
                "10",
                "--no-save",
            ],
        )
        .output()
        .unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("ssh failed"), "{e}");
    eprintln!(
        "no such host: {}",
        e.trim_end().lines().last().unwrap_or_default()
    );
}

/// Starts a 20-s throughput run over SSH in `a` and returns its index in
/// the lab once the remote session runs.
fn long_run_over_ssh(lab: &mut Lab, sshd: &Sshd, a: &str, b: &str, j: &Path) -> usize {
    let c = sshd
        .command(
            a,
            &[
                "throughput",
                "-b",
                "udp",
                "--connect",
                "ssh://sshlab",
                "--remote-path",
                BIN,
                "--rate",
                "5000",
                "-s",
                "64,128",
                "--duration",
                "10s",
                "--warmup",
                "0s",
                "-q",
                "--no-save",
                "--json",
                j.to_str().unwrap(),
            ],
        )
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    lab.procs.push(c);
    let start = Instant::now();
    while pubsubperf_in(b).len() < 2 {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "no remote session"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_secs(1));
    lab.procs.len() - 1
}

#[test]
fn kill_9_of_either_side_or_ctrl_c_leaves_nothing_behind() {
    let mut l = SshLab::new();
    let (a, b) = (l.a.clone(), l.b.clone());
    let d = tmp();
    let j = d.path().join("r.json");

    // kill -9 of the publisher: ssh dies with it, the remote agent sees its
    // input end and stops its session.
    let p = long_run_over_ssh(&mut l.lab, &l.sshd, &a, &b, &j);
    signal(l.lab.procs[p].id(), libc::SIGKILL);
    let _ = l.lab.procs[p].wait();
    let t = nothing_left_in(&b, Duration::from_secs(5));
    eprintln!(
        "kill -9 publisher: the remote side was gone {:.2} s later",
        t.as_secs_f64()
    );

    // kill -9 of the remote side: the publisher says so and exits 1.
    let p = long_run_over_ssh(&mut l.lab, &l.sshd, &a, &b, &j);
    for pid in pubsubperf_in(&b) {
        signal(pid, libc::SIGKILL);
    }
    let killed = Instant::now();
    let status = wait_exit(&mut l.lab.procs[p], Duration::from_secs(10), "publisher");
    let mut err = String::new();
    std::io::Read::read_to_string(l.lab.procs[p].stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(1), "{err}");
    eprintln!(
        "kill -9 remote side: publisher exited {:.2} s later: {}",
        killed.elapsed().as_secs_f64(),
        err.trim_end().lines().last().unwrap_or_default()
    );
    nothing_left_in(&b, Duration::from_secs(5));

    // Ctrl-C at the publisher: results so far written, remote side gone.
    let p = long_run_over_ssh(&mut l.lab, &l.sshd, &a, &b, &j);
    signal(l.lab.procs[p].id(), libc::SIGINT);
    let status = wait_exit(
        &mut l.lab.procs[p],
        Duration::from_secs(10),
        "publisher after Ctrl-C",
    );
    assert_eq!(status.code(), Some(130));
    let v = json(&j);
    assert!(!v["runs"].as_array().unwrap().is_empty(), "{v}");
    let t = nothing_left_in(&b, Duration::from_secs(5));
    eprintln!(
        "Ctrl-C: the remote side was gone {:.2} s later",
        t.as_secs_f64()
    );
}

/// A sweep file with the lab's sshd as host `lab` (the binary of this
/// build), run from the publisher's namespace into a database and a JSON
/// file of its own.
struct LabSweep {
    dir: tempfile::TempDir,
}

impl LabSweep {
    /// Writes the sweep: `name`, the inventory entry of `lab` with `host`
    /// lines added to it, then `rest` (the matrix and settings).
    fn new(name: &str, host: &str, rest: &str) -> LabSweep {
        let dir = tmp();
        let text = format!(
            "name = \"{name}\"\n\n[hosts.lab]\nconnect = \"ssh://sshlab\"\nremote_path = \"{BIN}\"\n{host}\n{rest}"
        );
        std::fs::write(dir.path().join("sweep.toml"), text).unwrap();
        LabSweep { dir }
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).to_str().unwrap().to_string()
    }

    /// Runs `pubsubperf sweep` in the lab's namespace `a`.
    fn run(&self, l: &SshLab, extra: &[&str]) -> std::process::Output {
        let (file, db, j) = (
            self.path("sweep.toml"),
            self.path("r.sqlite"),
            self.path("r.json"),
        );
        let mut args = vec!["sweep", &file, "--db", &db, "--json", &j];
        args.extend(extra);
        l.sshd.command(&l.a, &args).output().unwrap()
    }

    /// The runs of the last invocation, each checked complete.
    fn runs(&self) -> Vec<serde_json::Value> {
        let v = json(Path::new(&self.path("r.json")));
        let runs = v["runs"].as_array().unwrap().clone();
        for r in &runs {
            assert_eq!(r["complete"], true, "{r}");
        }
        runs
    }
}

#[test]
fn a_sweep_across_two_hosts_reuses_one_agent_and_resumes() {
    let l = SshLab::new();
    let sweep = LabSweep::new(
        "hosts",
        "data_address = \"pp1\"",
        r#"
[matrix]
bindings = ["udp", "tcp"]
tests = ["latency", "throughput"]
sizes = [64]
hosts = ["local", "lab"]
rate = [20000]

[settings]
count = 500
warmup = "0s"
"#,
    );
    let o = sweep.run(&l, &[]);
    let e = stderr(&o);
    assert!(o.status.success(), "{e}");
    // One agent on the remote host served the four remote cells.
    assert!(
        e.contains("ssh://sshlab: pubsubperf agent: session 4 from"),
        "{e}"
    );
    assert!(!e.contains("session 5 from"), "{e}");
    assert_eq!(sweep.runs().len(), 8);
    nothing_left_in(&l.b, Duration::from_secs(5));
    // Resumed, nothing is run again on either host.
    let o = sweep.run(&l, &["--resume"]);
    let e = stderr(&o);
    assert!(o.status.success(), "{e}");
    assert!(
        !e.contains("session 1 from"),
        "resumed cells ran again: {e}"
    );
    eprintln!(
        "resumed: {}",
        e.trim_end().lines().last().unwrap_or_default()
    );
}

#[test]
fn a_sweep_cell_can_run_its_publisher_on_another_host() {
    let l = SshLab::new();
    let sweep = LabSweep::new(
        "pubhost",
        "",
        r#"
[matrix]
bindings = ["udp"]
tests = ["latency", "throughput"]
sizes = [64]
publisher_hosts = ["lab"]
rate = [20000]

[settings]
count = 300
warmup = "0s"
"#,
    );
    let o = sweep.run(&l, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Each run says where its sides ran: in the summary table, the JSON,
    // the CSV and the export.
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("HOSTS (pub -> sub)"), "{table}");
    assert_eq!(table.matches("  lab -> local").count(), 2, "{table}");
    let runs = sweep.runs();
    assert_eq!(runs.len(), 2);
    for r in &runs {
        assert_eq!(
            r["hosts"],
            serde_json::json!({"publisher": "lab", "subscriber": "local"}),
            "{r}"
        );
    }
    // Stored here, with the publisher host's environment: its interfaces
    // are the subscriber namespace's.
    let o = Command::new(BIN)
        .args(["export", "--db", &sweep.path("r.sqlite"), "--json", "-"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        out.contains("198.18.0.2"),
        "not measured on the other host: {out}"
    );
    let exported: serde_json::Value = serde_json::from_str(&out).unwrap();
    for r in exported["runs"].as_array().unwrap() {
        assert_eq!(r["hosts"]["publisher"], "lab", "{r}");
    }
    let o = Command::new(BIN)
        .args(["export", "--db", &sweep.path("r.sqlite"), "--csv", "-"])
        .output()
        .unwrap();
    let csv = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", stderr(&o));
    for line in csv.lines().skip(1) {
        assert!(line.ends_with(",lab,local"), "{csv}");
    }
    nothing_left_in(&l.b, Duration::from_secs(5));
}
