//! Copy-mode pipeline rate between two pinned threads of one process, no
//! harness: `cargo run --release -p pubsubperf-shm --example pipe -- SIZE SECS [flat] [busy]`.
//! A development aid for tuning the copy path; the real figures come from
//! `pubsubperf throughput -b shm` (two processes).

use pubsubperf_core::Received;
use pubsubperf_core::{Binding, DataType, EndpointConfig, Reader, TopicSpec, WaitMode, Writer};
use pubsubperf_shm::Shm;
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let size: usize = args.get(1).map_or(1 << 20, |s| s.parse().unwrap());
    let secs: f64 = args.get(2).map_or(2.0, |s| s.parse().unwrap());
    let mut cfg = EndpointConfig::for_test(&format!("pipe{}", std::process::id()));
    cfg.transport = "shm".into();
    cfg.max_sample_size = size;
    if args.iter().any(|a| a == "flat") {
        cfg.data_type = DataType::Flat;
    }
    if args.iter().any(|a| a == "busy") {
        cfg.wait = WaitMode::Busy;
    }
    let topic = TopicSpec {
        name: "data".into(),
        index: 0,
    };
    let mut sub = Shm::open(&cfg).unwrap();
    let (mut r, loc) = sub.create_reader(&topic).unwrap();
    let mut publ = Shm::open(&cfg).unwrap();
    let mut w = publ.create_writer(&topic, &[loc]).unwrap();
    r.wait_matched(Duration::from_secs(5)).unwrap();
    w.wait_matched(1, Duration::from_secs(5)).unwrap();
    let cancel = cfg.cancel.clone();
    let reader = std::thread::spawn(move || {
        let _ = pubsubperf_core::sys::pin_to_cpu(1);
        let mut n = 0u64;
        while !cancel.is_cancelled() {
            let _ = r.recv(Duration::from_millis(50), &mut |s: Received| {
                let s = s.as_slice().expect("one piece");
                std::hint::black_box(s[0]);
                n += 1
            });
        }
        (n, thread_cpu_ns())
    });
    let _ = pubsubperf_core::sys::pin_to_cpu(0);
    let start = Instant::now();
    let mut sent = 0u64;
    while start.elapsed().as_secs_f64() < secs {
        w.send(size, |b| b[0] = 1).unwrap();
        sent += 1;
    }
    let el = start.elapsed().as_secs_f64();
    let wcpu = thread_cpu_ns();
    cfg.cancel.cancel();
    let (got, rcpu) = reader.join().unwrap();
    let bytes = got as f64 * size as f64;
    // CPU time per side tells what an idle machine would do (the slower
    // side sets the pace), even when other processes share the cores.
    println!(
        "{size} B: sent {sent}, received {got}, {:.2} GB/s wall; per CPU-second: writer {:.2} GB/s, reader {:.2} GB/s",
        bytes / el / 1e9,
        sent as f64 * size as f64 / wcpu as f64,
        bytes / rcpu as f64,
    );
}

fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid timespec; the clock always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
