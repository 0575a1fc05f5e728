//! Zero-copy ping-pong between two pinned threads of one process, no
//! harness and no clock read per sample (round trips timed in batches, as
//! the calibration's cache-line ping-pong is):
//! `cargo run --release -p pubsubperf-shm --example pingpong -- [SIZE] [ROUND TRIPS] [copy] [block] [flat] [stamp]`.
//! Prints one-way = RTT p50 / 2 of the binding alone, beside the cache-line
//! floor measured right before. `stamp` also stamps every ping with the TSC
//! as the harness's busy round trips do (`rdtsc` into the sample, `rdtscp`
//! when the echo is seen) and prints the per-round-trip p50 too: the
//! difference is the cost of timing each round trip. A development aid; the
//! real figures come from `pubsubperf latency -b shm` (two processes, the
//! harness).

use pubsubperf_core::Received;
use pubsubperf_core::clock::{RoundTrip, Tsc};
use pubsubperf_core::{Binding, DataType, EndpointConfig, Reader, TopicSpec, WaitMode, Writer};
use pubsubperf_shm::Shm;
use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let size: usize = args.get(1).map_or(64, |s| s.parse().unwrap());
    let trips: u64 = args.get(2).map_or(200_000, |s| s.parse().unwrap());
    let mut cfg = EndpointConfig::for_test(&format!("pingpong{}", std::process::id()));
    cfg.transport = "shm".into();
    cfg.max_sample_size = size;
    cfg.zero_copy = !args.iter().any(|a| a == "copy");
    cfg.wait = if args.iter().any(|a| a == "block") {
        WaitMode::Block
    } else {
        WaitMode::Busy
    };
    let stamp = args.iter().any(|a| a == "stamp") && Tsc::usable();
    if args.iter().any(|a| a == "flat") {
        cfg.data_type = DataType::Flat;
    }
    let topic = |name: &str| TopicSpec {
        name: name.into(),
        index: 0,
    };
    let floor = pubsubperf_core::calibrate::cache_line([0, 1]).map(|c| c.one_way_p50_ns);
    let mut a = Shm::open(&cfg).unwrap();
    let mut b = Shm::open(&cfg).unwrap();
    let (mut ping_r, ping_loc) = b.create_reader(&topic("ping")).unwrap();
    let (mut pong_r, pong_loc) = a.create_reader(&topic("pong")).unwrap();
    let mut ping_w = a.create_writer(&topic("ping"), &[ping_loc]).unwrap();
    let mut pong_w = b.create_writer(&topic("pong"), &[pong_loc]).unwrap();
    for r in [&mut ping_r, &mut pong_r] {
        r.wait_matched(Duration::from_secs(5)).unwrap();
    }
    ping_w.wait_matched(1, Duration::from_secs(5)).unwrap();
    pong_w.wait_matched(1, Duration::from_secs(5)).unwrap();
    let echo = std::thread::spawn(move || {
        let _ = pubsubperf_core::sys::pin_to_cpu(1);
        let mut n = 0;
        while n < trips {
            let _ = ping_r.recv(Duration::from_secs(1), &mut |s: Received| {
                let s = s.as_slice().expect("one piece");
                let v = u64::from_le_bytes(s[..8].try_into().unwrap());
                let t = u64::from_le_bytes(s[8..16].try_into().unwrap());
                pong_w
                    .send(s.len(), |b| {
                        b[..8].copy_from_slice(&v.to_le_bytes());
                        b[8..16].copy_from_slice(&t.to_le_bytes());
                    })
                    .unwrap();
                n += 1;
            });
        }
    });
    let _ = pubsubperf_core::sys::pin_to_cpu(0);
    const BATCH: u64 = 100;
    let mut batches = Vec::with_capacity((trips / BATCH) as usize);
    let mut per = Vec::with_capacity(if stamp { trips as usize } else { 0 });
    let mut i = 0u64;
    while i < trips {
        let t0 = pubsubperf_core::clock::now_ns();
        for _ in 0..BATCH.min(trips - i) {
            ping_w
                .send(size, |b| {
                    b[..8].copy_from_slice(&i.to_le_bytes());
                    let t = if stamp { Tsc::start() } else { 0 };
                    b[8..16].copy_from_slice(&t.to_le_bytes());
                })
                .unwrap();
            let mut got = false;
            while !got {
                pong_r
                    .recv(Duration::from_secs(1), &mut |s: Received| {
                        let s = s.as_slice().expect("one piece");
                        if stamp {
                            let t = Tsc::stop();
                            per.push(t - u64::from_le_bytes(s[8..16].try_into().unwrap()));
                        }
                        got = u64::from_le_bytes(s[..8].try_into().unwrap()) == i
                    })
                    .unwrap();
            }
            i += 1;
        }
        batches.push((pubsubperf_core::clock::now_ns() - t0) as f64 / BATCH as f64);
    }
    echo.join().unwrap();
    // The median after the first tenth (warm-up).
    let median = |mut v: Vec<f64>| {
        let mut v = v.split_off(v.len() / 10);
        v.sort_by(|a, b| a.total_cmp(b));
        v[v.len() / 2]
    };
    let p50 = median(batches) / 2.0;
    if stamp {
        let ticks = median(per.iter().map(|&t| t as f64).collect());
        let ns = ticks * Tsc::calibrate(50_000_000) / 2.0;
        println!("{size} B: stamped per round trip (TSC): one-way p50 {ns:.1} ns");
    }
    match floor {
        Ok(f) => println!(
            "{size} B: one-way p50 {p50:.1} ns, cache-line floor {f:.1} ns, ratio {:.2}",
            p50 / f
        ),
        Err(e) => println!("{size} B: one-way p50 {p50:.1} ns (no floor: {e})"),
    }
}
