//! The floor under the harness (issue 47 item 5): a minimal throughput loop
//! of our own over a binding (`intra` or `mock`), without the harness:
//! T topics, each one writer thread writing as fast as the binding takes
//! to N reader threads, which count what they receive; no control channel,
//! no sequence books, no intervals, no result. What
//! `pubsubperf throughput -b B --subscribers N --topics T` adds to this
//! is the harness's own cost; bench/harness_cost.sh prints the two side
//! by side.
//!
//! usage: harness_floor --binding intra|mock --subscribers N --topics T
//!        --size BYTES --duration SECS --warmup SECS [--wait busy|block]
//!        [--cpu PUB,SUB] [--count N]
//! prints `per_s=N`: samples received per second of measurement, all
//! readers together (as the harness's throughput sums its subscribers).
//! With `--count N` each writer sends N samples after the warm-up and the
//! run ends when the readers have them all (the mock's clock is virtual,
//! so its runs are compared by the CPU time they take, not by a rate).

use pubsubperf_core::sample::{FLAG_WARMUP, Header};
use pubsubperf_core::{
    Binding, EndpointConfig, Reader, Received, TopicSpec, WaitMode, Writer, sys,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

struct Args {
    binding: String,
    subscribers: usize,
    topics: usize,
    size: usize,
    duration: Duration,
    warmup: Duration,
    wait: WaitMode,
    cpu: Option<(usize, usize)>,
    /// Measured samples each writer sends (0: for the duration).
    count: u64,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        binding: "intra".into(),
        subscribers: 1,
        topics: 1,
        size: 64,
        duration: Duration::from_secs(3),
        warmup: Duration::from_secs(1),
        wait: WaitMode::Block,
        cpu: None,
        count: 0,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let v = it.next().ok_or_else(|| format!("{flag}: needs a value"))?;
        let num = |v: &str| {
            v.parse::<f64>()
                .map_err(|_| format!("{flag} {v}: not a number"))
        };
        match flag.as_str() {
            "--binding" => a.binding = v,
            "--subscribers" => a.subscribers = num(&v)? as usize,
            "--topics" => a.topics = num(&v)? as usize,
            "--size" => a.size = num(&v)? as usize,
            "--count" => a.count = num(&v)? as u64,
            "--duration" => a.duration = Duration::from_secs_f64(num(&v)?),
            "--warmup" => a.warmup = Duration::from_secs_f64(num(&v)?),
            "--wait" if v == "busy" => a.wait = WaitMode::Busy,
            "--wait" if v == "block" => a.wait = WaitMode::Block,
            "--cpu" => {
                let (p, s) = v.split_once(',').ok_or("--cpu: PUB,SUB")?;
                a.cpu = Some((num(p)? as usize, num(s)? as usize));
            }
            _ => return Err(format!("{flag}: unknown (see the file's usage)")),
        }
    }
    if a.subscribers == 0 || a.topics == 0 || a.size < pubsubperf_core::sample::HEADER_LEN {
        return Err("--subscribers and --topics at least 1, --size at least 24".into());
    }
    Ok(a)
}

/// One topic: its writer's thread and its readers' threads.
fn topic<B: Binding>(
    a: &Args,
    t: usize,
    stop: &Arc<AtomicBool>,
    counters: &mut Vec<Arc<AtomicU64>>,
) -> Result<Vec<std::thread::JoinHandle<()>>, String> {
    let mut cfg = EndpointConfig::for_test(&format!("floor{}t{t}", std::process::id()));
    cfg.wait = a.wait;
    cfg.max_sample_size = a.size;
    cfg.subscribers = a.subscribers;
    let mut b = B::open(&cfg).map_err(|e| e.to_string())?;
    let mut locators = Vec::new();
    let mut threads = Vec::new();
    for i in 0..a.subscribers {
        let (mut r, l) = b
            .create_reader(&TopicSpec {
                name: "data".into(),
                index: i,
            })
            .map_err(|e| e.to_string())?;
        locators.push(l);
        // Each reader's own counter, stored after each receive call (no
        // shared cache line per sample).
        let counted = Arc::new(AtomicU64::new(0));
        counters.push(counted.clone());
        let (stop, cpu) = (stop.clone(), a.cpu.map(|c| c.1));
        threads.push(std::thread::spawn(move || {
            if let Some(c) = cpu {
                let _ = sys::pin_to_cpu(c);
            }
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let mut count = |s: Received| {
                    if let Some(h) = Header::read(s.head())
                        && h.flags & FLAG_WARMUP == 0
                    {
                        n += 1;
                    }
                };
                if r.recv(Duration::from_millis(50), &mut count).is_err() {
                    break;
                }
                counted.store(n, Ordering::Relaxed);
            }
        }));
    }
    let mut w = b
        .create_writer(
            &TopicSpec {
                name: "data".into(),
                index: 0,
            },
            &locators,
        )
        .map_err(|e| e.to_string())?;
    w.wait_matched(a.subscribers, Duration::from_secs(10))
        .map_err(|e| e.to_string())?;
    let (stop, size, warm, cpu, count) =
        (stop.clone(), a.size, a.warmup, a.cpu.map(|c| c.0), a.count);
    threads.push(std::thread::spawn(move || {
        let _keep = b;
        if let Some(c) = cpu {
            let _ = sys::pin_to_cpu(c);
        }
        // The clock is read every 1024 sends (the harness's loop reads it
        // every 64): a read per send would be most of the loop's cost.
        let start = Instant::now();
        let mut seq = 0u64;
        let mut flags = if warm.is_zero() { 0 } else { FLAG_WARMUP };
        let mut measured = 0u64;
        while !stop.load(Ordering::Relaxed) {
            if flags != 0 && seq.is_multiple_of(1024) && start.elapsed() >= warm {
                flags = 0;
            }
            let h = Header {
                seq,
                publisher: 0,
                flags,
                timestamp: 0,
                key: 0,
            };
            if w.send(size, |buf| h.write(buf)).is_err() {
                break;
            }
            seq += 1;
            if flags == 0 {
                measured += 1;
                if measured == count {
                    break;
                }
            }
        }
        let _ = w.flush();
    }));
    Ok(threads)
}

fn run<B: Binding>(a: &Args) -> Result<f64, String> {
    let stop = Arc::new(AtomicBool::new(false));
    let mut counters = Vec::new();
    let mut threads = Vec::new();
    for t in 0..a.topics {
        threads.extend(topic::<B>(a, t, &stop, &mut counters)?);
    }
    let reading = |c: &[Arc<AtomicU64>]| c.iter().map(|x| x.load(Ordering::Relaxed)).sum::<u64>();
    let start = Instant::now();
    if a.count > 0 {
        // Until every reader has every sample (bounded by an hour).
        let want = a.count * (a.subscribers * a.topics) as u64;
        while reading(&counters) < want && start.elapsed() < Duration::from_secs(3600) {
            std::thread::sleep(Duration::from_millis(1));
        }
    } else {
        std::thread::sleep(a.warmup + a.duration);
    }
    let elapsed = start.elapsed().saturating_sub(a.warmup);
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        let _ = t.join();
    }
    let seconds = if a.count > 0 {
        elapsed.as_secs_f64()
    } else {
        a.duration.as_secs_f64()
    };
    Ok(reading(&counters) as f64 / seconds)
}

fn main() {
    let a = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("harness_floor: {e}");
            std::process::exit(2);
        }
    };
    let r = match a.binding.as_str() {
        "intra" => run::<pubsubperf_raw::Intra>(&a),
        "mock" => run::<pubsubperf_mock::Mock>(&a),
        other => Err(format!("--binding {other}: intra or mock")),
    };
    match r {
        Ok(per_s) => println!("per_s={per_s:.1}"),
        Err(e) => {
            eprintln!("harness_floor: {e}");
            std::process::exit(1);
        }
    }
}
