//! A minimal iceoryx2 program: the reference pubsubperf's iceoryx2 binding
//! is compared with (bench/iceoryx2_vs_ref.sh). It uses iceoryx2 directly,
//! the way iceoryx2's own publish-subscribe benchmark does: loan a `[u8]`
//! sample, write it in place, send; the other side takes it with `receive`.
//!
//! Two tests:
//! - `--test latency` (default): ping-pong; the ping side (this process)
//!   times each round trip, the pong side echoes every sample in a new loan.
//!   Prints `p50_ns=.. p99_ns=..` (one-way = RTT/2).
//! - `--test throughput`: the publisher (this process) loans and sends as
//!   fast as the subscriber keeps up (a blocking publisher, no safe
//!   overflow: nothing is lost); the subscriber counts what it receives in
//!   a window of `--duration` seconds after `--warmup`. Prints `per_s=..`.
//!
//! `--copy` writes every byte from a private buffer into the loan and copies
//! each received sample out (iceoryx2's benchmark `--send-copy`, and what
//! pubsubperf does without `--zero-copy`); without it only the 8-byte
//! sequence number is written and the payload is read in place.
//! `--wait busy` polls `receive` (iceoryx2's benchmark); `--wait block`
//! waits on an event service beside each topic: the publisher notifies
//! after each send, the subscriber drains, then waits in `timed_wait`.
//!
//! The service settings are those of pubsubperf's binding for a reliable
//! run (one publisher and one subscriber per topic, subscriber buffer 256,
//! no safe overflow, a blocking publisher, one borrowed sample).
//!
//! usage: iceoryx2-pingpong [--test latency|throughput] [--size BYTES]
//!        [--duration SECS] [--warmup SECS] [--cpu PUB,SUB] [--copy]
//!        [--wait busy|block]
//! The other side is this program started again with `peer TAG` first.

mod latency;
mod ports;
mod throughput;
mod tidy;

use std::process::{Child, Command, Stdio};

/// What a run is asked to do; both sides get the same.
#[derive(Clone)]
pub struct Opts {
    pub throughput: bool,
    pub size: usize,
    pub duration: f64,
    pub warmup: f64,
    pub cpus: (usize, usize),
    pub copy: bool,
    pub block: bool,
}

fn usage(msg: &str) -> ! {
    eprintln!("iceoryx2-pingpong: {msg}");
    std::process::exit(2)
}

fn parse() -> (Option<String>, Opts, Vec<String>) {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let mut o = Opts {
        throughput: false,
        size: 64,
        duration: 4.0,
        warmup: 1.0,
        cpus: (0, 1),
        copy: false,
        block: false,
    };
    let mut peer = None;
    let mut pass = Vec::new();
    let mut args = raw.into_iter();
    while let Some(a) = args.next() {
        let mut val = |what: &str| {
            args.next()
                .unwrap_or_else(|| usage(&format!("{a} needs {what}")))
        };
        match a.as_str() {
            "peer" => {
                peer = Some(val("a tag"));
                continue;
            }
            "--test" => match val("latency|throughput").as_str() {
                "latency" => o.throughput = false,
                "throughput" => o.throughput = true,
                v => usage(&format!("--test {v}: use latency or throughput")),
            },
            "--size" => {
                o.size = val("BYTES")
                    .parse()
                    .unwrap_or_else(|_| usage("--size BYTES"))
            }
            "--duration" => {
                o.duration = val("SECS")
                    .parse()
                    .unwrap_or_else(|_| usage("--duration SECS"))
            }
            "--warmup" => {
                o.warmup = val("SECS")
                    .parse()
                    .unwrap_or_else(|_| usage("--warmup SECS"))
            }
            "--cpu" => {
                let v = val("PUB,SUB");
                let p = v
                    .split_once(',')
                    .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)));
                o.cpus = p.unwrap_or_else(|| usage("--cpu PUB,SUB, e.g. 0,1"));
                pass.extend([a.clone(), v]);
                continue;
            }
            "--copy" => o.copy = true,
            "--wait" => match val("busy|block").as_str() {
                "busy" => o.block = false,
                "block" => o.block = true,
                v => usage(&format!("--wait {v}: use busy or block")),
            },
            other => usage(&format!("unknown argument {other}")),
        }
    }
    if o.size < 8 {
        usage("--size: at least 8 bytes (the sequence number)");
    }
    // The peer gets every option again (the cpu pair was added above).
    pass.extend(["--size".into(), o.size.to_string()]);
    pass.extend(["--duration".into(), o.duration.to_string()]);
    pass.extend(["--warmup".into(), o.warmup.to_string()]);
    pass.extend([
        "--test".into(),
        if o.throughput {
            "throughput"
        } else {
            "latency"
        }
        .into(),
    ]);
    pass.extend([
        "--wait".into(),
        if o.block { "block" } else { "busy" }.into(),
    ]);
    if o.copy {
        pass.push("--copy".into());
    }
    (peer, o, pass)
}

/// Pins the calling thread to `cpu`.
pub fn pin(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t with one bit set, for this thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        let r = libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        assert_eq!(r, 0, "sched_setaffinity to cpu {cpu}");
    }
}

fn start_peer(tag: &str, pass: &[String]) -> Child {
    Command::new(std::env::current_exe().expect("own path"))
        .args(["peer", tag])
        .args(pass)
        .stdin(Stdio::null())
        .spawn()
        .expect("start the peer")
}

fn main() {
    iceoryx2::prelude::set_log_level(iceoryx2::prelude::LogLevel::Error);
    let (peer, o, pass) = parse();
    match (peer, o.throughput) {
        (Some(tag), false) => latency::pong(&tag, &o),
        (Some(tag), true) => throughput::subscriber(&tag, &o),
        (None, thr) => {
            let tag = std::process::id().to_string();
            let mut child = start_peer(&tag, &pass);
            if thr {
                throughput::publisher(&tag, &o);
            } else {
                latency::ping(&tag, &o);
            }
            let st = child.wait().expect("peer exit");
            tidy::domain_leftovers();
            assert!(st.success(), "the peer failed: {st}");
        }
    }
}
