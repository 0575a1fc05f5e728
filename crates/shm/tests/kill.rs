//! Robustness: a publisher or subscriber process killed with SIGKILL leaves
//! nothing in /dev/shm, the survivor neither hangs nor fails, and segments of
//! a process killed before its peer mapped them are swept by the next run.
//!
//! The test binary re-executes itself as the publisher and subscriber
//! processes (the `peer` test is a no-op unless `SHM_PEER_ROLE` is set).

use pubsubperf_core::Received;
use pubsubperf_core::{
    Binding, DataType, EndpointConfig, Reader, Reliability, TopicSpec, WaitMode, Writer,
};
use pubsubperf_shm::Shm;
use pubsubperf_testkit::peer::{Peer, say};
use std::time::{Duration, Instant};

const SAMPLE: usize = 64 << 10;

fn cfg(run_id: &str, zero_copy: bool, reliable: bool) -> EndpointConfig {
    let mut c = EndpointConfig::for_test(run_id);
    c.transport = "shm".into();
    c.max_sample_size = SAMPLE;
    c.zero_copy = zero_copy;
    c.wait = WaitMode::Block;
    c.data_type = DataType::Bytes;
    c.reliability = if reliable {
        Reliability::Reliable
    } else {
        Reliability::BestEffort
    };
    c
}

fn env_cfg() -> EndpointConfig {
    let v = |k: &str| std::env::var(k).unwrap_or_default();
    cfg(&v("SHM_RUN_ID"), v("SHM_ZC") == "1", v("SHM_REL") == "1")
}

/// The peer processes. Each runs for `SHM_SECS` seconds, then ends normally.
#[test]
fn peer() {
    let Ok(role) = std::env::var("SHM_PEER_ROLE") else {
        return;
    };
    let c = env_cfg();
    let secs: f64 = std::env::var("SHM_SECS").unwrap().parse().unwrap();
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let mut b = Shm::open(&c).unwrap();
    let topic = TopicSpec {
        name: "data".into(),
        index: 0,
    };
    if role == "sub" {
        let (mut r, loc) = b.create_reader(&topic).unwrap();
        say(&format!("LOC {loc}"));
        r.wait_matched(Duration::from_secs(10)).unwrap();
        let mut n = 0u64;
        while Instant::now() < end {
            r.recv(Duration::from_millis(50), &mut |s: Received| {
                let s = s.as_slice().expect("one piece");
                assert_eq!(s.len(), SAMPLE);
                n += 1;
                if n == 1 {
                    say("RUNNING");
                }
            })
            .unwrap();
        }
        drop(r);
        say(&format!("DONE {n}"));
    } else {
        let loc = std::env::var("SHM_LOC").unwrap();
        let mut w = b.create_writer(&topic, &[loc]).unwrap();
        w.wait_matched(1, Duration::from_secs(10)).unwrap();
        say("RUNNING");
        let mut n = 0u64;
        while Instant::now() < end {
            w.send(SAMPLE, |buf| buf[..8].copy_from_slice(&n.to_le_bytes()))
                .unwrap();
            n += 1;
        }
        drop(w);
        say(&format!("DONE {n}"));
    }
}

fn spawn(role: &str, run_id: &str, zc: bool, rel: bool, loc: &str, secs: f64) -> Peer {
    let (zc, rel, secs) = (
        if zc { "1" } else { "0" },
        if rel { "1" } else { "0" },
        secs.to_string(),
    );
    Peer::spawn(
        "peer",
        &[
            ("SHM_PEER_ROLE", role),
            ("SHM_RUN_ID", run_id),
            ("SHM_ZC", zc),
            ("SHM_REL", rel),
            ("SHM_LOC", loc),
            ("SHM_SECS", &secs),
        ],
    )
}

fn leftovers(run_id: &str) -> Vec<String> {
    std::fs::read_dir("/dev/shm")
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(run_id))
        .collect()
}

fn run_id(what: &str) -> String {
    format!("kill{}-{what}", std::process::id())
}

/// Starts a subscriber and a publisher, returns them once samples flow.
fn start(id: &str, zc: bool, rel: bool, sub_secs: f64, pub_secs: f64) -> (Peer, Peer) {
    let mut sub = spawn("sub", id, zc, rel, "", sub_secs);
    let loc = sub.expect("LOC");
    let mut publ = spawn("pub", id, zc, rel, &loc, pub_secs);
    publ.expect("RUNNING");
    sub.expect("RUNNING");
    // Mid-run: both sides mapped everything, so every name is gone already.
    assert_eq!(leftovers(id), Vec::<String>::new(), "names left mid-run");
    std::thread::sleep(Duration::from_millis(200));
    (sub, publ)
}

fn kill_subscriber(zc: bool, rel: bool) {
    let id = run_id(&format!("sub-zc{zc}-rel{rel}"));
    let (mut sub, mut publ) = start(&id, zc, rel, 30.0, 1.5);
    sub.kill9();
    // The publisher keeps going: a dead reader never blocks it, even reliable.
    let sent = publ.finish("DONE").parse::<u64>().unwrap();
    assert!(sent > 0);
    assert_eq!(leftovers(&id), Vec::<String>::new());
}

fn kill_publisher(zc: bool, rel: bool) {
    let id = run_id(&format!("pub-zc{zc}-rel{rel}"));
    let (mut sub, mut publ) = start(&id, zc, rel, 1.5, 30.0);
    publ.kill9();
    let got = sub.finish("DONE").parse::<u64>().unwrap();
    assert!(got > 0);
    assert_eq!(leftovers(&id), Vec::<String>::new());
}

#[test]
fn sigkill_subscriber_copy_reliable() {
    kill_subscriber(false, true);
}

#[test]
fn sigkill_subscriber_zero_copy_reliable() {
    kill_subscriber(true, true);
}

#[test]
fn sigkill_subscriber_zero_copy_best_effort() {
    kill_subscriber(true, false);
}

#[test]
fn sigkill_publisher_copy() {
    kill_publisher(false, true);
}

#[test]
fn sigkill_publisher_zero_copy() {
    kill_publisher(true, false);
}

#[test]
fn sigkill_both() {
    let id = run_id("both");
    let (mut sub, mut publ) = start(&id, true, true, 30.0, 30.0);
    publ.kill9();
    sub.kill9();
    assert_eq!(leftovers(&id), Vec::<String>::new());
}

/// A subscriber killed after creating its ring but before any publisher
/// mapped it leaves the ring's name; the next `open` removes it because its
/// creator is gone.
#[test]
fn stale_segment_of_dead_process_is_swept() {
    let id = run_id("stale");
    let mut sub = spawn("sub", &id, false, true, "", 30.0);
    let loc = sub.expect("LOC");
    assert_eq!(leftovers(&id), vec![loc.clone()]);
    sub.kill9();
    assert_eq!(leftovers(&id), vec![loc], "the window this test needs");
    let _b = Shm::open(&cfg(&run_id("sweeper"), false, true)).unwrap();
    assert_eq!(leftovers(&id), Vec::<String>::new());
}
