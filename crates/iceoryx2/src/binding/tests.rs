use super::*;
use Reliability::BestEffort;
use WaitMode::{Block, Busy};
use pubsubperf_core::Received;
use pubsubperf_core::{Reader, Writer};
use pubsubperf_testkit::TestConfig;

fn base(id: &str) -> EndpointConfig {
    EndpointConfig::for_test(id)
        .transport(TRANSPORT)
        .max_sample_size(1 << 20)
}

fn topic(name: &str) -> TopicSpec {
    TopicSpec {
        name: name.into(),
        index: 0,
    }
}

/// A writer and a reader that never reads.
fn stalled(cfg: &EndpointConfig) -> (Iceoryx2, Iceoryx2Writer, Iceoryx2, Iceoryx2Reader) {
    let mut sub = Iceoryx2::open(cfg).unwrap();
    let (mut r, loc) = sub.create_reader(&topic("data")).unwrap();
    let mut publ = Iceoryx2::open(cfg).unwrap();
    let mut w = publ.create_writer(&topic("data"), &[loc]).unwrap();
    w.wait_matched(1, Duration::from_secs(5)).unwrap();
    r.wait_matched(Duration::from_secs(5)).unwrap();
    (publ, w, sub, r)
}

fn send_seq(w: &mut Iceoryx2Writer, seq: u64) -> Result<(), BindingError> {
    w.send(64, |b| b[..8].copy_from_slice(&seq.to_le_bytes()))
}

/// Reliable: a reader that does not read blocks the writer, which gives
/// up with `WriteTimeout` after the configured time, never forever.
#[test]
fn reliable_writer_times_out_on_a_stalled_reader() {
    for wait in [Busy, Block] {
        let mut cfg = base(&pubsubperf_testkit::conformance::unique_id("stall"));
        cfg.wait = wait;
        cfg.max_sample_size = 64;
        cfg.receive_queue = 4;
        cfg.reliable_block_timeout_ms = 200;
        let (_p, mut w, _s, _r) = stalled(&cfg);
        for seq in 0..4 {
            send_seq(&mut w, seq).unwrap();
        }
        let t = Instant::now();
        match send_seq(&mut w, 4) {
            Err(BindingError::WriteTimeout(d)) => assert_eq!(d, Duration::from_millis(200)),
            other => panic!("expected WriteTimeout, got {other:?}"),
        }
        assert!(t.elapsed() >= Duration::from_millis(200));
    }
}

/// Reliable: cancelling the run releases a blocked writer.
#[test]
fn cancel_releases_a_blocked_writer() {
    let mut cfg = base(&pubsubperf_testkit::conformance::unique_id("cancel"));
    cfg.max_sample_size = 64;
    cfg.receive_queue = 2;
    cfg.reliable_block_timeout_ms = 60_000;
    let (_p, mut w, _s, _r) = stalled(&cfg);
    send_seq(&mut w, 0).unwrap();
    send_seq(&mut w, 1).unwrap();
    let c = cfg.cancel.clone();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(150));
        c.cancel();
    });
    assert!(matches!(send_seq(&mut w, 2), Err(BindingError::Cancelled)));
    t.join().unwrap();
}

/// Best effort: a full buffer never blocks the writer; the reader gets
/// the newest samples and sees the gap of the overwritten ones.
#[test]
fn best_effort_overflow_drops_the_oldest() {
    for wait in [Busy, Block] {
        let mut cfg = base(&pubsubperf_testkit::conformance::unique_id("overflow"));
        cfg.wait = wait;
        cfg.reliability = BestEffort;
        cfg.max_sample_size = 64;
        cfg.receive_queue = 4;
        let (_p, mut w, _s, mut r) = stalled(&cfg);
        for seq in 0..10 {
            send_seq(&mut w, seq).unwrap();
        }
        let mut got = Vec::new();
        while r
            .recv(Duration::from_millis(50), &mut |s: Received| {
                let s = s.as_slice().expect("one piece");
                got.push(u64::from_le_bytes(s[..8].try_into().unwrap()))
            })
            .unwrap()
            > 0
        {}
        assert_eq!(got, vec![6, 7, 8, 9]);
    }
}

/// Waits return within the timeout and notice cancellation.
#[test]
fn recv_times_out_and_cancels() {
    for wait in [Busy, Block] {
        let mut cfg = base(&pubsubperf_testkit::conformance::unique_id("idle"));
        cfg.wait = wait;
        let (_p, _w, _s, mut r) = stalled(&cfg);
        let t = Instant::now();
        let n = r
            .recv(Duration::from_millis(120), &mut |_: Received| {})
            .unwrap();
        assert_eq!(n, 0);
        assert!(t.elapsed() >= Duration::from_millis(120));
        cfg.cancel.cancel();
        assert!(matches!(
            r.recv(Duration::from_secs(60), &mut |_: Received| {}),
            Err(BindingError::Cancelled)
        ));
    }
}

#[test]
fn refuses_what_does_not_apply() {
    let ok = base("v");
    assert!(Iceoryx2::validate(&ok).is_ok());
    type Set = Box<dyn Fn(&mut EndpointConfig)>;
    let cases: Vec<(&str, Set)> = vec![
        ("--transport", Box::new(|c| c.transport = "udp".into())),
        ("--data-type", Box::new(|c| c.data_type = DataType::Flat)),
        ("--multicast", Box::new(|c| c.multicast = true)),
        ("--batch", Box::new(|c| c.batch_bytes = 1024)),
        ("--ipv6", Box::new(|c| c.ipv6 = true)),
        ("--socket-buffer", Box::new(|c| c.socket_buffer = 1 << 20)),
        ("--send-queue", Box::new(|c| c.send_queue = 8)),
        (
            "--opt",
            Box::new(|c| {
                c.options.insert("x".into(), "1".into());
            }),
        ),
    ];
    for (flag, set) in cases {
        let mut c = base("v");
        set(&mut c);
        let e = Iceoryx2::validate(&c).unwrap_err().to_string();
        assert!(e.starts_with(flag), "{flag}: {e}");
        assert!(!e.contains('\n'));
    }
    let mut c = base("v");
    c.max_sample_size = MAX_SAMPLE + 1;
    assert!(matches!(
        Iceoryx2::validate(&c),
        Err(BindingError::TooLarge { .. })
    ));
}

#[test]
fn buffer_sizes_bound_shared_memory() {
    let mut c = base("b");
    c.max_sample_size = 64;
    assert_eq!(buffer_size(&c), MAX_BUFFER);
    c.max_sample_size = 1 << 20;
    assert_eq!(buffer_size(&c), 32);
    c.max_sample_size = 16 << 20;
    assert_eq!(buffer_size(&c), 2);
    c.max_sample_size = 256 << 20;
    assert_eq!(buffer_size(&c), 2);
    c.receive_queue = 7;
    assert_eq!(buffer_size(&c), 7);
}
