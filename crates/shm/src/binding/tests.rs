use super::*;
use crate::layout::FAST_READERS;
use Reliability::{BestEffort, Reliable};
use WaitMode::{Block, Busy};
use pubsubperf_core::Received;
use pubsubperf_core::{
    Binding, BindingError, EndpointConfig, Reader, Reliability, TopicSpec, WaitMode, Writer,
};
use pubsubperf_testkit::TestConfig;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

fn base(id: &str) -> EndpointConfig {
    EndpointConfig::for_test(id)
        .transport("shm")
        .max_sample_size(1 << 20)
}

/// A writer and a reader that never reads, on one topic.
fn stalled(cfg: &EndpointConfig) -> (Shm, ShmWriter, Shm, ShmReader) {
    let topic = TopicSpec {
        name: "data".into(),
        index: 0,
    };
    let mut sub = Shm::open(cfg).unwrap();
    let (mut r, loc) = sub.create_reader(&topic).unwrap();
    let mut publ = Shm::open(cfg).unwrap();
    let mut w = publ.create_writer(&topic, &[loc]).unwrap();
    r.wait_matched(Duration::from_secs(5)).unwrap();
    w.wait_matched(1, Duration::from_secs(5)).unwrap();
    (publ, w, sub, r)
}

/// Zero copy into a 4-entry ring of samples up to 256 bytes.
fn small_zero_copy(tag: &str, rel: Reliability, wait: WaitMode) -> EndpointConfig {
    let mut cfg = base(&pubsubperf_testkit::conformance::unique_id(tag));
    cfg.zero_copy = true;
    cfg.wait = wait;
    cfg.reliability = rel;
    cfg.max_sample_size = 256;
    cfg.receive_queue = 4;
    cfg
}

/// The sequence number [`send_seq`] wrote into a received sample.
fn seq_of(s: Received) -> u64 {
    let s = s.as_slice().expect("one piece");
    u64::from_le_bytes(s[..8].try_into().unwrap())
}

fn send_seq(w: &mut ShmWriter, seq: u64) -> Result<(), BindingError> {
    w.send(64, |b| b[..8].copy_from_slice(&seq.to_le_bytes()))
}

/// Best effort: a reader that stops reading never blocks the writer;
/// what it missed shows up as a gap, and it gets newer samples later.
#[test]
fn best_effort_writer_never_blocks_on_a_stalled_reader() {
    for zc in [false, true] {
        let mut cfg = base(&pubsubperf_testkit::conformance::unique_id("stall"));
        cfg.reliability = BestEffort;
        cfg.zero_copy = zc;
        cfg.max_sample_size = 4096;
        cfg.receive_queue = 8;
        let (_p, mut w, _s, mut r) = stalled(&cfg);
        let start = Instant::now();
        for seq in 0..1000 {
            send_seq(&mut w, seq).unwrap();
        }
        assert!(start.elapsed() < Duration::from_secs(5), "writer blocked");
        let mut got = Vec::new();
        r.recv(Duration::from_millis(100), &mut |s: Received| {
            got.push(seq_of(s))
        })
        .unwrap();
        // The ring kept the first 8; the rest were dropped.
        assert_eq!(got, (0..8).collect::<Vec<_>>());
        send_seq(&mut w, 1000).unwrap();
        got.clear();
        r.recv(Duration::from_millis(100), &mut |s: Received| {
            got.push(seq_of(s))
        })
        .unwrap();
        assert_eq!(got, vec![1000]);
    }
}

/// Reliable: a reader that stops reading blocks the writer for the
/// configured timeout, then `send` fails with `WriteTimeout`.
#[test]
fn reliable_writer_times_out_on_a_stalled_reader() {
    for (zc, wait) in [(false, Block), (true, Block), (false, Busy), (true, Busy)] {
        let mut cfg = base(&pubsubperf_testkit::conformance::unique_id("timeout"));
        cfg.zero_copy = zc;
        cfg.wait = wait;
        cfg.receive_queue = 4;
        cfg.reliable_block_timeout_ms = 200;
        let (_p, mut w, _s, _r) = stalled(&cfg);
        for seq in 0..4 {
            send_seq(&mut w, seq).unwrap();
        }
        let start = Instant::now();
        let e = send_seq(&mut w, 4).unwrap_err();
        assert!(matches!(e, BindingError::WriteTimeout(_)), "{e}");
        assert!(start.elapsed() >= Duration::from_millis(200));
    }
}

/// Asserts that a one-reader writer knows of every slot of its pool
/// exactly once: free, recorded under a position not yet reclaimed, or
/// in hand.
fn assert_slots_accounted(w: &ShmWriter, what: &str) {
    let sole = w.sole.as_ref().expect("one reader");
    let cap = sole.held.len() as u64;
    let mut v: Vec<usize> = sole.free.iter().map(|&s| s as usize).collect();
    v.extend((sole.reclaimed..w.targets[0].tail).map(|p| sole.held[(p % cap) as usize] as usize));
    v.extend(w.next.iter().chain(w.after.iter()));
    v.sort_unstable();
    let all: Vec<usize> = (0..w.pool.as_ref().unwrap().slots).collect();
    assert_eq!(v, all, "{what}");
}

/// A sample does not change under the only reader's callback: the
/// writer reclaims the slots of consumed positions, and the reader
/// consumes after its callback. Here, after `warm` sample-by-sample
/// rounds, the callback of a sample itself sends `burst` samples (best
/// effort: a send that finds a slot fills it even when the ring is full)
/// and then checks that its sample did not change; every combination, as
/// the slot the writer would refill depends on where its free list
/// stands. Consuming before the callback fails here with a last-in,
/// first-out free list (warm 1, burst 5); with first in, first out the
/// pool's two spare slots happen to cover it.
#[test]
fn sole_reader_consumes_after_its_callback() {
    for warm in 0..12u64 {
        for burst in 1..10u64 {
            let cfg = small_zero_copy("held", BestEffort, Busy);
            let (_p, mut w, _s, mut r) = stalled(&cfg);
            let mut next = 0u64;
            let mut seen = Vec::new();
            for _ in 0..warm {
                send_seq(&mut w, next).unwrap();
                next += 1;
                r.recv(Duration::from_millis(500), &mut |_: Received| {})
                    .unwrap();
            }
            send_seq(&mut w, next).unwrap();
            r.recv(Duration::from_millis(500), &mut |s: Received| {
                let s = s.as_slice().expect("one piece");
                if seen.is_empty() {
                    for k in 1..=burst {
                        send_seq(&mut w, 1000 + k).unwrap();
                    }
                }
                seen.push(u64::from_le_bytes(s[..8].try_into().unwrap()));
            })
            .unwrap();
            assert_eq!(
                seen[0], next,
                "warm {warm}, burst {burst}: the sample changed"
            );
        }
    }
}

/// A consumer position beyond the writer's tail (a corrupt or foreign
/// reader segment) is cut at the tail when the writer reclaims slots:
/// only slots it recorded come back, never a position's empty entry.
#[test]
fn reclaim_does_not_trust_the_consumer_position() {
    let mut sole = Sole::new(6, 4);
    sole.free.clear();
    for (pos, slot) in [(0u64, 3u32), (1, 5), (2, 0)] {
        sole.held[pos as usize] = slot;
    }
    sole.reclaim(2 + 3, 3);
    assert_eq!(sole.free, [3, 5, 0]);
    assert_eq!(sole.reclaimed, 3);
}

/// A reliable send that timed out keeps its slot (zero copy): after
/// several timeouts, once the reader caught up, the writer fills the
/// whole ring again (a slot lost per timeout would leave too few).
#[test]
fn timed_out_sends_lose_no_slot() {
    for wait in [Busy, Block] {
        let mut cfg = small_zero_copy("keep", Reliable, wait);
        cfg.reliable_block_timeout_ms = 50;
        let (_p, mut w, _s, mut r) = stalled(&cfg);
        let mut got = Vec::new();
        for lap in 0..2 {
            for seq in 0..4 {
                send_seq(&mut w, lap * 4 + seq).unwrap();
            }
            for _ in 0..3 {
                let e = send_seq(&mut w, 99).unwrap_err();
                assert!(matches!(e, BindingError::WriteTimeout(_)), "{e}");
            }
            while got.len() < 4 * (lap as usize + 1) {
                r.recv(Duration::from_millis(500), &mut |s: Received| {
                    got.push(seq_of(s))
                })
                .unwrap();
            }
            assert_slots_accounted(&w, &format!("lap {lap}"));
        }
        assert_eq!(got, (0..8).collect::<Vec<_>>(), "{wait:?}");
    }
}

/// A blocked reader wakes for a sample through the futex, and returns
/// at its timeout when nothing comes.
#[test]
fn blocked_reader_wakes_and_times_out() {
    let cfg = base(&pubsubperf_testkit::conformance::unique_id("wake"));
    let (_p, mut w, _s, mut r) = stalled(&cfg);
    let start = Instant::now();
    let n = r.recv(Duration::from_millis(150), &mut |_| {}).unwrap();
    assert_eq!(n, 0);
    assert!(start.elapsed() >= Duration::from_millis(150));
    let t = std::thread::spawn(move || {
        let mut n = 0;
        while n == 0 {
            n = r.recv(Duration::from_secs(5), &mut |_| {}).unwrap();
        }
        n
    });
    std::thread::sleep(Duration::from_millis(50));
    send_seq(&mut w, 0).unwrap();
    assert_eq!(t.join().unwrap(), 1);
}

/// Zero copy with more readers than slot heads have words for: the
/// first `FAST_READERS` read through the announced slot, the rest
/// through their rings only; all get every sample, in order, under
/// reliable, and a reader that lagged (best effort) finds its way back
/// through its ring.
#[test]
fn zero_copy_more_readers_than_fast_words() {
    for rel in [Reliable, BestEffort] {
        let mut cfg = base(&pubsubperf_testkit::conformance::unique_id("manyreaders"));
        cfg.zero_copy = true;
        cfg.wait = Busy;
        cfg.reliability = rel;
        cfg.max_sample_size = 256;
        cfg.receive_queue = 4;
        let topic = TopicSpec {
            name: "data".into(),
            index: 0,
        };
        let n = FAST_READERS + 2;
        let mut sub = Shm::open(&cfg).unwrap();
        let mut readers = Vec::new();
        let mut locs = Vec::new();
        for i in 0..n {
            let (r, l) = sub
                .create_reader(&TopicSpec {
                    name: "data".into(),
                    index: i,
                })
                .unwrap();
            readers.push(r);
            locs.push(l);
        }
        let mut publ = Shm::open(&cfg).unwrap();
        let mut w = publ.create_writer(&topic, &locs).unwrap();
        for r in readers.iter_mut() {
            r.wait_matched(Duration::from_secs(5)).unwrap();
        }
        w.wait_matched(n, Duration::from_secs(5)).unwrap();
        let mut got = vec![Vec::new(); n];
        for seq in 0..400u64 {
            send_seq(&mut w, seq).unwrap();
            // Reader 0 lags: it reads every 7th round only.
            for (i, r) in readers.iter_mut().enumerate() {
                if i == 0 && rel == BestEffort && seq % 7 != 0 {
                    continue;
                }
                r.recv(Duration::from_millis(100), &mut |s: Received| {
                    got[i].push(seq_of(s))
                })
                .unwrap();
            }
        }
        for (i, g) in got.iter().enumerate() {
            if i == 0 && rel == BestEffort {
                assert!(g.windows(2).all(|w| w[0] < w[1]), "{g:?}");
                assert!(g.len() < 400, "{g:?}");
            } else {
                assert_eq!(*g, (0..400).collect::<Vec<_>>(), "reader {i}");
            }
        }
        // Once it caught up, the lagging reader gets the next sample.
        let mut last = Vec::new();
        while readers[0]
            .recv(Duration::from_millis(20), &mut |s: Received| {
                last.push(seq_of(s))
            })
            .unwrap()
            > 0
        {}
        send_seq(&mut w, 400).unwrap();
        last.clear();
        readers[0]
            .recv(Duration::from_millis(100), &mut |s: Received| {
                last.push(seq_of(s))
            })
            .unwrap();
        assert_eq!(last, vec![400]);
    }
}

/// A posted mark is never 0 (a word nobody stored to), not even at
/// position 2^32 - 1, and repeats only 2^31 positions later.
#[test]
fn posted_marks_are_never_zero() {
    for pos in [
        0u64,
        1,
        (1 << 31) - 1,
        1 << 31,
        (1 << 32) - 1,
        1 << 32,
        u64::MAX,
    ] {
        assert_ne!(posted_mark(pos), 0, "position {pos}");
        assert_ne!(posted_mark(pos), posted_mark(pos.wrapping_add(1)));
        assert_ne!(
            posted_mark(pos),
            posted_mark(pos.wrapping_add((1 << 31) - 1))
        );
        assert_eq!(posted_mark(pos), posted_mark(pos.wrapping_add(1 << 31)));
    }
}

/// Zero copy with one reader: the writer finds free slots without
/// reference counts, from the positions the reader consumed. Over many
/// laps of a small ring, with bursts up to and beyond its depth, every
/// sample arrives whole and in order (a slot handed out twice would show
/// another sample's content), a reliable writer never runs out of slots
/// (a lost slot would end in a write timeout), and best effort drops only
/// what did not fit.
#[test]
fn sole_reader_slots_come_back_over_many_laps() {
    for (rel, wait) in [(Reliable, Busy), (Reliable, Block), (BestEffort, Busy)] {
        let mut cfg = small_zero_copy("laps", rel, wait);
        cfg.reliable_block_timeout_ms = 200;
        let (_p, mut w, _s, mut r) = stalled(&cfg);
        let (mut seq, mut expect) = (0u64, 0u64);
        for lap in 0..5000u64 {
            // 1..=4 samples (the ring's depth), best effort up to 6.
            let burst = 1 + lap % if rel == Reliable { 4 } else { 6 };
            for _ in 0..burst {
                w.send(100 + (seq % 100) as usize, |b| {
                    b[..8].copy_from_slice(&seq.to_le_bytes());
                    let n = b.len();
                    b[n - 8..].copy_from_slice(&seq.to_le_bytes());
                })
                .unwrap();
                seq += 1;
            }
            let mut got = 0;
            while got < burst.min(4) {
                got += r
                    .recv(Duration::from_millis(500), &mut |s: Received| {
                        let s = s.as_slice().expect("one piece");
                        let first = u64::from_le_bytes(s[..8].try_into().unwrap());
                        let last = u64::from_le_bytes(s[s.len() - 8..].try_into().unwrap());
                        assert_eq!(first, last, "a slot was written while held");
                        assert_eq!(s.len(), 100 + (first % 100) as usize);
                        assert!(first >= expect, "sample {first} after {expect}");
                        if rel == Reliable {
                            assert_eq!(first, expect, "lost a sample");
                        }
                        expect = first + 1;
                    })
                    .unwrap() as u64;
            }
            assert_eq!(got, burst.min(4), "lap {lap}");
            assert_slots_accounted(&w, &format!("lap {lap}"));
        }
        assert_eq!(expect, seq, "the last sample arrived");
    }
}

/// A ring takes one writer; a second is refused, not allowed to corrupt it.
#[test]
fn second_writer_on_a_ring_is_refused() {
    let cfg = base(&pubsubperf_testkit::conformance::unique_id("twowriters"));
    let topic = TopicSpec {
        name: "data".into(),
        index: 0,
    };
    let mut sub = Shm::open(&cfg).unwrap();
    let (r, loc) = sub.create_reader(&topic).unwrap();
    // As if another writer had claimed the ring (a name is removed once
    // a writer mapped it, so a second writer could only race the first).
    r.hdr().link.writer_pid.store(1, Ordering::Release);
    let mut publ = Shm::open(&cfg).unwrap();
    let e = publ
        .create_writer(&topic, std::slice::from_ref(&loc))
        .err()
        .expect("second writer refused");
    assert!(e.to_string().contains("already has a writer"), "{e}");
}

/// Options the binding does not have are refused, naming the flag.
#[test]
fn refuses_options_it_does_not_have() {
    let mut c = base("refuse");
    c.batch_bytes = 1024;
    assert!(
        Shm::validate(&c)
            .unwrap_err()
            .to_string()
            .contains("--batch")
    );
    let mut c = base("refuse");
    c.multicast = true;
    assert!(
        Shm::validate(&c)
            .unwrap_err()
            .to_string()
            .contains("--multicast")
    );
    let mut c = base("refuse");
    c.options.insert("x".into(), "1".into());
    assert!(
        Shm::validate(&c)
            .unwrap_err()
            .to_string()
            .contains("--opt x")
    );
    let mut c = base("refuse");
    c.transport = "udp".into();
    assert!(
        Shm::validate(&c)
            .unwrap_err()
            .to_string()
            .contains("--transport")
    );
}

/// `--send-queue` has nothing to size here and is refused; the reader's
/// ring is `--receive-queue`.
#[test]
fn send_queue_is_refused() {
    let mut cfg = base("sq");
    cfg.send_queue = 5;
    let e = Shm::validate(&cfg).unwrap_err().to_string();
    assert!(e.contains("--send-queue 5: shm"), "{e}");
    cfg.send_queue = 0;
    cfg.receive_queue = 5;
    assert!(Shm::validate(&cfg).is_ok());
}
