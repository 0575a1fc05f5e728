//! zenoh-pingpong: the smallest zenoh round trip we can write, as a reference
//! for the pubsubperf zenoh binding.
//!
//! usage: zenoh-pingpong [SIZE=64] [ITERS=20000] [block|busy]
//!
//! Ping (this process, measuring thread pinned to CPU 0) listens on
//! tcp/127.0.0.1 with an ephemeral port; pong (the same binary run again with
//! `pong LOCATOR`, measuring thread pinned to CPU 1) connects to it. One
//! session per side, one tcp link, peer mode, no scouting, shared memory off,
//! express puts with CongestionControl::Block, FIFO-channel subscribers.
//! Sessions are opened from an unpinned helper thread, so zenoh's runtime
//! threads may use every CPU (the binding's policy). Pong copies each ping's
//! payload into a new put, as the binding's echo does. After a warm-up of
//! ITERS/10 round trips, prints the one-way (round trip / 2) percentiles and
//! a last line `p50_ns=N`.

use std::time::{Duration, Instant};
use zenoh::bytes::ZBytes;
use zenoh::qos::CongestionControl;
use zenoh::{Config, Session, Wait};

fn pin(cpu: usize) {
    // SAFETY: plain-data cpu set, affinity of the calling thread only.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// Opens a session from a helper thread allowed on every CPU.
fn open(c: Config) -> Session {
    std::thread::spawn(move || {
        // SAFETY: as in `pin`, every CPU index below the configured count.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for cpu in 0..libc::sysconf(libc::_SC_NPROCESSORS_CONF).max(1) as usize {
                libc::CPU_SET(cpu, &mut set);
            }
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        }
        zenoh::open(c).wait().expect("open session")
    })
    .join()
    .expect("open thread")
}

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

fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: writes into the local timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn recv(
    sub: &zenoh::pubsub::Subscriber<zenoh::handlers::FifoChannelHandler<zenoh::sample::Sample>>,
    busy: bool,
    timeout: Duration,
) -> Option<zenoh::sample::Sample> {
    let start = Instant::now();
    while start.elapsed() < timeout {
        let got = if busy {
            sub.try_recv().expect("recv")
        } else {
            sub.recv_timeout(Duration::from_millis(100)).expect("recv")
        };
        if got.is_some() {
            return got;
        }
    }
    None
}

fn seq_of(s: &zenoh::sample::Sample) -> u64 {
    let b = s.payload().to_bytes();
    u64::from_le_bytes(b[..8].try_into().expect("8 bytes"))
}

const STOP: u64 = u64::MAX;

fn pong(locator: &str, busy: bool) {
    pin(1);
    let s = open(config("[]", &format!("[\"{locator}\"]")));
    let publisher = s
        .declare_publisher("pingpong/pong")
        .congestion_control(CongestionControl::Block)
        .express(true)
        .wait()
        .expect("publisher");
    let sub = s
        .declare_subscriber("pingpong/ping")
        .wait()
        .expect("subscriber");
    let mut buf = Vec::new();
    loop {
        let Some(sample) = recv(&sub, busy, Duration::from_secs(30)) else {
            break;
        };
        let b = sample.payload().to_bytes();
        let n = b.len();
        if buf.len() < n {
            buf.resize(n, 0);
        }
        buf[..16].copy_from_slice(&b[..16]);
        drop(b);
        if seq_of(&sample) == STOP {
            break;
        }
        publisher.put(ZBytes::from(&buf[..n])).wait().expect("put");
    }
    drop((sub, publisher));
    s.close().wait().expect("close");
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("pong") {
        let busy = args.get(2).map(String::as_str) == Some("busy");
        return pong(&args[1], busy);
    }
    let size: usize = args
        .first()
        .map_or(64, |s| s.parse().expect("SIZE in bytes"))
        .max(16);
    let iters: usize = args.get(1).map_or(20_000, |s| s.parse().expect("ITERS"));
    let mode = args.get(2).cloned().unwrap_or_else(|| "block".into());
    let busy = mode == "busy";
    pin(0);
    let s = open(config("[\"tcp/127.0.0.1:0\"]", "[]"));
    let locator = s
        .info()
        .locators()
        .wait()
        .first()
        .expect("a listening locator")
        .to_string();
    let publisher = s
        .declare_publisher("pingpong/ping")
        .congestion_control(CongestionControl::Block)
        .express(true)
        .wait()
        .expect("publisher");
    let sub = s
        .declare_subscriber("pingpong/pong")
        .wait()
        .expect("subscriber");
    let mut child = std::process::Command::new(std::env::current_exe().expect("exe"))
        .args(["pong", &locator, &mode])
        .spawn()
        .expect("spawn pong");
    let mut buf = vec![0xA5u8; size];
    // Puts before the peer's subscriber is known are dropped: repeat a
    // warm-up ping until an echo comes back, then drain.
    let warm_up = Instant::now();
    loop {
        buf[..8].copy_from_slice(&(u64::MAX - 1).to_le_bytes());
        publisher.put(ZBytes::from(&buf[..])).wait().expect("put");
        if recv(&sub, busy, Duration::from_millis(50)).is_some() {
            break;
        }
        if warm_up.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("no echo within 20 s");
        }
    }
    while recv(&sub, busy, Duration::from_millis(50)).is_some() {}
    let warm = (iters / 10).max(100);
    let mut rtts = Vec::with_capacity(iters);
    for i in 0..(warm + iters) as u64 {
        buf[..8].copy_from_slice(&i.to_le_bytes());
        let t0 = now_ns();
        publisher.put(ZBytes::from(&buf[..])).wait().expect("put");
        let Some(echo) = recv(&sub, busy, Duration::from_secs(10)) else {
            let _ = child.kill();
            panic!("echo of {i} lost");
        };
        let t1 = now_ns();
        assert_eq!(seq_of(&echo), i, "echo out of order");
        if i as usize >= warm {
            rtts.push(t1 - t0);
        }
    }
    buf[..8].copy_from_slice(&STOP.to_le_bytes());
    publisher.put(ZBytes::from(&buf[..])).wait().expect("put");
    let _ = child.wait();
    drop((sub, publisher));
    s.close().wait().expect("close");
    rtts.sort_unstable();
    let pct = |p: f64| rtts[((rtts.len() as f64 * p) as usize).min(rtts.len() - 1)] / 2;
    println!(
        "zenoh-pingpong tcp {mode} size={size} iters={iters} one-way ns: p50={} p90={} p99={} max={}",
        pct(0.5),
        pct(0.9),
        pct(0.99),
        rtts[rtts.len() - 1] / 2
    );
    println!("p50_ns={}", pct(0.5));
}
