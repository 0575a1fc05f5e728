//! Throughput: the publisher sends as fast as the subscriber keeps up (its
//! publisher blocks on a full subscriber buffer), the subscriber counts.

use crate::ports::Side;
use crate::{Opts, pin};
use std::time::{Duration, Instant};

const STOP: u64 = u64::MAX;

/// Sends until the subscriber says its window is over (at most warm-up +
/// duration + 60 s), then a stop sample.
pub fn publisher(tag: &str, o: &Opts) {
    pin(o.cpus.0);
    let mut s = Side::new(tag, "data", "ack", o);
    s.wait_peer();
    // Until the subscriber's end of the connection is attached, iceoryx2
    // drops what does not fit in its buffer instead of blocking: start
    // once the subscriber says it is attached.
    assert!(
        s.recv(Duration::from_secs(30)).is_some(),
        "no ready sign from the subscriber"
    );
    let end = Instant::now() + Duration::from_secs_f64(o.warmup + o.duration + 60.0);
    let mut seq = 0u64;
    loop {
        s.send(o.size, seq);
        seq += 1;
        if seq.is_multiple_of(256) && (s.poll().is_some() || Instant::now() >= end) {
            break;
        }
    }
    s.send(o.size, STOP);
    s.linger();
}

/// Counts samples from the first one on; prints the rate over `duration`
/// seconds that start `warmup` seconds after the first sample.
pub fn subscriber(tag: &str, o: &Opts) {
    pin(o.cpus.1);
    // The "ack" topic carries one ready sign to the publisher.
    let mut s = Side::new(tag, "ack", "data", o);
    s.wait_peer();
    s.send(8, 0);
    let mut n = 0u64;
    let mut expect = 0u64;
    let (mut from, mut window) = (None::<(Instant, u64)>, None::<(f64, u64)>);
    let mut start = None::<Instant>;
    loop {
        let Some(seq) = s.recv(Duration::from_secs(10)) else {
            panic!("subscriber: nothing within 10 s");
        };
        if seq == STOP {
            break;
        }
        assert_eq!(seq, expect, "sample lost or out of order");
        expect += 1;
        n += 1;
        if n & 63 != 1 {
            continue;
        }
        let now = Instant::now();
        let t0 = *start.get_or_insert(now);
        match from {
            None if now - t0 >= Duration::from_secs_f64(o.warmup) => from = Some((now, n)),
            Some((f, fn_)) if window.is_none() && (now - f).as_secs_f64() >= o.duration => {
                window = Some(((now - f).as_secs_f64(), n - fn_));
                // The publisher may stop now.
                s.send(8, 1);
            }
            _ => {}
        }
    }
    let (secs, count) = window.expect("the publisher stopped before the window ended");
    println!(
        "per_s={:.0} samples={count} secs={secs:.3} size={} copy={} wait={}",
        count as f64 / secs,
        o.size,
        o.copy,
        if o.block { "block" } else { "busy" }
    );
}
