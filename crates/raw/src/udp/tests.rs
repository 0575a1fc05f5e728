use super::*;
use pubsubperf_testkit::TestConfig;

fn cfg(id: &str) -> EndpointConfig {
    EndpointConfig::for_test(id).transport("udp").best_effort()
}

#[test]
fn multicast_groups_differ_per_run() {
    assert_ne!(
        multicast_addr(&cfg("a"), "t").unwrap(),
        multicast_addr(&cfg("b"), "t").unwrap()
    );
    assert!(multicast_addr(&cfg("a"), "t").unwrap().ip().is_multicast());
    assert!(
        multicast_addr(&cfg("a").ipv6(), "t")
            .unwrap()
            .ip()
            .is_multicast()
    );
}

const KEY: u64 = 0x5eed_f00d_0123_4567;

fn keyed(id: &str) -> EndpointConfig {
    EndpointConfig {
        sample_key: Some(KEY),
        ..cfg(id)
    }
}

fn topic(name: &str) -> TopicSpec {
    TopicSpec {
        name: name.into(),
        index: 0,
    }
}

/// A datagram from `from` to `to` of a header with `key`.
fn send_keyed(from: &UdpSocket, to: &str, seq: u64, key: u64) {
    let mut b = [0u8; 64];
    Header {
        seq,
        publisher: 0,
        flags: 0,
        timestamp: 1,
        key,
    }
    .write(&mut b);
    from.send_to(&b, to).unwrap();
}

/// The sequence numbers the reader takes within `wait`.
fn taken(r: &mut UdpReader, wait: Duration) -> Vec<u64> {
    let mut seqs = Vec::new();
    let until = std::time::Instant::now() + wait;
    while std::time::Instant::now() < until {
        r.recv(Duration::from_millis(50), &mut |s: Received<'_>| {
            seqs.push(Header::read(s.head()).map_or(u64::MAX, |h| h.seq))
        })
        .unwrap();
    }
    seqs
}

/// A unicast reader takes datagrams from anyone until one carries the run's
/// key, then only from that datagram's sender: the kernel drops a
/// stranger's, keyed or not, that arrive after it.
#[test]
fn a_reader_is_connected_to_the_first_sender_of_the_runs_key() {
    let mut udp = Udp::open(&keyed("connects")).unwrap();
    let (mut r, loc) = udp.create_reader(&topic("data")).unwrap();
    let writer = UdpSocket::bind("127.0.0.1:0").unwrap();
    let stranger = UdpSocket::bind("127.0.0.1:0").unwrap();
    send_keyed(&stranger, &loc, 1, KEY ^ 1);
    assert_eq!(taken(&mut r, Duration::from_millis(200)), [1]);
    assert!(r.socket.peer_addr().is_err(), "connected to a key it lacks");
    send_keyed(&writer, &loc, 2, KEY);
    assert_eq!(taken(&mut r, Duration::from_millis(200)), [2]);
    assert_eq!(r.socket.peer_addr().unwrap(), writer.local_addr().unwrap());
    send_keyed(&stranger, &loc, 3, KEY);
    send_keyed(&stranger, &loc, 4, 0);
    send_keyed(&writer, &loc, 5, KEY);
    assert_eq!(taken(&mut r, Duration::from_millis(200)), [5]);
}

/// A reader with several senders is never connected: a multicast group's,
/// a data topic's with several publishers, or one without the run's key.
/// An echo topic has one writer however many publishers the run has.
#[test]
fn a_reader_of_several_senders_stays_open_to_all() {
    let several = EndpointConfig {
        publishers: 2,
        ..keyed("several")
    };
    let unkeyed = cfg("unkeyed");
    for (c, name, connects) in [
        (&several, "data", false),
        (&several, "echo0", true),
        (&unkeyed, "data", false),
    ] {
        let mut udp = Udp::open(c).unwrap();
        let (mut r, loc) = udp.create_reader(&topic(name)).unwrap();
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        send_keyed(&a, &loc, 1, KEY);
        assert_eq!(taken(&mut r, Duration::from_millis(200)), [1], "{name}");
        send_keyed(&b, &loc, 2, KEY);
        let want: &[u64] = if connects { &[] } else { &[2] };
        assert_eq!(taken(&mut r, Duration::from_millis(200)), want, "{name}");
    }
    let multicast = EndpointConfig {
        multicast: true,
        ..keyed("multicast")
    };
    let mut udp = Udp::open(&multicast).unwrap();
    let (r, _) = udp.create_reader(&topic("data")).unwrap();
    assert_eq!(r.awaiting, None);
}

/// A batched datagram's first sample is the one whose key connects.
#[test]
fn a_batched_reader_is_connected_by_its_first_frame() {
    let c = EndpointConfig {
        max_sample_size: 64,
        ..keyed("batched").batch(1024)
    };
    let mut udp = Udp::open(&c).unwrap();
    let (mut r, loc) = udp.create_reader(&topic("data")).unwrap();
    let mut w = udp
        .create_writer(&topic("data"), std::slice::from_ref(&loc))
        .unwrap();
    for seq in [7, 8] {
        w.send(64, |b| {
            Header {
                seq,
                publisher: 0,
                flags: 0,
                timestamp: 1,
                key: KEY,
            }
            .write(b)
        })
        .unwrap();
    }
    w.flush().unwrap();
    assert_eq!(taken(&mut r, Duration::from_millis(200)), [7, 8]);
    assert_eq!(
        r.socket.peer_addr().unwrap(),
        w.socket.local_addr().unwrap()
    );
}
