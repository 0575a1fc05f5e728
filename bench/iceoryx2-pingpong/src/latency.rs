//! Ping-pong: ping times round trips, pong echoes each sample.

use crate::ports::Side;
use crate::{Opts, pin};
use std::time::{Duration, Instant};

const STOP: u64 = u64::MAX;

pub fn pong(tag: &str, o: &Opts) {
    pin(o.cpus.1);
    let mut s = Side::new(tag, "pong", "ping", o);
    s.wait_peer();
    loop {
        let Some(seq) = s.recv(Duration::from_secs(30)) else {
            panic!("pong: nothing from ping within 30 s");
        };
        s.send(o.size, seq);
        if seq == STOP {
            s.linger();
            return;
        }
    }
}

pub fn ping(tag: &str, o: &Opts) {
    pin(o.cpus.0);
    let mut s = Side::new(tag, "ping", "pong", o);
    s.wait_peer();
    let warm_until = Instant::now() + Duration::from_secs_f64(o.warmup);
    let mut end = warm_until + Duration::from_secs_f64(o.duration);
    let mut rtts: Vec<u64> = Vec::with_capacity(4_000_000);
    let mut seq = 0u64;
    let mut measuring = false;
    loop {
        let t0 = Instant::now();
        s.send(o.size, seq);
        // Generous: a loaded machine can stall a round trip for seconds.
        let got = s.recv(Duration::from_secs(30));
        let t1 = Instant::now();
        assert_eq!(got, Some(seq), "echo of {seq} missing or out of order");
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
    s.send(o.size, STOP);
    assert_eq!(s.recv(Duration::from_secs(30)), Some(STOP), "no stop echo");
    drop(s);
    rtts.sort_unstable();
    let q = |p: f64| rtts[((rtts.len() - 1) as f64 * p).round() as usize] / 2;
    println!(
        "p50_ns={} p90_ns={} p99_ns={} samples={} size={} copy={} wait={}",
        q(0.5),
        q(0.9),
        q(0.99),
        rtts.len(),
        o.size,
        o.copy,
        if o.block { "block" } else { "busy" }
    );
}
