//! `udp`: one datagram per sample, or several samples per datagram with
//! `--batch`. IPv4 or IPv6 (`--ipv6`), unicast or multicast (`--multicast`,
//! group 239.255.x.y / ff15::x derived from the run id). Best effort only:
//! UDP has no retransmission, so the subscriber's sequence gaps are the loss.
//!
//! The writer's socket is connected to its one reader. A unicast reader
//! fed by one writer is connected to the sender of the first datagram that
//! carries the run's key ([`EndpointConfig::sample_key`]): from then on
//! the kernel drops every other sender's datagrams. It is the sender as
//! the reader sees it, so a relay or NAT on the path (`pubsubperf relay`,
//! a container's bridge) is the peer, not the writer's own address; a
//! sender the reader's host has no route back to leaves it open to all.

use crate::wait::{Deadline, POLL, is_wait, retry};
use pubsubperf_core::Received;
use pubsubperf_core::binding::BindingInfo;
use pubsubperf_core::environment::kernel_release;
use pubsubperf_core::sample::Header;
use pubsubperf_core::{
    Binding, BindingError, Capabilities, DataType, EndpointConfig, Locator, Reader, Refusal,
    Reliability, TopicSpec, WaitMode, Writer,
};
use socket2::{Domain, Protocol, SockAddr, Socket, Type};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::time::Duration;

/// Largest UDP payload over IPv4 (65535 - 20 IP - 8 UDP). IPv6 allows 20
/// bytes more; the smaller limit is the binding's.
pub const MAX_DATAGRAM: usize = 65_507;
/// Bytes of the length prefix of each sample in a batched datagram.
const FRAME: usize = 4;

/// The `udp` binding.
pub struct Udp {
    cfg: EndpointConfig,
}

fn caps() -> Capabilities {
    Capabilities {
        reliable: false,
        best_effort: true,
        default_reliability: Reliability::BestEffort,
        multicast: true,
        max_sample_size: MAX_DATAGRAM,
        zero_copy: false,
        batching: true,
        multiple_subscribers: true,
        transports: &["udp"],
        data_types: &[DataType::Bytes],
        in_process: false,
        remote: true,
        receive: &[pubsubperf_core::ReceiveMode::Thread],
    }
}

/// Multicast group and port for a topic, derived from the run id so that
/// concurrent runs do not collide; `--multicast-address` gives the group
/// (the port stays derived: several topics share the group).
fn multicast_addr(cfg: &EndpointConfig, topic: &str) -> Result<SocketAddr, BindingError> {
    let mut h: u32 = 2166136261;
    for b in cfg.run_id.bytes().chain(topic.bytes()) {
        h = (h ^ u32::from(b)).wrapping_mul(16777619);
    }
    let port = 20_000 + (h % 30_000) as u16;
    let ip: IpAddr = if let Some(a) = &cfg.multicast_address {
        a.parse()
            .ok()
            .filter(|ip: &IpAddr| ip.is_multicast() && ip.is_ipv6() == cfg.ipv6)
            .ok_or_else(|| {
                BindingError::Unsupported(format!(
                    "--multicast-address {a}: not a multicast group of the run's IP family"
                ))
            })?
    } else if cfg.ipv6 {
        IpAddr::V6(Ipv6Addr::new(
            0xff15,
            0,
            0,
            0,
            0,
            0,
            0x7070,
            (h >> 16) as u16,
        ))
    } else {
        IpAddr::V4(Ipv4Addr::new(
            239,
            255,
            (h >> 24) as u8,
            (h >> 16) as u8 | 1,
        ))
    };
    Ok(SocketAddr::new(ip, port))
}

fn bind_ip(cfg: &EndpointConfig) -> Result<IpAddr, BindingError> {
    let ip: IpAddr = cfg.bind_ip.parse().map_err(|_| {
        BindingError::Unsupported(format!(
            "bind address '{}' is not an IP address",
            cfg.bind_ip
        ))
    })?;
    Ok(match (cfg.ipv6, ip) {
        (true, IpAddr::V4(v4)) if v4.is_loopback() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        (true, IpAddr::V4(_)) => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
        (false, IpAddr::V6(v6)) if v6.is_loopback() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        (_, ip) => ip,
    })
}

/// Whether a reader of `topic` is fed by one sender, which it can then be
/// connected to: not a multicast group's, nor a data topic with several
/// publishers (an echo topic has one writer, its subscriber's).
fn connects_to_sender(cfg: &EndpointConfig, topic: &TopicSpec) -> bool {
    !cfg.multicast && (cfg.publishers <= 1 || topic.is_echo())
}

fn io(ctx: &str) -> impl FnOnce(std::io::Error) -> BindingError + '_ {
    move |e| BindingError::io(ctx, e)
}

fn new_socket(addr: &SocketAddr, cfg: &EndpointConfig) -> Result<Socket, BindingError> {
    let s = Socket::new(Domain::for_address(*addr), Type::DGRAM, Some(Protocol::UDP))
        .map_err(io("udp socket"))?;
    if cfg.socket_buffer > 0 {
        // Ask for the size; as root, the FORCE variants pass rmem_max/wmem_max.
        if s.set_recv_buffer_size(cfg.socket_buffer).is_err() {
            let _ = s.set_recv_buffer_size(cfg.socket_buffer);
        }
        let _ = s.set_send_buffer_size(cfg.socket_buffer);
        force_buffers(&s, cfg.socket_buffer);
    }
    Ok(s)
}

fn force_buffers(s: &Socket, size: usize) {
    use std::os::fd::AsRawFd;
    let v = size.min(i32::MAX as usize) as libc::c_int;
    for opt in [libc::SO_RCVBUFFORCE, libc::SO_SNDBUFFORCE] {
        // SAFETY: setsockopt with a valid fd and a c_int value; failure
        // (without CAP_NET_ADMIN) leaves the size requested above.
        unsafe {
            libc::setsockopt(
                s.as_raw_fd(),
                libc::SOL_SOCKET,
                opt,
                &v as *const libc::c_int as *const libc::c_void,
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
    }
}

impl Binding for Udp {
    type Writer = UdpWriter;
    type Reader = UdpReader;

    fn info() -> BindingInfo {
        BindingInfo {
            name: "udp",
            description: "raw UDP datagrams, IPv4/IPv6, unicast or multicast (baseline)",
            version: kernel_release(),
            capabilities: caps(),
            available: Ok(()),
        }
    }

    fn multiple_publishers() -> bool {
        // Datagrams from any sender arrive at the reader's socket.
        true
    }

    fn qos_flags() -> &'static [&'static str] {
        // IP_MULTICAST_TTL / IPV6_MULTICAST_HOPS of the writer's socket,
        // and the group its readers join.
        &["--multicast-ttl", "--multicast-address"]
    }

    fn validate(cfg: &EndpointConfig) -> Result<(), BindingError> {
        crate::refuse_options("udp", cfg, &[])?;
        crate::refuse_queues(
            "udp",
            cfg,
            true,
            "the socket buffers hold them: --socket-buffer",
        )?;
        if cfg.batch_bytes > MAX_DATAGRAM {
            return Err(BindingError::Unsupported(format!(
                "--batch {}: udp batches into one datagram of at most {MAX_DATAGRAM} bytes",
                cfg.batch_bytes
            )));
        }
        if cfg.batch_bytes > 0 && cfg.max_sample_size + FRAME > MAX_DATAGRAM {
            return Err(BindingError::Unsupported(format!(
                "--batch: a batched udp sample needs {FRAME} bytes of framing; the largest size is {}",
                MAX_DATAGRAM - FRAME
            )));
        }
        Ok(())
    }

    fn open(cfg: &EndpointConfig) -> Result<Self, BindingError> {
        Self::validate(cfg)?;
        Ok(Udp { cfg: cfg.clone() })
    }

    fn create_reader(&mut self, topic: &TopicSpec) -> Result<(UdpReader, Locator), BindingError> {
        let cfg = &self.cfg;
        let (socket, locator) = if cfg.multicast {
            let group = multicast_addr(cfg, &topic.name)?;
            let any: SocketAddr = match group {
                SocketAddr::V4(_) => (Ipv4Addr::UNSPECIFIED, group.port()).into(),
                SocketAddr::V6(_) => (Ipv6Addr::UNSPECIFIED, group.port()).into(),
            };
            let s = new_socket(&any, cfg)?;
            // Several subscribers on one host share the group's port.
            s.set_reuse_address(true).map_err(io("SO_REUSEADDR"))?;
            s.set_reuse_port(true).map_err(io("SO_REUSEPORT"))?;
            s.bind(&SockAddr::from(any))
                .map_err(io("bind multicast port"))?;
            match (group.ip(), bind_ip(cfg)?) {
                (IpAddr::V4(g), IpAddr::V4(local)) => {
                    let iface = if local.is_unspecified() {
                        Ipv4Addr::UNSPECIFIED
                    } else {
                        local
                    };
                    s.join_multicast_v4(&g, &iface)
                        .map_err(io("join multicast group"))?;
                }
                (IpAddr::V6(g), _) => s
                    .join_multicast_v6(&g, 0)
                    .map_err(io("join multicast group"))?,
                _ => {
                    return Err(BindingError::Unsupported(
                        "--multicast: address family mismatch".into(),
                    ));
                }
            }
            (s, group.to_string())
        } else {
            let addr = SocketAddr::new(bind_ip(cfg)?, 0);
            let s = new_socket(&addr, cfg)?;
            s.bind(&SockAddr::from(addr))
                .map_err(io("bind udp reader"))?;
            let local = s
                .local_addr()
                .map_err(io("udp local address"))?
                .as_socket()
                .ok_or_else(|| BindingError::Middleware("udp socket has no IP address".into()))?;
            (s, local.to_string())
        };
        let socket: UdpSocket = socket.into();
        match cfg.wait {
            WaitMode::Busy => socket.set_nonblocking(true),
            WaitMode::Block => socket.set_read_timeout(Some(POLL)),
        }
        .map_err(io("udp reader mode"))?;
        let reader = UdpReader {
            socket,
            buf: vec![0; MAX_DATAGRAM + 64],
            awaiting: cfg.sample_key.filter(|_| connects_to_sender(cfg, topic)),
            batched: cfg.batch_bytes > 0,
            wait: cfg.wait,
            cancel: cfg.cancel.clone(),
        };
        Ok((reader, locator))
    }

    fn create_writer(
        &mut self,
        _topic: &TopicSpec,
        readers: &[Locator],
    ) -> Result<UdpWriter, BindingError> {
        let cfg = &self.cfg;
        let mut targets = Vec::new();
        for l in readers {
            let a: SocketAddr = l
                .parse()
                .map_err(|_| BindingError::Middleware(format!("bad udp locator '{l}'")))?;
            if !targets.contains(&a) {
                targets.push(a);
            }
        }
        let first = *targets
            .first()
            .ok_or_else(|| BindingError::Middleware("udp writer without readers".into()))?;
        let local = SocketAddr::new(
            match first {
                SocketAddr::V4(_) if !cfg.ipv6 => bind_ip(cfg)?,
                SocketAddr::V4(_) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
                SocketAddr::V6(_) => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
            },
            0,
        );
        let s = new_socket(&local, cfg)?;
        if cfg.multicast {
            if first.is_ipv4() {
                s.set_multicast_loop_v4(true)
                    .map_err(io("IP_MULTICAST_LOOP"))?;
                if let IpAddr::V4(ip) = bind_ip(cfg)?
                    && !ip.is_unspecified()
                {
                    s.set_multicast_if_v4(&ip).map_err(io("IP_MULTICAST_IF"))?;
                }
            } else {
                s.set_multicast_loop_v6(true)
                    .map_err(io("IPV6_MULTICAST_LOOP"))?;
            }
            if let Some(ttl) = cfg.multicast_ttl {
                if first.is_ipv4() {
                    s.set_multicast_ttl_v4(u32::from(ttl))
                        .map_err(io("IP_MULTICAST_TTL"))?;
                } else {
                    s.set_multicast_hops_v6(u32::from(ttl))
                        .map_err(io("IPV6_MULTICAST_HOPS"))?;
                }
            }
        }
        s.bind(&SockAddr::from(local))
            .map_err(io("bind udp writer"))?;
        let socket: UdpSocket = s.into();
        // One reader: a connected socket saves the kernel a route lookup per send.
        if targets.len() == 1 {
            socket.connect(first).map_err(io("udp connect"))?;
        }
        let cap = if cfg.batch_bytes > 0 {
            cfg.batch_bytes.max(cfg.max_sample_size + FRAME)
        } else {
            cfg.max_sample_size
        };
        Ok(UdpWriter {
            socket,
            targets,
            buf: vec![0; cap.max(64)],
            max: cfg.max_sample_size,
            batch: cfg.batch_bytes,
            pending: 0,
        })
    }
}

/// Writer of the `udp` binding.
pub struct UdpWriter {
    socket: UdpSocket,
    targets: Vec<SocketAddr>,
    buf: Vec<u8>,
    max: usize,
    batch: usize,
    pending: usize,
}

impl UdpWriter {
    fn transmit(&mut self, len: usize) -> Result<(), BindingError> {
        send_datagram(&self.socket, &self.targets, &self.buf[..len])
    }
}

/// Sends `data` as one datagram to each of `targets` (the connected one
/// when there is one target).
#[inline]
fn send_datagram(
    socket: &UdpSocket,
    targets: &[SocketAddr],
    data: &[u8],
) -> Result<(), BindingError> {
    let res = if targets.len() == 1 {
        crate::sys::send(socket, data).map(|_| ())
    } else {
        targets
            .iter()
            .try_for_each(|t| crate::sys::send_to(socket, data, t).map(|_| ()))
    };
    match res {
        Ok(()) => Ok(()),
        // A send the kernel refuses (a firewall's EPERM, ENOBUFS, EAGAIN,
        // ECONNREFUSED from a closed port) was not sent: the harness
        // counts it as rejected. A dead peer is detected by the harness
        // through the control channel.
        Err(e) if let Some(refusal) = Refusal::of_os_error(&e) => Err(BindingError::Refused {
            what: "udp send",
            refusal,
        }),
        Err(e) => Err(BindingError::io("udp send", e)),
    }
}

impl UdpWriter {
    /// The multicast TTL (IPv4) or hop limit (IPv6) the kernel holds for
    /// the writer's socket: what `--multicast-ttl` became.
    pub fn multicast_ttl(&self) -> std::io::Result<u32> {
        let s = socket2::SockRef::from(&self.socket);
        match self.targets.first() {
            Some(SocketAddr::V6(_)) => s.multicast_hops_v6(),
            _ => s.multicast_ttl_v4(),
        }
    }
}

impl Writer for UdpWriter {
    fn wait_matched(&mut self, _readers: usize, _timeout: Duration) -> Result<(), BindingError> {
        Ok(())
    }

    #[inline]
    fn send<F: FnOnce(&mut [u8])>(&mut self, len: usize, fill: F) -> Result<(), BindingError> {
        if len > self.max {
            return Err(BindingError::TooLarge {
                size: len,
                limit: self.max,
            });
        }
        if self.batch == 0 {
            fill(&mut self.buf[..len]);
            return self.transmit(len);
        }
        if self.pending + FRAME + len > self.batch.max(FRAME + len) {
            self.flush()?;
        }
        let at = self.pending;
        self.buf[at..at + FRAME].copy_from_slice(&(len as u32).to_le_bytes());
        fill(&mut self.buf[at + FRAME..at + FRAME + len]);
        self.pending += FRAME + len;
        if self.pending >= self.batch {
            self.flush()?;
        }
        Ok(())
    }

    /// Unbatched: `bytes` go out as the datagram, from the caller's memory.
    #[inline]
    fn send_from(&mut self, bytes: &[u8]) -> Option<Result<(), BindingError>> {
        if self.batch > 0 {
            return None;
        }
        if bytes.len() > self.max {
            return Some(Err(BindingError::TooLarge {
                size: bytes.len(),
                limit: self.max,
            }));
        }
        Some(send_datagram(&self.socket, &self.targets, bytes))
    }

    fn flush(&mut self) -> Result<(), BindingError> {
        if self.pending > 0 {
            let n = self.pending;
            self.pending = 0;
            self.transmit(n)?;
        }
        Ok(())
    }
}

/// Reader of the `udp` binding.
pub struct UdpReader {
    socket: UdpSocket,
    buf: Vec<u8>,
    /// The run's key while the reader still takes datagrams from anyone,
    /// until one carries it; None once connected to that datagram's sender,
    /// or when the reader is never connected ([`connects_to_sender`]).
    awaiting: Option<u64>,
    batched: bool,
    wait: WaitMode,
    cancel: pubsubperf_core::CancelToken,
}

impl Reader for UdpReader {
    #[inline]
    fn recv<F: FnMut(Received<'_>)>(
        &mut self,
        timeout: Duration,
        on_sample: &mut F,
    ) -> Result<usize, BindingError> {
        let socket = &self.socket;
        let buf = &mut self.buf;
        let (awaiting, batched) = (&mut self.awaiting, self.batched);
        let got = retry(&mut Deadline::new(timeout, self.wait), &self.cancel, || {
            let took = match *awaiting {
                None => crate::sys::recv(socket, buf, 0),
                Some(key) => take_and_connect(socket, buf, key, batched, awaiting),
            };
            match took {
                Ok(n) => Ok(Some(n)),
                Err(e) if is_wait(&e) => Ok(None),
                // A previous send to a closed port can surface here; not our data.
                Err(e) if e.raw_os_error() == Some(libc::ECONNREFUSED) => Ok(None),
                Err(e) => Err(BindingError::io("udp recv", e)),
            }
        })?;
        let Some(n) = got else { return Ok(0) };
        if !self.batched {
            on_sample(Received::whole(&self.buf[..n]));
            return Ok(1);
        }
        let mut at = 0;
        let mut count = 0;
        while at + FRAME <= n {
            let len =
                u32::from_le_bytes(self.buf[at..at + FRAME].try_into().expect("4 bytes")) as usize;
            at += FRAME;
            if at + len > n {
                return Err(BindingError::Malformed(format!(
                    "batched frame of {len} bytes overruns datagram"
                )));
            }
            on_sample(Received::whole(&self.buf[at..at + len]));
            at += len;
            count += 1;
        }
        Ok(count)
    }
}

/// Receives one datagram from any sender; when it carries the run's `key`,
/// connects the socket to its sender and clears `awaiting`. A sender this
/// host has no route back to (connect's ENETUNREACH: a writer sending to
/// several subnets from the address of one) leaves the reader open to all,
/// the key still sorting what comes.
#[cold]
fn take_and_connect(
    socket: &UdpSocket,
    buf: &mut [u8],
    key: u64,
    batched: bool,
    awaiting: &mut Option<u64>,
) -> std::io::Result<usize> {
    let (n, from) = socket.recv_from(buf)?;
    let first = if batched {
        &buf[FRAME.min(n)..n]
    } else {
        &buf[..n]
    };
    if Header::read(first).is_some_and(|h| h.key == key) {
        *awaiting = None;
        let _unroutable = socket.connect(from);
    }
    Ok(n)
}

#[cfg(test)]
mod tests;
