//! Two processes of an RTI tool's front end on this host (`perftest`,
//! `throughput-example`): a subscriber that listens, then a publisher,
//! each pair with its own port (`PUBSUBPERF_PERFTEST_PORT`) and token file.
// Each test binary that includes this module uses a part of it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pubsubperf"))
}

pub fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// A port free on this host now (the pair's, through
/// `PUBSUBPERF_PERFTEST_PORT`).
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// One subscriber/publisher pair's place: its front end (the command),
/// port and token file.
pub struct Pair {
    pub front: &'static str,
    pub port: u16,
    dir: tempfile::TempDir,
}

impl Pair {
    /// A pair of `front` (`perftest`, `throughput-example`).
    pub fn new(front: &'static str) -> Pair {
        Pair {
            front,
            port: free_port(),
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub fn cmd(&self, line: &str) -> Command {
        let mut c = bin();
        c.arg(self.front)
            .args(words(line))
            .env("PUBSUBPERF_PERFTEST_PORT", self.port.to_string())
            .env("PUBSUBPERF_TOKEN_FILE", self.dir.path().join("agent.token"));
        c
    }

    /// Starts the subscriber and waits until it listens; its standard
    /// output goes to a file ([`Pair::sub_stdout`]).
    pub fn sub(&self, line: &str) -> (Child, Receiver<String>) {
        let out = std::fs::File::create(self.dir.path().join("sub.out")).unwrap();
        let mut child = self
            .cmd(line)
            .stdout(out)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, rx) = channel();
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for l in BufReader::new(err).lines().map_while(Result::ok) {
                eprintln!("sub: {l}");
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(l) if l.contains("listening on") => return (child, rx),
                Ok(_) => {}
                Err(_) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!("{} {line}: not listening within 10 s", self.front);
                }
            }
        }
    }

    /// What the last subscriber started printed on its standard output.
    #[allow(dead_code)] // not every test file reads it
    pub fn sub_stdout(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("sub.out")).unwrap_or_default()
    }

    pub fn run(&self, line: &str) -> Output {
        self.cmd(line).output().unwrap()
    }
}

/// Waits for a child to exit within `within`; kills it and fails otherwise.
pub fn exits_within(child: &mut Child, within: Duration, what: &str) -> std::process::ExitStatus {
    let deadline = Instant::now() + within;
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {within:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The rest of a `-sub`'s lines once it has exited: read until its
/// standard error's reader ends (the child closed it), at most 5 s; a
/// `try_iter` right after the exit could miss the last lines, still on
/// their way through the reader thread.
pub fn rest(lines: &Receiver<String>) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut said = Vec::new();
    while let Ok(l) = lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        said.push(l);
    }
    said
}
