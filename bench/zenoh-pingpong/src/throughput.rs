//! Throughput (z_pub_thr / z_sub_thr): the publisher puts one prebuilt
//! payload as fast as `put` returns, the subscriber counts.

use crate::latency::stop_flag;
use crate::{Opts, open_connected, open_listening, pin, start_peer, unpinned};
use std::process::Child;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use zenoh::Wait;
use zenoh::bytes::ZBytes;
use zenoh::qos::CongestionControl;

/// Closes the peer's stdin (its signal to stop) and waits for it.
pub fn end_peer(child: &mut Child) {
    drop(child.stdin.take());
    let st = child.wait().expect("peer exit");
    assert!(st.success(), "the peer failed: {st}");
}

pub fn publisher(o: &Opts, pass: &[String]) {
    pin(o.cpus.0);
    let (s, locator) = open_listening();
    let s2 = s.clone();
    let express = o.express;
    let publisher = unpinned(move || {
        s2.declare_publisher("pingpong/thr")
            .congestion_control(CongestionControl::Block)
            .express(express)
            .wait()
            .expect("publisher")
    });
    let mut child = start_peer(&locator, pass);
    let data = ZBytes::from(vec![0xA5u8; o.size]);
    // Puts before the subscriber is known are dropped; the subscriber's
    // window starts at its first sample and ends well before this does.
    let end = Instant::now() + Duration::from_secs_f64(10.0 + o.warmup + o.duration);
    let mut n = 0u64;
    // Until the subscriber has printed its rate and exited (looked at
    // every 256 puts, as the end time).
    loop {
        publisher.put(data.clone()).wait().expect("put");
        n += 1;
        if n.is_multiple_of(256)
            && (Instant::now() >= end || child.try_wait().expect("peer").is_some())
        {
            break;
        }
    }
    end_peer(&mut child);
    drop(publisher);
    s.close().wait().expect("close");
}

pub fn subscriber(locator: &str, o: &Opts) {
    pin(o.cpus.1);
    let _done = stop_flag();
    let s = open_connected(locator);
    let count = Arc::new(AtomicU64::new(0));
    let c = count.clone();
    let s2 = s.clone();
    let window = Duration::from_secs_f64(o.duration);
    let warmup = Duration::from_secs_f64(o.warmup);
    let (rate, counted, secs) = if o.callback {
        // z_sub_thr: counted in the callback, on zenoh's receive task.
        let _sub = unpinned(move || {
            s2.declare_subscriber("pingpong/thr")
                .callback(move |_sample| {
                    c.fetch_add(1, Ordering::Relaxed);
                })
                .wait()
                .expect("subscriber")
        });
        measure(&count, warmup, window)
    } else {
        // pubsubperf's way: taken from a FIFO channel by our own thread.
        let sub = unpinned(move || {
            s2.declare_subscriber("pingpong/thr")
                .wait()
                .expect("subscriber")
        });
        let timer = std::thread::spawn(move || measure(&count, warmup, window));
        let mut n = 0u64;
        while !timer.is_finished() {
            if sub
                .recv_timeout(Duration::from_millis(100))
                .expect("recv")
                .is_some()
            {
                n += 1;
                c.store(n, Ordering::Relaxed);
            }
        }
        timer.join().expect("timer")
    };
    println!(
        "per_s={rate:.0} samples={counted} secs={secs:.3} size={} recv={} express={}",
        o.size,
        if o.callback { "callback" } else { "channel" },
        o.express
    );
    s.close().wait().expect("close");
}

/// Waits for the first sample, then `warmup`, then counts over `window`:
/// (samples/s, samples, seconds).
fn measure(count: &AtomicU64, warmup: Duration, window: Duration) -> (f64, u64, f64) {
    let t = Instant::now();
    while count.load(Ordering::Relaxed) == 0 {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "no sample within 30 s"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    std::thread::sleep(warmup);
    let (t0, c0) = (Instant::now(), count.load(Ordering::Relaxed));
    std::thread::sleep(window);
    let (t1, c1) = (Instant::now(), count.load(Ordering::Relaxed));
    let secs = (t1 - t0).as_secs_f64();
    ((c1 - c0) as f64 / secs, c1 - c0, secs)
}
