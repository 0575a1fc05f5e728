//! TCP: each accepted connection is joined to a new connection to the
//! target (or, transparent, to the connection's original destination); each
//! direction is a byte stream whose read chunks are delayed by D.

use crate::line::Line;
use crate::{Config, POLL, RelayError, Shared, Target};
use pubsubperf_core::clock::now_ns;
use socket2::{Domain, Protocol, SockAddr, Socket, Type};
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Largest chunk read at once.
const CHUNK: usize = 64 * 1024;

pub fn start(shared: &Arc<Shared>, cfg: &Config) -> Result<SocketAddr, RelayError> {
    let addr = cfg.listen;
    let err = |what| move |source| RelayError::Socket { what, addr, source };
    let s = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))
        .map_err(err("tcp socket"))?;
    s.set_reuse_address(true).map_err(err("SO_REUSEADDR"))?;
    if cfg.target == Target::Transparent {
        set_transparent(&s, addr).map_err(err("IP_TRANSPARENT (needs CAP_NET_ADMIN)"))?;
    }
    s.bind(&SockAddr::from(addr)).map_err(err("tcp bind"))?;
    s.listen(128).map_err(err("tcp listen"))?;
    let l: TcpListener = s.into();
    l.set_nonblocking(true).map_err(err("tcp listener"))?;
    let local = l.local_addr().map_err(err("tcp listener"))?;
    let sh = shared.clone();
    let target = cfg.target;
    shared.spawn("relay-tcp-accept", move || {
        while !sh.stopped() {
            match l.accept() {
                Ok((client, _)) => {
                    let dst = match target {
                        Target::Fixed(t) => Some(t),
                        // The tproxy'd socket's local address is where the client meant to go.
                        Target::Transparent => client.local_addr().ok(),
                    };
                    let Some(dst) = dst else { continue };
                    let sh2 = sh.clone();
                    sh.spawn("relay-tcp-conn", move || connection(&sh2, client, dst));
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(2))
                }
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    });
    Ok(local)
}

pub(crate) fn set_transparent(s: &Socket, addr: SocketAddr) -> std::io::Result<()> {
    if addr.is_ipv4() {
        s.set_ip_transparent(true)
    } else {
        crate::udp::setsockopt_int(s, libc::SOL_IPV6, libc::IPV6_TRANSPARENT, 1)
    }
}

fn connection(sh: &Arc<Shared>, client: TcpStream, dst: SocketAddr) {
    let c = &sh.counters;
    let Ok(upstream) = TcpStream::connect_timeout(&dst, Duration::from_secs(5)) else {
        c.errors.fetch_add(1, Ordering::Relaxed);
        let _ = client.shutdown(Shutdown::Both);
        return;
    };
    c.tcp_connections.fetch_add(1, Ordering::Relaxed);
    let _ = client.set_nonblocking(false);
    for s in [&client, &upstream] {
        let _ = s.set_nodelay(true);
        let _ = s.set_read_timeout(Some(POLL));
    }
    let (Ok(c2), Ok(u2)) = (client.try_clone(), upstream.try_clone()) else {
        c.errors.fetch_add(1, Ordering::Relaxed);
        return;
    };
    let sh2 = sh.clone();
    let back_to = client.peer_addr().map_or(dst.ip(), |a| a.ip());
    sh.spawn("relay-tcp-back", move || {
        pump(
            &sh2,
            u2,
            c2,
            back_to,
            |c| &c.tcp_back_bytes,
            "relay-tcp-back-line",
        )
    });
    pump(
        sh,
        client,
        upstream,
        dst.ip(),
        |c| &c.tcp_forward_bytes,
        "relay-tcp-fwd-line",
    );
}

/// Copies `from` to `to`, each read chunk delayed by D; on end of stream the
/// write side of `to` is shut down after the last delayed chunk.
fn pump(
    sh: &Arc<Shared>,
    mut from: TcpStream,
    to: TcpStream,
    to_ip: std::net::IpAddr,
    counter: fn(&crate::Counters) -> &AtomicU64,
    name: &str,
) {
    let out = to.try_clone();
    let sh_d = sh.clone();
    let mut to_w = to;
    // None: the reading side ended; pass the end on.
    let mut line: Line<Option<Vec<u8>>> = Line::new(
        sh,
        name,
        to_ip,
        Box::new(move |chunk: Option<Vec<u8>>| match chunk {
            Some(b) => {
                if to_w.write_all(&b).is_err() {
                    let _ = to_w.shutdown(Shutdown::Both);
                    return false;
                }
                counter(&sh_d.counters).fetch_add(b.len() as u64, Ordering::Relaxed);
                true
            }
            None => {
                let _ = to_w.shutdown(Shutdown::Write);
                false
            }
        }),
    );
    let mut buf = vec![0u8; CHUNK];
    loop {
        match from.read(&mut buf) {
            Ok(0) => {
                line.push(now_ns(), None);
                return;
            }
            Ok(n) => {
                if !line.push(now_ns(), Some(buf[..n].to_vec())) {
                    let _ = from.shutdown(Shutdown::Both);
                    return;
                }
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                if sh.stopped() {
                    return;
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => {
                // Reset: tear the other side down too.
                if let Ok(o) = &out {
                    let _ = o.shutdown(Shutdown::Both);
                }
                return;
            }
        }
    }
}
