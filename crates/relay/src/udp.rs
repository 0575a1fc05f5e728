//! UDP: datagram flows, one per (client address, destination). Datagrams from
//! the client go to the destination from a socket of the relay's own; what
//! the destination sends back to that socket goes to the client, from the
//! listen socket (fixed target) or from a transparent socket bound to the
//! destination's address (transparent relay), so the client sees its peer.

use crate::line::Line;
use crate::{Config, POLL, RelayError, Shared, Target};
use pubsubperf_core::clock::now_ns;
use socket2::{Domain, Protocol, SockAddr, Socket, Type};
use std::collections::HashMap;
use std::io::ErrorKind;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// A flow with no datagram either way for this long is forgotten.
const IDLE_NS: u64 = 120_000_000_000;
/// Largest datagram.
const MAX_DATAGRAM: usize = 65_536;

pub(crate) fn setsockopt_int(
    s: &impl AsRawFd,
    level: libc::c_int,
    opt: libc::c_int,
    v: libc::c_int,
) -> std::io::Result<()> {
    // SAFETY: a valid fd and a c_int option value of the right size.
    let r = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            level,
            opt,
            &v as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

struct Flow {
    forward: Line<Vec<u8>>,
    last_ns: Arc<AtomicU64>,
    closed: Arc<AtomicBool>,
}

pub fn start(shared: &Arc<Shared>, cfg: &Config) -> Result<SocketAddr, RelayError> {
    let addr = cfg.listen;
    let err = |what| move |source| RelayError::Socket { what, addr, source };
    let s = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))
        .map_err(err("udp socket"))?;
    s.set_reuse_address(true).map_err(err("SO_REUSEADDR"))?;
    let transparent = cfg.target == Target::Transparent;
    if transparent {
        crate::tcp::set_transparent(&s, addr)
            .map_err(err("IP_TRANSPARENT (needs CAP_NET_ADMIN)"))?;
        let r = if addr.is_ipv4() {
            setsockopt_int(&s, libc::SOL_IP, libc::IP_RECVORIGDSTADDR, 1)
        } else {
            setsockopt_int(&s, libc::SOL_IPV6, libc::IPV6_RECVORIGDSTADDR, 1)
        };
        r.map_err(err("IP_RECVORIGDSTADDR"))?;
    }
    let _ = s.set_recv_buffer_size(4 << 20);
    s.bind(&SockAddr::from(addr)).map_err(err("udp bind"))?;
    let sock: UdpSocket = s.into();
    sock.set_read_timeout(Some(POLL))
        .map_err(err("udp socket"))?;
    let local = sock.local_addr().map_err(err("udp socket"))?;
    let sh = shared.clone();
    let target = cfg.target;
    shared.spawn("relay-udp", move || {
        let mut flows: HashMap<(SocketAddr, SocketAddr), Flow> = HashMap::new();
        let mut buf = vec![0u8; MAX_DATAGRAM];
        let mut swept = now_ns();
        while !sh.stopped() {
            let got = if transparent {
                recv_orig_dst(&sock, &mut buf)
            } else {
                sock.recv_from(&mut buf).map(|(n, src)| {
                    let Target::Fixed(t) = target else {
                        unreachable!()
                    };
                    (n, src, t)
                })
            };
            let now = now_ns();
            if now - swept > 1_000_000_000 {
                swept = now;
                flows.retain(|_, f| {
                    !f.closed.load(Ordering::Acquire)
                        && now.saturating_sub(f.last_ns.load(Ordering::Relaxed)) < IDLE_NS
                });
            }
            let (n, src, dst) = match got {
                Ok(v) => v,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    continue;
                }
                Err(_) => continue,
            };
            let key = (src, dst);
            let f = match flows.entry(key) {
                std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
                std::collections::hash_map::Entry::Vacant(v) => {
                    match new_flow(&sh, &sock, src, dst, transparent) {
                        Some(f) => v.insert(f),
                        None => {
                            sh.counters.errors.fetch_add(1, Ordering::Relaxed);
                            continue;
                        }
                    }
                }
            };
            f.last_ns.store(now, Ordering::Relaxed);
            if !f.forward.push(now, buf[..n].to_vec()) {
                flows.remove(&key);
            }
        }
    });
    Ok(local)
}

fn unspecified(like: &SocketAddr) -> SocketAddr {
    match like {
        SocketAddr::V4(_) => SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0),
        SocketAddr::V6(_) => SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), 0),
    }
}

fn new_flow(
    sh: &Arc<Shared>,
    listen: &UdpSocket,
    client: SocketAddr,
    dst: SocketAddr,
    transparent: bool,
) -> Option<Flow> {
    let up = UdpSocket::bind(unspecified(&dst)).ok()?;
    up.connect(dst).ok()?;
    up.set_read_timeout(Some(POLL)).ok()?;
    // Replies leave from the address the client sent to.
    let reply: UdpSocket = if transparent {
        let s = Socket::new(Domain::for_address(dst), Type::DGRAM, Some(Protocol::UDP)).ok()?;
        s.set_reuse_address(true).ok()?;
        crate::tcp::set_transparent(&s, dst).ok()?;
        // Unconnected on purpose: a connected socket would capture the
        // client's next datagrams (tproxy prefers established sockets).
        s.bind(&SockAddr::from(dst)).ok()?;
        s.into()
    } else {
        listen.try_clone().ok()?
    };
    sh.counters.udp_flows.fetch_add(1, Ordering::Relaxed);
    let last_ns = Arc::new(AtomicU64::new(now_ns()));
    let closed = Arc::new(AtomicBool::new(false));
    let up_send = up.try_clone().ok()?;
    let sh_f = sh.clone();
    let forward = Line::new(
        sh,
        "relay-udp-fwd",
        dst.ip(),
        Box::new(move |d: Vec<u8>| {
            // A refused or full destination loses the datagram, as a network would.
            match up_send.send(&d) {
                Ok(_) => sh_f.counters.udp_forward.fetch_add(1, Ordering::Relaxed),
                Err(_) => sh_f.counters.errors.fetch_add(1, Ordering::Relaxed),
            };
            true
        }),
    );
    let sh_b = sh.clone();
    let mut back = Line::new(
        sh,
        "relay-udp-back",
        client.ip(),
        Box::new(move |d: Vec<u8>| {
            match reply.send_to(&d, client) {
                Ok(_) => sh_b.counters.udp_back.fetch_add(1, Ordering::Relaxed),
                Err(_) => sh_b.counters.errors.fetch_add(1, Ordering::Relaxed),
            };
            true
        }),
    );
    let sh_r = sh.clone();
    let (last_r, closed_r) = (last_ns.clone(), closed.clone());
    sh.spawn("relay-udp-up", move || {
        let mut buf = vec![0u8; MAX_DATAGRAM];
        while !sh_r.stopped() {
            match up.recv(&mut buf) {
                Ok(n) => {
                    let now = now_ns();
                    last_r.store(now, Ordering::Relaxed);
                    if !back.push(now, buf[..n].to_vec()) {
                        break;
                    }
                }
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    if now_ns().saturating_sub(last_r.load(Ordering::Relaxed)) > IDLE_NS {
                        break;
                    }
                }
                // ECONNREFUSED from an earlier send: nobody there yet.
                Err(_) => {}
            }
        }
        closed_r.store(true, Ordering::Release);
    });
    Some(Flow {
        forward,
        last_ns,
        closed,
    })
}

/// recvmsg with the original destination address (set by tproxy).
fn recv_orig_dst(
    sock: &UdpSocket,
    buf: &mut [u8],
) -> std::io::Result<(usize, SocketAddr, SocketAddr)> {
    // SAFETY: every pointer handed to recvmsg points into live, correctly
    // sized local buffers; the control messages are walked with the
    // CMSG_* helpers within `controllen`.
    unsafe {
        let mut src: libc::sockaddr_storage = std::mem::zeroed();
        let mut iov = libc::iovec {
            iov_base: buf.as_mut_ptr() as *mut libc::c_void,
            iov_len: buf.len(),
        };
        let mut control = [0u64; 32];
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_name = &mut src as *mut _ as *mut libc::c_void;
        msg.msg_namelen = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
        // socklen_t on musl, size_t on glibc.
        msg.msg_controllen = std::mem::size_of_val(&control) as _;
        let n = libc::recvmsg(sock.as_raw_fd(), &mut msg, 0);
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let src = sockaddr_to_std(&src).ok_or_else(|| std::io::Error::other("no source"))?;
        let mut dst = None;
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            let (level, ty) = ((*c).cmsg_level, (*c).cmsg_type);
            if (level == libc::SOL_IP && ty == libc::IP_ORIGDSTADDR)
                || (level == libc::SOL_IPV6 && ty == libc::IPV6_ORIGDSTADDR)
            {
                let mut ss: libc::sockaddr_storage = std::mem::zeroed();
                let len = ((*c).cmsg_len as usize)
                    .saturating_sub(libc::CMSG_LEN(0) as usize)
                    .min(std::mem::size_of::<libc::sockaddr_storage>());
                std::ptr::copy_nonoverlapping(
                    libc::CMSG_DATA(c),
                    &mut ss as *mut _ as *mut u8,
                    len,
                );
                dst = sockaddr_to_std(&ss);
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
        let dst = dst.ok_or_else(|| {
            std::io::Error::other("no original destination (is the tproxy rule in place?)")
        })?;
        Ok((n as usize, src, dst))
    }
}

fn sockaddr_to_std(ss: &libc::sockaddr_storage) -> Option<SocketAddr> {
    match i32::from(ss.ss_family) {
        libc::AF_INET => {
            // SAFETY: the family says this storage holds a sockaddr_in.
            let a = unsafe { &*(ss as *const _ as *const libc::sockaddr_in) };
            Some(SocketAddr::V4(SocketAddrV4::new(
                Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr)),
                u16::from_be(a.sin_port),
            )))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says this storage holds a sockaddr_in6.
            let a = unsafe { &*(ss as *const _ as *const libc::sockaddr_in6) };
            Some(SocketAddr::V6(SocketAddrV6::new(
                Ipv6Addr::from(a.sin6_addr.s6_addr),
                u16::from_be(a.sin6_port),
                a.sin6_flowinfo,
                a.sin6_scope_id,
            )))
        }
        _ => None,
    }
}
