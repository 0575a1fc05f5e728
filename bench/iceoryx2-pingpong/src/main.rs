//! A minimal iceoryx2 ping-pong: the baseline pubsubperf's iceoryx2 binding
//! is compared with (bench/iceoryx2.sh). It uses iceoryx2 directly, the
//! plainest way: loan a `[u8]` sample, write it in place, send; busy-poll
//! `receive`; the pong side echoes each sample into a new loan.
//!
//! The service settings are those pubsubperf's binding uses for a reliable
//! 64-byte run (one publisher and one subscriber per direction, no safe
//! overflow, a blocking publisher, subscriber buffer 256, one borrowed and
//! one loaned sample), so the comparison shows what the harness and the
//! binding add, not a different iceoryx2 set-up.
//!
//! usage: iceoryx2-pingpong [--size BYTES] [--duration SECS] [--warmup SECS]
//!                          [--cpu PING,PONG]
//! Prints one line: `p50_ns=<one-way p50> samples=<n> ...`, one-way = RTT/2.
//! The pong side is this program started again with `pong` as argument.

use iceoryx2::port::publisher::Publisher;
use iceoryx2::port::subscriber::Subscriber;
use iceoryx2::prelude::*;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

type Svc = ipc::Service;

struct Opts {
    size: usize,
    duration: f64,
    warmup: f64,
    cpus: (usize, usize),
}

fn parse() -> (bool, String, Opts) {
    let mut args = std::env::args().skip(1);
    let mut o = Opts {
        size: 64,
        duration: 4.0,
        warmup: 1.0,
        cpus: (0, 1),
    };
    let mut pong = false;
    let mut tag = format!("{}", std::process::id());
    while let Some(a) = args.next() {
        let mut val = || args.next().expect("a value after the option");
        match a.as_str() {
            "pong" => {
                pong = true;
                tag = val();
            }
            "--size" => o.size = val().parse().expect("--size BYTES"),
            "--duration" => o.duration = val().parse().expect("--duration SECS"),
            "--warmup" => o.warmup = val().parse().expect("--warmup SECS"),
            "--cpu" => {
                let v = val();
                let (a, b) = v.split_once(',').expect("--cpu PING,PONG");
                o.cpus = (a.parse().expect("cpu"), b.parse().expect("cpu"));
            }
            other => panic!("unknown argument {other}"),
        }
    }
    assert!(
        o.size >= 8,
        "--size: at least 8 bytes (the sequence number)"
    );
    (pong, tag, o)
}

fn pin(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t with one bit set, for this thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        let r = libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        assert_eq!(r, 0, "sched_setaffinity to cpu {cpu}");
    }
}

struct Side {
    tx: Publisher<Svc, [u8], ()>,
    rx: Subscriber<Svc, [u8], ()>,
    out: PortFactoryPubSub,
    inp: PortFactoryPubSub,
    _node: Node<Svc>,
}

type PortFactoryPubSub =
    iceoryx2::service::port_factory::publish_subscribe::PortFactory<Svc, [u8], ()>;

fn service(node: &Node<Svc>, name: &str) -> PortFactoryPubSub {
    let name = ServiceName::new(name).expect("service name");
    let start = Instant::now();
    loop {
        let r = node
            .service_builder(&name)
            .publish_subscribe::<[u8]>()
            .max_publishers(1)
            .max_subscribers(1)
            .max_nodes(2)
            .subscriber_max_buffer_size(256)
            .subscriber_max_borrowed_samples(1)
            .history_size(0)
            .enable_safe_overflow(false)
            .open_or_create();
        match r {
            Ok(s) => return s,
            Err(e) if start.elapsed() > Duration::from_secs(5) => panic!("service: {e:?}"),
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
}

fn side(tag: &str, send: &str, recv: &str, size: usize) -> Side {
    let node = NodeBuilder::new()
        .signal_handling_mode(SignalHandlingMode::Disabled)
        .create::<Svc>()
        .expect("node");
    let out = service(&node, &format!("iceoryx2-pingpong/{tag}/{send}"));
    let inp = service(&node, &format!("iceoryx2-pingpong/{tag}/{recv}"));
    let tx = out
        .publisher_builder()
        .initial_max_slice_len(size)
        .allocation_strategy(AllocationStrategy::Static)
        .max_loaned_samples(1)
        .backpressure_strategy(BackpressureStrategy::RetryUntilDelivered)
        .create()
        .expect("publisher");
    let rx = inp
        .subscriber_builder()
        .buffer_size(256)
        .create()
        .expect("subscriber");
    Side {
        tx,
        rx,
        out,
        inp,
        _node: node,
    }
}

impl Side {
    /// Both ends of both directions exist, then connect.
    fn wait_peer(&self) {
        let start = Instant::now();
        while self.out.dynamic_config().number_of_subscribers() < 1
            || self.inp.dynamic_config().number_of_publishers() < 1
        {
            assert!(start.elapsed() < Duration::from_secs(10), "no peer");
            std::thread::sleep(Duration::from_millis(1));
        }
        use iceoryx2::port::update_connections::UpdateConnections;
        self.tx.update_connections().expect("connect");
        self.rx.has_samples().expect("connect");
    }

    #[inline(always)]
    fn send(&self, len: usize, seq: u64) {
        let mut s = self.tx.loan_slice_uninit(len).expect("loan");
        let p = s.payload_mut();
        // Only the sequence number is written: the rest of the chunk keeps
        // what it held, as a zero-copy application that fills a header does.
        for (d, b) in p.iter_mut().zip(seq.to_le_bytes()) {
            d.write(b);
        }
        // SAFETY: shared memory from mmap is initialized (zero pages or
        // earlier samples); the first 8 bytes were just written.
        let s = unsafe { s.assume_init() };
        s.send().expect("send");
    }
}

fn pong(tag: &str, o: &Opts) {
    pin(o.cpus.1);
    let s = side(tag, "pong", "ping", o.size);
    s.wait_peer();
    loop {
        if let Some(smp) = s.rx.receive().expect("receive") {
            let p = smp.payload();
            let seq = u64::from_le_bytes(p[..8].try_into().expect("8 bytes"));
            let echo = s.tx.loan_slice_uninit(p.len()).expect("loan");
            echo.write_from_slice(p).send().expect("send");
            if seq == u64::MAX {
                // Stay until ping has the stop echo: a dropped publisher
                // takes its undelivered samples with it.
                while s.out.dynamic_config().number_of_subscribers() > 0 {
                    std::thread::sleep(Duration::from_millis(1));
                }
                return;
            }
        } else {
            std::hint::spin_loop();
        }
    }
}

fn ping(tag: &str, o: &Opts) {
    let mut child = Command::new(std::env::current_exe().expect("own path"))
        .args(["pong", tag, "--size", &o.size.to_string()])
        .args(["--cpu", &format!("{},{}", o.cpus.0, o.cpus.1)])
        .stdin(Stdio::null())
        .spawn()
        .expect("start pong");
    pin(o.cpus.0);
    let s = side(tag, "ping", "pong", o.size);
    s.wait_peer();
    let warm_until = Instant::now() + Duration::from_secs_f64(o.warmup);
    let mut end = warm_until + Duration::from_secs_f64(o.duration);
    let mut rtts: Vec<u64> = Vec::with_capacity(4_000_000);
    let mut seq = 0u64;
    let mut measuring = false;
    loop {
        let t0 = Instant::now();
        s.send(o.size, seq);
        let deadline = t0 + Duration::from_secs(2);
        loop {
            if let Some(smp) = s.rx.receive().expect("receive") {
                let got = u64::from_le_bytes(smp.payload()[..8].try_into().expect("8 bytes"));
                assert_eq!(got, seq, "echo out of order");
                break;
            }
            assert!(Instant::now() < deadline, "no echo of {seq} within 2 s");
            std::hint::spin_loop();
        }
        let t1 = Instant::now();
        seq += 1;
        if measuring {
            rtts.push((t1 - t0).as_nanos() as u64);
            if t1 >= end || rtts.len() == rtts.capacity() {
                break;
            }
        } else if t1 >= warm_until {
            measuring = true;
            end = t1 + Duration::from_secs_f64(o.duration);
        }
    }
    s.send(o.size, u64::MAX);
    let start = Instant::now();
    while s.rx.receive().expect("receive").is_none() {
        assert!(start.elapsed() < Duration::from_secs(2), "no stop echo");
    }
    drop(s);
    child.wait().expect("pong exit");
    rtts.sort_unstable();
    let q = |p: f64| rtts[((rtts.len() - 1) as f64 * p).round() as usize] / 2;
    println!(
        "p50_ns={} p90_ns={} p99_ns={} samples={} size={} cpus={},{}",
        q(0.5),
        q(0.9),
        q(0.99),
        rtts.len(),
        o.size,
        o.cpus.0,
        o.cpus.1
    );
}

fn main() {
    set_log_level(LogLevel::Error);
    let (is_pong, tag, o) = parse();
    if is_pong {
        pong(&tag, &o);
    } else {
        ping(&tag, &o);
    }
}
