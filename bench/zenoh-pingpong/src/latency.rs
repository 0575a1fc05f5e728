//! Ping-pong (z_ping / z_pong): ping times round trips, pong echoes.

use crate::{Opts, open_connected, open_listening, pin, start_peer, unpinned};
use std::io::Read;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use zenoh::bytes::ZBytes;
use zenoh::qos::CongestionControl;
use zenoh::{Session, Wait};

type Channel =
    zenoh::pubsub::Subscriber<zenoh::handlers::FifoChannelHandler<zenoh::sample::Sample>>;

/// True once stdin is closed: the parent's way of saying "stop".
pub fn stop_flag() -> Arc<AtomicBool> {
    let done = Arc::new(AtomicBool::new(false));
    let d = done.clone();
    std::thread::spawn(move || {
        let mut b = [0u8; 64];
        while std::io::stdin().read(&mut b).is_ok_and(|n| n > 0) {}
        d.store(true, Ordering::Release);
    });
    done
}

fn publisher(s: &Session, key: &'static str, express: bool) -> zenoh::pubsub::Publisher<'static> {
    let s = s.clone();
    unpinned(move || {
        s.declare_publisher(key)
            .congestion_control(CongestionControl::Block)
            .express(express)
            .wait()
            .expect("publisher")
    })
}

fn channel(s: &Session, key: &'static str) -> Channel {
    let s = s.clone();
    unpinned(move || s.declare_subscriber(key).wait().expect("subscriber"))
}

pub fn pong(locator: &str, o: &Opts) {
    pin(o.cpus.1);
    let done = stop_flag();
    let s = open_connected(locator);
    let publisher = publisher(&s, "pingpong/pong", o.express);
    if o.callback {
        // z_pong: the echo is put from the subscriber's callback, on
        // zenoh's receive task, with the received payload itself.
        let s2 = s.clone();
        let _sub = unpinned(move || {
            s2.declare_subscriber("pingpong/ping")
                .callback(move |sample| {
                    let _ = publisher.put(sample.payload().clone()).wait();
                })
                .wait()
                .expect("subscriber")
        });
        while !done.load(Ordering::Acquire) {
            std::thread::sleep(Duration::from_millis(20));
        }
    } else {
        // pubsubperf's way: take from a channel on our own thread, echo a copy.
        let sub = channel(&s, "pingpong/ping");
        let mut buf = vec![0u8; o.size];
        while !done.load(Ordering::Acquire) {
            let got = if o.busy {
                sub.try_recv().expect("recv")
            } else {
                sub.recv_timeout(Duration::from_millis(100)).expect("recv")
            };
            let Some(sample) = got else { continue };
            let p = sample.payload().to_bytes();
            let n = p.len();
            buf[..n].copy_from_slice(&p);
            publisher.put(ZBytes::from(&buf[..n])).wait().expect("put");
        }
    }
    s.close().wait().expect("close");
}

fn recv(sub: &Channel, busy: bool, timeout: Duration) -> bool {
    let start = Instant::now();
    loop {
        let got = if busy {
            sub.try_recv().expect("recv")
        } else {
            sub.recv_timeout(timeout.min(Duration::from_millis(100)))
                .expect("recv")
        };
        if got.is_some() {
            return true;
        }
        if start.elapsed() > timeout {
            return false;
        }
    }
}

pub fn ping(o: &Opts, pass: &[String]) {
    pin(o.cpus.0);
    let (s, locator) = open_listening();
    let publisher = publisher(&s, "pingpong/ping", o.express);
    let sub = channel(&s, "pingpong/pong");
    let mut child = start_peer(&locator, pass);
    // As z_ping: one payload, put again and again (clones share it).
    let data = ZBytes::from(vec![0xA5u8; o.size]);
    // Puts before the peer's subscriber is known are dropped: repeat until
    // an echo comes back, then drain.
    let t = Instant::now();
    loop {
        publisher.put(data.clone()).wait().expect("put");
        if recv(&sub, o.busy, Duration::from_millis(50)) {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(30), "no echo within 30 s");
    }
    while recv(&sub, o.busy, Duration::from_millis(50)) {}
    let warm_until = Instant::now() + Duration::from_secs_f64(o.warmup);
    let mut end = warm_until;
    let mut rtts: Vec<u64> = Vec::with_capacity(2_000_000);
    let mut measuring = false;
    loop {
        let t0 = Instant::now();
        publisher.put(data.clone()).wait().expect("put");
        assert!(
            recv(&sub, o.busy, Duration::from_secs(10)),
            "an echo was lost"
        );
        let t1 = Instant::now();
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
    drop(child.stdin.take());
    crate::throughput::end_peer(&mut child);
    drop((sub, publisher));
    s.close().wait().expect("close");
    rtts.sort_unstable();
    let q = |p: f64| rtts[((rtts.len() - 1) as f64 * p).round() as usize] / 2;
    println!(
        "p50_ns={} p90_ns={} p99_ns={} samples={} size={} recv={} wait={} express={}",
        q(0.5),
        q(0.9),
        q(0.99),
        rtts.len(),
        o.size,
        if o.callback { "callback" } else { "channel" },
        if o.busy { "busy" } else { "block" },
        o.express
    );
}
