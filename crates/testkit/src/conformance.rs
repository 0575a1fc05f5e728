//! The binding conformance suite: the contract of [`Binding`](pubsubperf_core::Binding),
//! executable. Written once, instantiated for every binding (and every mode
//! of it) with [`conformance_suite!`](crate::conformance_suite):
//!
//! ```text
//! fn cfg(run_id: &str) -> EndpointConfig { /* this binding's settings */ }
//! pubsubperf_testkit::conformance_suite!(udp_block, Udp, cfg);
//! ```
//!
//! Each check opens a publisher side and a subscriber side in this process
//! (threads), so it also covers bindings that can only run in one process.
//! The checks run one at a time (a global lock), which lets the clean
//! shutdown check count this process's threads and file descriptors.
//! No check asserts a time but one: a receive of 50 ms with nothing sent
//! returns within [`QUIET_BOUND`] (generous on a loaded machine; a wait that
//! overshoots its timeout many-fold fails it). Other bounded waits only
//! turn a hang into a failure.

use pubsubperf_core::sample::{Header, check_pattern, fill_pattern};
use pubsubperf_core::seq::SeqTracker;
use pubsubperf_core::{Binding, EndpointConfig, Reader, Received, Reliability, TopicSpec, Writer};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long any single wait in the suite may take before the check fails.
const WAIT: Duration = Duration::from_secs(10);
/// How long a receive of 50 ms with nothing sent may take: its 100 ms wake
/// up and a loaded machine's delays, well under what an overshoot by a
/// multiple of the timeout or of the 100 ms poll would take.
pub const QUIET_BOUND: Duration = Duration::from_secs(1);

static SERIAL: Mutex<()> = Mutex::new(());

/// Threads (kernel ids) of checks waiting for their turn: the test harness
/// starts a thread per test, and those that block here are not a run's
/// leftovers, so [`clean_shutdown`] does not count them.
static WAITING: Mutex<Vec<i32>> = Mutex::new(Vec::new());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    // SAFETY: gettid has no preconditions.
    let me = unsafe { libc::gettid() };
    WAITING.lock().unwrap_or_else(|e| e.into_inner()).push(me);
    let guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    WAITING
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|&t| t != me);
    guard
}

/// A unique run id for one check.
pub fn unique_id(check: &str) -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "ct{}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed),
        check
    )
}

/// The short tag of a check in its run id (run ids become topic, socket
/// and segment names, some of which have length limits).
pub fn tag(check: &str) -> &str {
    match check {
        "in_order_delivery" => "order",
        "exact_loss_accounting" => "loss",
        "largest_sample" => "large",
        "several_subscribers" => "fanout",
        "ping_pong" => "pingpong",
        "quiet_reader_times_out" => "quiet",
        "clean_shutdown" => "shutdown",
        other => other,
    }
}

fn topic(name: &str, index: usize) -> TopicSpec {
    TopicSpec {
        name: name.to_string(),
        index,
    }
}

fn open<B: Binding>(cfg: &EndpointConfig) -> B {
    B::open(cfg).unwrap_or_else(|e| panic!("open: {e}"))
}

/// Publisher side and `n` subscriber-side readers of topic `data`.
fn fan_out<B: Binding>(cfg: &EndpointConfig, n: usize) -> (B, B::Writer, Vec<B>, Vec<B::Reader>) {
    let mut subs = Vec::new();
    let mut readers = Vec::new();
    let mut locators = Vec::new();
    for i in 0..n {
        let mut b: B = open(cfg);
        let (r, l) = b.create_reader(&topic("data", i)).expect("create_reader");
        subs.push(b);
        readers.push(r);
        locators.push(l);
    }
    let mut p: B = open(cfg);
    let mut w = p
        .create_writer(&topic("data", 0), &locators)
        .expect("create_writer");
    std::thread::scope(|s| {
        for r in readers.iter_mut() {
            s.spawn(move || r.wait_matched(WAIT).expect("reader wait_matched"));
        }
        w.wait_matched(n, WAIT).expect("writer wait_matched");
    });
    (p, w, subs, readers)
}

fn send_seq<W: Writer>(w: &mut W, seq: u64, len: usize, check: bool) {
    w.send(len, |buf| {
        Header {
            seq,
            publisher: 0,
            flags: 0,
            timestamp: pubsubperf_core::clock::now_ns(),
            key: 0,
        }
        .write(buf);
        if check {
            fill_pattern(buf, seq);
        }
    })
    .expect("send");
    w.flush().expect("flush");
}

/// Receives in a thread, tracking sequence numbers; `progress` counts samples.
struct Sink {
    progress: Arc<AtomicU64>,
    handle: std::thread::JoinHandle<(SeqTracker, Vec<u64>, u64)>,
}

fn sink<R: Reader>(mut r: R, expect_len: usize, stop_after: u64) -> Sink {
    let progress = Arc::new(AtomicU64::new(0));
    let p = progress.clone();
    let handle = std::thread::spawn(move || {
        let mut t = SeqTracker::new();
        let mut order = Vec::new();
        let mut bad = 0;
        let deadline = Instant::now() + WAIT * 3;
        while p.load(Ordering::Acquire) < stop_after && Instant::now() < deadline {
            r.recv_window(Duration::from_millis(50), &mut |s: Received| {
                let h = Header::read(s.head()).expect("sample has a header");
                if s.len() != expect_len || !check_pattern(s, h.seq) {
                    bad += 1;
                }
                t.observe(h.seq);
                order.push(h.seq);
                p.fetch_add(1, Ordering::Release);
            })
            .expect("recv");
        }
        drop(r);
        (t, order, bad)
    });
    Sink { progress, handle }
}

fn wait_progress(p: &AtomicU64, at_least: u64) -> bool {
    let start = Instant::now();
    while p.load(Ordering::Acquire) < at_least {
        if start.elapsed() > WAIT {
            return false;
        }
        std::thread::yield_now();
    }
    true
}

/// Reliable bindings deliver everything in order; best-effort ones are
/// driven in lock step (one sample in flight), so nothing may be lost either.
pub fn in_order_delivery<B: Binding>(cfg: &EndpointConfig) {
    let _g = serial();
    let n = 2000u64;
    let len = 256.min(cfg.max_sample_size);
    let (_p, mut w, _subs, mut readers) = fan_out::<B>(cfg, 1);
    let s = sink(readers.remove(0), len, n);
    let lock_step = cfg.reliability == Reliability::BestEffort;
    for seq in 0..n {
        send_seq(&mut w, seq, len, true);
        if lock_step {
            assert!(
                wait_progress(&s.progress, seq + 1),
                "sample {seq} lost in lock step"
            );
        }
    }
    assert!(wait_progress(&s.progress, n), "not every sample arrived");
    let (mut t, order, bad) = s.handle.join().expect("sink thread");
    t.finish(n);
    assert_eq!(bad, 0, "corrupt samples");
    assert_eq!(order, (0..n).collect::<Vec<_>>(), "not in order");
    assert_eq!(
        (t.received, t.lost, t.duplicates, t.out_of_order),
        (n, 0, 0, 0)
    );
}

/// The publisher deliberately skips every 7th sequence number: the loss
/// accounting must count exactly those, and `sent = received + lost`.
pub fn exact_loss_accounting<B: Binding>(cfg: &EndpointConfig) {
    let _g = serial();
    let total = 1400u64;
    let len = 64.min(cfg.max_sample_size);
    let (_p, mut w, _subs, mut readers) = fan_out::<B>(cfg, 1);
    let sent: Vec<u64> = (0..total).filter(|s| s % 7 != 3).collect();
    let s = sink(readers.remove(0), len, sent.len() as u64);
    for (i, seq) in sent.iter().enumerate() {
        send_seq(&mut w, *seq, len, true);
        assert!(
            wait_progress(&s.progress, i as u64 + 1),
            "sample {seq} lost in lock step"
        );
    }
    let (mut t, _, bad) = s.handle.join().expect("sink thread");
    t.finish(total);
    assert_eq!(bad, 0);
    assert_eq!(t.received, sent.len() as u64);
    assert_eq!(t.lost, total - sent.len() as u64);
    assert_eq!(t.received + t.lost, total);
    assert_eq!((t.duplicates, t.out_of_order), (0, 0));
}

/// A sample of exactly the configured largest size (capped at the binding's
/// limit) arrives intact; one byte more is refused by `send`.
pub fn largest_sample<B: Binding>(cfg: &EndpointConfig) {
    let _g = serial();
    let limit = B::info()
        .capabilities
        .max_sample_size
        .min(cfg.max_sample_size);
    let (_p, mut w, _subs, mut readers) = fan_out::<B>(cfg, 1);
    let s = sink(readers.remove(0), limit, 3);
    for seq in 0..3 {
        send_seq(&mut w, seq, limit, true);
        if cfg.reliability == Reliability::BestEffort {
            assert!(wait_progress(&s.progress, seq + 1), "sample {seq} lost");
        }
    }
    assert!(wait_progress(&s.progress, 3));
    let (_, _, bad) = s.handle.join().expect("sink thread");
    assert_eq!(bad, 0, "largest sample corrupted");
    let over = w.send(limit + 1, |_| {});
    assert!(over.is_err(), "a sample above the limit was accepted");
}

/// Several subscribers each receive every sample.
pub fn several_subscribers<B: Binding>(cfg: &EndpointConfig) {
    if !B::info().capabilities.multiple_subscribers {
        return;
    }
    let _g = serial();
    let n = 3;
    let count = 300u64;
    let mut cfg = cfg.clone();
    cfg.subscribers = n;
    let len = 128.min(cfg.max_sample_size);
    let (_p, mut w, _subs, readers) = fan_out::<B>(&cfg, n);
    let sinks: Vec<Sink> = readers.into_iter().map(|r| sink(r, len, count)).collect();
    for seq in 0..count {
        send_seq(&mut w, seq, len, true);
        for s in &sinks {
            assert!(
                wait_progress(&s.progress, seq + 1),
                "sample {seq} missing at a subscriber"
            );
        }
    }
    for s in sinks {
        let (mut t, _, bad) = s.handle.join().expect("sink thread");
        t.finish(count);
        assert_eq!((t.received, t.lost, bad), (count, 0, 0));
    }
}

/// A receive with nothing sent returns no sample by its timeout, or soon
/// after it (blocking receives wake every 100 ms to look), both as the
/// subscriber takes ([`Reader::recv`]) and as the latency publisher waits
/// for an echo ([`Reader::recv_on_arrival`]), and again after a sample was
/// taken: a wait that overshoots many-fold would hold a run's end or a
/// dead peer's error.
pub fn quiet_reader_times_out<B: Binding>(cfg: &EndpointConfig) {
    let _g = serial();
    let len = 64.min(cfg.max_sample_size);
    let (_p, mut w, _subs, mut readers) = fan_out::<B>(cfg, 1);
    let r = &mut readers[0];
    let quiet = |r: &mut B::Reader, on_arrival: bool| {
        let start = Instant::now();
        let wait = Duration::from_millis(50);
        let got = if on_arrival {
            r.recv_on_arrival(wait, &mut |_: Received| {})
        } else {
            r.recv(wait, &mut |_: Received| {})
        }
        .expect("recv");
        (got, start.elapsed())
    };
    for on_arrival in [false, true] {
        let (got, took) = quiet(r, on_arrival);
        assert_eq!(got, 0, "a sample arrived with nothing sent");
        assert!(
            took < QUIET_BOUND,
            "a receive of 50 ms (on arrival: {on_arrival}) with nothing sent returned after {took:?}"
        );
    }
    send_seq(&mut w, 0, len, false);
    let mut n = 0;
    let deadline = Instant::now() + WAIT;
    while n == 0 && Instant::now() < deadline {
        n = r
            .recv(Duration::from_millis(100), &mut |_: Received| {})
            .expect("recv");
    }
    assert_eq!(n, 1, "the one sample sent did not arrive");
    let (got, took) = quiet(r, false);
    assert_eq!(got, 0, "a second sample arrived with one sent");
    assert!(
        took < QUIET_BOUND,
        "a receive of 50 ms after a sample returned after {took:?}"
    );
}

/// Ping-pong: a sample goes out on `data`, comes back on `echo` with the
/// ping's bytes: sent from them where the echo writer can
/// ([`Writer::send_from`]), else copied with [`Writer::send`]. Every 50th
/// ping is of the largest size (at most 1 MiB).
pub fn ping_pong<B: Binding>(cfg: &EndpointConfig) {
    let _g = serial();
    ping_pong_inner::<B>(cfg, 200);
}

fn ping_pong_inner<B: Binding>(cfg: &EndpointConfig, rounds: u64) {
    let (small, large) = (
        64.min(cfg.max_sample_size),
        cfg.max_sample_size.min(1 << 20),
    );
    let mut pub_side: B = open(cfg);
    let mut sub_side: B = open(cfg);
    let (mut data_r, data_l) = sub_side.create_reader(&topic("data", 0)).expect("reader");
    let (mut echo_r, echo_l) = pub_side.create_reader(&topic("echo", 0)).expect("reader");
    let mut data_w = pub_side
        .create_writer(&topic("data", 0), &[data_l])
        .expect("writer");
    let mut echo_w = sub_side
        .create_writer(&topic("echo", 0), &[echo_l])
        .expect("writer");
    std::thread::scope(|s| {
        s.spawn(|| data_r.wait_matched(WAIT).expect("matched"));
        s.spawn(|| echo_r.wait_matched(WAIT).expect("matched"));
        data_w.wait_matched(1, WAIT).expect("matched");
        echo_w.wait_matched(1, WAIT).expect("matched");
    });
    let cancel = cfg.cancel.clone();
    let echo = std::thread::spawn(move || {
        // Echo until the pinging side is done (it may resend under best effort).
        while !cancel.is_cancelled() {
            let r = data_r.recv_window(Duration::from_millis(50), &mut |s: Received| {
                let sent = s
                    .as_slice()
                    .and_then(|b| echo_w.send_from(b))
                    .unwrap_or_else(|| echo_w.send(s.len(), |b| s.copy_to(b)))
                    .and_then(|_| echo_w.flush());
                if let Err(e) = sent
                    && !cancel.is_cancelled()
                {
                    panic!("echo: {e}");
                }
            });
            match r {
                Ok(_) => {}
                // The pinging side is done.
                Err(pubsubperf_core::BindingError::Cancelled) => break,
                Err(e) => panic!("recv: {e}"),
            }
        }
        drop((data_r, echo_w));
    });
    // Best effort may lose a ping or its echo (rarely, under load): then the
    // same ping is sent again, a few times; reliable bindings get one send.
    let (tries, per_try) = if cfg.reliability == Reliability::BestEffort {
        (5, WAIT / 4)
    } else {
        (1, WAIT)
    };
    for seq in 0..rounds {
        let len = if seq % 50 == 49 { large } else { small };
        let mut got = None;
        for _ in 0..tries {
            send_seq(&mut data_w, seq, len, true);
            let start = Instant::now();
            while got != Some(seq) && start.elapsed() < per_try {
                echo_r
                    .recv_on_arrival(Duration::from_millis(50), &mut |s: Received| {
                        // An echo of an earlier resent ping may still arrive: skip it.
                        if let Some(h) = Header::read(s.head())
                            && h.seq == seq
                        {
                            assert_eq!(s.len(), len, "echo of {seq}: its length");
                            assert!(check_pattern(s, seq), "echo of {seq}: not the ping's bytes");
                            got = Some(seq);
                        }
                    })
                    .expect("recv echo");
            }
            if got == Some(seq) {
                break;
            }
        }
        assert_eq!(got, Some(seq), "echo of {seq}");
    }
    cfg.cancel.cancel();
    echo.join().expect("echo thread");
}

fn count_dir(path: &str) -> usize {
    std::fs::read_dir(path).map_or(0, |d| d.count())
}

/// This process's threads: kernel id and name.
fn threads() -> Vec<(i32, String)> {
    let Ok(d) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    d.flatten()
        .filter_map(|e| {
            let tid = e.file_name().to_str()?.parse().ok()?;
            let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
            Some((tid, comm.trim_end().to_owned()))
        })
        .collect()
}

/// Threads now alive that were not at `before`, leaving out other checks'
/// test threads that wait for their turn.
fn new_threads(before: &[(i32, String)]) -> Vec<(i32, String)> {
    let waiting = WAITING.lock().unwrap_or_else(|e| e.into_inner()).clone();
    threads()
        .into_iter()
        .filter(|(t, _)| !waiting.contains(t) && !before.iter().any(|(b, _)| b == t))
        .collect()
}

fn named_leftovers(run_id: &str) -> Vec<String> {
    let mut found = Vec::new();
    for dir in ["/dev/shm", "/tmp"] {
        if let Ok(d) = std::fs::read_dir(dir) {
            for e in d.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.contains(run_id) {
                    found.push(format!("{dir}/{name}"));
                }
            }
        }
    }
    found
}

/// After a run, every thread, file descriptor and named resource (anything
/// in /dev/shm or /tmp whose name contains the run id) is gone.
pub fn clean_shutdown<B: Binding>(cfg: &EndpointConfig) {
    let _g = serial();
    // Warm up process-wide lazies first (thread-locals, registries, and
    // middleware runtimes that live until the process exits, such as
    // zenoh's shared-memory watchdog threads, which start a moment after
    // first use): two runs and a pause before counting.
    // 50 rounds each, as the counted run: its largest ping (the 50th) may
    // start lazies of its own (a bigger pool, a fragment reassembler).
    ping_pong_inner::<B>(&fresh(cfg, "warm"), 50);
    ping_pong_inner::<B>(&fresh(cfg, "warm2"), 50);
    std::thread::sleep(Duration::from_millis(500));
    let fds = count_dir("/proc/self/fd");
    let before = threads();
    let cfg = fresh(cfg, "clean");
    ping_pong_inner::<B>(&cfg, 50);
    // Threads started during the run must end, but not at once: tokio's
    // blocking-pool threads (zenoh's runtimes use them, for example to
    // resolve an endpoint's address) end after 10 s idle. 15 s covers that.
    let start = Instant::now();
    loop {
        let f = count_dir("/proc/self/fd");
        let extra = new_threads(&before);
        let left = named_leftovers(&cfg.run_id);
        if f <= fds && extra.is_empty() && left.is_empty() {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "left behind: fds {fds}->{f}, new threads {extra:?} (of {} before), names {left:?}",
            before.len()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn fresh(cfg: &EndpointConfig, what: &str) -> EndpointConfig {
    let mut c = cfg.clone();
    c.run_id = format!("{}-{what}", cfg.run_id);
    c.cancel = pubsubperf_core::CancelToken::new();
    c
}

/// Instantiates the conformance suite for a binding: `$name` names the test
/// module, `$binding` the type, `$cfg` a `fn(&str) -> EndpointConfig` (or a
/// closure that captures nothing) that builds this binding's configuration
/// for a run id. Each check is one `#[test]` of the module.
///
/// - `conformance_suite!(name, Type, cfg)`: every check;
/// - `conformance_suite!(name, Type, cfg, ignore = "why")`: every check, as
///   ignored tests (known failures of a binding mode, documented where the
///   binding is; run them with `cargo test -- --ignored`);
/// - `conformance_suite!(name, Type, cfg, checks = [largest_sample, ping_pong])`:
///   only the checks named (a mode that cannot honour one check, with the
///   reason next to the instantiation).
#[macro_export]
macro_rules! conformance_suite {
    ($name:ident, $binding:ty, $cfg:expr, ignore = $why:literal) => {
        $crate::conformance_suite!(@all $name, $binding, $cfg, [#[ignore = $why]]);
    };
    ($name:ident, $binding:ty, $cfg:expr, checks = [$($check:ident),+ $(,)?]) => {
        $crate::conformance_suite!(@checks $name, $binding, $cfg, [], [$($check),+]);
    };
    ($name:ident, $binding:ty, $cfg:expr) => {
        $crate::conformance_suite!(@all $name, $binding, $cfg, []);
    };
    (@all $name:ident, $binding:ty, $cfg:expr, [$(#[$attr:meta])?]) => {
        $crate::conformance_suite!(@checks $name, $binding, $cfg, [$(#[$attr])?], [
            in_order_delivery,
            exact_loss_accounting,
            largest_sample,
            several_subscribers,
            ping_pong,
            quiet_reader_times_out,
            clean_shutdown
        ]);
    };
    (@checks $name:ident, $binding:ty, $cfg:expr, $attrs:tt, [$($check:ident),+]) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            use $crate::conformance as c;
            fn __config(check: &str) -> $crate::pubsubperf_core::EndpointConfig {
                let f: fn(&str) -> $crate::pubsubperf_core::EndpointConfig = $cfg;
                f(&c::unique_id(check))
            }
            $($crate::conformance_suite!(@test $binding, $attrs, $check);)+
        }
    };
    (@test $binding:ty, [$(#[$attr:meta])?], $check:ident) => {
        #[test]
        $(#[$attr])?
        fn $check() {
            c::$check::<$binding>(&__config(c::tag(stringify!($check))));
        }
    };
}
