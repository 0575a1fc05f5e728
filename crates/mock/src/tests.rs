use super::*;
use pubsubperf_core::Received;
use pubsubperf_testkit::TestConfig;

fn reliable(id: &str) -> EndpointConfig {
    EndpointConfig::for_test(id)
        .transport("mock")
        .max_sample_size(1 << 20)
}
#[test]
fn delays_cycle() {
    let o = MockOptions::default();
    assert_eq!(o.delay(0), 1000);
    assert_eq!(o.delay(99), 1990);
    assert_eq!(o.delay(100), 1000);
}

#[test]
fn options_are_checked() {
    let mut c = reliable("opts");
    c.options.insert("delay-ns".into(), "abc".into());
    let e = MockOptions::from_config(&c).unwrap_err().to_string();
    assert!(e.contains("--opt delay-ns=abc"), "{e}");
    let mut c = reliable("opts2");
    c.options.insert("drop-every".into(), "3".into());
    let e = MockOptions::from_config(&c).unwrap_err().to_string();
    assert!(e.contains("--best-effort"), "{e}");
    let mut c = reliable("opts3");
    c.options.insert("colour".into(), "3".into());
    assert!(MockOptions::from_config(&c).is_err());
}

#[test]
fn a_send_advances_the_clock_by_its_delay() {
    let mut cfg = reliable("clock");
    cfg.options.insert("delay-ns".into(), "500".into());
    cfg.options.insert("step-ns".into(), "0".into());
    let mut b = Mock::open(&cfg).unwrap();
    let t = TopicSpec {
        name: "data".into(),
        index: 0,
    };
    let (mut r, loc) = b.create_reader(&t).unwrap();
    let mut w = b.create_writer(&t, &[loc]).unwrap();
    // Other tests of this process send too: only this thread's own
    // advance is checked, under the suite's lock-free assumption that
    // the clock never goes back.
    let before = Mock::now_ns();
    w.send(64, |b| b.fill(7)).unwrap();
    let after = Mock::now_ns();
    assert!(after - before >= 500);
    let mut got = Vec::new();
    r.recv(Duration::from_secs(1), &mut |s: Received| {
        got.push(s.to_vec())
    })
    .unwrap();
    assert_eq!(got, vec![vec![7u8; 64]]);
    Mock::wait_until(after + 1_000_000);
    assert!(Mock::now_ns() >= after + 1_000_000);
}
