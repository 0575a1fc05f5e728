//! The echo of a round trip comes back on its sample's connection.

use super::*;
use pubsubperf_core::Received;
use pubsubperf_core::{Reader, Writer};
use pubsubperf_testkit::TestConfig;

const WAIT: Duration = Duration::from_secs(5);

fn topic(name: &str) -> TopicSpec {
    TopicSpec {
        name: name.into(),
        index: 0,
    }
}

fn cfg(id: &str) -> EndpointConfig {
    EndpointConfig::for_test(id)
        .transport("tcp")
        .max_sample_size(4096)
}

/// Sends one sample `w` → `r` and returns it.
fn one<W: Writer, R: Reader>(w: &mut W, r: &mut R, byte: u8) -> Vec<u8> {
    w.send(32, |b| b.fill(byte)).expect("send");
    w.flush().expect("flush");
    let mut got = Vec::new();
    while got.is_empty() {
        r.recv(WAIT, &mut |s: Received| got = s.to_vec())
            .expect("recv");
    }
    got
}

/// Matches the four endpoints of a round trip as the harness does (the
/// publisher's echo reader waiting beside the subscriber's side).
fn match_all<R: Reader + Send, W: Writer>(
    data_r: &mut R,
    echo_r: &mut R,
    data_w: &mut W,
    echo_w: &mut W,
) {
    std::thread::scope(|s| {
        s.spawn(|| echo_r.wait_matched(WAIT).expect("echo reader"));
        data_w.wait_matched(1, WAIT).unwrap();
        data_r.wait_matched(WAIT).unwrap();
        echo_w.wait_matched(1, WAIT).unwrap();
    });
}

#[test]
fn the_echo_writer_turns_the_data_connection() {
    let c = cfg("links-turn");
    let (mut publisher, mut subscriber) = (Tcp::open(&c).unwrap(), Tcp::open(&c).unwrap());
    let (mut data_r, data_l) = subscriber.create_reader(&topic("data")).unwrap();
    let (mut echo_r, echo_l) = publisher.create_reader(&topic("echo0")).unwrap();
    let mut data_w = publisher
        .create_writer(&topic("data"), std::slice::from_ref(&data_l))
        .unwrap();
    let mut echo_w = subscriber
        .create_writer(&topic("echo0"), &[echo_l])
        .unwrap();
    match_all(&mut data_r, &mut echo_r, &mut data_w, &mut echo_w);
    // The echo leaves from the data reader's own port: the accepted connection.
    let local = echo_w.conns[0].local_addr().unwrap();
    assert_eq!(local.to_string(), data_l);
    assert_eq!(one(&mut data_w, &mut data_r, 7), vec![7; 32]);
    assert_eq!(one(&mut echo_w, &mut echo_r, 9), vec![9; 32]);
    // The publisher's end reads the subscriber's end of writing.
    drop(echo_w);
    let end = echo_r.recv(WAIT, &mut |_| {});
    assert!(matches!(end, Err(BindingError::Disconnected)), "{end:?}");
    assert_eq!(one(&mut data_w, &mut data_r, 3), vec![3; 32]);
}

#[test]
fn an_echo_writer_whose_reader_no_hello_listed_connects() {
    let c = cfg("links-direct");
    let mut publisher = Tcp::open(&c).unwrap();
    let mut subscriber = Tcp::open(&c).unwrap();
    // The data comes from a third binding, which has no echo reader.
    let mut other = Tcp::open(&c).unwrap();
    let (mut data_r, data_l) = subscriber.create_reader(&topic("data")).unwrap();
    let (mut echo_r, echo_l) = publisher.create_reader(&topic("echo0")).unwrap();
    let mut data_w = other.create_writer(&topic("data"), &[data_l]).unwrap();
    let mut echo_w = subscriber
        .create_writer(&topic("echo0"), std::slice::from_ref(&echo_l))
        .unwrap();
    match_all(&mut data_r, &mut echo_r, &mut data_w, &mut echo_w);
    let peer = echo_w.conns[0].peer_addr().unwrap();
    assert_eq!(peer.to_string(), echo_l);
    assert_eq!(one(&mut echo_w, &mut echo_r, 5), vec![5; 32]);
}

#[test]
fn uds_echoes_turn_too() {
    let c = cfg("links-uds").transport("uds");
    let (mut publisher, mut subscriber) = (Uds::open(&c).unwrap(), Uds::open(&c).unwrap());
    let (mut data_r, data_l) = subscriber.create_reader(&topic("data")).unwrap();
    let (mut echo_r, echo_l) = publisher.create_reader(&topic("echo0")).unwrap();
    let mut data_w = publisher.create_writer(&topic("data"), &[data_l]).unwrap();
    let mut echo_w = subscriber
        .create_writer(&topic("echo0"), &[echo_l])
        .unwrap();
    match_all(&mut data_r, &mut echo_r, &mut data_w, &mut echo_w);
    // A connected socket's peer has a name only if it was connected to one:
    // the accepted end (the data reader's) has none.
    let peer = echo_w.conns[0].peer_addr().unwrap();
    assert!(peer.as_abstract_name().is_none(), "{peer:?}");
    assert_eq!(one(&mut data_w, &mut data_r, 1), vec![1; 32]);
    assert_eq!(one(&mut echo_w, &mut echo_r, 2), vec![2; 32]);
}

/// True when the reader closed `s`: its read sees the end of the stream
/// (or a reset) within [`WAIT`].
fn closed_by_reader(mut s: std::net::TcpStream) -> bool {
    s.set_read_timeout(Some(WAIT)).unwrap();
    let mut b = [0u8; 64];
    loop {
        match s.read(&mut b) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
            Err(_) => return false,
        }
    }
}

/// A publisher's binding and a subscriber's data reader (and its
/// locator) of a run whose key is `key`.
fn keyed(id: &str, key: u64) -> (Tcp, StreamReader<std::net::TcpStream>, String) {
    let mut c = cfg(id);
    c.sample_key = Some(key);
    let (publisher, mut subscriber) = (Tcp::open(&c).unwrap(), Tcp::open(&c).unwrap());
    let (data_r, data_l) = subscriber.create_reader(&topic("data")).unwrap();
    (publisher, data_r, data_l)
}

/// A stranger's idle connection reached the reader's port first (it held
/// a run up until it was killed 17 s later), then one with a wrong key and
/// one with a sample frame: the reader closes them and serves the writer
/// that proves the run's key.
#[test]
fn only_the_writer_that_proves_the_runs_key_is_served() {
    let (mut publisher, mut data_r, data_l) = keyed("key-proof", 0x5eed_0123_4567_89ab);
    let idle = std::net::TcpStream::connect(&data_l).unwrap();
    let mut wrong = std::net::TcpStream::connect(&data_l).unwrap();
    wrong
        .write_all(&key_proof::key_frame(0x5eed_0123_4567_89aa))
        .unwrap();
    let mut sample = std::net::TcpStream::connect(&data_l).unwrap();
    sample.write_all(&[32, 0, 0, 0]).unwrap();
    sample.write_all(&[0; 32]).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let mut data_w = publisher
        .create_writer(&topic("data"), std::slice::from_ref(&data_l))
        .unwrap();
    data_w.wait_matched(1, WAIT).unwrap();
    data_r
        .wait_matched(WAIT)
        .expect("the reader serves the writer with the key");
    assert_eq!(one(&mut data_w, &mut data_r, 4), vec![4; 32]);
    assert!(closed_by_reader(wrong), "a wrong key is closed");
    assert!(closed_by_reader(sample), "a sample frame is closed");
    assert!(closed_by_reader(idle), "an idle connection is closed");
}

/// A flood of idle strangers, more than are screened at once, does not
/// keep the writer out: the oldest are closed to make room.
#[test]
fn a_flood_of_idle_strangers_does_not_keep_the_writer_out() {
    let (mut publisher, mut data_r, data_l) = keyed("key-flood", 7);
    let strangers: Vec<_> = (0..3 * WAITING_MAX)
        .map(|_| std::net::TcpStream::connect(&data_l).unwrap())
        .collect();
    let mut data_w = publisher
        .create_writer(&topic("data"), std::slice::from_ref(&data_l))
        .unwrap();
    std::thread::scope(|s| {
        s.spawn(|| data_r.wait_matched(WAIT).expect("the writer is served"));
    });
    assert_eq!(one(&mut data_w, &mut data_r, 6), vec![6; 32]);
    drop(strangers);
}
