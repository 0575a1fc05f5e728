//! This test binary as a peer process: a test that needs a second process
//! (a publisher or subscriber to kill, a run whose leftovers are checked
//! after its process is gone) runs one of its own tests in a child.
//!
//! The child's test does nothing unless its environment variable is set
//! ([`is_child`]), so it passes at once in the normal run; the parent starts
//! it with [`Peer::spawn`] (to talk to it: lines tagged on its stdout, and
//! SIGKILL) or [`run_to_end`] (to let it finish).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdout, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// True in the child started for a peer test: `var` is set.
pub fn is_child(var: &str) -> bool {
    std::env::var_os(var).is_some()
}

/// The peer's side: prints a line for the parent (flushed at once).
pub fn say(line: &str) {
    let mut o = std::io::stdout().lock();
    writeln!(o, "{line}").expect("stdout");
    o.flush().expect("stdout");
}

fn command(test: &str, env: &[(&str, &str)]) -> Command {
    let mut c = Command::new(std::env::current_exe().expect("the test binary"));
    c.args([
        "--exact",
        test,
        "--nocapture",
        "--include-ignored",
        "--test-threads",
        "1",
    ]);
    for (k, v) in env {
        c.env(k, v);
    }
    c
}

/// Runs `test` of this binary in a child with `env`, to its end; fails
/// unless the child's test ran and passed.
pub fn run_to_end(test: &str, env: &[(&str, &str)]) -> Output {
    let out = command(test, env).output().expect("start the child test");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child {test} failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("1 passed"),
        "child {test} did not run: {stdout}"
    );
    out
}

/// A running peer: `test` of this binary in a child process.
pub struct Peer {
    child: Child,
    out: BufReader<ChildStdout>,
}

impl Peer {
    /// Starts `test` of this binary in a child with `env`.
    pub fn spawn(test: &str, env: &[(&str, &str)]) -> Peer {
        let mut child = command(test, env)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the peer");
        let out = BufReader::new(child.stdout.take().expect("piped stdout"));
        Peer { child, out }
    }

    /// The process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// The rest of the next line containing `tag` (what the peer [`say`]s).
    pub fn expect(&mut self, tag: &str) -> String {
        let mut line = String::new();
        loop {
            line.clear();
            assert!(
                self.out.read_line(&mut line).expect("peer stdout") > 0,
                "peer ended before printing {tag}"
            );
            // libtest may have printed "test NAME ... " on the same line.
            if let Some(at) = line.find(tag) {
                return line[at + tag.len()..].trim().to_string();
            }
        }
    }

    /// SIGKILL, and reap.
    pub fn kill9(&mut self) {
        crate::process::kill9(self.child.id());
        let _ = self.child.wait();
    }

    /// Waits for a normal end (at most 20 s) after the peer said `tag`;
    /// returns what followed the tag.
    pub fn finish(&mut self, tag: &str) -> String {
        let said = self.expect(tag);
        let start = Instant::now();
        loop {
            if let Some(st) = self.child.try_wait().expect("wait") {
                assert!(st.success(), "peer failed: {st}");
                return said;
            }
            assert!(start.elapsed() < Duration::from_secs(20), "peer hangs");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
