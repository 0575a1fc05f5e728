//! Loopback tests of the fixed-target relay (the transparent mode needs a
//! network namespace with a tproxy rule: see crates/cli/tests/netns.rs).
//! They check forwarding, both directions, order, and that the delay is at
//! least D each way (a correctness bound, not a performance threshold).

use super::*;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::time::Instant;

/// The relay's counters once `done` holds (a counter is bumped just after
/// the send that the client may already have seen).
fn settled(r: &Relay, done: impl Fn(&Totals) -> bool) -> Totals {
    let start = Instant::now();
    loop {
        let t = r.totals();
        if done(&t) || start.elapsed() > Duration::from_secs(2) {
            return t;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn relay(target: SocketAddr, delay_ms: u64) -> Relay {
    Relay::start(&Config {
        listen: "127.0.0.1:0".parse().unwrap(),
        target: Target::Fixed(target),
        delay: Duration::from_millis(delay_ms),
        delay_to: None,
        udp: true,
        tcp: true,
        rt_priority: None,
    })
    .expect("relay starts")
}

/// A UDP echo server that stops after `n` datagrams.
fn udp_echo(n: usize) -> (SocketAddr, std::thread::JoinHandle<()>) {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    let a = s.local_addr().unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let t = std::thread::spawn(move || {
        let mut buf = [0u8; 2048];
        for _ in 0..n {
            let Ok((k, from)) = s.recv_from(&mut buf) else {
                return;
            };
            s.send_to(&buf[..k], from).unwrap();
        }
    });
    (a, t)
}

#[test]
fn udp_both_directions_in_order_with_delay() {
    for delay_ms in [0, 5] {
        let (echo, t) = udp_echo(20);
        let r = relay(echo, delay_ms);
        let c = UdpSocket::bind("127.0.0.1:0").unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        c.connect(r.udp_addr().unwrap()).unwrap();
        let mut buf = [0u8; 64];
        for i in 0u32..20 {
            let t0 = Instant::now();
            c.send(&i.to_le_bytes()).unwrap();
            let n = c.recv(&mut buf).unwrap();
            assert_eq!(&buf[..n], &i.to_le_bytes());
            assert!(t0.elapsed() >= Duration::from_millis(2 * delay_ms));
        }
        t.join().unwrap();
        let tot = settled(&r, |t| t.udp_forward == 20 && t.udp_back == 20);
        assert_eq!((tot.udp_flows, tot.udp_forward, tot.udp_back), (1, 20, 20));
    }
}

#[test]
fn udp_remembers_each_client() {
    let (echo, t) = udp_echo(6);
    let r = relay(echo, 1);
    let clients: Vec<UdpSocket> = (0..3)
        .map(|_| {
            let c = UdpSocket::bind("127.0.0.1:0").unwrap();
            c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            c
        })
        .collect();
    for round in 0..2u8 {
        for (i, c) in clients.iter().enumerate() {
            c.send_to(&[i as u8, round], r.udp_addr().unwrap()).unwrap();
        }
        for (i, c) in clients.iter().enumerate() {
            let mut b = [0u8; 8];
            let (n, from) = c.recv_from(&mut b).unwrap();
            assert_eq!(&b[..n], &[i as u8, round]);
            assert_eq!(from, r.udp_addr().unwrap());
        }
    }
    t.join().unwrap();
    assert_eq!(r.totals().udp_flows, 3);
}

#[test]
fn tcp_stream_both_directions_with_delay_and_close() {
    for delay_ms in [0, 5] {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let a = l.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut buf = [0u8; 4096];
            loop {
                let n = s.read(&mut buf).unwrap();
                if n == 0 {
                    break;
                }
                s.write_all(&buf[..n]).unwrap();
            }
        });
        let r = relay(a, delay_ms);
        let mut c = TcpStream::connect(r.tcp_addr().unwrap()).unwrap();
        c.set_nodelay(true).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut total = 0usize;
        for i in 0u32..10 {
            let msg = vec![i as u8; 1000];
            let t0 = Instant::now();
            c.write_all(&msg).unwrap();
            let mut got = vec![0u8; 1000];
            c.read_exact(&mut got).unwrap();
            assert_eq!(got, msg);
            assert!(t0.elapsed() >= Duration::from_millis(2 * delay_ms));
            total += 1000;
        }
        // The end of the stream is passed on, after the data.
        c.shutdown(std::net::Shutdown::Write).unwrap();
        let mut rest = Vec::new();
        c.read_to_end(&mut rest).unwrap();
        assert!(rest.is_empty());
        server.join().unwrap();
        let tot = settled(&r, |t| {
            t.tcp_forward_bytes == total as u64 && t.tcp_back_bytes == total as u64
        });
        assert_eq!(tot.tcp_connections, 1);
        assert_eq!(tot.tcp_forward_bytes, total as u64);
        assert_eq!(tot.tcp_back_bytes, total as u64);
    }
}

#[test]
fn unreachable_target_closes_the_client_and_counts_an_error() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = l.local_addr().unwrap();
    drop(l);
    let r = relay(dead, 0);
    let mut c = TcpStream::connect(r.tcp_addr().unwrap()).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut b = [0u8; 1];
    assert!(matches!(c.read(&mut b), Ok(0) | Err(_)));
    assert_eq!(settled(&r, |t| t.errors > 0).errors, 1);
}

#[test]
fn nothing_to_relay_is_refused() {
    let e = Relay::start(&Config {
        listen: "127.0.0.1:0".parse().unwrap(),
        target: Target::Transparent,
        delay: Duration::ZERO,
        delay_to: None,
        udp: false,
        tcp: false,
        rt_priority: None,
    });
    assert!(matches!(e, Err(RelayError::Config(_))));
}

/// `delay_to`: a flow to the target's network is delayed one way only;
/// the replies towards the client pass at once (not held, not counted as
/// delayed). The target is on 127.0.0.2, the client on 127.0.0.1.
#[test]
fn delay_to_a_network_delays_one_direction_only() {
    let s = UdpSocket::bind("127.0.0.2:0").unwrap();
    let echo = s.local_addr().unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let t = std::thread::spawn(move || {
        let mut buf = [0u8; 64];
        for _ in 0..10 {
            let Ok((k, from)) = s.recv_from(&mut buf) else {
                return;
            };
            s.send_to(&buf[..k], from).unwrap();
        }
    });
    let r = Relay::start(&Config {
        listen: "127.0.0.1:0".parse().unwrap(),
        target: Target::Fixed(echo),
        delay: Duration::from_millis(5),
        delay_to: Some("127.0.0.2/32".parse().unwrap()),
        udp: true,
        tcp: false,
        rt_priority: None,
    })
    .unwrap();
    let c = UdpSocket::bind("127.0.0.1:0").unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    c.connect(r.udp_addr().unwrap()).unwrap();
    let mut buf = [0u8; 64];
    for i in 0u32..10 {
        let t0 = Instant::now();
        c.send(&i.to_le_bytes()).unwrap();
        let n = c.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], &i.to_le_bytes());
        assert!(t0.elapsed() >= Duration::from_millis(5));
    }
    t.join().unwrap();
    let tot = settled(&r, |t| {
        t.udp_forward == 10 && t.udp_back == 10 && t.delayed == 10
    });
    assert_eq!((tot.udp_forward, tot.udp_back, tot.delayed), (10, 10, 10));
}
