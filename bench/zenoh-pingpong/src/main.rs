//! zenoh-pingpong: the equivalents of zenoh's own z_ping/z_pong and
//! z_pub_thr/z_sub_thr examples (written here, not copied), with the
//! session configuration of pubsubperf's zenoh binding: the reference
//! bench/zenoh_vs_ref.sh compares the binding with.
//!
//! usage: zenoh-pingpong [--test latency|throughput] [--size BYTES]
//!        [--duration SECS] [--warmup SECS] [--cpu PUB,SUB]
//!        [--recv callback|channel] [--wait block|busy] [--express true|false]
//!        [--runtime float|pinned]
//!
//! - latency: ping (this process) puts a sample and waits for its echo on a
//!   FIFO-channel subscriber (`--wait block`: `recv`, as z_ping; `busy`:
//!   `try_recv` in a loop); pong (a child process) echoes each sample.
//!   `--recv callback` (z_pong's way, the default) echoes from the
//!   subscriber's callback on zenoh's receive task, handing the received
//!   payload back without a copy; `--recv channel` takes it from a FIFO
//!   channel on pong's own thread and puts a copy (pubsubperf's way).
//!   Prints `p50_ns=.. p99_ns=..`, one-way = RTT/2.
//! - throughput: the publisher (this process) puts one prebuilt payload
//!   (`ZBytes` clones share it, as z_pub_thr) as fast as `put` returns,
//!   CongestionControl::Block; the subscriber (a child process) counts in
//!   its callback (z_sub_thr's way, `--recv callback`) or from a FIFO
//!   channel on its own thread (`--recv channel`), and prints `per_s=..`
//!   over `--duration` seconds after `--warmup` from its first sample.
//!
//! `--express` (default true for latency, as z_ping; false for throughput,
//! as z_pub_thr, which lets zenoh batch small messages). Both sides pin
//! their own thread: publisher/ping on the first `--cpu`, subscriber/pong
//! on the second. `--runtime float` (the default, the binding's policy):
//! they open their session from a helper thread allowed on every CPU, so
//! zenoh's runtime threads float; `--runtime pinned`: from their pinned
//! thread, so zenoh's runtime threads share its core (as a process started
//! under `taskset -c N` has them).
//! Session: peer mode, no multicast scouting, no gossip, shared memory off,
//! one tcp link (the publisher side listens on 127.0.0.1, an ephemeral port;
//! the other side connects).

mod latency;
mod throughput;

use std::process::{Child, Command, Stdio};
use zenoh::{Config, Session, Wait};

/// What a run is asked to do; both sides get the same.
#[derive(Clone)]
pub struct Opts {
    pub throughput: bool,
    pub size: usize,
    pub duration: f64,
    pub warmup: f64,
    pub cpus: (usize, usize),
    pub callback: bool,
    pub busy: bool,
    pub express: bool,
}

/// `--runtime pinned`: sessions are opened on the pinned thread.
static RUNTIME_PINNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn usage(msg: &str) -> ! {
    eprintln!("zenoh-pingpong: {msg}");
    std::process::exit(2)
}

fn bool_of(flag: &str, v: &str) -> bool {
    match v {
        "true" => true,
        "false" => false,
        _ => usage(&format!("{flag} {v}: use true or false")),
    }
}

/// The options, the peer's locator when this is the peer, and the
/// arguments that give the peer the same options.
fn parse() -> (Option<String>, Opts, Vec<String>) {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let mut o = Opts {
        throughput: false,
        size: 64,
        duration: 4.0,
        warmup: 1.0,
        cpus: (0, 1),
        callback: true,
        busy: false,
        express: true,
    };
    let mut express = None;
    let mut peer = None;
    let mut args = raw.into_iter();
    while let Some(a) = args.next() {
        let mut val = |what: &str| {
            args.next()
                .unwrap_or_else(|| usage(&format!("{a} needs {what}")))
        };
        match a.as_str() {
            "peer" => peer = Some(val("a locator")),
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
            }
            "--recv" => match val("callback|channel").as_str() {
                "callback" => o.callback = true,
                "channel" => o.callback = false,
                v => usage(&format!("--recv {v}: use callback or channel")),
            },
            "--wait" => match val("block|busy").as_str() {
                "block" => o.busy = false,
                "busy" => o.busy = true,
                v => usage(&format!("--wait {v}: use block or busy")),
            },
            "--express" => express = Some(bool_of("--express", &val("true|false"))),
            "--runtime" => match val("float|pinned").as_str() {
                "float" => RUNTIME_PINNED.store(false, std::sync::atomic::Ordering::Relaxed),
                "pinned" => RUNTIME_PINNED.store(true, std::sync::atomic::Ordering::Relaxed),
                v => usage(&format!("--runtime {v}: use float or pinned")),
            },
            other => usage(&format!("unknown argument {other}")),
        }
    }
    o.express = express.unwrap_or(!o.throughput);
    if o.size < 8 {
        usage("--size: at least 8 bytes (the sequence number)");
    }
    let pass = vec![
        "--test".into(),
        if o.throughput {
            "throughput"
        } else {
            "latency"
        }
        .into(),
        "--size".into(),
        o.size.to_string(),
        "--duration".into(),
        o.duration.to_string(),
        "--warmup".into(),
        o.warmup.to_string(),
        "--cpu".into(),
        format!("{},{}", o.cpus.0, o.cpus.1),
        "--recv".into(),
        if o.callback { "callback" } else { "channel" }.into(),
        "--wait".into(),
        if o.busy { "busy" } else { "block" }.into(),
        "--express".into(),
        o.express.to_string(),
        "--runtime".into(),
        if RUNTIME_PINNED.load(std::sync::atomic::Ordering::Relaxed) {
            "pinned"
        } else {
            "float"
        }
        .into(),
    ];
    (peer, o, pass)
}

/// Pins the calling thread to `cpu`.
pub fn pin(cpu: usize) {
    // SAFETY: plain-data cpu set, affinity of the calling thread only.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// Runs `f` on a helper thread allowed on every CPU, so that the zenoh
/// threads it starts (the runtime is created on first use) are not pinned.
/// With `--runtime pinned`, `f` runs on the calling (pinned) thread.
pub fn unpinned<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    if RUNTIME_PINNED.load(std::sync::atomic::Ordering::Relaxed) {
        return f();
    }
    std::thread::spawn(move || {
        // SAFETY: as in `pin`, every CPU index below the configured count.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for cpu in 0..libc::sysconf(libc::_SC_NPROCESSORS_CONF).max(1) as usize {
                libc::CPU_SET(cpu, &mut set);
            }
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        }
        f()
    })
    .join()
    .expect("helper thread")
}

/// The binding's session configuration (crates/zenoh, tcp transport).
fn config(listen: &str, connect: &str) -> Config {
    let mut c = Config::default();
    for (k, v) in [
        ("mode", "\"peer\"".to_string()),
        ("scouting/multicast/enabled", "false".into()),
        ("scouting/gossip/enabled", "false".into()),
        ("transport/shared_memory/enabled", "false".into()),
        ("listen/endpoints", listen.into()),
        ("connect/endpoints", connect.into()),
    ] {
        c.insert_json5(k, &v).expect("config");
    }
    c
}

/// The publisher side's session, listening; and its locator.
pub fn open_listening() -> (Session, String) {
    let s = unpinned(|| {
        zenoh::open(config("[\"tcp/127.0.0.1:0\"]", "[]"))
            .wait()
            .expect("open session")
    });
    let locator = s
        .info()
        .locators()
        .wait()
        .first()
        .expect("a listening locator")
        .to_string();
    (s, locator)
}

/// The peer's session, connected to `locator`.
pub fn open_connected(locator: &str) -> Session {
    let c = config("[]", &format!("[\"{locator}\"]"));
    unpinned(move || zenoh::open(c).wait().expect("open session"))
}

/// Starts this program again as the peer of a run.
pub fn start_peer(locator: &str, pass: &[String]) -> Child {
    Command::new(std::env::current_exe().expect("own path"))
        .args(["peer", locator])
        .args(pass)
        .stdin(Stdio::piped())
        .spawn()
        .expect("start the peer")
}

fn main() {
    let (peer, o, pass) = parse();
    match (peer, o.throughput) {
        (Some(loc), false) => latency::pong(&loc, &o),
        (Some(loc), true) => throughput::subscriber(&loc, &o),
        (None, false) => latency::ping(&o, &pass),
        (None, true) => throughput::publisher(&o, &pass),
    }
}
