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
